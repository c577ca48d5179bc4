use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::dsl::exists;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::CompanyId;
use ports::{
    ClaimLimits, DeliveryAttempt, DeliveryOutcome, DeliveryRecord, DueDelivery, EncryptedSecret,
    RepoError, WebhookDeliveryRepository,
};
use uuid::Uuid;

use crate::conn::{count_u32, with_conn};
use crate::models::webhook_entrega::status;
use crate::models::{DeliveryLogRow, DueDeliveryRow, NewWebhookTentativa, WebhookTentativaRow};
use crate::schema::{
    webhook_entregas as we, webhook_eventos as ev, webhook_tentativas as wt, webhook_urls as wu,
};
use crate::PgPool;

/// `claim_due` in one statement, fair across companies. `devidas`: each company with
/// deliveries due at $2 and since when its oldest one waits. For each, a `LATERAL` subquery
/// locks (`FOR UPDATE ... SKIP LOCKED`, skipping rows another sender holds) its soonest due
/// deliveries whose URL is neither removed nor disabled, at most the company's share: $4 less
/// what this process has in flight for it ($5 companies, $6 counts); they are numbered in
/// the company (`vez`). Ordered by `vez` then by how long the company waits, the first $3 take
/// turns across companies (round robin). The update pushes their next attempt to the lease $1
/// and gives each a new lease token; the outer select joins what sending needs: the URL, the
/// event's body, the secret, and the previous secret only while its overlap lasts
/// (`segredo_anterior_ate` after $2). Rows locked but beyond $3 are released at the end of the
/// statement.
const CLAIM_DUE: &str = "\
WITH devidas AS (
    SELECT e.empresa_id, min(e.proxima_tentativa_em) AS desde
    FROM webhook_entregas e
    WHERE e.status = 'pendente' AND e.proxima_tentativa_em <= $2
    GROUP BY e.empresa_id
),
escolhidas AS (
    SELECT c.id
    FROM devidas d
    CROSS JOIN LATERAL (
        SELECT x.id, row_number() OVER (ORDER BY x.proxima_tentativa_em, x.id) AS vez
        FROM (
            SELECT e.id, e.proxima_tentativa_em
            FROM webhook_entregas e
            JOIN webhook_urls u ON u.id = e.webhook_url_id
            WHERE e.empresa_id = d.empresa_id
              AND e.status = 'pendente' AND e.proxima_tentativa_em <= $2
              AND u.removido_em IS NULL AND u.desativado_em IS NULL
            ORDER BY e.proxima_tentativa_em, e.id
            LIMIT GREATEST(0, $4 - COALESCE((
                SELECT b.n FROM unnest($5::uuid[], $6::bigint[]) AS b(empresa_id, n)
                WHERE b.empresa_id = d.empresa_id), 0))
            FOR UPDATE OF e SKIP LOCKED
        ) x
    ) c
    ORDER BY c.vez, d.desde, d.empresa_id
    LIMIT $3
),
reivindicadas AS (
    UPDATE webhook_entregas e
    SET proxima_tentativa_em = $1, token_reivindicacao = gen_random_uuid()
    FROM escolhidas c
    WHERE e.id = c.id
    RETURNING e.id, e.empresa_id, e.webhook_url_id, e.evento_id, e.tentativas,
              e.token_reivindicacao
)
SELECT r.id, r.empresa_id, r.webhook_url_id, u.url, r.evento_id, ev.payload, r.tentativas,
       u.segredo_cifrado,
       CASE WHEN u.segredo_anterior_ate > $2 THEN u.segredo_anterior_cifrado END
           AS segredo_anterior_cifrado,
       r.token_reivindicacao
FROM reivindicadas r
JOIN webhook_urls u ON u.id = r.webhook_url_id
JOIN webhook_eventos ev ON ev.id = r.evento_id";

