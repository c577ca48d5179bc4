use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::dsl::exists;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::CompanyId;
use ports::{
    DeliveryAttempt, DeliveryOutcome, DeliveryRecord, DueDelivery, RepoError,
    WebhookDeliveryRepository,
};
use uuid::Uuid;

use crate::conn::{count_u32, with_conn};
use crate::models::webhook_entrega::status;
use crate::models::{DeliveryLogRow, DueDeliveryRow, NewWebhookTentativa, WebhookTentativaRow};
use crate::schema::{
    webhook_entregas as we, webhook_eventos as ev, webhook_tentativas as wt, webhook_urls as wu,
};
use crate::PgPool;

/// `claim_due` in one statement. The subquery locks up to $3 `pendente` deliveries due at $2
/// (oldest due first, along the partial index `webhook_entregas_pendentes_idx`) whose URL is
/// neither removed nor disabled, skipping rows another sender holds (`SKIP LOCKED`); the update
/// pushes their next attempt to the lease $1; the outer select joins what sending needs: the
/// URL, the event's body, the secret, and the previous secret only while its overlap lasts
/// (`segredo_anterior_ate` after $2).
const CLAIM_DUE: &str = "\
WITH reivindicadas AS (
    UPDATE webhook_entregas e
    SET proxima_tentativa_em = $1
    FROM (
        SELECT e.id
        FROM webhook_entregas e
        JOIN webhook_urls u ON u.id = e.webhook_url_id
        WHERE e.status = 'pendente' AND e.proxima_tentativa_em <= $2
          AND u.removido_em IS NULL AND u.desativado_em IS NULL
        ORDER BY e.proxima_tentativa_em
        LIMIT $3
        FOR UPDATE OF e SKIP LOCKED
    ) c
    WHERE e.id = c.id
    RETURNING e.id, e.empresa_id, e.webhook_url_id, e.evento_id, e.tentativas
)
SELECT r.id, r.empresa_id, r.webhook_url_id, u.url, r.evento_id, ev.payload, r.tentativas,
       u.segredo_cifrado,
       CASE WHEN u.segredo_anterior_ate > $2 THEN u.segredo_anterior_cifrado END
           AS segredo_anterior_cifrado
FROM reivindicadas r
JOIN webhook_urls u ON u.id = r.webhook_url_id
JOIN webhook_eventos ev ON ev.id = r.evento_id";

/// The delivery part of `record_attempt`: $1 delivery, $2 the attempt's instant, $3 the status
/// the outcome leads to, $4 the next attempt (NULL unless retrying). The attempt always counts
/// (`tentativas`) and updates `atualizado_em`; the status moves only from `pendente`, so a
/// delivery cancelled (its URL removed) while being sent stays `cancelada`. The right-hand sides
/// read the row before the update.
const RECORD_ATTEMPT: &str = "\
UPDATE webhook_entregas SET
    tentativas = tentativas + 1,
    atualizado_em = $2,
    status = CASE WHEN status = 'pendente' THEN $3 ELSE status END,
    proxima_tentativa_em = CASE WHEN status = 'pendente' THEN $4 ELSE proxima_tentativa_em END,
    entregue_em = CASE WHEN status = 'pendente' AND $3 = 'entregue' THEN $2 ELSE entregue_em END
WHERE id = $1";

/// `disable_failing_urls` in one statement: $1 now, $2 the start of the window. Each active URL
/// with a delivery created in the window that `falhou` and none created in the window that was
/// `entregue` (both read along `webhook_entregas_url_criado_em_idx`). A URL re-enabled
/// (`reativado_em`) is judged only on deliveries that changed since: the failures that got it
/// disabled do not disable it again. Concurrent runs disable a URL once (the second finds
/// `desativado_em` set).
const DISABLE_FAILING_URLS: &str = "\
UPDATE webhook_urls u
SET desativado_em = $1
WHERE u.removido_em IS NULL AND u.desativado_em IS NULL
  AND EXISTS (
      SELECT 1 FROM webhook_entregas e
      WHERE e.webhook_url_id = u.id AND e.criado_em >= $2 AND e.status = 'falhou'
        AND e.atualizado_em >= COALESCE(u.reativado_em, '-infinity')
  )
  AND NOT EXISTS (
      SELECT 1 FROM webhook_entregas e
      WHERE e.webhook_url_id = u.id AND e.criado_em >= $2 AND e.status = 'entregue'
        AND e.atualizado_em >= COALESCE(u.reativado_em, '-infinity')
  )";

