//! Work done one company at a time (issue 21, part 3): a worker statement first finds the
//! companies with due work (one index probe per company, never the due rows), then changes each
//! company's rows in a statement scoped to it. This is what a distributed database needs (no
//! lock across companies) and what keeps one company's backlog from being read for another's.

use std::collections::{BTreeMap, HashMap};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use diesel::{PgConnection, QueryResult};
use ports::RepoError;
use uuid::Uuid;

use crate::conn::{count_u32, with_conn};
use crate::PgPool;

/// The statement that finds the companies (in id order, at most `$limit`) for which `$exists`,
/// a subquery on `e.empresa_id`, finds a row: one probe of a per-company index per company, never
/// the due rows themselves. Every "companies with due work" statement has this shape.
///
/// The companies are walked through `agenda_sincronizacao`, which holds one row per company
/// (written in the transaction that creates it; `schedule_first_sync`), not through `empresas`:
/// on Citus `empresas` is a reference table, beside which a correlated subquery is refused, while
/// the schedule is distributed by `empresa_id` and co-located with every tenant table, so each
/// shard answers for its own companies (docs/scaling.md, "make test-citus"). On one PostgreSQL
/// node the cost is the same: one primary-key row per company.
macro_rules! companies_with {
    ($exists:expr) => {
        concat!(
            "SELECT e.empresa_id AS id FROM agenda_sincronizacao e\nWHERE EXISTS (\n",
            $exists,
            "\n)\nORDER BY e.empresa_id\nLIMIT $limit"
        )
    };
}
pub(crate) use companies_with;

/// Companies' batches that failed on their own account, by operation, since the process
/// started. Process-wide on purpose: the ports answer a count of rows done, and the failure is
/// counted where it is caught; `/metrics` reads it through
/// [`ports::OperationalStats::company_batch_failures`].
static COMPANY_BATCH_FAILURES: Mutex<BTreeMap<&'static str, u64>> = Mutex::new(BTreeMap::new());

/// The companies' batches that failed on their own account so far, by operation.
pub(crate) fn company_batch_failures() -> Vec<(&'static str, u64)> {
    COMPANY_BATCH_FAILURES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .map(|(operation, count)| (*operation, *count))
        .collect()
}

fn count_company_batch_failure(operation: &'static str) {
    *COMPANY_BATCH_FAILURES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(operation)
        .or_default() += 1;
}

/// A company whose batch of an operation keeps failing is left out of that operation's rounds for
/// a while: 1 s after its first failure, twice as long after each next one, at most 5 minutes,
/// and forgotten at its first success. Without it a company whose rows cannot be written (a
/// corrupt row, a bad deploy) would cost a statement and a log line every round for as long as
/// it lasts. Process-wide, like the tally above; bounded (past [`MAX_BACKED_OFF`] companies a
/// new failure is retried every round, as before).
struct Backoff {
    failures: u32,
    until: Instant,
}

static BACKOFFS: LazyLock<Mutex<HashMap<(&'static str, Uuid), Backoff>>> =
    LazyLock::new(Mutex::default);
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(300);
const MAX_BACKED_OFF: usize = 10_000;

fn backoffs() -> std::sync::MutexGuard<'static, HashMap<(&'static str, Uuid), Backoff>> {
    BACKOFFS.lock().unwrap_or_else(|p| p.into_inner())
}

fn is_backed_off(operation: &'static str, company: Uuid, now: Instant) -> bool {
    backoffs()
        .get(&(operation, company))
        .is_some_and(|b| b.until > now)
}

/// Records a failure and answers how long the company is left out.
fn back_off(operation: &'static str, company: Uuid, now: Instant) -> Duration {
    let mut backoffs = backoffs();
    if backoffs.len() >= MAX_BACKED_OFF && !backoffs.contains_key(&(operation, company)) {
        backoffs.retain(|_, b| b.until > now);
        if backoffs.len() >= MAX_BACKED_OFF {
            return Duration::ZERO;
        }
    }
    let entry = backoffs.entry((operation, company)).or_insert(Backoff {
        failures: 0,
        until: now,
    });
    entry.failures = entry.failures.saturating_add(1);
    let wait = FIRST_BACKOFF
        .saturating_mul(1 << (entry.failures - 1).min(16))
        .min(MAX_BACKOFF);
    entry.until = now + wait;
    wait
}

fn forget_backoff(operation: &'static str, company: Uuid) {
    let mut backoffs = backoffs();
    if !backoffs.is_empty() {
        backoffs.remove(&(operation, company));
    }
}

