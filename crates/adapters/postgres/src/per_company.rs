//! Work done one company at a time (issue 21, part 3): a worker statement first finds the
//! companies with due work (one index probe per company, never the due rows), then changes each
//! company's rows in a statement scoped to it. This is what a distributed database needs (no
//! lock across companies) and what keeps one company's backlog from being read for another's.

use std::collections::BTreeMap;
use std::sync::Mutex;

use diesel::{PgConnection, QueryResult};
use ports::RepoError;
use uuid::Uuid;

use crate::conn::{count_u32, with_conn};
use crate::PgPool;

/// The statement that finds the companies (in id order, at most `$limit`) for which `$exists`,
/// a subquery on `e.id`, finds a row: one probe of a per-company index per company, never the
/// due rows themselves. Every "companies with due work" statement has this shape.
macro_rules! companies_with {
    ($exists:literal) => {
        concat!(
            "SELECT e.id FROM empresas e\nWHERE EXISTS (\n",
            $exists,
            "\n)\nORDER BY e.id\nLIMIT $limit"
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
/// rows stay due for the next round. The database being unreachable
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
    for company in companies {
        let room = limit.saturating_sub(used);
        if room == 0 {
            break;
        }
        match one(company.id, room) {
            Ok(n) => {
                used = used.saturating_add(n.min(room));
                served += 1;
            }
            Err(error @ RepoError::Unavailable(_)) => return Err(error),
            Err(_) => {
                // ids only: the error's text may quote a row
                tracing::warn!(
                    empresa_id = %company.id,
                    operation,
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
        let used = share_among(companies(3), 10, "test", |id, _| {
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
                .any(|(op, n)| *op == "test" && *n >= 1),
            "counted by operation"
        );
    }

    #[test]
    fn the_database_down_or_every_company_failing_ends_the_call_and_no_rows_text_leaves() {
        let down = share_among(companies(3), 10, "test", |id, _| {
            if id.as_u128() == 2 {
                Err(RepoError::Unavailable(anyhow::anyhow!("down")))
            } else {
                Ok(1)
            }
        });
        assert!(matches!(down, Err(RepoError::Unavailable(_))));
        let all = share_among(companies(2), 10, "test", |_, _| {
            Err(RepoError::Unexpected(anyhow::anyhow!(
                "row (52998224725) broken"
            )))
        });
        let Err(RepoError::Unexpected(error)) = all else {
            panic!("every company failing is the call's error");
        };
        assert_eq!(
            format!("{error:#}"),
            "every company's batch of test failed on its own",
            "the round logs this error whole: never a company's, which may quote a row"
        );
    }
}
