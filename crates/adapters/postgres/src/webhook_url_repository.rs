use chrono::{DateTime, Utc};
use diesel::dsl::{count_star, exists};
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use domain::{CompanyId, EventSelection, WebhookUrl};
use ports::{EncryptedSecret, InsertWebhookUrlError, RepoError, WebhookUrlRepository};
use uuid::Uuid;

use crate::conn::{is_constraint, violated_constraint, with_conn};
use crate::models::{NewWebhookUrl, WebhookUrlRow};
use crate::schema::webhook_urls;
use crate::tenant::Tenant;
use crate::PgPool;

/// [`WebhookUrlRepository`] on `webhook_urls`; every
/// query filters by `empresa_id`. The secrets are written here and read only by the delivery
/// claim ([`crate::PgWebhookDeliveryRepository`]).
#[derive(Clone)]
pub struct PgWebhookUrlRepository {
    pool: PgPool,
}

impl PgWebhookUrlRepository {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

/// The partial unique index "one active registration per company and normalized URL".
const ACTIVE_URL_UNIQUE: &str = "webhook_urls_empresa_url_ativa_key";

/// What a registration's transaction did.
enum Registration {
    Inserted,
    LimitReached,
    Duplicate,
}

impl WebhookUrlRepository for PgWebhookUrlRepository {
    /// In one transaction: the company is locked (`per_company::lock_company`: it serializes the
    /// company's registrations without blocking the foreign-key checks of its other writes),
    /// then an active registration of the same normalized URL is `Duplicate`, `max_active`
    /// active ones (disabled included) are `LimitReached`, else the row is inserted. The lock
    /// makes the count exact under concurrent registrations; the partial unique index
    /// `webhook_urls_empresa_url_ativa_key` guarantees the duplicate rule even without it.
    fn insert(
        &self,
        webhook: &WebhookUrl,
        secret: &EncryptedSecret,
        max_active: u32,
    ) -> Result<(), InsertWebhookUrlError> {
        let normalized = WebhookUrl::normalized(&webhook.url);
        let empresa = webhook.company_id.0;
        let outcome = with_conn(&self.pool, "inserting a webhook URL", |conn| {
            let result = conn.transaction(|conn| {
                crate::per_company::lock_company(conn, empresa)?;
                let active = webhook_urls::table::of(CompanyId(empresa))
                    .filter(webhook_urls::removido_em.is_null());
                let duplicate = diesel::select(exists(
                    active.filter(webhook_urls::url_normalizada.eq(&normalized)),
                ))
                .get_result::<bool>(conn)?;
                if duplicate {
                    return Ok(Registration::Duplicate);
                }
                let count: i64 = active.select(count_star()).get_result(conn)?;
                if count >= i64::from(max_active) {
                    return Ok(Registration::LimitReached);
                }
                diesel::insert_into(webhook_urls::table)
                    .values(NewWebhookUrl::new(webhook, &normalized, secret))
                    .execute(conn)?;
                Ok(Registration::Inserted)
            });
            match result {
                Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info))
                    if is_constraint(violated_constraint(&*info).as_deref(), ACTIVE_URL_UNIQUE) =>
                {
                    Ok(Registration::Duplicate)
                }
                other => other,
            }
        })?;
        match outcome {
            Registration::Inserted => Ok(()),
            Registration::LimitReached => Err(InsertWebhookUrlError::LimitReached),
            Registration::Duplicate => Err(InsertWebhookUrlError::Duplicate),
        }
    }

    /// Disabled URLs included, with their `desativado_em`.
    fn list_active(&self, empresa: CompanyId) -> Result<Vec<WebhookUrl>, RepoError> {
        let rows = with_conn(&self.pool, "listing webhook URLs", |conn| {
            webhook_urls::table::of(empresa)
                .filter(webhook_urls::removido_em.is_null())
                .order((webhook_urls::criado_em.asc(), webhook_urls::id.asc()))
                .select(WebhookUrlRow::as_select())
                .load(conn)
        })?;
        Ok(rows.into_iter().map(WebhookUrl::from).collect())
    }

    /// One `UPDATE ... RETURNING`, scoped by company and not removed.
    fn set_events(
        &self,
        empresa: CompanyId,
        id: Uuid,
        eventos: &EventSelection,
    ) -> Result<Option<WebhookUrl>, RepoError> {
        let stored = crate::models::webhook_url::stored_selection(eventos);
        let row = with_conn(&self.pool, "choosing the events of a webhook URL", |conn| {
            diesel::update(
                webhook_urls::table::row(empresa, id).filter(webhook_urls::removido_em.is_null()),
            )
            .set(webhook_urls::eventos.eq(stored))
            .returning(WebhookUrlRow::as_returning())
            .get_result(conn)
            .optional()
        })?;
        Ok(row.map(WebhookUrl::from))
    }

    fn get(&self, empresa: CompanyId, id: Uuid) -> Result<Option<WebhookUrl>, RepoError> {
        let row = with_conn(&self.pool, "reading a webhook URL", |conn| {
            webhook_urls::table::row(empresa, id)
                .filter(webhook_urls::removido_em.is_null())
                .select(WebhookUrlRow::as_select())
                .first(conn)
                .optional()
        })?;
        Ok(row.map(WebhookUrl::from))
    }

    /// One statement: `UPDATE webhook_urls SET removido_em = $now, entregas_por_acertar = true
    /// WHERE id = $id AND empresa_id = $empresa AND removido_em IS NULL` (so two concurrent
    /// deletes cannot both succeed). Its pending deliveries are not touched here, so the answer
    /// does not wait for them however many there are: the claim skips a removed URL's
    /// deliveries at once, and the delivery worker cancels them in bounded batches behind
    /// (`PgWebhookDeliveryRepository::settle_url`).
    fn soft_delete(
        &self,
        empresa: CompanyId,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        let changed = with_conn(&self.pool, "removing a webhook URL", |conn| {
            diesel::update(
                webhook_urls::table::row(empresa, id).filter(webhook_urls::removido_em.is_null()),
            )
            .set((
                webhook_urls::removido_em.eq(now),
                webhook_urls::entregas_por_acertar.eq(true),
            ))
            .execute(conn)
        })?;
        Ok(changed > 0)
    }

    /// In one transaction: the URL, if disabled, gets `desativado_em`, its reason and
    /// `falhando_desde` cleared and `reativado_em = now` (only failures after the re-enabling count
    /// towards disabling it again) and is marked so that its parked deliveries are brought back in batches
    /// behind (`PgWebhookDeliveryRepository::settle_url`); then the URL is read back. An active
    /// URL is returned unchanged.
    fn reenable(
        &self,
        empresa: CompanyId,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<Option<WebhookUrl>, RepoError> {
        let row = with_conn(&self.pool, "re-enabling a webhook URL", |conn| {
            conn.transaction(|conn| {
                let live = webhook_urls::table::row(empresa, id)
                    .filter(webhook_urls::removido_em.is_null());
                diesel::update(live.filter(webhook_urls::desativado_em.is_not_null()))
                    .set((
                        webhook_urls::desativado_em.eq(None::<DateTime<Utc>>),
                        webhook_urls::falhando_desde.eq(None::<DateTime<Utc>>),
                        webhook_urls::motivo_desativacao.eq(None::<String>),
                        webhook_urls::reativado_em.eq(now),
                        webhook_urls::entregas_por_acertar.eq(true),
                    ))
                    .execute(conn)?;
                live.select(WebhookUrlRow::as_select())
                    .first(conn)
                    .optional()
            })
        })?;
        Ok(row.map(WebhookUrl::from))
    }

    /// One statement: the current secret moves to `segredo_anterior_cifrado` (valid until
    /// `previous_valid_until`) as `secret` takes its place (the right-hand sides read the row
    /// before the update). A second rotation within the overlap drops the oldest secret.
    fn rotate_secret(
        &self,
        empresa: CompanyId,
        id: Uuid,
        secret: &EncryptedSecret,
        previous_valid_until: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        let changed = with_conn(&self.pool, "rotating a webhook URL's secret", |conn| {
            diesel::update(
                webhook_urls::table::row(empresa, id).filter(webhook_urls::removido_em.is_null()),
            )
            .set((
                webhook_urls::segredo_anterior_cifrado.eq(webhook_urls::segredo_cifrado.nullable()),
                webhook_urls::segredo_anterior_ate.eq(previous_valid_until),
                webhook_urls::segredo_cifrado.eq(&secret.0),
            ))
            .execute(conn)
        })?;
        Ok(changed > 0)
    }
}
