use chrono::{DateTime, Utc};
use diesel::dsl::exists;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::{CompanyId, UrlDisabledData, WebhookEvent};
use ports::{
    CompanyDue, DeliveryAttempt, DeliveryFilter, DeliveryOutcome, DeliveryRecord, DueDelivery,
    EncryptedSecret, RepoError, Settled, UrlHealth, WebhookDeliveryRepository,
};
use uuid::Uuid;

use crate::conn::{count_u32, with_conn};
use crate::delivery_companies;
use crate::models::webhook_entrega::status;
use crate::models::{DueDeliveryRow, NewWebhookTentativa};
use crate::outbox;
use crate::per_company::CompanyIdRow;
use crate::schema::{webhook_entregas as we, webhook_tentativas as wt, webhook_urls as wu};
use crate::tenant::Tenant;
use crate::topology::Topology;
use crate::PgPool;

/// `claim_due` for one company ($1), in one statement scoped to it: its soonest deliveries due
/// at $2, not parked, whose URL is neither removed nor disabled, at most $3, along
/// `webhook_entregas_devidas_empresa_idx`, locked `FOR UPDATE ... SKIP LOCKED` (rows another
/// sender holds are skipped). The update pushes their next attempt to the lease $4 and gives them
/// the caller's lease token $5 (no volatile function in the `SET`); the outer select joins what
/// sending needs: the URL, the event's body, the secret, and the previous secret only while its
/// overlap lasts (`segredo_anterior_ate` after $2). Every join names the company by its
/// parameter, not through the CTE: Citus then reads the company's shard of each table, not all.
const CLAIM_DUE: &str = "\
WITH escolhidas AS (
    SELECT e.id
    FROM webhook_entregas e
    JOIN webhook_urls u ON u.id = e.webhook_url_id AND u.empresa_id = e.empresa_id
    WHERE e.empresa_id = $1
      AND e.status = 'pendente' AND NOT e.estacionada AND e.proxima_tentativa_em <= $2
      AND u.removido_em IS NULL AND u.desativado_em IS NULL
    ORDER BY e.proxima_tentativa_em
    LIMIT $3
    FOR UPDATE OF e SKIP LOCKED
),
reivindicadas AS (
    UPDATE webhook_entregas e
    SET proxima_tentativa_em = $4, token_reivindicacao = $5
    FROM escolhidas c
    WHERE e.id = c.id AND e.empresa_id = $1
    RETURNING e.id, e.empresa_id, e.webhook_url_id, e.evento_id, e.tentativas,
              e.token_reivindicacao
)
SELECT r.id, r.empresa_id, r.webhook_url_id, u.url, r.evento_id, ev.payload, r.tentativas,
       u.segredo_cifrado,
       CASE WHEN u.segredo_anterior_ate > $2 THEN u.segredo_anterior_cifrado END
           AS segredo_anterior_cifrado,
       r.token_reivindicacao, ev.traceparent
FROM reivindicadas r
JOIN webhook_urls u ON u.id = r.webhook_url_id AND u.empresa_id = $1
JOIN webhook_eventos ev ON ev.id = r.evento_id AND ev.empresa_id = $1";

/// One batch of `settle_url` for a URL ($1) of company ($2) whose row the transaction has
/// locked: up to $3 of its pending deliveries with `estacionada = $4` (along
/// `webhook_entregas_pendentes_url_idx`, so only rows to change are read), `SKIP LOCKED`, set to
/// status $5 (`pendente`, or `cancelada` for a removed URL), `estacionada = $6`, and for a
/// cancellation no next attempt and `atualizado_em = $7`.
const SETTLE_BATCH: &str = "\
WITH alvo AS MATERIALIZED (
    SELECT e.id
    FROM webhook_entregas e
    WHERE e.webhook_url_id = $1 AND e.empresa_id = $2
      AND e.status = 'pendente' AND e.estacionada = $4
    LIMIT $3
    FOR UPDATE SKIP LOCKED
)
UPDATE webhook_entregas e
SET status = $5,
    estacionada = $6,
    proxima_tentativa_em = CASE WHEN $5 = 'pendente' THEN e.proxima_tentativa_em END,
    atualizado_em = CASE WHEN $5 = 'pendente' THEN e.atualizado_em ELSE $7 END
FROM alvo
WHERE e.id = alvo.id AND e.empresa_id = $2 AND e.status = 'pendente'";

