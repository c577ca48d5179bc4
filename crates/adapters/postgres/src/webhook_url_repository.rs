use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::{CompanyId, WebhookUrl};
use ports::{RepoError, WebhookUrlRepository};
use uuid::Uuid;

use crate::conn::with_conn;
use crate::models::{NewWebhookUrl, WebhookUrlRow};
use crate::schema::webhook_urls;
use crate::PgPool;

/// [`WebhookUrlRepository`] on `webhook_urls`; every query filters by `empresa_id`.
#[derive(Clone)]
pub struct PgWebhookUrlRepository {
    pool: PgPool,
}

impl PgWebhookUrlRepository {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

impl WebhookUrlRepository for PgWebhookUrlRepository {
    fn insert(&self, webhook: &WebhookUrl) -> Result<(), RepoError> {
        with_conn(&self.pool, "inserting a webhook URL", |conn| {
            diesel::insert_into(webhook_urls::table)
                .values(NewWebhookUrl::from(webhook))
                .execute(conn)
        })?;
        Ok(())
    }

    fn list_active(&self, empresa: CompanyId) -> Result<Vec<WebhookUrl>, RepoError> {
        let rows = with_conn(&self.pool, "listing webhook URLs", |conn| {
            webhook_urls::table
                .filter(webhook_urls::empresa_id.eq(empresa.0))
                .filter(webhook_urls::removido_em.is_null())
                .order((webhook_urls::criado_em.asc(), webhook_urls::id.asc()))
                .select(WebhookUrlRow::as_select())
                .load(conn)
        })?;
        Ok(rows.into_iter().map(WebhookUrl::from).collect())
    }

    /// `UPDATE webhook_urls SET removido_em = $3 WHERE id = $1 AND empresa_id = $2 AND
    /// removido_em IS NULL`: one statement, so two concurrent deletes cannot both succeed.
    fn soft_delete(
        &self,
        empresa: CompanyId,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        let changed = with_conn(&self.pool, "removing a webhook URL", |conn| {
            diesel::update(
                webhook_urls::table
                    .filter(webhook_urls::id.eq(id))
                    .filter(webhook_urls::empresa_id.eq(empresa.0))
                    .filter(webhook_urls::removido_em.is_null()),
            )
            .set(webhook_urls::removido_em.eq(now))
            .execute(conn)
        })?;
        Ok(changed > 0)
    }
}
