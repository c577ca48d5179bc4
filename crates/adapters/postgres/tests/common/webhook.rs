//! Webhook fixtures: URLs registered with a (fake) encrypted secret, and direct reads of the
//! outbox tables.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::{Company, WebhookUrl};
use ports::{
    DueDelivery, EncryptedSecret, RepoError, WebhookDeliveryRepository, WebhookUrlRepository,
};
use postgres_adapter::models::{WebhookEntregaRow, WebhookEventoRow, WebhookTentativaRow};
use postgres_adapter::schema::{
    webhook_entregas, webhook_eventos, webhook_tentativas, webhook_urls,
};
use postgres_adapter::{PgPool, PgWebhookUrlRepository};
use testkit::TestDb;
use uuid::Uuid;

/// The stored form of URL `id`'s first secret in these tests (never decrypted here).
pub fn secret_of(id: Uuid) -> EncryptedSecret {
    EncryptedSecret(format!("cifrado:{id}"))
}

/// A new active URL of `empresa`, not stored.
pub fn webhook(empresa: &Company, url: &str, criado_em: DateTime<Utc>) -> WebhookUrl {
    WebhookUrl {
        id: Uuid::new_v4(),
        company_id: empresa.id,
        url: url.to_owned(),
        created_at: criado_em,
        removed_at: None,
        disabled_at: None,
        failing_since: None,
        disabled_reason: None,
        events: domain::EventSelection::All,
    }
}

/// Stores a new active URL of `empresa` with the secret [`secret_of`] its id and returns it.
pub fn register(
    pool: &PgPool,
    empresa: &Company,
    url: &str,
    criado_em: DateTime<Utc>,
) -> WebhookUrl {
    let hook = webhook(empresa, url, criado_em);
    PgWebhookUrlRepository::new(pool.clone())
        .insert(&hook, &secret_of(hook.id), u32::MAX)
        .expect("insert the webhook URL");
    hook
}

/// Sets (or clears) the disabling time of URL `id`.
pub fn set_disabled(db: &TestDb, id: Uuid, when: Option<DateTime<Utc>>) {
    diesel::update(webhook_urls::table.filter(webhook_urls::id.eq(id)))
        .set(webhook_urls::desativado_em.eq(when))
        .execute(&mut db.conn())
        .unwrap();
}

/// The (current, previous, previous until) secrets of URL `id`, as stored.
pub fn secrets(db: &TestDb, id: Uuid) -> (String, Option<String>, Option<DateTime<Utc>>) {
    webhook_urls::table
        .filter(webhook_urls::id.eq(id))
        .select((
            webhook_urls::segredo_cifrado,
            webhook_urls::segredo_anterior_cifrado,
            webhook_urls::segredo_anterior_ate,
        ))
        .first(&mut db.conn())
        .unwrap()
}

/// Every event, oldest first.
pub fn events(db: &TestDb) -> Vec<WebhookEventoRow> {
    webhook_eventos::table
        .order((webhook_eventos::criado_em, webhook_eventos::id))
        .select(WebhookEventoRow::as_select())
        .load(&mut db.conn())
        .unwrap()
}

/// The events of type `tipo`, oldest first.
pub fn events_of(db: &TestDb, tipo: &str) -> Vec<WebhookEventoRow> {
    events(db).into_iter().filter(|e| e.tipo == tipo).collect()
}

/// Every delivery, by creation then id.
pub fn deliveries(db: &TestDb) -> Vec<WebhookEntregaRow> {
    webhook_entregas::table
        .order((webhook_entregas::criado_em, webhook_entregas::id))
        .select(WebhookEntregaRow::as_select())
        .load(&mut db.conn())
        .unwrap()
}

/// The deliveries of event `evento_id`.
pub fn deliveries_of(db: &TestDb, evento_id: Uuid) -> Vec<WebhookEntregaRow> {
    deliveries(db)
        .into_iter()
        .filter(|d| d.evento_id == evento_id)
        .collect()
}

/// The stored delivery `id`.
pub fn delivery(db: &TestDb, id: Uuid) -> WebhookEntregaRow {
    webhook_entregas::table
        .filter(webhook_entregas::id.eq(id))
        .select(WebhookEntregaRow::as_select())
        .first(&mut db.conn())
        .unwrap()
}

/// The attempts of delivery `id`, in order.
pub fn attempts(db: &TestDb, id: Uuid) -> Vec<WebhookTentativaRow> {
    webhook_tentativas::table
        .filter(webhook_tentativas::entrega_id.eq(id))
        .order((webhook_tentativas::em, webhook_tentativas::id))
        .select(WebhookTentativaRow::as_select())
        .load(&mut db.conn())
        .unwrap()
}

/// The sorted ids of the URLs `rows` go to.
pub fn url_ids(rows: &[WebhookEntregaRow]) -> Vec<Uuid> {
    let mut ids: Vec<Uuid> = rows.iter().map(|d| d.webhook_url_id).collect();
    ids.sort();
    ids
}

/// `ids` sorted.
pub fn sorted(mut ids: Vec<Uuid>) -> Vec<Uuid> {
    ids.sort();
    ids
}

/// Gives delivery `id` a new lease token, as a claim would, and returns it: for tests that
/// record an attempt without going through `claim_due`.
pub fn held(db: &TestDb, id: Uuid) -> Uuid {
    let token = Uuid::new_v4();
    diesel::update(webhook_entregas::table.filter(webhook_entregas::id.eq(id)))
        .set(webhook_entregas::token_reivindicacao.eq(token))
        .execute(&mut db.conn())
        .unwrap();
    token
}

/// Claims up to `limit` deliveries due at `now` the way a sender pool with no share per company
/// would: the companies with due work (`companies_due`), the one waiting longest first, each
/// claim one at a time by turns (`claim_due`, a new lease token each), until `limit` or until a
/// turn finds nothing.
pub fn claim(
    repo: &dyn WebhookDeliveryRepository,
    limit: u32,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
) -> Result<Vec<DueDelivery>, RepoError> {
    let mut due = repo.companies_due(now)?;
    due.sort_by_key(|c| (c.since, c.company_id.0));
    let mut claimed: Vec<DueDelivery> = Vec::new();
    loop {
        let mut progressed = false;
        for company in &due {
            if claimed.len() >= limit as usize {
                return Ok(claimed);
            }
            let got = repo.claim_due(company.company_id, 1, now, lease_until, Uuid::new_v4())?;
            // a lease ending at `now` leaves a claimed delivery due: one claim takes it once
            let got: Vec<DueDelivery> = got
                .into_iter()
                .filter(|d| claimed.iter().all(|c| c.id != d.id))
                .collect();
            progressed |= !got.is_empty();
            claimed.extend(got);
        }
        if !progressed {
            return Ok(claimed);
        }
    }
}
