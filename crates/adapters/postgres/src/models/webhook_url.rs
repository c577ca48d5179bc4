use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::{CompanyId, WebhookUrl};
use uuid::Uuid;

use crate::schema::webhook_urls;

/// A row of `webhook_urls`; removal is soft (`removido_em`).
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = webhook_urls, check_for_backend(diesel::pg::Pg))]
pub struct WebhookUrlRow {
    pub id: Uuid,
    pub empresa_id: Uuid,
    pub url: String,
    pub criado_em: DateTime<Utc>,
    pub removido_em: Option<DateTime<Utc>>,
}

impl From<WebhookUrlRow> for WebhookUrl {
    fn from(row: WebhookUrlRow) -> Self {
        WebhookUrl {
            id: row.id,
            empresa_id: CompanyId(row.empresa_id),
            url: row.url,
            criado_em: row.criado_em,
            removido_em: row.removido_em,
        }
    }
}

/// A new row of `webhook_urls`.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = webhook_urls, check_for_backend(diesel::pg::Pg))]
pub struct NewWebhookUrl<'a> {
    pub id: Uuid,
    pub empresa_id: Uuid,
    pub url: &'a str,
    pub criado_em: DateTime<Utc>,
    pub removido_em: Option<DateTime<Utc>>,
}

impl<'a> From<&'a WebhookUrl> for NewWebhookUrl<'a> {
    fn from(webhook: &'a WebhookUrl) -> Self {
        NewWebhookUrl {
            id: webhook.id,
            empresa_id: webhook.empresa_id.0,
            url: &webhook.url,
            criado_em: webhook.criado_em,
            removido_em: webhook.removido_em,
        }
    }
}