/// [`WebhookDeliveryRepository`] on `webhook_entregas`, `webhook_tentativas` (and
/// `webhook_eventos`, `webhook_urls` for what they join). The company's operations filter by
/// `empresa_id`; the sender's (`claim_due`, `record_attempt`, `disable_failing_urls`) span
/// companies, by design. Events and deliveries are written by the repositories whose change
/// causes them (see `outbox.rs`).
#[derive(Clone)]
pub struct PgWebhookDeliveryRepository {
    pool: PgPool,
}

impl PgWebhookDeliveryRepository {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

fn unexpected(e: anyhow::Error, operation: &'static str) -> RepoError {
    RepoError::Unexpected(e.context(operation))
}

impl WebhookDeliveryRepository for PgWebhookDeliveryRepository {
    /// See [`CLAIM_DUE`]; the claimed deliveries come back in no particular order.
    fn claim_due(
        &self,
        limit: u32,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
    ) -> Result<Vec<DueDelivery>, RepoError> {
        const OPERATION: &str = "claiming webhook deliveries";
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows = with_conn(&self.pool, OPERATION, |conn| {
            diesel::sql_query(CLAIM_DUE)
                .bind::<Timestamptz, _>(lease_until)
                .bind::<Timestamptz, _>(now)
                .bind::<BigInt, _>(i64::from(limit))
                .load::<DueDeliveryRow>(conn)
        })?;
        rows.into_iter()
            .map(DueDeliveryRow::try_into_domain)
            .collect::<anyhow::Result<_>>()
            .map_err(|e| unexpected(e, OPERATION))
    }

    /// In one transaction: [`RECORD_ATTEMPT`], then the attempt's row. An unknown delivery is
    /// `Unexpected` (only final deliveries are ever deleted, by the retention purge, and a
    /// delivery being sent is pending).
    fn record_attempt(
        &self,
        delivery_id: Uuid,
        attempt: &DeliveryAttempt,
        outcome: DeliveryOutcome,
    ) -> Result<(), RepoError> {
        let (next_status, next_attempt) = match outcome {
            DeliveryOutcome::Delivered => (status::ENTREGUE, None),
            DeliveryOutcome::RetryAt(at) => (status::PENDENTE, Some(at)),
            DeliveryOutcome::Failed => (status::FALHOU, None),
        };
        let row = NewWebhookTentativa::new(delivery_id, attempt);
        with_conn(&self.pool, "recording a webhook delivery attempt", |conn| {
            conn.transaction(|conn| {
                let changed = diesel::sql_query(RECORD_ATTEMPT)
                    .bind::<SqlUuid, _>(delivery_id)
                    .bind::<Timestamptz, _>(attempt.em)
                    .bind::<Text, _>(next_status)
                    .bind::<Nullable<Timestamptz>, _>(next_attempt)
                    .execute(conn)?;
                if changed == 0 {
                    return Err(DieselError::NotFound);
                }
                diesel::insert_into(wt::table).values(&row).execute(conn)?;
                Ok(())
            })
        })
    }

