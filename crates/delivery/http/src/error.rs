//! The one place where errors become HTTP: every failure of every route is an `ApiError`, and its
//! `ResponseError` impl picks the status (architecture page, section 3) and builds the envelope.

use actix_web::error::PayloadError;
use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use application::{
    AuthError, CheckConsentError, ChooseEventsError, CreateConsentError, DeleteWebhookError,
    DeliveryLogError, ExportSubjectError, GetConsentError, ListConsentError, ListEventsError,
    ReenableWebhookError, RegisterWebhookError, RevokeConsentError, RotateSecretError, SyncError,
    TestWebhookError, UseCaseVersionsError,
};
use domain::{Envelope, PgccStatusCode, ValidationErrors};
use ports::{PgccError, RepoError};
use serde_json::{json, Value};

use crate::edge::BodyTimedOut;
use crate::idempotency::{IdempotencyError, IDEMPOTENCY_KEY_HEADER};

/// `Retry-After` of [`ApiError::DnsLookupsBusy`]: a company's lookup left waiting for a silent
/// name server ends with the system resolver's own timeout (5 s per try by default), and a
/// name that failed is not looked up again for 5 s either (the webhook adapter's
/// `FAILED_LOOKUP_TTL`): retrying sooner would be refused again.
pub const DNS_LOOKUPS_BUSY_RETRY_AFTER_SECONDS: u64 = 5;

/// `Retry-After` of [`ApiError::TooManyExports`]: a page of an export is one short blocking
/// hop, so a slot frees within seconds unless a console download is slow.
pub const EXPORTS_BUSY_RETRY_AFTER_SECONDS: u64 = 5;

/// The grammatical gender of a Portuguese noun: what its adjectives agree with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gender {
    Masculine,
    Feminine,
}

/// What a 404 did not find. Each resource carries its noun and the noun's gender, so the
/// message's adjective agrees with it ("Solicitação de consentimento não encontrada", "Caso de
/// uso não encontrado") without each call site spelling the sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    ConsentRequest,
    Consent,
    UseCase,
    WebhookUrl,
    WebhookUrlOrDelivery,
    Checkpoint,
    /// A bulk import (`/api/importacoes/{id}`).
    Import,
    /// An evidence file (`.../arquivos/{sha256}`).
    EvidenceFile,
    /// A path that names nothing this API serves.
    Route,
}

impl Resource {
    /// Every resource, for the agreement test.
    pub const ALL: [Resource; 9] = [
        Resource::ConsentRequest,
        Resource::Consent,
        Resource::UseCase,
        Resource::WebhookUrl,
        Resource::WebhookUrlOrDelivery,
        Resource::Checkpoint,
        Resource::Import,
        Resource::EvidenceFile,
        Resource::Route,
    ];