/// A company id, as the statements that find companies with due work answer it.
#[derive(diesel::QueryableByName)]
pub(crate) struct CompanyIdRow {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    pub(crate) id: Uuid,
}

/// Runs `one` for each company in order with what is left of `limit` (its answer is how much of
/// it the company used), and stops once nothing is left; returns the total used. A company with
/// a large backlog takes what is left, the next ones get theirs in a later call: the callers
/// repeat while a call comes back full.
///
/// A company whose batch fails on its own account (a row that does not read back, a constraint:
/// `RepoError::Unexpected`) is logged by id with `operation` and skipped, and the others go on
/// (issue 21, part 4) and counted (`/metrics`: `company_batch_failures_total{operation}`): its
/// rows stay due, and the company is left out of the operation's rounds for a growing while
/// ([`Backoff`]). The database being unreachable
/// (`RepoError::Unavailable`) would fail every company alike, so it ends the call; so does a
/// call in which every company failed, with an error that names the operation only.
pub(crate) fn share_among(
    companies: Vec<CompanyIdRow>,
    limit: u32,
    operation: &'static str,
    mut one: impl FnMut(Uuid, u32) -> Result<u32, RepoError>,
) -> Result<u32, RepoError> {
    let mut used = 0u32;
    let mut served = 0usize;
    let mut failed = false;
    let now = Instant::now();
    for company in companies {
        let room = limit.saturating_sub(used);
        if room == 0 {
            break;
        }
        if is_backed_off(operation, company.id, now) {
            continue;
        }
        match one(company.id, room) {
            Ok(n) => {
                used = used.saturating_add(n.min(room));
                served += 1;
                forget_backoff(operation, company.id);
            }
            Err(error @ RepoError::Unavailable(_)) => return Err(error),
            Err(_) => {
                // ids only: the error's text may quote a row
                let retry_in = back_off(operation, company.id, now);
                tracing::warn!(
                    empresa_id = %company.id,
                    operation,
                    retry_in_seconds = retry_in.as_secs(),
                    "a company's batch failed on its own; the other companies go on"
                );
                count_company_batch_failure(operation);
                failed = true;
            }
        }
    }
    if failed && served == 0 {
        // the round's caller logs this error whole: it names the operation, never the
        // companies' errors (logged above by id), whose text may quote a row
        return Err(RepoError::Unexpected(anyhow::anyhow!(
            "every company's batch of {operation} failed on its own"
        )));
    }
    Ok(used)
}

/// The whole shape of a per-company worker operation of at most `limit` rows: `find` (given
/// the limit) answers the companies with due work, then `one` (given the company and what is
/// left of the limit) does that company's batch on a connection of its own, in turn, as
/// [`share_among`] shares it. `operation` names both in errors and logs. A limit of 0 does
/// nothing.
pub(crate) fn each_company(
    pool: &PgPool,
    limit: u32,
    operation: &'static str,
    find: impl FnOnce(&mut PgConnection, i64) -> QueryResult<Vec<CompanyIdRow>>,
    mut one: impl FnMut(&mut PgConnection, Uuid, i64) -> QueryResult<usize>,
) -> Result<u32, RepoError> {
    if limit == 0 {
        return Ok(0);
    }
    let companies = with_conn(pool, operation, |conn| find(conn, i64::from(limit)))?;
    share_among(companies, limit, operation, |empresa_id, room| {
        let done = with_conn(pool, operation, |conn| {
            one(conn, empresa_id, i64::from(room))
        })?;
        Ok(count_u32(done))
    })
}

/// The first key of [`lock_company`]'s advisory locks ("consent", 4 bytes), apart from the
/// migrations' single key.
const COMPANY_LOCK_SPACE: i32 = 0x636f_6e73;

