//! Webhook URLs: where a company is notified. Removal is soft: the row keeps its removal time.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::CompanyId;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookUrl {
    pub id: Uuid,
    pub empresa_id: CompanyId,
    pub url: String,
    pub criado_em: DateTime<Utc>,
    pub removido_em: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookUrlError {
    #[error("a URL deve ser absoluta, com esquema http ou https e um host")]
    NotAbsoluteHttp,
    #[error("a URL tem mais de {max} caracteres")]
    TooLong { max: usize },
}

impl WebhookUrl {
    pub const MAX_LEN: usize = 2048;

    /// Checks that `raw` is an absolute http(s) URL with a host and returns it trimmed.
    pub fn validate_url(raw: &str) -> Result<String, WebhookUrlError> {
        todo!("{raw}")
    }
}
