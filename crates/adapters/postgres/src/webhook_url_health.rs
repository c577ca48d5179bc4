//! A webhook URL's health for the console (issue 38, part 5; docs/console.md, "A URL's health"):
//! its figures over a window, read along indexes and capped, and the replay of its failed
//! deliveries since a time, capped too. Every statement names its company.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Nullable, Timestamptz, Uuid as SqlUuid};
use domain::CompanyId;
use ports::{RepoError, UrlHealth};
use uuid::Uuid;

use crate::conn::{count_u32, with_conn};
use crate::fixed_sql::statement;
use crate::PgPool;

statement! {
    /// The URL's deliveries created since `$since`, the newest `$cap_plus_one` along
    /// `webhook_entregas_url_criado_em_idx`; the attempts in the window of the newest `$cap` of
    /// them (one probe of `webhook_tentativas_entrega_em_idx` each); the last success, one probe
    /// of `webhook_entregas_url_entregue_em_idx`; whether the URL is the company's.
    struct Health {
        empresa_id: Uuid as SqlUuid,
        url_id: Uuid as SqlUuid,
        since: DateTime<Utc> as Timestamptz,
        cap_plus_one: i64 as BigInt,
        cap: i64 as BigInt,
    }
    "WITH janela AS MATERIALIZED (
  SELECT id, criado_em FROM webhook_entregas
  WHERE empresa_id = $empresa_id AND webhook_url_id = $url_id AND criado_em >= $since
  ORDER BY criado_em DESC LIMIT $cap_plus_one
), contadas AS MATERIALIZED (
  SELECT id FROM janela ORDER BY criado_em DESC LIMIT $cap
), tentativas AS MATERIALIZED (
  SELECT t.status_http, t.latencia_ms FROM webhook_tentativas t
  WHERE t.empresa_id = $empresa_id AND t.em >= $since
    AND t.entrega_id IN (SELECT id FROM contadas)
)
SELECT
  (SELECT count(*) FROM webhook_urls WHERE empresa_id = $empresa_id AND id = $url_id) AS existe,
  (SELECT count(*) FROM janela) AS entregas,
  (SELECT count(*) FROM tentativas) AS tentativas,
  (SELECT count(*) FROM tentativas WHERE status_http BETWEEN 200 AND 299) AS sucessos,
  (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY latencia_ms) FROM tentativas) AS mediana,
  (SELECT entregue_em FROM webhook_entregas
   WHERE empresa_id = $empresa_id AND webhook_url_id = $url_id AND entregue_em IS NOT NULL
   ORDER BY entregue_em DESC LIMIT 1) AS ultimo_sucesso"
}

#[derive(QueryableByName)]
struct HealthRow {
    #[diesel(sql_type = BigInt)]
    existe: i64,
    #[diesel(sql_type = BigInt)]
    entregas: i64,
    #[diesel(sql_type = BigInt)]
    tentativas: i64,
    #[diesel(sql_type = BigInt)]
    sucessos: i64,
    #[diesel(sql_type = Nullable<Integer>)]
    mediana: Option<i32>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    ultimo_sucesso: Option<DateTime<Utc>>,
}

pub(crate) fn url_health(
    pool: &PgPool,
    empresa: CompanyId,
    url_id: Uuid,
    since: DateTime<Utc>,
    cap: u32,
) -> Result<Option<UrlHealth>, RepoError> {
    let row = with_conn(pool, "reading a webhook URL's health", |conn| {
        Health {
            empresa_id: empresa.0,
            url_id,
            since,
            cap_plus_one: i64::from(cap) + 1,
            cap: i64::from(cap),
        }
        .get_result::<HealthRow>(conn)
    })?;
    if row.existe == 0 {
        return Ok(None);
    }
    let n = |v: i64| u32::try_from(v).unwrap_or(u32::MAX);
    Ok(Some(UrlHealth {
        deliveries: n(row.entregas).min(cap),
        capped: n(row.entregas) > cap,
        attempts: n(row.tentativas),
        successes: n(row.sucessos),
        median_latency_ms: row.mediana.and_then(|m| u32::try_from(m).ok()),
        last_success: row.ultimo_sucesso,
    }))
}

statement! {
    /// At most `$limit` of the URL's failed deliveries created since `$since`, oldest first
    /// (along `webhook_entregas_url_falhas_idx`), made due now as one replay makes one: pending,
    /// no longer delivered, parked while the URL is disabled; nothing when the URL is removed or
    /// not the company's.
    struct ReplayFailed {
        now: DateTime<Utc> as Timestamptz,
        empresa_id: Uuid as SqlUuid,
        url_id: Uuid as SqlUuid,
        since: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    "UPDATE webhook_entregas SET status = 'pendente', proxima_tentativa_em = $now,
    atualizado_em = $now, entregue_em = NULL,
    estacionada = EXISTS (SELECT 1 FROM webhook_urls
      WHERE empresa_id = $empresa_id AND id = $url_id AND desativado_em IS NOT NULL)
WHERE empresa_id = $empresa_id AND id IN (
    SELECT id FROM webhook_entregas
    WHERE empresa_id = $empresa_id AND webhook_url_id = $url_id AND status = 'falhou'
      AND criado_em >= $since
    ORDER BY criado_em LIMIT $limit)
  AND EXISTS (SELECT 1 FROM webhook_urls
    WHERE empresa_id = $empresa_id AND id = $url_id AND removido_em IS NULL)"
}

pub(crate) fn replay_failed_since(
    pool: &PgPool,
    empresa: CompanyId,
    url_id: Uuid,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
    limit: u32,
) -> Result<u32, RepoError> {
    let changed = with_conn(
        pool,
        "replaying a webhook URL's failed deliveries",
        |conn| {
            ReplayFailed {
                now,
                empresa_id: empresa.0,
                url_id,
                since,
                limit: i64::from(limit),
            }
            .execute(conn)
        },
    )?;
    Ok(count_u32(changed))
}