    /// The noun, capitalized: the message starts with it.
    pub fn noun(self) -> &'static str {
        match self {
            Resource::ConsentRequest => "Solicitação de consentimento",
            Resource::Consent => "Consentimento",
            Resource::UseCase => "Caso de uso",
            Resource::WebhookUrl => "Webhook URL",
            Resource::WebhookUrlOrDelivery => "Webhook URL ou entrega",
            Resource::Checkpoint => "Checkpoint",
            Resource::Import => "Importação",
            Resource::EvidenceFile => "Arquivo",
            Resource::Route => "Recurso",
        }
    }

    /// The gender of the noun's head ("a URL", "a entrega": feminine, as the console and the
    /// docs write "a webhook URL").
    pub fn gender(self) -> Gender {
        match self {
            Resource::ConsentRequest
            | Resource::WebhookUrl
            | Resource::WebhookUrlOrDelivery
            | Resource::Import => Gender::Feminine,
            Resource::Consent
            | Resource::UseCase
            | Resource::Checkpoint
            | Resource::EvidenceFile
            | Resource::Route => Gender::Masculine,
        }
    }

    /// "não encontrado" or "não encontrada", agreeing with the noun.
    pub fn not_found(self) -> &'static str {
        match self.gender() {
            Gender::Masculine => "não encontrado",
            Gender::Feminine => "não encontrada",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("missing or invalid Api-Key")]
    Unauthorized,
    #[error("bad request: {0}")]
    BadRequest(String),
    /// The key holds none of the scopes that grant the route (`routes::grants`).
    #[error("the API key's scopes do not grant this route")]
    Forbidden { granted_to: domain::Scopes },
    #[error("validation failed")]
    Validation(ValidationErrors),
    #[error("not found: {}", .0.noun())]
    NotFound(Resource),
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("method not allowed")]
    MethodNotAllowed { allow: &'static str },
    #[error("payload over {limit} bytes")]
    PayloadTooLarge { limit: usize },
    #[error("unsupported media type")]
    UnsupportedMediaType,
    /// An imported file neither CSV nor JSON Lines (by its `Content-Type`).
    #[error("unsupported import media type")]
    UnsupportedImportType,
    /// An evidence file of a media type not allowed (`domain::EVIDENCE_MEDIA_TYPES`).
    #[error("unsupported evidence media type")]
    UnsupportedEvidenceType,
    /// An evidence file whose bytes retention deleted.
    #[error("evidence file's bytes deleted")]
    EvidenceGone,
    /// The company already has its uploads of evidence files under way.
    #[error("too many uploads under way for the company")]
    TooManyUploads,
    /// An imported file over `importacao.max_linhas`: nothing of it was created.
    #[error("import over {limit} lines")]
    TooManyLines { limit: u64 },
    /// A request `Content-Encoding` other than `identity` (`crate::edge`).
    #[error("unsupported content encoding")]
    UnsupportedContentEncoding,
    /// The body did not arrive whole within `server.body_timeout_ms` (`crate::edge`).
    #[error("request body timed out")]
    BodyTimeout,
    /// The company is over its rate limit; the status carries the headers of the answer.
    #[error("rate limited")]
    RateLimited(crate::rate_limit::RateLimitStatus),
    /// The company already has its maximum of webhook tests under way.
    #[error("too many webhook tests under way")]
    TooManyWebhookTests,
    /// The company already has its share of DNS lookups under way (a webhook URL's
    /// registration); answered at once, with `Retry-After`.
    #[error("too many DNS lookups under way for the company")]
    DnsLookupsBusy,
    /// The company already has its maximum of exports under way (the console's and the API's;
    /// `crate::exports`); answered at once, with `Retry-After`, nothing read.
    #[error("too many exports under way for the company")]
    TooManyExports,
    /// The client's address failed to authenticate too often (see `failed_auth`).
    #[error("too many failed authentications")]
    TooManyFailedAuthentications { retry_after_seconds: u64 },
    #[error(transparent)]
    Pgcc(#[from] PgccError),
    #[error("database unavailable")]
    Unavailable(#[source] anyhow::Error),
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl ApiError {
    fn pgcc_code(&self) -> Option<PgccStatusCode> {
        match self {
            ApiError::Pgcc(e) => Some(match e {
                PgccError::Rejected { status }
                | PgccError::TryLater { status, .. }
                | PgccError::Failed { status } => {
                    PgccStatusCode::from_u16(*status).unwrap_or(PgccStatusCode::BadGateway)
                }
                PgccError::Timeout => PgccStatusCode::GatewayTimeout,
                PgccError::Unreachable(_) | PgccError::Unexpected(_) => PgccStatusCode::BadGateway,
            }),
            _ => None,
        }
    }

    /// The envelope this error answers with, as JSON: what a file standing for a failed read
    /// holds (the console's evidence bundle puts it where a record could not be made).
    pub fn envelope_json(&self) -> Value {
        let envelope = match self.pgcc_code() {
            Some(code) => Envelope::pgcc_failure(code, self.mensagem(), self.data()),
            None => Envelope::failure(self.mensagem(), self.data()),
        };
        serde_json::to_value(envelope).unwrap_or(Value::Null)
    }

    /// A sentence for the human reading the response: Portuguese, never internal detail.
    fn mensagem(&self) -> String {
        match self {
            ApiError::Unauthorized => "Api-Key ausente, inválida ou revogada.".into(),
            ApiError::BadRequest(detail) => format!("Requisição inválida: {detail}."),
            ApiError::Forbidden { granted_to } if granted_to.is_empty() => {
                "A Api-Key não tem escopo para esta operação.".into()
            }
            ApiError::Forbidden { granted_to } => format!(
                "A Api-Key não tem escopo para esta operação; escopos que a permitem: {}.",
                granted_to.names().join(", ")
            ),
            ApiError::Validation(_) => "Um ou mais campos são inválidos; veja data.erros.".into(),
            ApiError::NotFound(what) => format!("{} {}.", what.noun(), what.not_found()),
            ApiError::Conflict(why) => why.clone(),
            ApiError::MethodNotAllowed { allow } => {
                format!("Método não permitido neste recurso; use {allow}.")
            }
            ApiError::PayloadTooLarge { limit } => {
                format!("O corpo da requisição excede o limite de {limit} bytes.")
            }
            ApiError::RateLimited(status) => format!(
                "Limite de requisições da empresa excedido; tente novamente em {} s.",
                status.retry_after_seconds.unwrap_or(1)
            ),
            ApiError::TooManyFailedAuthentications {
                retry_after_seconds,
            } => format!(
                "Muitas tentativas de autenticação com Api-Key inválida a partir deste endereço; tente novamente em {retry_after_seconds} s."
            ),
            ApiError::UnsupportedMediaType => {
                "Content-Type não suportado; use application/json, text/json ou application/*+json."
                    .into()
            }
            ApiError::UnsupportedImportType => {
                "Content-Type não suportado para importação; envie text/csv ou application/x-ndjson (JSON Lines)."
                    .into()
            }
            ApiError::UnsupportedEvidenceType => format!(
                "Content-Type não suportado para arquivo de evidência; envie um de: {}.",
                domain::EVIDENCE_MEDIA_TYPES.join(", ")
            ),
            ApiError::EvidenceGone => {
                "Os bytes deste arquivo foram apagados pela política de retenção; o registro do arquivo e sua entrada no log permanecem."
                    .into()
            }
            ApiError::TooManyUploads => {
                "A empresa já tem o máximo de envios de arquivos em andamento; tente novamente em instantes."
                    .into()
            }
            ApiError::TooManyLines { limit } => format!(
                "O arquivo excede o limite de {limit} linhas; nada dele foi importado."
            ),
            ApiError::UnsupportedContentEncoding => {
                "Content-Encoding não suportado; envie o corpo sem compressão (identity).".into()
            }
            ApiError::BodyTimeout => {
                "O corpo da requisição não chegou completo dentro do tempo limite.".into()
            }
            ApiError::Pgcc(e) => match e {
                PgccError::Rejected { status } => {
                    format!("A PGCC recusou a operação (HTTP {status}).")
                }
                PgccError::TryLater { status, .. } => format!(
                    "A PGCC pediu para tentar novamente mais tarde (HTTP {status}); repita a \
                     mesma requisição depois."
                ),
                PgccError::Failed { status } => {
                    format!("A PGCC falhou ao processar a operação (HTTP {status}); tente novamente mais tarde.")
                }
                PgccError::Unreachable(_) | PgccError::Unexpected(_) => {
                    "A PGCC não respondeu de forma válida; tente novamente mais tarde.".into()
                }
                PgccError::Timeout => {
                    "A PGCC não respondeu dentro do tempo limite; tente novamente mais tarde."
                        .into()
                }
            },
            ApiError::Unavailable(_) => {
                "Serviço temporariamente indisponível; tente novamente em instantes.".into()
            }
            ApiError::Internal(_) => "Erro interno inesperado.".into(),
            ApiError::TooManyWebhookTests => format!(
                "A empresa já tem {} testes de webhook em andamento; tente de novo em instantes.",
                application::MAX_CONCURRENT_TESTS_PER_COMPANY
            ),
            ApiError::DnsLookupsBusy => format!(
                "A empresa já tem o máximo de consultas de DNS em andamento (nomes de host que \
                 ainda não responderam); tente novamente em {DNS_LOOKUPS_BUSY_RETRY_AFTER_SECONDS} s."
            ),
            ApiError::TooManyExports => format!(
                "A empresa já tem {} exportações em andamento; espere uma terminar e tente de \
                 novo em {EXPORTS_BUSY_RETRY_AFTER_SECONDS} s.",
                crate::exports::MAX_EXPORTS_PER_COMPANY
            ),
        }
    }

    fn data(&self) -> Value {
        match self {
            ApiError::Validation(errors) => json!({ "erros": errors.fields() }),
            _ => json!({}),
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Forbidden { .. } => StatusCode::FORBIDDEN,
            ApiError::Validation(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::PayloadTooLarge { .. } | ApiError::TooManyLines { .. } => {
                StatusCode::PAYLOAD_TOO_LARGE
            }
            ApiError::UnsupportedMediaType
            | ApiError::UnsupportedImportType
            | ApiError::UnsupportedEvidenceType
            | ApiError::UnsupportedContentEncoding => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::EvidenceGone => StatusCode::GONE,
            ApiError::BodyTimeout => StatusCode::REQUEST_TIMEOUT,
            ApiError::RateLimited(_)
            | ApiError::TooManyFailedAuthentications { .. }
            | ApiError::TooManyWebhookTests
            | ApiError::DnsLookupsBusy
            | ApiError::TooManyExports
            | ApiError::TooManyUploads => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Pgcc(PgccError::Rejected { status }) if !matches!(status, 401 | 403) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            // the PGCC will take it later: the same request, retried, may succeed
            ApiError::Pgcc(PgccError::TryLater { .. }) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Pgcc(PgccError::Timeout) => StatusCode::GATEWAY_TIMEOUT,
            ApiError::Pgcc(_) => StatusCode::BAD_GATEWAY,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        // The whole cause chain goes to the log (adapters keep personal data out of it); the
        // client gets the envelope only.
        match self {
            ApiError::Internal(cause) => {
                tracing::error!(error = format!("{cause:#}"), "internal error")
            }
            ApiError::Unavailable(cause) => {
                tracing::warn!(error = format!("{cause:#}"), "database unavailable")
            }
            ApiError::Pgcc(cause) => {
                tracing::warn!(error = format!("{cause:#}"), "PGCC call failed")
            }
            _ => {}
        }
        let envelope = match self.pgcc_code() {
            Some(code) => Envelope::pgcc_failure(code, self.mensagem(), self.data()),
            None => Envelope::failure(self.mensagem(), self.data()),
        };
        let mut response = HttpResponse::build(self.status_code());
        match self {
            ApiError::MethodNotAllowed { allow } => {
                response.insert_header((header::ALLOW, *allow));
            }
            ApiError::Unavailable(_) | ApiError::TooManyWebhookTests | ApiError::TooManyUploads => {
                response.insert_header((header::RETRY_AFTER, "1"));
            }
            ApiError::Pgcc(PgccError::TryLater {
                retry_after_seconds: Some(seconds),
                ..
            }) => {
                // the PGCC's own estimate, passed on as the adapter bounded it
                // (`pgcc.max_retry_after_seconds`)
                response.insert_header((header::RETRY_AFTER, *seconds));
            }
            ApiError::RateLimited(status) => {
                for (name, value) in status.headers() {
                    response.insert_header((name, value));
                }
            }
            ApiError::TooManyFailedAuthentications {
                retry_after_seconds,
            } => {
                response.insert_header((header::RETRY_AFTER, *retry_after_seconds));
            }
            ApiError::DnsLookupsBusy => {
                response.insert_header((header::RETRY_AFTER, DNS_LOOKUPS_BUSY_RETRY_AFTER_SECONDS));
            }
            ApiError::TooManyExports => {
                response.insert_header((header::RETRY_AFTER, EXPORTS_BUSY_RETRY_AFTER_SECONDS));
            }
            _ => {}
        }
        response.json(envelope)
    }
}

impl ApiError {
    /// A failure reading a request body: over the limit (413; `crate::edge` counts the bytes
    /// whoever reads them), not arrived in time (408), anything else unreadable (400).
    pub fn from_payload_error(err: &PayloadError, limit: usize) -> ApiError {
        match err {
            PayloadError::Overflow => ApiError::PayloadTooLarge { limit },
            e if BodyTimedOut::is(e) => ApiError::BodyTimeout,
            e => ApiError::BadRequest(format!("corpo ilegível ({e})")),
        }
    }
}

impl From<RepoError> for ApiError {
    fn from(e: RepoError) -> Self {
        match e {
            RepoError::Unavailable(cause) => ApiError::Unavailable(cause),
            RepoError::Unexpected(cause) => ApiError::Internal(cause),
        }
    }
}

impl From<application::ImportError> for ApiError {
    fn from(e: application::ImportError) -> Self {
        match e {
            application::ImportError::TooManyLines(limit) => ApiError::TooManyLines { limit },
            application::ImportError::NotFound => ApiError::NotFound(Resource::Import),
            application::ImportError::Repo(e) => e.into(),
        }
    }
}

impl From<IdempotencyError> for ApiError {
    fn from(e: IdempotencyError) -> Self {
        match e {
            IdempotencyError::Mismatch => ApiError::Validation(ValidationErrors::single(
                IDEMPOTENCY_KEY_HEADER,
                "esta chave já foi usada com outra requisição (outro corpo ou outra rota); use \
                 uma nova chave",
            )),
            IdempotencyError::InProgress => ApiError::Conflict(
                "Uma requisição com esta Idempotency-Key ainda está em processamento; tente \
                 novamente em instantes."
                    .to_owned(),
            ),
            IdempotencyError::Repo(e) => e.into(),
        }
    }
}

impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::Missing | AuthError::Invalid => ApiError::Unauthorized,
            AuthError::Repo(e) => e.into(),
        }
    }
}

impl From<SyncError> for ApiError {
    fn from(e: SyncError) -> Self {
        match e {
            SyncError::Pgcc(e) => ApiError::Pgcc(e),
            SyncError::Repo(e) => e.into(),
        }
    }
}

impl From<CreateConsentError> for ApiError {
    fn from(e: CreateConsentError) -> Self {
        match e {
            CreateConsentError::Invalid(errors) => ApiError::Validation(errors),
            CreateConsentError::Pgcc(e) => ApiError::Pgcc(e),
            CreateConsentError::Repo(e) => e.into(),
        }
    }
}

impl From<RegisterWebhookError> for ApiError {
    fn from(e: RegisterWebhookError) -> Self {
        match e {
            RegisterWebhookError::Invalid(errors) => ApiError::Validation(errors),
            RegisterWebhookError::Duplicate => ApiError::Conflict(
                "A empresa já tem esta URL de webhook registrada; veja GET /api/webhook-urls."
                    .into(),
            ),
            RegisterWebhookError::LookupsBusy => ApiError::DnsLookupsBusy,
            RegisterWebhookError::Repo(e) => e.into(),
        }
    }
}

impl From<DeleteWebhookError> for ApiError {
    fn from(e: DeleteWebhookError) -> Self {
        match e {
            DeleteWebhookError::NotFound => ApiError::NotFound(Resource::WebhookUrl),
            DeleteWebhookError::Repo(e) => e.into(),
        }
    }
}

impl From<UseCaseVersionsError> for ApiError {
    fn from(e: UseCaseVersionsError) -> Self {
        match e {
            UseCaseVersionsError::NotFound => ApiError::NotFound(Resource::UseCase),
            UseCaseVersionsError::Repo(e) => e.into(),
        }
    }
}

impl From<GetConsentError> for ApiError {
    fn from(e: GetConsentError) -> Self {
        match e {
            GetConsentError::NotFound => ApiError::NotFound(Resource::ConsentRequest),
            GetConsentError::Repo(e) => e.into(),
        }
    }
}

impl From<ListEventsError> for ApiError {
    fn from(e: ListEventsError) -> Self {
        match e {
            ListEventsError::Invalid(errors) => ApiError::Validation(errors),
            ListEventsError::Repo(e) => e.into(),
        }
    }
}

impl From<application::ListAccessesError> for ApiError {
    fn from(e: application::ListAccessesError) -> Self {
        match e {
            application::ListAccessesError::Invalid(errors) => ApiError::Validation(errors),
            application::ListAccessesError::Repo(e) => e.into(),
        }
    }
}

impl From<ListConsentError> for ApiError {
    fn from(e: ListConsentError) -> Self {
        match e {
            ListConsentError::Invalid(errors) => ApiError::Validation(errors),
            ListConsentError::Repo(e) => e.into(),
        }
    }
}

impl From<application::CountConsentError> for ApiError {
    fn from(e: application::CountConsentError) -> Self {
        match e {
            application::CountConsentError::Period => ApiError::BadRequest(format!(
                "o período deve ter de 1 a {} dias",
                application::MAX_COUNT_DAYS
            )),
            application::CountConsentError::Repo(e) => e.into(),
        }
    }
}

impl From<ExportSubjectError> for ApiError {
    fn from(e: ExportSubjectError) -> Self {
        match e {
            ExportSubjectError::Invalid(errors) => ApiError::Validation(errors),
            ExportSubjectError::Repo(e) => e.into(),
        }
    }
}

impl From<RevokeConsentError> for ApiError {
    fn from(e: RevokeConsentError) -> Self {
        match e {
            RevokeConsentError::NotFound => ApiError::NotFound(Resource::ConsentRequest),
            RevokeConsentError::NotRevocable(status) => ApiError::Conflict(format!(
                "Só é possível revogar um consentimento ativo ou retirar uma solicitação pendente; o status desta solicitação é {status}."
            )),
            RevokeConsentError::Pgcc(e) => ApiError::Pgcc(e),
            RevokeConsentError::Repo(e) => e.into(),
        }
    }
}

impl From<CheckConsentError> for ApiError {
    fn from(e: CheckConsentError) -> Self {
        match e {
            CheckConsentError::Invalid(errors) => ApiError::Validation(errors),
            CheckConsentError::NotFound => ApiError::NotFound(Resource::Consent),
            CheckConsentError::Repo(e) => e.into(),
        }
    }
}

impl From<RotateSecretError> for ApiError {
    fn from(e: RotateSecretError) -> Self {
        match e {
            RotateSecretError::NotFound => ApiError::NotFound(Resource::WebhookUrl),
            RotateSecretError::Repo(e) => e.into(),
        }
    }
}

impl From<ChooseEventsError> for ApiError {
    fn from(e: ChooseEventsError) -> Self {
        match e {
            ChooseEventsError::Invalid(errors) => ApiError::Validation(errors),
            ChooseEventsError::NotFound => ApiError::NotFound(Resource::WebhookUrl),
            ChooseEventsError::Repo(e) => e.into(),
        }
    }
}

impl From<TestWebhookError> for ApiError {
    fn from(e: TestWebhookError) -> Self {
        match e {
            TestWebhookError::NotFound => ApiError::NotFound(Resource::WebhookUrl),
            TestWebhookError::TooMany => ApiError::TooManyWebhookTests,
            TestWebhookError::Repo(e) => e.into(),
        }
    }
}

impl From<ReenableWebhookError> for ApiError {
    fn from(e: ReenableWebhookError) -> Self {
        match e {
            ReenableWebhookError::NotFound => ApiError::NotFound(Resource::WebhookUrl),
            ReenableWebhookError::Repo(e) => e.into(),
        }
    }
}

impl From<DeliveryLogError> for ApiError {
    fn from(e: DeliveryLogError) -> Self {
        match e {
            DeliveryLogError::Invalid(errors) => ApiError::Validation(errors),
            DeliveryLogError::NotFound => ApiError::NotFound(Resource::WebhookUrlOrDelivery),
            DeliveryLogError::UrlDisabled => ApiError::Conflict(
                "A webhook URL está desativada; reative-a (POST /api/webhook-urls/{id}/reativar) antes de reenviar."
                    .into(),
            ),
            DeliveryLogError::Repo(e) => e.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use actix_web::body::MessageBody;

    use super::*;

    /// Status, `Retry-After` and envelope of the answer `error` gets.
    fn answer(error: ApiError) -> (u16, Option<String>, Value) {
        let response = error.error_response();
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(header::RETRY_AFTER)
            .map(|v| v.to_str().unwrap().to_owned());
        let body = response.into_body().try_into_bytes().unwrap();
        (status, retry_after, serde_json::from_slice(&body).unwrap())
    }

    /// The head noun of each not-found message and its gender, from a dictionary, not from
    /// [`Resource::gender`]: the test is the second reading of the grammar.
    const LEXICON: [(&str, Gender); 9] = [
        ("solicitação", Gender::Feminine),
        ("consentimento", Gender::Masculine),
        ("caso", Gender::Masculine),
        ("webhook url", Gender::Feminine), // "a URL"
        ("checkpoint", Gender::Masculine),
        ("recurso", Gender::Masculine),
        ("entrega", Gender::Feminine),
        ("importação", Gender::Feminine),
        ("arquivo", Gender::Masculine),
    ];

    fn mensagem(error: ApiError) -> String {
        answer(error).2["mensagem"].as_str().unwrap().to_owned()
    }

    #[test]
    fn every_not_found_message_agrees_with_its_nouns_gender() {
        for resource in Resource::ALL {
            let text = mensagem(ApiError::NotFound(resource));
            let lower = text.to_lowercase();
            let (_, gender) = LEXICON
                .iter()
                .find(|(noun, _)| lower.starts_with(noun))
                .unwrap_or_else(|| panic!("{text}: a noun missing from the lexicon"));
            // "X ou Y": both nouns must share the gender the adjective takes
            for (noun, other) in LEXICON {
                if lower.contains(&format!(" ou {noun}")) {
                    assert_eq!(other, *gender, "{text}");
                }
            }
            let adjective = match gender {
                Gender::Masculine => "não encontrado.",
                Gender::Feminine => "não encontrada.",
            };
            assert!(text.ends_with(adjective), "{text}");
        }
        assert_eq!(
            mensagem(ApiError::NotFound(Resource::ConsentRequest)),
            "Solicitação de consentimento não encontrada."
        );
    }

    /// Every message the envelope carries from a template: one sentence, capitalized, ended
    /// once, no "(s)" in place of a number's agreement, and every "encontrad…" agreeing.
    #[test]
    fn every_message_template_renders_as_one_well_formed_sentence() {
        let mut errors = vec![
            ApiError::Unauthorized,
            ApiError::BadRequest("o período deve ter de 1 a 31 dias".into()),
            ApiError::Forbidden {
                granted_to: domain::Scopes::of(&[]),
            },
            ApiError::Forbidden {
                granted_to: domain::Scopes::of(&[domain::Scope::Auditor]),
            },
            ApiError::Validation(ValidationErrors::single("x", "o campo é obrigatório")),
            ApiError::MethodNotAllowed { allow: "GET" },
            ApiError::PayloadTooLarge { limit: 10 },
            ApiError::UnsupportedMediaType,
            ApiError::UnsupportedContentEncoding,
            ApiError::BodyTimeout,
            ApiError::TooManyWebhookTests,
            ApiError::DnsLookupsBusy,
            ApiError::TooManyFailedAuthentications {
                retry_after_seconds: 3,
            },
            ApiError::Pgcc(PgccError::Rejected { status: 400 }),
            ApiError::Pgcc(PgccError::TryLater {
                status: 429,
                retry_after_seconds: None,
            }),
            ApiError::Pgcc(PgccError::Failed { status: 500 }),
            ApiError::Pgcc(PgccError::Timeout),
            ApiError::Unavailable(anyhow::anyhow!("x")),
            ApiError::Internal(anyhow::anyhow!("x")),
            RegisterWebhookError::Duplicate.into(),
            DeliveryLogError::UrlDisabled.into(),
            application::CountConsentError::Period.into(),
            IdempotencyError::InProgress.into(),
            ApiError::UnsupportedEvidenceType,
            ApiError::EvidenceGone,
            ApiError::TooManyUploads,
            application::EvidenceError::HashMismatch.into(),
        ];
        errors.extend(Resource::ALL.map(ApiError::NotFound));
        for status in [
            domain::ConsentStatus::Refused,
            domain::ConsentStatus::Expired,
            domain::ConsentStatus::Revoked,
        ] {
            errors.push(RevokeConsentError::NotRevocable(status).into());
        }
        for error in errors {
            let text = mensagem(error);
            assert!(text.starts_with(char::is_uppercase), "{text}");
            assert!(text.ends_with('.') && !text.ends_with(".."), "{text}");
            assert!(!text.contains("(s)") && !text.contains("(ões)"), "{text}");
            let lower = text.to_lowercase();
            if let Some(at) = lower.find(" não encontrad") {
                let head = &lower[..at];
                let feminine = text.ends_with("encontrada.");
                let (_, gender) = LEXICON
                    .iter()
                    .find(|(noun, _)| head.starts_with(noun))
                    .unwrap_or_else(|| panic!("{text}"));
                assert_eq!(feminine, *gender == Gender::Feminine, "{text}");
            }
        }
    }

    #[test]
    fn a_company_with_its_dns_lookups_all_under_way_is_429_with_retry_after_and_not_a_pgcc_error() {
        let (code, retry_after, body) = answer(RegisterWebhookError::LookupsBusy.into());
        assert_eq!(code, 429);
        assert_eq!(retry_after.as_deref(), Some("5"));
        assert_eq!(body["sucesso"], false);
        assert_eq!(body["isPgccErro"], false);
        assert_eq!(body["pgccCodigoErro"], "OK");
        assert!(body["mensagem"].as_str().unwrap().contains("DNS"), "{body}");
    }

    #[test]
    fn a_pgcc_asking_to_try_later_is_503_with_its_status_name_and_its_retry_after() {
        for (status, name, retry_after) in [
            (429, "TooManyRequests", Some(7)),
            (408, "RequestTimeout", None),
            (425, "TooEarly", None),
        ] {
            let (code, header, body) = answer(ApiError::Pgcc(PgccError::TryLater {
                status,
                retry_after_seconds: retry_after,
            }));
            assert_eq!(code, 503, "{status}");
            assert_eq!(header, retry_after.map(|s| s.to_string()), "{status}");
            assert_eq!(body["sucesso"], false);
            assert_eq!(body["isPgccErro"], true);
            assert_eq!(body["pgccCodigoErro"], name);
        }
    }

    #[test]
    fn pgcc_failures_are_502_and_final_refusals_422_without_retry_after() {
        for (error, code, name) in [
            (PgccError::Failed { status: 503 }, 502, "ServiceUnavailable"),
            (
                PgccError::Failed { status: 500 },
                502,
                "InternalServerError",
            ),
            (PgccError::Rejected { status: 404 }, 422, "NotFound"),
            (PgccError::Timeout, 504, "GatewayTimeout"),
        ] {
            let (status, header, body) = answer(ApiError::Pgcc(error));
            assert_eq!((status, header), (code, None));
            assert_eq!(body["isPgccErro"], true);
            assert_eq!(body["pgccCodigoErro"], name);
        }
    }
}
