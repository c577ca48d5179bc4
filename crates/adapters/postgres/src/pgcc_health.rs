//! [`PgPgccHealthRepository`]: the PGCC's health every process shares (issue 25, part 3):
//! per-second call tallies in `pgcc_chamadas`, the status in the one row of `pgcc_saude`, and
//! the changes to tell every company in `pgcc_transicoes`.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Text, Timestamptz};
use domain::{
    CompanyId, PgccAssessment, PgccCallTally, PgccHealth, PgccHealthChange, PgccHealthCode,
    PgccOperation, PgccOutageThreshold, PgccWindowCalls, WebhookEvent,
};
use ports::{PgccCallSecond, PgccHealthRepository, RepoError};
use uuid::Uuid;

use crate::conn::with_conn;
use crate::fixed_sql::statement;
use crate::outbox;
use crate::PgPool;

statement! {
    /// Adds one process's tallies (parallel arrays, one (operation, second) each) to the shared
    /// ones.
    struct AddCalls<'a> {
        operacoes: Vec<&'a str> as Array<Text>,
        segundos: Vec<DateTime<Utc>> as Array<Timestamptz>,
        respondidas: Vec<i64> as Array<BigInt>,
        indisponiveis: Vec<i64> as Array<BigInt>,
    }
    "INSERT INTO pgcc_chamadas AS c (operacao, segundo, respondidas, indisponiveis)
SELECT * FROM unnest($operacoes::text[], $segundos::timestamptz[], $respondidas::bigint[],
                     $indisponiveis::bigint[])
ON CONFLICT (operacao, segundo) DO UPDATE
SET respondidas = c.respondidas + EXCLUDED.respondidas,
    indisponiveis = c.indisponiveis + EXCLUDED.indisponiveis"
}

statement! {
    /// Forgets the seconds no window reads any more.
    struct ForgetCalls {
        before: DateTime<Utc> as Timestamptz,
    }
    "DELETE FROM pgcc_chamadas WHERE segundo < $before"
}

statement! {
    /// The tallies of the window, per operation, with the first second a call of it found the
    /// PGCC unavailable.
    struct WindowCalls {
        since: DateTime<Utc> as Timestamptz,
    }
    "SELECT operacao, sum(respondidas)::bigint AS respondidas,
       sum(indisponiveis)::bigint AS indisponiveis,
       min(segundo) FILTER (WHERE indisponiveis > 0) AS primeira_indisponivel
FROM pgcc_chamadas WHERE segundo >= $since GROUP BY operacao"
}

#[derive(QueryableByName)]
struct WindowRow {
    #[diesel(sql_type = Text)]
    operacao: String,
    #[diesel(sql_type = BigInt)]
    respondidas: i64,
    #[diesel(sql_type = BigInt)]
    indisponiveis: i64,
    #[diesel(sql_type = diesel::sql_types::Nullable<Timestamptz>)]
    primeira_indisponivel: Option<DateTime<Utc>>,
}

/// The stored status.
const READ_STATUS: &str = "SELECT codigo, indisponiveis, deteccao, atualizacao FROM pgcc_saude";

/// The stored status, its row locked until the transaction ends (the compare-and-set).
const LOCK_STATUS: &str =
    "SELECT codigo, indisponiveis, deteccao, atualizacao FROM pgcc_saude FOR UPDATE";

#[derive(QueryableByName)]
struct StatusRow {
    #[diesel(sql_type = Text)]
    codigo: String,
    #[diesel(sql_type = Array<Text>)]
    indisponiveis: Vec<String>,
    #[diesel(sql_type = Timestamptz)]
    deteccao: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    atualizacao: DateTime<Utc>,
}

impl StatusRow {
    fn assessment(&self) -> PgccAssessment {
        PgccAssessment {
            code: PgccHealthCode::parse(&self.codigo).unwrap_or(PgccHealthCode::Ok),
            unavailable: self
                .indisponiveis
                .iter()
                .filter_map(|name| PgccOperation::parse(name))
                .collect(),
        }
    }

    fn health(&self) -> PgccHealth {
        PgccHealth::new(&self.assessment(), self.deteccao, self.atualizacao)
    }
}

statement! {
    /// Stores a status the assessment changed.
    struct SetStatus<'a> {
        codigo: &'a str as Text,
        indisponiveis: Vec<&'a str> as Array<Text>,
        deteccao: DateTime<Utc> as Timestamptz,
        atualizacao: DateTime<Utc> as Timestamptz,
    }
    "UPDATE pgcc_saude SET codigo = $codigo, indisponiveis = $indisponiveis, deteccao = $deteccao,
    atualizacao = $atualizacao"
}

