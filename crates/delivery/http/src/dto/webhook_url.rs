use chrono::{DateTime, Utc};
use domain::WebhookUrl;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::enumerations::{StatusEntrega, TipoEvento, TipoEventoAssinavel};
use super::text_rules::WebhookUrlText;

/// Body of `POST /api/webhook-urls`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegistrarWebhookUrl {
    /// Absolute http(s) URL that will receive the company's notifications.
    #[schema(value_type = WebhookUrlText, inline, example = "https://exemplo.com.br/webhooks/consentimento")]
    pub url: String,
    /// The event types this URL receives (1 or more; repeats ignored). Absent or `null`: every
    /// type, including types added later.
    #[schema(value_type = Option<Vec<TipoEventoAssinavel>>, min_items = 1, example = json!(["solicitacao.revogada", "solicitacao.expirada"]))]
    #[serde(rename = "eventos")]
    pub events: Option<Vec<String>>,
}

/// Body of `PATCH /api/webhook-urls/{webhookUrlId}`: `eventos` is required (`null` to receive
/// every type again).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AlterarEventosWebhookUrl {
    /// The event types the URL receives from now on (1 or more); `null`: every type, including
    /// types added later.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<TipoEventoAssinavel>>, required = true, min_items = 1, example = json!(["solicitacao.revogada"]))]
    #[serde(rename = "eventos")]
    pub events: Option<Option<Vec<String>>>,
}

/// A field that must be present, even as `null` (`Some(None)`); absent it stays `None` (the
/// `default`).
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// The answer to `POST /api/webhook-urls/{webhookUrlId}/testar`: the one attempt of the test,
/// as the delivery log shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TesteWebhookUrl {
    /// The test's delivery in the log (`entregas`).
    #[serde(rename = "entregaId")]
    pub delivery_id: Uuid,
    /// The `webhook-id` the receiver got.
    #[serde(rename = "eventoId")]
    pub event_id: Uuid,
    /// The receiver's HTTP status; null when it did not answer.
    #[serde(rename = "statusHttp")]
    #[schema(minimum = 100, maximum = 999)]
    pub http_status: Option<u16>,
    #[serde(rename = "latenciaMs")]
    #[schema(format = Int64, maximum = 4294967295_u64)]
    pub latency_ms: u32,
    /// Why it failed (the log's generic text); null on a 2xx.
    #[serde(rename = "erro")]
    pub error: Option<String>,
}

impl From<application::WebhookTestResult> for TesteWebhookUrl {
    fn from(r: application::WebhookTestResult) -> Self {
        TesteWebhookUrl {
            delivery_id: r.delivery_id,
            event_id: r.event_id,
            http_status: r.http_status,
            latency_ms: r.latency_ms,
            error: r.error,
        }
    }
}

/// A webhook URL of the company (not removed).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookUrlRegistrada {
    pub id: Uuid,
    pub url: String,
    #[serde(rename = "criadoEm")]
    pub created_at: DateTime<Utc>,
    /// Set when it failed without a single success for `webhooks.disable_after_seconds` (5 days
    /// by default) since `falhandoDesde`: it receives nothing more until it is re-enabled
    /// (`POST /api/webhook-urls/{id}/reativar`).
    #[serde(rename = "desativadaEm")]
    pub disabled_at: Option<DateTime<Utc>>,
    /// Its first failed attempt after its last success (test events aside): every attempt since
    /// failed. Null while its last attempt succeeded (or none was made); kept once disabled.
    #[serde(rename = "falhandoDesde")]
    pub failing_since: Option<DateTime<Utc>>,
    /// Why it was disabled: `falhas_sem_sucesso` (the one reason today); null while active.
    #[serde(rename = "motivoDesativacao")]
    pub disabled_reason: Option<String>,
    /// The event types it receives; `null`: every type, including types added later.
    #[schema(value_type = Option<Vec<TipoEventoAssinavel>>)]
    #[serde(rename = "eventos")]
    pub events: Option<Vec<String>>,
    /// The signing secret (`whsec_...`), only in the answer to the registration: it is never
    /// shown again.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(rename = "segredo")]
    pub secret: Option<String>,
}

impl From<WebhookUrl> for WebhookUrlRegistrada {
    fn from(w: WebhookUrl) -> Self {
        WebhookUrlRegistrada {
            id: w.id,
            url: w.url,
            created_at: w.created_at,
            disabled_at: w.disabled_at,
            failing_since: w.failing_since,
            disabled_reason: w.disabled_reason,
            events: w
                .events
                .types()
                .map(|types| types.iter().map(|t| t.as_str().to_owned()).collect()),
            secret: None,
        }
    }
}

/// A new signing secret; the previous one keeps signing alongside it for
/// `webhooks.secret_overlap_seconds` (24 h by default: docs/webhooks.md).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SegredoRotacionado {
    pub id: Uuid,
    /// The new secret (`whsec_...`), shown only here.
    #[serde(rename = "segredo")]
    pub secret: String,
}

/// One delivery of one event to the URL, with its attempts.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Entrega {
    pub id: Uuid,
    /// The event id: the `webhook-id` header of every attempt.
    #[serde(rename = "eventoId")]
    pub event_id: Uuid,
    /// The event type, e.g. `solicitacao.criada`.
    #[schema(value_type = TipoEvento)]
    #[serde(rename = "tipo")]
    pub event_type: String,
    /// `pendente`, `entregue`, `falhou` or `cancelada` (URL removed).
    #[schema(value_type = StatusEntrega)]
    pub status: String,
    #[serde(rename = "criadoEm")]
    pub created_at: DateTime<Utc>,
    #[serde(rename = "proximaTentativaEm")]
    pub next_attempt_at: Option<DateTime<Utc>>,
    #[serde(rename = "tentativas")]
    pub attempts: Vec<Tentativa>,
}

/// One attempt of a delivery.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Tentativa {
    #[serde(rename = "em")]
    pub at: DateTime<Utc>,
    /// The receiver's HTTP status; null when it did not answer.
    #[serde(rename = "statusHttp")]
    #[schema(minimum = 100, maximum = 999)]
    pub http_status: Option<u16>,
    #[serde(rename = "latenciaMs")]
    #[schema(format = Int64, maximum = 4294967295_u64)]
    pub latency_ms: u32,
    /// Why it failed, when it failed.
    #[serde(rename = "erro")]
    pub error: Option<String>,
}

impl From<ports::DeliveryRecord> for Entrega {
    fn from(d: ports::DeliveryRecord) -> Self {
        Entrega {
            id: d.id,
            event_id: d.event_id,
            event_type: d.event_type,
            status: d.status,
            created_at: d.created_at,
            next_attempt_at: d.next_attempt_at,
            attempts: d
                .attempts
                .into_iter()
                .map(|t| Tentativa {
                    at: t.at,
                    http_status: t.http_status,
                    latency_ms: t.latency_ms,
                    error: t.error,
                })
                .collect(),
        }
    }
}

/// `limite` of the delivery log.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LimiteEntregas {
    /// Newest deliveries first, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    #[serde(rename = "limite")]
    pub limit: Option<u32>,
}