/// The cap's boundary for company $1: the due time of its pending delivery number $2 + 1,
/// newest due first (parked included), along `webhook_entregas_pendentes_empresa_idx` read
/// backwards; no row when it has at most $2.
const CAP_BOUNDARY: &str = "\
SELECT e.proxima_tentativa_em AS limite
FROM webhook_entregas e
WHERE e.empresa_id = $1 AND e.status = 'pendente'
ORDER BY e.proxima_tentativa_em DESC
OFFSET $2
LIMIT 1";

/// One batch of the cap for company $1: up to $3 of its pending deliveries due at or before
/// the boundary $2 (soonest first, skipping locked rows) fail with the reason $4 at $5.
const FAIL_BEYOND_CAP: &str = "\
WITH alvo AS MATERIALIZED (
    SELECT e.id
    FROM webhook_entregas e
    WHERE e.empresa_id = $1 AND e.status = 'pendente' AND e.proxima_tentativa_em <= $2
    ORDER BY e.proxima_tentativa_em
    LIMIT $3
    FOR UPDATE SKIP LOCKED
)
UPDATE webhook_entregas e
SET status = 'falhou', estacionada = false, proxima_tentativa_em = NULL, motivo = $4,
    atualizado_em = $5, token_reivindicacao = NULL
FROM alvo
WHERE e.id = alvo.id AND e.empresa_id = $1 AND e.status = 'pendente'";

#[derive(QueryableByName)]
struct BoundaryRow {
    #[diesel(sql_type = Timestamptz)]
    limite: DateTime<Utc>,
}

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
WHERE empresa_id = $6 AND id = $1 AND token_reivindicacao = $5";

/// Keeps `webhook_urls.falhando_desde` after an attempt (issue 39), in `record_attempt`'s
/// transaction: $1 company, $2 delivery, $3 the attempt's instant, $4 whether it succeeded. A
/// failure sets it when unset (the first failure after the last success), a success clears it;
/// each writes only on that change (no row matches, and none is locked, otherwise), so a URL's
/// steady traffic adds no write to its row. Test events (`webhook.teste`) never count, and a
/// disabled URL keeps the instant it was disabled on.
const TRACK_FAILING_SINCE: &str = "\
UPDATE webhook_urls u
SET falhando_desde = CASE WHEN $4 THEN NULL ELSE $3 END
FROM webhook_entregas e
JOIN webhook_eventos ev ON ev.empresa_id = e.empresa_id AND ev.id = e.evento_id
WHERE e.empresa_id = $1 AND e.id = $2
  AND u.empresa_id = $1 AND u.id = e.webhook_url_id
  AND ev.tipo <> 'webhook.teste'
  AND u.desativado_em IS NULL
  AND (u.falhando_desde IS NOT NULL) = $4";

/// The URLs `disable_failing_urls` disables, $1 the start of the window (SQL condition on
/// `webhook_urls u`): each active URL failing, without a single success, since before $1
/// (`falhando_desde`, kept by the sender, `TRACK_FAILING_SINCE`; read along
/// `webhook_urls_falhando_desde_idx`). A URL re-enabled starts again with none: the failures that
/// got it disabled do not disable it again. Neither a new URL whose first delivery ran out of
/// retries nor a quiet one is disabled before the whole time has passed since its first failure.
macro_rules! failing_url {
    () => {
        "u.removido_em IS NULL AND u.desativado_em IS NULL
  AND u.falhando_desde IS NOT NULL AND u.falhando_desde <= $1"
    };
}

/// The companies with a [`failing_url`], across companies (a read: on Citus, every shard in
/// parallel).
const COMPANIES_WITH_FAILING_URLS: &str = concat!(
    "SELECT DISTINCT u.empresa_id AS id FROM webhook_urls u WHERE ",
    failing_url!(),
    " ORDER BY 1"
);

/// One company's [`failing_url`]s disabled ($2 now, $3 the company), marked for `settle_url`
/// (their pending deliveries are parked behind). Concurrent runs disable a URL once (the second
/// finds `desativado_em` set). One company per transaction, with its events, as every other
/// writer of events: on Citus that transaction stays on the company's worker (one statement over
/// every company was a transaction on every shard).
const DISABLE_FAILING_URLS: &str = concat!(
    "UPDATE webhook_urls u
SET desativado_em = $2, entregas_por_acertar = true, motivo_desativacao = $4
WHERE u.empresa_id = $3 AND ",
    failing_url!(),
    "
RETURNING u.id, u.empresa_id, u.url, u.falhando_desde"
);

