//! `GET /openapi.json`: the OpenAPI 3 document, generated from the route annotations and the wire
//! types, so it cannot drift from the code.

use actix_web::{web, HttpRequest, HttpResponse};
use utoipa::openapi::path::{Operation, Parameter, ParameterBuilder, ParameterIn, PathItem};
use utoipa::openapi::{ContentBuilder, Ref, Required, ResponseBuilder, ServerBuilder};
use utoipa::{Modify, OpenApi};

use crate::api_key::API_KEY_HEADER;
use crate::conditional::Prepared;
use crate::dto;
use crate::routes::{
    audit, consent_check, consent_requests, events, evidence_files, exports, imports, records,
    status, subjects, use_cases, webhook_urls,
};

mod bounds;
mod cross_field_rules;
mod examples;
pub mod links;
mod media_types;
mod schema_shapes;
mod scopes;
pub mod webhooks;

/// Name of the `apiKey` security scheme (header `Api-Key`) every `/api` operation requires, next
/// to the required `Api-Key` header parameter: the scheme is what OpenAPI tools (the Authorize
/// button of `/docs`) fill in; the parameter is what the spec demands be documented.
pub const API_KEY_SCHEME: &str = "ApiKey";

/// Base URLs listed in the document's `servers` besides the relative `/` (this server), from
/// `docs.production_url` / `docs.staging_url` (`APP__DOCS__PRODUCTION_URL`, `..._STAGING_URL`);
/// empty: not listed.
#[derive(Debug, Clone, Default)]
pub struct DocsServers {
    pub production_url: String,
    pub staging_url: String,
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Consent Management Public API",
        description = "API pública de gestão de consentimento: casos de uso, solicitações de consentimento e webhooks de uma empresa, diante da PGCC.",
        version = "dev",
    ),
    paths(
        use_cases::list,
        use_cases::sync,
        use_cases::versions,
        records::annotate,
        records::annotations,
        records::record,
        exports::export,
        consent_requests::create_active,
        consent_requests::create_pending,
        consent_requests::get,
        consent_requests::list,
        consent_requests::revoke,
        imports::create,
        imports::get,
        imports::errors,
        imports::cancel,
        evidence_files::upload,
        evidence_files::upload_named,
        evidence_files::list,
        evidence_files::download,
        evidence_files::upload_to_company,
        consent_check::check,
        consent_check::check_batch,
        consent_check::by_hash,
        subjects::export,
        webhook_urls::register,
        webhook_urls::list,
        webhook_urls::delete,
        webhook_urls::choose_events,
        webhook_urls::test,
        webhook_urls::rotate_secret,
        webhook_urls::reenable,
        webhook_urls::deliveries,
        webhook_urls::replay,
        events::list,
        audit::accesses,
        audit::checkpoint,
        audit::consistency,
        audit::proofs,
        audit::receipt,
        status::get,
    ),
    components(schemas(
        dto::envelope::PgccCodigoErro,
        dto::envelope::Erro,
        dto::envelope::CampoInvalido,
        dto::envelope::Vazio,
        dto::use_case::CasoDeUso,
        dto::use_case::VersaoCasoDeUso,
        dto::consent_request::AccessMode,
        dto::consent_request::SubjectType,
        dto::enumerations::StatusSolicitacao,
        dto::enumerations::CausaMudanca,
        dto::enumerations::TipoEvento,
        dto::enumerations::StatusEntrega,
        dto::enumerations::TipoEventoAssinavel,
        dto::event::Evento,
        dto::event::PaginaEventos,
        dto::consent_request::CriarSolicitacaoAtiva,
        dto::consent_request::CriarSolicitacaoPendente,
        dto::consent_request::SolicitacaoCriada,
        // Referenced from the shared creation responses (IntoResponses does not collect it).
        dto::envelope::Envelope<dto::consent_request::SolicitacaoCriada>,
        dto::sync::Sincronizacao,
        dto::import::LinhaImportacao,
        dto::import::Importacao,
        domain::ImportStatus,
        dto::evidence_file::ArquivoEvidencia,
        dto::evidence_file::ArquivosEvidencia,
        dto::consent_read::Solicitacao,
        dto::consent_read::MudancaDeStatus,
        dto::revocation::RevogarSolicitacao,
        dto::consent_read::PaginaSolicitacoes,
        dto::consent_check::ConsultarConsentimento,
        dto::consent_check::ResultadoConsulta,
        dto::consent_check::ConsultarLote,
        dto::consent_check::ResultadoLote,
        dto::subject_export::ExportarTitular,
        dto::subject_export::ConsentimentosDoTitular,
        dto::webhook_url::RegistrarWebhookUrl,
        dto::webhook_url::WebhookUrlRegistrada,
        dto::webhook_url::SegredoRotacionado,
        dto::webhook_url::AlterarEventosWebhookUrl,
        dto::webhook_url::TesteWebhookUrl,
        dto::webhook_url::Entrega,
        dto::webhook_url::Tentativa,
        // The events' `data`: the domain's own types (dto/webhook_event.rs).
        domain::ConsentSnapshot,
        domain::TestData,
        dto::access_log::Acesso,
        dto::access_log::PaginaAcessos,
        domain::UseCaseChange,
        domain::UrlDisabledData,
        domain::IntegrityIncidentData,
        domain::AuditCheckpointData,
        domain::ImportCompletedData,
        dto::pgcc_status::StatusPgcc,
        domain::PgccHealthChange,
        dto::enumerations::CodigoStatusPgcc,
        dto::enumerations::OperacaoPgcc,
        dto::audit::ProvasSolicitacao,
        dto::audit::EntradaProvada,
        dto::audit::Recibo,
        dto::audit::ProvaConsistencia,
        dto::record::BaseLegalEntrada,
        dto::record::AnotacoesCasoDeUso,
        dto::record::BaseLegal,
        dto::record::AnotacoesCasoDeUsoSalvas,
    )),
    tags(
        (name = "Auditoria", description = "For auditor keys and the company's evidence: the verifiable log (signed checkpoints, inclusion and consistency proofs per RFC 9162, signed receipts) and the record of who read personal data. See docs/auditoria.md and docs/security.md."),
        (name = "CasosDeUso", description = "Use cases of the company, copied from the PGCC."),
        (name = "Evidencias", description = "Evidence files (a signed PDF, an image, a recording) stored content-addressed by SHA-256 within the company, linked to consent requests with a log entry each. See docs/evidencias.md."),
        (name = "HashConsulta", description = "Is there a valid consent for this subject and use case now? And which consent does a hash name?"),
        (name = "Importacoes", description = "Bulk import of consents a company already holds (a file of JSON Lines or CSV), registered on the PGCC in the background. See docs/imports.md."),
        (name = "SolicitacaoConsentimento", description = "Consent requests for data subjects."),
        (name = "Titulares", description = "What the company holds of one data subject (LGPD art. 18 access requests); the CPF travels in the body."),
        (name = "WebhookUrls", description = "URLs where the company is notified: signed (Standard Webhooks), retried, logged. See docs/webhooks.md."),
    ),
    modifiers(&CommonToEveryApiOperation, &ServedMediaTypes),
)]
pub struct ApiDoc;