/// Serializes one company's writers that must not interleave (a use-case synchronization, a
/// webhook URL's registration) until the transaction ends: a transaction-level advisory lock on
/// the company, then its row read (`NotFound` for an unknown company). Not a row lock on
/// `empresas` (`FOR NO KEY UPDATE`), which PostgreSQL grants only to a role that may update the
/// table, and the service's role may not (docs/security.md, "Least privilege").
pub(crate) fn lock_company(conn: &mut PgConnection, empresa: Uuid) -> QueryResult<()> {
    use diesel::prelude::*;
    diesel::sql_query("SELECT pg_advisory_xact_lock($1, hashtext($2::text))")
        .bind::<diesel::sql_types::Integer, _>(COMPANY_LOCK_SPACE)
        .bind::<diesel::sql_types::Uuid, _>(empresa)
        .execute(conn)?;
    crate::schema::empresas::table
        .find(empresa)
        .select(crate::schema::empresas::id)
        .first::<Uuid>(conn)
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn companies(n: u128) -> Vec<CompanyIdRow> {
        (1..=n)
            .map(|i| CompanyIdRow {
                id: Uuid::from_u128(i),
            })
            .collect()
    }

    #[test]
    fn each_company_gets_what_is_left_and_the_call_stops_when_nothing_is() {
        let mut asked = Vec::new();
        let used = share_among(companies(4), 10, "test", |id, room| {
            asked.push((id.as_u128(), room));
            Ok(room.min(4))
        })
        .unwrap();

        assert_eq!(used, 10);
        assert_eq!(asked, vec![(1, 10), (2, 6), (3, 2)]);
    }

    #[test]
    fn one_companys_failure_is_its_own_and_the_others_go_on() {
        let mut asked = Vec::new();
        let used = share_among(companies(3), 10, "test-one-fails", |id, _| {
            asked.push(id.as_u128());
            if id.as_u128() == 2 {
                Err(RepoError::Unexpected(anyhow::anyhow!(
                    "a row that does not read back"
                )))
            } else {
                Ok(1)
            }
        })
        .unwrap();
        assert_eq!((used, asked), (2, vec![1, 2, 3]));
        assert!(
            company_batch_failures()
                .iter()
                .any(|(op, n)| *op == "test-one-fails" && *n >= 1),
            "counted by operation"
        );
    }

    #[test]
    fn the_database_down_or_every_company_failing_ends_the_call_and_no_rows_text_leaves() {
        let down = share_among(companies(3), 10, "test-down", |id, _| {
            if id.as_u128() == 2 {
                Err(RepoError::Unavailable(anyhow::anyhow!("down")))
            } else {
                Ok(1)
            }
        });
        assert!(matches!(down, Err(RepoError::Unavailable(_))));
        let all = share_among(companies(2), 10, "test-all-fail", |_, _| {
            Err(RepoError::Unexpected(anyhow::anyhow!(
                "row (52998224725) broken"
            )))
        });
        let Err(RepoError::Unexpected(error)) = all else {
            panic!("every company failing is the call's error");
        };
        assert_eq!(
            format!("{error:#}"),
            "every company's batch of test-all-fail failed on its own",
            "the round logs this error whole: never a company's, which may quote a row"
        );
    }

    #[test]
    fn a_failing_company_is_left_out_for_a_growing_while_and_forgotten_at_its_first_success() {
        const OP: &str = "test-backoff";
        let company = Uuid::from_u128(7);
        let t0 = Instant::now();
        assert_eq!(back_off(OP, company, t0), Duration::from_secs(1));
        assert!(is_backed_off(OP, company, t0 + Duration::from_millis(999)));
        assert!(!is_backed_off(OP, company, t0 + Duration::from_secs(1)));
        assert!(!is_backed_off("another-operation", company, t0));
        let t1 = t0 + Duration::from_secs(1);
        assert_eq!(back_off(OP, company, t1), Duration::from_secs(2));
        assert_eq!(back_off(OP, company, t1), Duration::from_secs(4));
        for _ in 0..20 {
            back_off(OP, company, t1);
        }
        assert_eq!(back_off(OP, company, t1), MAX_BACKOFF, "capped");
        forget_backoff(OP, company);
        assert!(!is_backed_off(OP, company, t1));
        assert_eq!(
            back_off(OP, company, t1),
            FIRST_BACKOFF,
            "from the start again"
        );

        // in a round: the failing company is skipped while backed off, the others served
        let mut asked = Vec::new();
        let used = share_among(companies(3), 10, OP, |id, _| {
            asked.push(id.as_u128());
            Ok(1)
        })
        .unwrap();
        assert_eq!(
            (used, asked),
            (3, vec![1, 2, 3]),
            "company 7 is not among them"
        );
        let mut asked = Vec::new();
        let used = share_among(
            vec![
                CompanyIdRow { id: company },
                CompanyIdRow {
                    id: Uuid::from_u128(8),
                },
            ],
            10,
            OP,
            |id, _| {
                asked.push(id.as_u128());
                Ok(1)
            },
        )
        .unwrap();
        assert_eq!((used, asked), (1, vec![8]), "7 is backed off, 8 goes on");
    }
}
