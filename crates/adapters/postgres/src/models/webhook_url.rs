use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::{CompanyId, EventSelection, EventType, WebhookUrl};
use ports::EncryptedSecret;
use uuid::Uuid;

use crate::schema::webhook_urls;

/// A row of `webhook_urls` as the company sees it; removal is soft (`removido_em`). The secrets
/// (`segredo_cifrado`, `segredo_anterior_cifrado`) are not part of it: only the claim of a
/// delivery reads them.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = webhook_urls, check_for_backend(diesel::pg::Pg))]
pub struct WebhookUrlRow {
    pub id: Uuid,
    pub empresa_id: Uuid,
    pub url: String,
    pub criado_em: DateTime<Utc>,
    pub removido_em: Option<DateTime<Utc>>,
    pub desativado_em: Option<DateTime<Utc>>,
    /// NULL: every event; otherwise the types listed (checked by `webhook_urls_eventos_check`).
    pub eventos: Option<Vec<String>>,
    /// The first failed attempt since the last success (issue 39); kept once disabled.
    pub falhando_desde: Option<DateTime<Utc>>,
    /// Why it was disabled: `WebhookUrl::DISABLED_FOR_FAILING`.
    pub motivo_desativacao: Option<String>,
}

impl From<WebhookUrlRow> for WebhookUrl {
    fn from(row: WebhookUrlRow) -> Self {
        WebhookUrl {
            id: row.id,
            company_id: CompanyId(row.empresa_id),
            url: row.url,
            created_at: row.criado_em,
            removed_at: row.removido_em,
            disabled_at: row.desativado_em,
            failing_since: row.falhando_desde,
            disabled_reason: row.motivo_desativacao,
            events: selection_of(row.eventos),
        }
    }
}

/// The stored column as the domain's choice; a name this version does not know (written by a
/// newer one) is left out rather than failing the read.
pub fn selection_of(stored: Option<Vec<String>>) -> EventSelection {
    match stored {
        None => EventSelection::All,
        Some(names) => EventSelection::Only(
            EventType::SUBSCRIBABLE
                .into_iter()
                .filter(|t| names.iter().any(|n| n == t.as_str()))
                .collect(),
        ),
    }
}

/// The column for `selection`: NULL for all, the wire names otherwise.
pub fn stored_selection(selection: &EventSelection) -> Option<Vec<&'static str>> {
    selection
        .types()
        .map(|types| types.iter().map(|t| t.as_str()).collect())
}

/// A new row of `webhook_urls`, with its encrypted signing secret (no previous one). Its `Debug`
/// hides the secret.
#[derive(Clone, Insertable)]
#[diesel(table_name = webhook_urls, check_for_backend(diesel::pg::Pg))]
pub struct NewWebhookUrl<'a> {
    pub id: Uuid,
    pub empresa_id: Uuid,
    pub url: &'a str,
    pub criado_em: DateTime<Utc>,
    pub removido_em: Option<DateTime<Utc>>,
    pub desativado_em: Option<DateTime<Utc>>,
    pub segredo_cifrado: &'a str,
    /// `WebhookUrl::normalized` of `url`: what "the same URL" compares.
    pub url_normalizada: &'a str,
    pub eventos: Option<Vec<&'static str>>,
}

impl<'a> NewWebhookUrl<'a> {
    pub fn new(webhook: &'a WebhookUrl, normalized: &'a str, secret: &'a EncryptedSecret) -> Self {
        NewWebhookUrl {
            id: webhook.id,
            empresa_id: webhook.company_id.0,
            url: &webhook.url,
            criado_em: webhook.created_at,
            removido_em: webhook.removed_at,
            desativado_em: webhook.disabled_at,
            segredo_cifrado: &secret.0,
            url_normalizada: normalized,
            eventos: stored_selection(&webhook.events),
        }
    }
}

impl std::fmt::Debug for NewWebhookUrl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewWebhookUrl")
            .field("id", &self.id)
            .field("empresa_id", &self.empresa_id)
            .field("url", &self.url)
            .field("criado_em", &self.criado_em)
            .field("removido_em", &self.removido_em)
            .field("desativado_em", &self.desativado_em)
            .field("eventos", &self.eventos)
            .field("segredo_cifrado", &"<redacted>")
            .finish()
    }
}