statement! {
    /// Moves the update time of an unchanged status forward, at most once a second (several
    /// processes assess every second).
    struct TouchStatus {
        atualizacao: DateTime<Utc> as Timestamptz,
    }
    "UPDATE pgcc_saude SET atualizacao = $atualizacao
WHERE atualizacao <= $atualizacao - interval '1 second'"
}

statement! {
    /// A change to or from OK, to tell every company.
    struct AddTransition<'a> {
        tipo: &'static str as Text,
        payload: &'a str as Text,
        criada_em: DateTime<Utc> as Timestamptz,
    }
    "INSERT INTO pgcc_transicoes (tipo, payload, criada_em) VALUES ($tipo, $payload, $criada_em)"
}

/// The oldest transition not yet told to every company, locked (`SKIP LOCKED`: another process
/// telling it now is left to it, and no later transition overtakes it).
const OLDEST_UNTOLD: &str =
    "SELECT id, tipo, payload, criada_em, proxima_empresa FROM pgcc_transicoes
WHERE id = (SELECT min(id) FROM pgcc_transicoes WHERE concluida_em IS NULL)
FOR UPDATE SKIP LOCKED";

#[derive(QueryableByName)]
struct UntoldRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Text)]
    tipo: String,
    #[diesel(sql_type = Text)]
    payload: String,
    #[diesel(sql_type = Timestamptz)]
    criada_em: DateTime<Utc>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Uuid>)]
    proxima_empresa: Option<Uuid>,
}

statement! {
    /// Up to `$limit` companies after `$after`, in id order (`empresas` is one of the two tables
    /// read across companies).
    struct NextCompanies {
        after: Uuid as diesel::sql_types::Uuid,
        limit: i64 as BigInt,
    }
    "SELECT id FROM empresas WHERE id > $after ORDER BY id LIMIT $limit"
}

statement! {
    /// Moves the transition past the companies told (`$last`, the last of them), done when
    /// fewer than the batch's size were left.
    struct MarkTold {
        id: i64 as BigInt,
        last: Option<Uuid> as diesel::sql_types::Nullable<diesel::sql_types::Uuid>,
        done_at: Option<DateTime<Utc>> as diesel::sql_types::Nullable<Timestamptz>,
    }
    "UPDATE pgcc_transicoes SET proxima_empresa = COALESCE($last, proxima_empresa),
    concluida_em = $done_at
WHERE id = $id"
}

/// [`PgccHealthRepository`] on `pgcc_chamadas`, `pgcc_saude` and `pgcc_transicoes`.
#[derive(Clone)]
pub struct PgPgccHealthRepository {
    pool: PgPool,
}

impl PgPgccHealthRepository {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

fn calls_of(rows: &[WindowRow]) -> Vec<PgccWindowCalls> {
    rows.iter()
        .filter_map(|row| {
            let operation = PgccOperation::parse(&row.operacao)?;
            Some(PgccWindowCalls {
                operation,
                tally: PgccCallTally {
                    answered: u64::try_from(row.respondidas).unwrap_or(0),
                    unavailable: u64::try_from(row.indisponiveis).unwrap_or(0),
                },
                first_unavailable: row.primeira_indisponivel,
            })
        })
        .collect()
}

impl PgccHealthRepository for PgPgccHealthRepository {
    fn record(
        &self,
        calls: &[PgccCallSecond],
        forget_before: DateTime<Utc>,
    ) -> Result<(), RepoError> {
        let add = AddCalls {
            operacoes: calls.iter().map(|c| c.operation.as_str()).collect(),
            segundos: calls.iter().map(|c| c.second).collect(),
            respondidas: calls
                .iter()
                .map(|c| i64::try_from(c.tally.answered).unwrap_or(i64::MAX))
                .collect(),
            indisponiveis: calls
                .iter()
                .map(|c| i64::try_from(c.tally.unavailable).unwrap_or(i64::MAX))
                .collect(),
        };
        with_conn(&self.pool, "recording PGCC calls", |conn| {
            add.execute(conn)?;
            ForgetCalls {
                before: forget_before,
            }
            .execute(conn)?;
            Ok(())
        })
    }

