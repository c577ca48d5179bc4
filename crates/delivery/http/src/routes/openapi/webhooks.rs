//! The OpenAPI 3.1 `webhooks` section: one entry per event type (`domain::EventType::ALL`), the
//! body a company's URL receives (`{type, timestamp, data}`) and the Standard Webhooks headers.
//! utoipa 5 has no model for `webhooks`, so the section (and the event body schemas, which use
//! `const`) is added to the serialized document here, in one place.

use domain::EventType;
use serde_json::{json, Map, Value};

/// What `data` of an event is.
enum Data {
    /// The consent request right after the change (`SolicitacaoNoEvento`).
    Solicitacao,
    /// The counts of a synchronization (`Sincronizacao`).
    Sincronizacao,
    /// The URL a test was sent to (`TesteNoEvento`).
    Teste,
    /// A use case's new version and the counts (`CasoDeUsoAlterado`).
    CasoDeUsoAlterado,
    /// The PGCC's status after a change (`MudancaStatusPgcc`).
    StatusPgcc,
    /// The URL disabled (`UrlDesativada`).
    UrlDesativada,
    /// The request the PGCC does not know (`IncidenteIntegridade`).
    IncidenteIntegridade,
    /// The company's new signed checkpoint (`CheckpointAuditoria`).
    CheckpointAuditoria,
    /// The import and its counts (`ImportacaoConcluida`).
    ImportacaoConcluida,
}

/// How an event type is documented: its body's schema name, the operationId of its webhook, a
/// summary, and its `data`. The match is exhaustive: a new event type cannot be left out.
fn documented(tipo: EventType) -> (&'static str, &'static str, &'static str, Data) {
    match tipo {
        EventType::RequestCreated => (
            "EventoSolicitacaoCriada",
            "notificarSolicitacaoCriada",
            "A consent request was created (criar/ativo or criar/pendente).",
            Data::Solicitacao,
        ),
        EventType::RequestActivated => (
            "EventoSolicitacaoAtivada",
            "notificarSolicitacaoAtivada",
            "The subject accepted a pending request on the PGCC.",
            Data::Solicitacao,
        ),
        EventType::RequestRefused => (
            "EventoSolicitacaoRecusada",
            "notificarSolicitacaoRecusada",
            "The subject refused a pending request on the PGCC; `data.motivo` is the PGCC's reason (null when none).",
            Data::Solicitacao,
        ),
        EventType::RequestExpired => (
            "EventoSolicitacaoExpirada",
            "notificarSolicitacaoExpirada",
            "A pending or active request reached its expiry.",
            Data::Solicitacao,
        ),
        EventType::RequestRevoked => (
            "EventoSolicitacaoRevogada",
            "notificarSolicitacaoRevogada",
            "A request was revoked, on the PGCC or through this API, or the company withdrew a pending one; `data.motivo` is the reason given (null when none).",
            Data::Solicitacao,
        ),
        EventType::UseCasesSynced => (
            "EventoCasosDeUsoSincronizados",
            "notificarCasosDeUsoSincronizados",
            "A synchronization (on demand or scheduled) changed the company's use cases.",
            Data::Sincronizacao,
        ),
        EventType::UseCaseChanged => (
            "EventoCasoDeUsoAlterado",
            "notificarCasoDeUsoAlterado",
            "A synchronization found a use case's purpose changed on the PGCC and made a new version; the counts say how many of the company's active and pending requests were given under older versions (list them with `versaoDesatualizada=true`).",
            Data::CasoDeUsoAlterado,
        ),
        EventType::PgccUnavailable => (
            "EventoPgccIndisponivel",
            "notificarPgccIndisponivel",
            "The PGCC stopped answering some or all operations (`GET /api/status` left `OK`); sent to every company once per change.",
            Data::StatusPgcc,
        ),
        EventType::PgccRestored => (
            "EventoPgccRestabelecido",
            "notificarPgccRestabelecido",
            "The PGCC answers every operation again (`GET /api/status` back to `OK`); sent to every company once per change.",
            Data::StatusPgcc,
        ),
        EventType::WebhookUrlDisabled => (
            "EventoWebhookUrlDesativada",
            "notificarWebhookUrlDesativada",
            "One of the company's URLs was disabled after failing for the whole window; sent to its other URLs.",
            Data::UrlDesativada,
        ),
        EventType::IntegrityIncident => (
            "EventoAuditoriaIncidente",
            "notificarAuditoriaIncidente",
            "An integrity incident: a confirmed request the PGCC has said it does not know for longer than `workers.reconcile_not_found_seconds`; HashConsulta no longer answers it valid and `consent-api audit verify` lists it.",
            Data::IncidenteIntegridade,
        ),
        EventType::AuditCheckpoint => (
            "EventoAuditoriaCheckpoint",
            "notificarAuditoriaCheckpoint",
            "The company's log got a new signed checkpoint (the note `GET /api/auditoria/checkpoint` now serves, with any witness's cosignatures); sent only to the URLs whose `eventos` name `auditoria.checkpoint` (a URL taking every type does not get it).",
            Data::CheckpointAuditoria,
        ),
        EventType::ImportCompleted => (
            "EventoImportacaoConcluida",
            "notificarImportacaoConcluida",
            "One of the company's bulk imports ended: every valid line registered on the PGCC or failed (`GET /api/importacoes/{id}`, docs/imports.md).",
            Data::ImportacaoConcluida,
        ),
        EventType::WebhookTest => (
            "EventoWebhookTeste",
            "notificarWebhookTeste",
            "A test the company asked for (`POST /api/webhook-urls/{id}/testar`), sent to that URL only.",
            Data::Teste,
        ),
    }
}