    /// In one read-only `REPEATABLE READ` transaction (so the attempts match the deliveries
    /// read): the URL's ownership (any removal state), the newest `limit` deliveries with their
    /// event's type (along `webhook_entregas_url_criado_em_idx`, ties by id), then their
    /// attempts in one query, oldest first.
    fn list_for_url(
        &self,
        empresa: CompanyId,
        webhook_url_id: Uuid,
        limit: u32,
    ) -> Result<Option<Vec<DeliveryRecord>>, RepoError> {
        const OPERATION: &str = "listing webhook deliveries";
        let found = with_conn(&self.pool, OPERATION, |conn| {
            conn.build_transaction()
                .repeatable_read()
                .read_only()
                .run(|conn| {
                    let owned = wu::table
                        .filter(wu::id.eq(webhook_url_id))
                        .filter(wu::empresa_id.eq(empresa.0))
                        .select(wu::id)
                        .first::<Uuid>(conn)
                        .optional()?;
                    if owned.is_none() {
                        return Ok(None);
                    }
                    let deliveries = we::table
                        .inner_join(ev::table)
                        .filter(we::webhook_url_id.eq(webhook_url_id))
                        .filter(we::empresa_id.eq(empresa.0))
                        .order((we::criado_em.desc(), we::id.desc()))
                        .limit(i64::from(limit))
                        .select((
                            we::id,
                            we::evento_id,
                            ev::tipo,
                            we::status,
                            we::criado_em,
                            we::proxima_tentativa_em,
                        ))
                        .load::<DeliveryLogRow>(conn)?;
                    let ids: Vec<Uuid> = deliveries.iter().map(|d| d.id).collect();
                    let attempts = if ids.is_empty() {
                        Vec::new()
                    } else {
                        wt::table
                            .filter(wt::entrega_id.eq_any(&ids))
                            .order((wt::entrega_id, wt::em, wt::id))
                            .select(WebhookTentativaRow::as_select())
                            .load(conn)?
                    };
                    Ok(Some((deliveries, attempts)))
                })
        })?;
        let Some((deliveries, attempts)) = found else {
            return Ok(None);
        };
        let mut by_delivery: HashMap<Uuid, Vec<DeliveryAttempt>> = HashMap::new();
        for row in attempts {
            let entrega_id = row.entrega_id;
            let attempt = row
                .try_into_domain()
                .map_err(|e| unexpected(e, OPERATION))?;
            by_delivery.entry(entrega_id).or_default().push(attempt);
        }
        Ok(Some(
            deliveries
                .into_iter()
                .map(|d| {
                    let attempts = by_delivery.remove(&d.id).unwrap_or_default();
                    d.into_domain(attempts)
                })
                .collect(),
        ))
    }

    /// One statement: `pendente`, due at `now`, updated at `now`, no longer delivered
    /// (`entregue_em` cleared; the attempts keep the history). Its attempt count is kept.
    fn replay(
        &self,
        empresa: CompanyId,
        webhook_url_id: Uuid,
        delivery_id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        let changed = with_conn(&self.pool, "replaying a webhook delivery", |conn| {
            let url_is_live = exists(
                wu::table
                    .filter(wu::id.eq(webhook_url_id))
                    .filter(wu::empresa_id.eq(empresa.0))
                    .filter(wu::removido_em.is_null()),
            );
            diesel::update(
                we::table
                    .filter(we::id.eq(delivery_id))
                    .filter(we::webhook_url_id.eq(webhook_url_id))
                    .filter(we::empresa_id.eq(empresa.0))
                    .filter(url_is_live),
            )
            .set((
                we::status.eq(status::PENDENTE),
                we::proxima_tentativa_em.eq(now),
                we::atualizado_em.eq(now),
                we::entregue_em.eq(None::<DateTime<Utc>>),
            ))
            .execute(conn)
        })?;
        Ok(changed > 0)
    }

    /// See [`DISABLE_FAILING_URLS`]; the window starts at `now - window`. The URLs' pending
    /// deliveries are left as they are (the claim skips disabled URLs).
    fn disable_failing_urls(
        &self,
        now: DateTime<Utc>,
        window: chrono::Duration,
    ) -> Result<u32, RepoError> {
        let since = now
            .checked_sub_signed(window)
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        let disabled = with_conn(&self.pool, "disabling failing webhook URLs", |conn| {
            diesel::sql_query(DISABLE_FAILING_URLS)
                .bind::<Timestamptz, _>(now)
                .bind::<Timestamptz, _>(since)
                .execute(conn)
        })?;
        Ok(count_u32(disabled))
    }
}