    /// Read first without a lock: an unchanged status only moves its update time (at most once
    /// a second). A change is compared again and set under the row's lock, with its transition
    /// when it crosses OK, so two processes seeing the same change write it once.
    fn assess(
        &self,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
        threshold: PgccOutageThreshold,
    ) -> Result<PgccHealth, RepoError> {
        with_conn(&self.pool, "assessing the PGCC's health", |conn| {
            let window = calls_of(&WindowCalls { since }.load::<WindowRow>(conn)?);
            let stored: StatusRow = diesel::sql_query(READ_STATUS).get_result(conn)?;
            let assessment =
                PgccAssessment::past_threshold(&window, &stored.assessment(), threshold, now);
            if stored.assessment() == assessment {
                TouchStatus { atualizacao: now }.execute(conn)?;
                return Ok(PgccHealth::new(
                    &assessment,
                    stored.deteccao,
                    now.max(stored.atualizacao),
                ));
            }
            conn.transaction(|conn| {
                let stored: StatusRow = diesel::sql_query(LOCK_STATUS).get_result(conn)?;
                let before = stored.assessment();
                // judged again against the status as locked (another process may have set it)
                let assessment = PgccAssessment::past_threshold(&window, &before, threshold, now);
                if before == assessment {
                    return Ok(stored.health());
                }
                // a new code is detected now; a new list under the same code keeps its time
                let detected = if before.code == assessment.code {
                    stored.deteccao
                } else {
                    now
                };
                SetStatus {
                    codigo: assessment.code.as_str(),
                    indisponiveis: assessment.unavailable.iter().map(|o| o.as_str()).collect(),
                    deteccao: detected,
                    atualizacao: now,
                }
                .execute(conn)?;
                let health = PgccHealth::new(&assessment, detected, now);
                if (before.code == PgccHealthCode::Ok) != (assessment.code == PgccHealthCode::Ok) {
                    let change = PgccHealthChange {
                        code: assessment.code,
                        unavailable_endpoints: health.unavailable_endpoints.clone(),
                        detection_time: now,
                    };
                    // the body is the same for every company: built once, with any company
                    let event = WebhookEvent::pgcc_health(CompanyId(Uuid::nil()), change);
                    let payload = outbox::payload(&event)?;
                    AddTransition {
                        tipo: event.event_type.as_str(),
                        payload: &payload,
                        criada_em: now,
                    }
                    .execute(conn)?;
                    tracing::warn!(
                        code = assessment.code.as_str(),
                        event = event.event_type.as_str(),
                        "the PGCC's health changed; every company will be told"
                    );
                }
                Ok(health)
            })
        })
    }

    fn current(&self) -> Result<PgccHealth, RepoError> {
        let row: StatusRow = with_conn(&self.pool, "reading the PGCC's health", |conn| {
            diesel::sql_query(READ_STATUS).get_result(conn)
        })?;
        Ok(row.health())
    }

    /// Tells up to `companies` more companies, in id order, of the oldest transition not yet
    /// told to all, in one transaction: one event per company (the same body, an id of its own)
    /// with its deliveries, each written by a statement of its own company (on a database
    /// distributed by company, each on its shard), and the last company told kept; the
    /// transition is done when fewer than `companies` were left. Bounded work per call, whatever
    /// the number of companies.
    fn announce(&self, companies: u32, now: DateTime<Utc>) -> Result<u32, RepoError> {
        if companies == 0 {
            return Ok(0);
        }
        let told = with_conn(
            &self.pool,
            "telling companies of the PGCC's health",
            |conn| {
                conn.transaction(|conn| {
                    let Some(t) = diesel::sql_query(OLDEST_UNTOLD)
                        .load::<UntoldRow>(conn)?
                        .pop()
                    else {
                        return Ok(0);
                    };
                    let targets: Vec<Uuid> = NextCompanies {
                        after: t.proxima_empresa.unwrap_or(Uuid::nil()),
                        limit: i64::from(companies),
                    }
                    .load::<crate::per_company::CompanyIdRow>(conn)?
                    .into_iter()
                    .map(|r| r.id)
                    .collect();
                    for company in &targets {
                        outbox::write_stored_event(
                            conn,
                            Uuid::new_v4(),
                            CompanyId(*company),
                            &t.tipo,
                            &t.payload,
                            t.criada_em,
                        )?;
                    }
                    MarkTold {
                        id: t.id,
                        last: targets.last().copied(),
                        done_at: (targets.len() < companies as usize).then_some(now),
                    }
                    .execute(conn)?;
                    diesel::QueryResult::Ok(targets.len())
                })
            },
        )?;
        Ok(u32::try_from(told).unwrap_or(u32::MAX))
    }
}