/// Every operation of a path item, with its method (lower case): the modifiers below walk all
/// of them, so a route with a method added later (PATCH, PUT) gets what every route gets.
pub(crate) fn operations_mut(
    item: &mut PathItem,
) -> impl Iterator<Item = (&'static str, &mut Operation)> {
    [
        ("get", &mut item.get),
        ("put", &mut item.put),
        ("post", &mut item.post),
        ("delete", &mut item.delete),
        ("options", &mut item.options),
        ("head", &mut item.head),
        ("patch", &mut item.patch),
        ("trace", &mut item.trace),
    ]
    .into_iter()
    .filter_map(|(method, operation)| operation.as_mut().map(|op| (method, op)))
}

/// Every `/api` answer and body in each media type the server serves (see `media_types`).
struct ServedMediaTypes;

impl Modify for ServedMediaTypes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for (path, item) in openapi.paths.paths.iter_mut() {
            if path.starts_with("/api/") {
                operations_mut(item).for_each(|(_, op)| media_types::declare_served(op));
            }
        }
    }
}

/// What every `/api` operation shares: the required `Api-Key` header and the failures any of
/// them can answer (401, 404 for unknown routes aside, 429, 500, 503). Added here once, not per
/// route.
struct CommonToEveryApiOperation;

impl Modify for CommonToEveryApiOperation {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let failure = |description: &str| {
            ResponseBuilder::new()
                .description(description)
                .content(
                    "application/json",
                    ContentBuilder::new()
                        .schema(Some(Ref::from_schema_name("Envelope_Erro")))
                        .build(),
                )
                .build()
        };
        openapi.servers = Some(vec![ServerBuilder::new()
            .url("/")
            .description(Some(
                "this server: the environment (development, staging or production) that serves this document",
            ))
            .build()]);
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme(
                API_KEY_SCHEME,
                utoipa::openapi::security::SecurityScheme::ApiKey(
                    utoipa::openapi::security::ApiKey::Header(
                        utoipa::openapi::security::ApiKeyValue::with_description(
                            API_KEY_HEADER,
                            "The company's API key (issued once by the operator), sent as the `Api-Key` header.",
                        ),
                    ),
                ),
            );
        for (path, item) in openapi.paths.paths.iter_mut() {
            if !path.starts_with("/api/") {
                continue;
            }
            for (_, operation) in operations_mut(item) {
                operation
                    .parameters
                    .get_or_insert_with(Vec::new)
                    .insert(0, api_key_parameter());
                operation.security =
                    Some(vec![utoipa::openapi::security::SecurityRequirement::new::<
                        _,
                        _,
                        &str,
                    >(API_KEY_SCHEME, [])]);
                let takes_query = operation
                    .parameters
                    .iter()
                    .flatten()
                    .any(|p| matches!(p.parameter_in, ParameterIn::Query));
                let takes_body = operation.request_body.is_some();
                let responses = &mut operation.responses.responses;
                responses.insert(
                    "401".into(),
                    failure("Api-Key missing, unknown or revoked.").into(),
                );
                responses.insert("429".into(), rate_limited().into());
                responses.insert(
                    "500".into(),
                    failure("Unexpected error of ours; nothing internal is exposed.").into(),
                );
                // the operations that call the PGCC also answer 503 when it asks to try later
                let calls_pgcc = path.contains("/criar/")
                    || path.ends_with("/sincronizar")
                    || path.ends_with("/revogar");
                responses.insert("503".into(), unavailable(calls_pgcc).into());
                // What decoding the request can answer, wherever the route does not say it
                // itself: a query parameter or body of the wrong shape (400; a body also 413
                // over the limit or nested too deep, 415 when it is not JSON or is compressed,
                // 408 when it does not arrive in time), an id in the path
                // that names nothing of the company's (404).
                let mut declare = |code: &str, description: &str| {
                    responses
                        .entry(code.into())
                        .or_insert_with(|| failure(description).into());
                };
                if takes_query || takes_body {
                    declare(
                        "400",
                        "Malformed request: a parameter or body field of the wrong type, malformed or too deeply nested JSON, an unknown field.",
                    );
                }
                if takes_body {
                    declare("413", "Body over the configured limit.");
                    declare(
                        "415",
                        "Content-Type is not JSON, or the body is compressed (a Content-Encoding other than identity).",
                    );
                    declare(
                        "408",
                        "The body was not fully received within the server's body timeout.",
                    );
                }
                if path.contains('{') {
                    declare("404", "No such resource for the company.");
                }
            }
        }
    }
}