/// The delivery part of `record_attempt`: $1 delivery, $2 the attempt's instant, $3 the status
/// the outcome leads to, $4 the next attempt (NULL unless retrying), $5 the lease token the
/// sender claimed with: a delivery claimed again since (its lease expired) is left alone. The
/// attempt counts (`tentativas`), updates `atualizado_em` and ends the lease; the status moves
/// only from `pendente`, so a delivery cancelled (its URL removed) while being sent stays
/// `cancelada`. The right-hand sides read the row before the update.
const RECORD_ATTEMPT: &str = "\
UPDATE webhook_entregas SET
    tentativas = tentativas + 1,
    atualizado_em = $2,
    status = CASE WHEN status = 'pendente' THEN $3 ELSE status END,
    proxima_tentativa_em = CASE WHEN status = 'pendente' THEN $4 ELSE proxima_tentativa_em END,
    entregue_em = CASE WHEN status = 'pendente' AND $3 = 'entregue' THEN $2 ELSE entregue_em END,
    token_reivindicacao = NULL
WHERE id = $1 AND token_reivindicacao = $5";

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
    /// See `test_delivery.rs`.
    fn begin_test(
        &self,
        webhook_url_id: Uuid,
        event: &domain::WebhookEvent,
        lease_until: DateTime<Utc>,
    ) -> Result<Option<DueDelivery>, RepoError> {
        crate::test_delivery::begin_test(&self.pool, webhook_url_id, event, lease_until)
    }

    /// See [`CLAIM_DUE`]; the claimed deliveries come back in no particular order.
    fn claim_due(
        &self,
        limits: &ClaimLimits,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
    ) -> Result<Vec<DueDelivery>, RepoError> {
        const OPERATION: &str = "claiming webhook deliveries";
        if limits.limit == 0 || limits.per_company == 0 {
            return Ok(Vec::new());
        }
        let (busy, counts): (Vec<Uuid>, Vec<i64>) = limits
            .in_flight
            .iter()
            .map(|(empresa, n)| (empresa.0, i64::from(*n)))
            .unzip();
        let rows = with_conn(&self.pool, OPERATION, |conn| {
            diesel::sql_query(CLAIM_DUE)
                .bind::<Timestamptz, _>(lease_until)
                .bind::<Timestamptz, _>(now)
                .bind::<BigInt, _>(i64::from(limits.limit))
                .bind::<BigInt, _>(i64::from(limits.per_company))
                .bind::<Array<SqlUuid>, _>(&busy)
                .bind::<Array<BigInt>, _>(&counts)
                .load::<DueDeliveryRow>(conn)
        })?;
        rows.into_iter()
            .map(DueDeliveryRow::try_into_domain)
            .collect::<anyhow::Result<_>>()
            .map_err(|e| unexpected(e, OPERATION))
    }

    /// In one transaction: [`RECORD_ATTEMPT`], then the attempt's row. When the update changed
    /// nothing, the delivery was claimed again since (`false`) or does not exist (`Unexpected`:
    /// only final deliveries are ever deleted, by the retention purge, and a delivery being sent
    /// is pending).
    fn record_attempt(
        &self,
        delivery_id: Uuid,
        lease: Uuid,
        attempt: &DeliveryAttempt,
        outcome: DeliveryOutcome,
    ) -> Result<bool, RepoError> {
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
                    .bind::<Timestamptz, _>(attempt.at)
                    .bind::<Text, _>(next_status)
                    .bind::<Nullable<Timestamptz>, _>(next_attempt)
                    .bind::<SqlUuid, _>(lease)
                    .execute(conn)?;
                if changed == 0 {
                    let known = diesel::select(exists(we::table.find(delivery_id)))
                        .get_result::<bool>(conn)?;
                    return if known {
                        Ok(false)
                    } else {
                        Err(DieselError::NotFound)
                    };
                }
                diesel::insert_into(wt::table).values(&row).execute(conn)?;
                Ok(true)
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

    /// Along the primary key of `webhook_urls` ordered by `criado_em` (a few URLs per company:
    /// a short sort).
    fn newest_secret(&self) -> Result<Option<EncryptedSecret>, RepoError> {
        let stored = with_conn(&self.pool, "reading the newest webhook secret", |conn| {
            wu::table
                .order((wu::criado_em.desc(), wu::id.desc()))
                .select(wu::segredo_cifrado)
                .first::<String>(conn)
                .optional()
        })?;
        Ok(stored.map(EncryptedSecret))
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