/// `(event type, operationId)` of every webhook, in `EventType::ALL` order.
pub fn operation_ids() -> Vec<(&'static str, &'static str)> {
    EventType::ALL
        .into_iter()
        .map(|t| (t.as_str(), documented(t).1))
        .collect()
}

fn header(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "header", "required": true, "description": description,
           "schema": {"type": "string"}})
}

/// Adds `webhooks` and the event body schemas to `doc` (a serialized OpenAPI 3.1 document).
pub(super) fn apply(doc: &mut Value) {
    let headers = [
        header(
            "webhook-id",
            "The event id: the same on every attempt and replay; de-duplicate on it.",
        ),
        header(
            "webhook-timestamp",
            "Unix seconds of this attempt; refuse anything more than a few minutes old.",
        ),
        header(
            "webhook-signature",
            "`v1,<base64 HMAC-SHA256>` of `{webhook-id}.{webhook-timestamp}.{body}` with the URL's \
             secret; two, space-separated, during a rotation's overlap (docs/webhooks.md).",
        ),
    ];
    let mut webhooks = Map::new();
    let mut schemas = Map::new();
    for tipo in EventType::ALL {
        let (schema, operation_id, summary, data) = documented(tipo);
        let data = match data {
            Data::Solicitacao => "SolicitacaoNoEvento",
            Data::Sincronizacao => "Sincronizacao",
            Data::Teste => "TesteNoEvento",
            Data::CasoDeUsoAlterado => "CasoDeUsoAlterado",
            Data::StatusPgcc => "MudancaStatusPgcc",
            Data::UrlDesativada => "UrlDesativada",
            Data::IncidenteIntegridade => "IncidenteIntegridade",
            Data::CheckpointAuditoria => "CheckpointAuditoria",
            Data::ImportacaoConcluida => "ImportacaoConcluida",
        };
        schemas.insert(
            schema.to_owned(),
            json!({
                "type": "object",
                "description": format!("Body of a `{}` event.", tipo.as_str()),
                "required": ["type", "timestamp", "data"],
                "additionalProperties": false,
                "properties": {
                    "type": {"type": "string", "const": tipo.as_str()},
                    "timestamp": {"type": "string", "format": "date-time",
                                  "description": "When it happened."},
                    "data": {"$ref": format!("#/components/schemas/{data}")}
                }
            }),
        );
        webhooks.insert(
            tipo.as_str().to_owned(),
            json!({"post": {
                "operationId": operation_id,
                "tags": ["Webhooks"],
                "summary": summary,
                "description": "POSTed, signed (Standard Webhooks), to every active URL of the \
                    company that takes its type (`eventos`); retried until a 2xx (at least once: de-duplicate on `webhook-id`).",
                "parameters": headers,
                "requestBody": {"required": true, "content": {"application/json": {
                    "schema": {"$ref": format!("#/components/schemas/{schema}")}}}},
                "responses": {
                    "2XX": {"description": "Received: any 2xx counts as delivered."},
                    "default": {"description": "Anything else, or no answer within the timeout, is retried."}
                }
            }}),
        );
    }
    doc["webhooks"] = Value::Object(webhooks);
    if let Some(components) = doc["components"]["schemas"].as_object_mut() {
        components.extend(schemas);
    }
    if let Some(tags) = doc["tags"].as_array_mut() {
        tags.push(json!({"name": "Webhooks",
            "description": "Events POSTed to the company's webhook URLs (docs/webhooks.md)."}));
    }
}
