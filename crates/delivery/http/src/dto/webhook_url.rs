use chrono::{DateTime, Utc};
use domain::WebhookUrl;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// Body of `POST /api/webhook-urls`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RegistrarWebhookUrl {
    /// Absolute http(s) URL that will receive the company's notifications.
    #[schema(example = "https://exemplo.com.br/webhooks/consentimento")]
    pub url: String,
}

/// A registered, active webhook URL.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookUrlRegistrada {
    pub id: Uuid,
    pub url: String,
    pub criado_em: DateTime<Utc>,
}

impl From<WebhookUrl> for WebhookUrlRegistrada {
    fn from(w: WebhookUrl) -> Self {
        WebhookUrlRegistrada {
            id: w.id,
            url: w.url,
            criado_em: w.criado_em,
        }
    }
}