/// 503: our database, or (`calls_pgcc`) the PGCC asking to try later (its 408, 425 or 429),
/// with `Retry-After`.
fn unavailable(calls_pgcc: bool) -> utoipa::openapi::Response {
    use utoipa::openapi::header::HeaderBuilder;
    let description = if calls_pgcc {
        "Our database is temporarily unavailable (`isPgccErro: false`, `Retry-After: 1`), or the \
         PGCC asked to try later (`isPgccErro: true`, `pgccCodigoErro` `TooManyRequests`, \
         `RequestTimeout` or `TooEarly`; `Retry-After` when the PGCC sent one). Nothing was \
         done and the answer is not kept under an `Idempotency-Key`: retry the same request."
    } else {
        "Database temporarily unavailable; retry after `Retry-After` seconds."
    };
    ResponseBuilder::new()
        .description(description)
        .header(
            "Retry-After",
            HeaderBuilder::new()
                .schema(retry_after_schema())
                .description(Some("Seconds to wait before retrying."))
                .build(),
        )
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Envelope_Erro")))
                .build(),
        )
        .build()
}

/// 429 with its headers (draft-ietf-httpapi-ratelimit-headers-07; see `crate::rate_limit`).
fn rate_limited() -> utoipa::openapi::Response {
    use utoipa::openapi::header::HeaderBuilder;
    use utoipa::openapi::schema::Type;
    let header = |ty: Type, description: &str| {
        let schema = match ty {
            Type::Integer => retry_after_schema(),
            _ => utoipa::openapi::ObjectBuilder::new().schema_type(ty),
        };
        HeaderBuilder::new()
            .schema(schema)
            .description(Some(description))
            .build()
    };
    ResponseBuilder::new()
        .description(
            "The company is over its rate limit (a token bucket per company); nothing was done. \
             Successful responses carry `RateLimit` and `RateLimit-Policy` too.",
        )
        .header(
            "Retry-After",
            header(
                Type::Integer,
                "Seconds until one more request is accepted (rounded up).",
            ),
        )
        .header(
            "RateLimit",
            header(
                Type::String,
                "`limit=<bucket size>, remaining=<left>, reset=<seconds until full>` \
                 (draft-ietf-httpapi-ratelimit-headers-07).",
            ),
        )
        .header(
            "RateLimit-Policy",
            header(
                Type::String,
                "`<requests per second>;w=1;burst=<bucket size>`, e.g. `50;w=1;burst=100`.",
            ),
        )
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Envelope_Erro")))
                .build(),
        )
        .build()
}