/// A URL `DISABLE_FAILING_URLS` disabled.
#[derive(QueryableByName)]
struct DisabledUrl {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    id: Uuid,
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    empresa_id: Uuid,
    #[diesel(sql_type = diesel::sql_types::Text)]
    url: String,
    #[diesel(sql_type = Timestamptz)]
    falhando_desde: DateTime<Utc>,
}

/// [`WebhookDeliveryRepository`] on `webhook_entregas`, `webhook_tentativas` (and
/// `webhook_eventos`, `webhook_urls` for what they join). Every claim, batch and lock is scoped
/// to one company (`empresa_id` in each statement); only reads (`companies_due`,
/// `companies_with_pending`, `urls_to_settle`) and `disable_failing_urls` look across them. Events and deliveries are written by the repositories whose change
/// causes them (see `outbox.rs`).
#[derive(Clone)]
pub struct PgWebhookDeliveryRepository {
    pool: PgPool,
    topology: Topology,
}

impl PgWebhookDeliveryRepository {
    pub fn new(pool: PgPool) -> Self {
        Self {
            pool,
            topology: Topology::default(),
        }
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

    /// See `delivery_companies.rs`.
    fn companies_due(&self, now: DateTime<Utc>) -> Result<Vec<CompanyDue>, RepoError> {
        let companies = delivery_companies::companies_pending(
            &self.pool,
            &self.topology,
            Some(now),
            "finding the companies with due webhooks",
        )?;
        Ok(companies
            .into_iter()
            .map(|(company, since)| CompanyDue {
                company_id: CompanyId(company),
                since,
            })
            .collect())
    }

    /// See `CLAIM_DUE`; the claimed deliveries come back in no particular order.
    fn claim_due(
        &self,
        company: CompanyId,
        limit: u32,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        lease: Uuid,
    ) -> Result<Vec<DueDelivery>, RepoError> {
        const OPERATION: &str = "claiming webhook deliveries";
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows = with_conn(&self.pool, OPERATION, |conn| {
            diesel::sql_query(CLAIM_DUE)
                .bind::<SqlUuid, _>(company.0)
                .bind::<Timestamptz, _>(now)
                .bind::<BigInt, _>(i64::from(limit))
                .bind::<Timestamptz, _>(lease_until)
                .bind::<SqlUuid, _>(lease)
                .load::<DueDeliveryRow>(conn)
        })?;
        rows.into_iter()
            .map(DueDeliveryRow::try_into_domain)
            .collect::<anyhow::Result<_>>()
            .map_err(|e| unexpected(e, OPERATION))
    }

    /// Along `webhook_urls_por_acertar_idx`.
    fn urls_to_settle(&self, limit: u32) -> Result<Vec<(CompanyId, Uuid)>, RepoError> {
        let rows = with_conn(&self.pool, "finding webhook URLs to settle", |conn| {
            wu::table
                .filter(wu::entregas_por_acertar)
                .limit(i64::from(limit))
                .select((wu::empresa_id, wu::id))
                .load::<(Uuid, Uuid)>(conn)
        })?;
        Ok(rows
            .into_iter()
            .map(|(empresa, id)| (CompanyId(empresa), id))
            .collect())
    }

    /// In one transaction: the URL's row is locked (`FOR NO KEY UPDATE SKIP LOCKED`: a removal,
    /// disabling or re-enabling waits for the batch, and marks the URL again after it; a URL
    /// another process is settling is left to it), then one `SETTLE_BATCH` by its state:
    /// removed, cancel every pending delivery (parked or not, two passes); disabled, park; else
    /// bring back. Fewer rows than `limit` changed: the mark is cleared.
    fn settle_url(
        &self,
        company: CompanyId,
        webhook_url_id: Uuid,
        limit: u32,
        now: DateTime<Utc>,
    ) -> Result<Settled, RepoError> {
        with_conn(&self.pool, "settling a webhook URL's deliveries", |conn| {
            conn.transaction(|conn| {
                let url = wu::table::row(company, webhook_url_id)
                    .filter(wu::entregas_por_acertar)
                    .select((wu::removido_em, wu::desativado_em))
                    .for_no_key_update()
                    .skip_locked()
                    .first::<(Option<DateTime<Utc>>, Option<DateTime<Utc>>)>(conn)
                    .optional()?;
                let Some((removed, disabled)) = url else {
                    return Ok(Settled {
                        changed: 0,
                        done: true,
                    });
                };
                // (parked rows to read, the status and the parked flag they get)
                let passes: &[(bool, &str, bool)] = if removed.is_some() {
                    &[
                        (false, status::CANCELADA, false),
                        (true, status::CANCELADA, false),
                    ]
                } else if disabled.is_some() {
                    &[(false, status::PENDENTE, true)]
                } else {
                    &[(true, status::PENDENTE, false)]
                };
                let mut changed = 0usize;
                for &(parked, next_status, park) in passes {
                    let room = i64::from(limit) - changed as i64;
                    if room <= 0 {
                        break;
                    }
                    changed += diesel::sql_query(SETTLE_BATCH)
                        .bind::<SqlUuid, _>(webhook_url_id)
                        .bind::<SqlUuid, _>(company.0)
                        .bind::<BigInt, _>(room)
                        .bind::<diesel::sql_types::Bool, _>(parked)
                        .bind::<Text, _>(next_status)
                        .bind::<diesel::sql_types::Bool, _>(park)
                        .bind::<Timestamptz, _>(now)
                        .execute(conn)?;
                }
                let done = changed < limit as usize;
                if done {
                    diesel::update(wu::table::row(company, webhook_url_id))
                        .set(wu::entregas_por_acertar.eq(false))
                        .execute(conn)?;
                }
                Ok(Settled {
                    changed: count_u32(changed),
                    done,
                })
            })
        })
    }

    /// See `delivery_companies.rs`.
    fn companies_with_pending(&self) -> Result<Vec<CompanyId>, RepoError> {
        let companies = delivery_companies::companies_pending(
            &self.pool,
            &self.topology,
            None,
            "finding the companies with pending webhooks",
        )?;
        Ok(companies
            .into_iter()
            .map(|(company, _)| CompanyId(company))
            .collect())
    }

    /// `CAP_BOUNDARY`, then, past it, one `FAIL_BEYOND_CAP` batch, in one transaction.
    fn fail_beyond_cap(
        &self,
        company: CompanyId,
        keep: u32,
        limit: u32,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<u32, RepoError> {
        if limit == 0 {
            return Ok(0);
        }
        let failed = with_conn(&self.pool, "capping a company's pending webhooks", |conn| {
            conn.transaction(|conn| {
                let boundary = diesel::sql_query(CAP_BOUNDARY)
                    .bind::<SqlUuid, _>(company.0)
                    .bind::<BigInt, _>(i64::from(keep))
                    .get_result::<BoundaryRow>(conn)
                    .optional()?;
                let Some(boundary) = boundary else {
                    return Ok(0);
                };
                diesel::sql_query(FAIL_BEYOND_CAP)
                    .bind::<SqlUuid, _>(company.0)
                    .bind::<Timestamptz, _>(boundary.limite)
                    .bind::<BigInt, _>(i64::from(limit))
                    .bind::<Text, _>(reason)
                    .bind::<Timestamptz, _>(now)
                    .execute(conn)
            })
        })?;
        Ok(count_u32(failed))
    }

    /// In one transaction: `RECORD_ATTEMPT`, then the attempt's row. When the update changed
    /// nothing, the delivery was claimed again since (`false`) or does not exist (`Unexpected`:
    /// only final deliveries are ever deleted, by the retention purge, and a delivery being sent
    /// is pending).
    fn record_attempt(
        &self,
        company: CompanyId,
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
        with_conn(&self.pool, "recording a webhook delivery attempt", |conn| {
            conn.transaction(|conn| {
                let changed = diesel::sql_query(RECORD_ATTEMPT)
                    .bind::<SqlUuid, _>(delivery_id)
                    .bind::<Timestamptz, _>(attempt.at)
                    .bind::<Text, _>(next_status)
                    .bind::<Nullable<Timestamptz>, _>(next_attempt)
                    .bind::<SqlUuid, _>(lease)
                    .bind::<SqlUuid, _>(company.0)
                    .execute(conn)?;
                if changed == 0 {
                    let known = diesel::select(exists(we::table::row(company, delivery_id)))
                        .get_result::<bool>(conn)?;
                    return if known {
                        Ok(false)
                    } else {
                        Err(DieselError::NotFound)
                    };
                }
                diesel::insert_into(wt::table)
                    .values(&NewWebhookTentativa::new(company.0, delivery_id, attempt))
                    .execute(conn)?;
                diesel::sql_query(TRACK_FAILING_SINCE)
                    .bind::<SqlUuid, _>(company.0)
                    .bind::<SqlUuid, _>(delivery_id)
                    .bind::<Timestamptz, _>(attempt.at)
                    .bind::<diesel::sql_types::Bool, _>(matches!(
                        outcome,
                        DeliveryOutcome::Delivered
                    ))
                    .execute(conn)?;
                Ok(true)
            })
        })
    }

    fn list_for_url(
        &self,
        empresa: CompanyId,
        webhook_url_id: Uuid,
        limit: u32,
    ) -> Result<Option<Vec<DeliveryRecord>>, RepoError> {
        self.page_for_url(empresa, webhook_url_id, &DeliveryFilter::default(), limit)
    }

    fn url_health(
        &self,
        empresa: CompanyId,
        webhook_url_id: Uuid,
        since: DateTime<Utc>,
        cap: u32,
    ) -> Result<Option<UrlHealth>, RepoError> {
        crate::webhook_url_health::url_health(&self.pool, empresa, webhook_url_id, since, cap)
    }

    fn replay_failed_since(
        &self,
        empresa: CompanyId,
        webhook_url_id: Uuid,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<u32, RepoError> {
        crate::webhook_url_health::replay_failed_since(
            &self.pool,
            empresa,
            webhook_url_id,
            since,
            now,
            limit,
        )
    }

    /// See `webhook_delivery_log.rs`: each filter along an index of its own, keyset-paged.
    fn page_for_url(
        &self,
        empresa: CompanyId,
        webhook_url_id: Uuid,
        filter: &DeliveryFilter,
        limit: u32,
    ) -> Result<Option<Vec<DeliveryRecord>>, RepoError> {
        crate::webhook_delivery_log::page(&self.pool, empresa, webhook_url_id, filter, limit)
    }

    /// One statement: `pendente`, due at `now`, updated at `now`, no longer delivered
    /// (`entregue_em` cleared; the attempts keep the history), parked if its URL is disabled
    /// (`reativar` brings it back). Its attempt count is kept.
    fn replay(
        &self,
        empresa: CompanyId,
        webhook_url_id: Uuid,
        delivery_id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        let changed = with_conn(&self.pool, "replaying a webhook delivery", |conn| {
            let url_is_live =
                exists(wu::table::row(empresa, webhook_url_id).filter(wu::removido_em.is_null()));
            let url_is_disabled = exists(
                wu::table::row(empresa, webhook_url_id).filter(wu::desativado_em.is_not_null()),
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
                we::estacionada.eq(url_is_disabled),
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

    /// See `DISABLE_FAILING_URLS`; the window starts at `now - window`. The URLs' pending
    /// deliveries are parked behind, by `settle_url` (the claim skips disabled URLs meanwhile).
    fn disable_failing_urls(
        &self,
        now: DateTime<Utc>,
        window: chrono::Duration,
    ) -> Result<u32, RepoError> {
        let since = now
            .checked_sub_signed(window)
            .unwrap_or(DateTime::<Utc>::MIN_UTC);
        // Per company, in one transaction: its URLs disabled, then `webhook-url.desativada` for
        // each, written after the update so that its deliveries go to the company's other URLs
        // only (the disabled ones take no event) and it is in the feed.
        let disabled = with_conn(&self.pool, "disabling failing webhook URLs", |conn| {
            let companies: Vec<CompanyIdRow> = diesel::sql_query(COMPANIES_WITH_FAILING_URLS)
                .bind::<Timestamptz, _>(since)
                .load(conn)?;
            let mut disabled = 0;
            for company in companies {
                disabled += conn.transaction(|conn| {
                    let urls: Vec<DisabledUrl> = diesel::sql_query(DISABLE_FAILING_URLS)
                        .bind::<Timestamptz, _>(since)
                        .bind::<Timestamptz, _>(now)
                        .bind::<SqlUuid, _>(company.id)
                        .bind::<Text, _>(domain::WebhookUrl::DISABLED_FOR_FAILING)
                        .load(conn)?;
                    let events: Vec<WebhookEvent> = urls
                        .iter()
                        .map(|u| {
                            WebhookEvent::url_disabled(
                                CompanyId(u.empresa_id),
                                UrlDisabledData {
                                    webhook_url_id: u.id,
                                    url: u.url.clone(),
                                    desativada_em: now,
                                    falhando_desde: u.falhando_desde,
                                    motivo: domain::WebhookUrl::DISABLED_FOR_FAILING.to_owned(),
                                },
                            )
                        })
                        .collect();
                    outbox::write_events(conn, &events)?;
                    QueryResult::Ok(urls.len())
                })?;
            }
            Ok(disabled)
        })?;
        Ok(count_u32(disabled))
    }
}