/// Longest `Retry-After` any answer carries, in seconds: the PGCC's is capped at
/// `pgcc.max_retry_after_seconds` (at most a day, checked at start-up); ours are seconds.
pub const RETRY_AFTER_MAX_SECONDS: u64 = 86_400;

/// `Retry-After` as this server writes it: whole seconds, 0 to a day.
fn retry_after_schema() -> utoipa::openapi::ObjectBuilder {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Integer)
        .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
            utoipa::openapi::KnownFormat::Int64,
        )))
        .minimum(Some(0))
        .maximum(Some(RETRY_AFTER_MAX_SECONDS))
}

fn api_key_parameter() -> Parameter {
    ParameterBuilder::new()
        .name(API_KEY_HEADER)
        .parameter_in(ParameterIn::Header)
        .required(Required::True)
        .description(Some("The company's API key (issued once by the operator)."))
        .schema(Some(
            // the shapes `application::api_key_format` accepts (anything else is 401 before
            // any lookup): `cak_` + 64 hex digits, then `_` + an 8-digit checksum; a sandbox
            // key (docs/api.md, "Sandbox") starts `cak_test_` and always has the checksum
            utoipa::openapi::ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::Type::String)
                .min_length(Some(application::API_KEY_PREFIX.len() + 64))
                .max_length(Some(application::SANDBOX_API_KEY_LEN))
                .pattern(Some(
                    "^cak_([0-9a-f]{64}(_[0-9a-f]{8})?|test_[0-9a-f]{64}_[0-9a-f]{8})$",
                )),
        ))
        .build()
}

/// Bodies a route takes but does not require (utoipa marks every declared body required):
/// `revogar`'s `{"motivo"}` (no body revokes without a reason).
fn optional_bodies(doc: &mut utoipa::openapi::OpenApi) {
    const OPTIONAL: [&str; 1] = ["/api/solicitacao-consentimento/{id}/revogar"];
    for path in OPTIONAL {
        let body = doc
            .paths
            .paths
            .get_mut(path)
            .and_then(|item| item.post.as_mut())
            .and_then(|op| op.request_body.as_mut());
        if let Some(body) = body {
            body.required = Some(Required::False);
        }
    }
}

/// The document as served with no production or staging server configured.
pub fn document_json() -> serde_json::Value {
    document_json_with(&DocsServers::default())
}

/// The document with `servers`: `/` (this server) first (what `/docs` calls by default), then
/// the configured production and staging base URLs.
pub fn document_json_with(servers: &DocsServers) -> serde_json::Value {
    let mut doc = ApiDoc::openapi();
    examples::apply(&mut doc);
    optional_bodies(&mut doc);
    let listed = doc.servers.get_or_insert_with(Vec::new);
    for (url, description) in [
        (&servers.production_url, "production"),
        (&servers.staging_url, "staging"),
    ] {
        let url = url.trim();
        if !url.is_empty() {
            listed.push(
                ServerBuilder::new()
                    .url(url.trim_end_matches('/'))
                    .description(Some(description))
                    .build(),
            );
        }
    }
    let mut json = serde_json::to_value(doc).expect("the OpenAPI document serializes");
    // What utoipa's model cannot hold, added to the serialized document in one place.
    schema_shapes::inline_single_one_of(&mut json);
    cross_field_rules::apply(&mut json);
    links::apply(&mut json);
    webhooks::apply(&mut json);
    bounds::apply(&mut json);
    scopes::apply(&mut json);
    json
}

/// `Cache-Control` of `/openapi.json`: caches keep it but ask again each time (a new deployment
/// is seen at once), and the `ETag` makes asking cost a 304 without a body.
pub const DOCUMENT_CACHE_CONTROL: &str = "no-cache";

/// The document as served, rendered once per process (it depends only on the code and the
/// configured servers) with its `ETag`: a request costs a clone of a shared buffer, or a 304.
#[derive(Debug, Clone)]
pub struct ServedDocument(Prepared);

impl ServedDocument {
    pub fn new(servers: &DocsServers) -> Self {
        let bytes = serde_json::to_vec(&document_json_with(servers))
            .expect("the OpenAPI document serializes");
        ServedDocument(Prepared::new(
            bytes,
            "application/json",
            DOCUMENT_CACHE_CONTROL,
        ))
    }

    pub fn etag(&self) -> &str {
        self.0.etag()
    }
}

/// 200 with the document, or 304 when `If-None-Match` names its tag.
pub async fn document(req: HttpRequest, served: web::Data<ServedDocument>) -> HttpResponse {
    served.0.respond(&req)
}
