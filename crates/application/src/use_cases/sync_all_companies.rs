//! The scheduled use-case sync: every company in turn, through [`SyncUseCases`].

use std::sync::Arc;
use std::time::Duration;

use ports::{Clock, CompanyRepository, PgccError, RepoError};

use crate::{SyncError, SyncUseCases};

/// The outcome of one round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyncAllReport {
    pub synced: u32,
    pub failed: u32,
}

#[derive(Clone)]
pub struct SyncAllCompanies {
    companies: Arc<dyn CompanyRepository>,
    sync: SyncUseCases,
    clock: Arc<dyn Clock>,
    /// How long a claimed company stays claimed: nine tenths of the schedule's period, so a
    /// process whose rounds run every period finds its companies due again (not a moment late,
    /// which would skip a period), while no company is synchronized twice within 0.9 periods
    /// by any number of processes.
    claimed_for: chrono::Duration,
}

impl SyncAllCompanies {
    /// The schedule's rounds run every `period`.
    pub fn new(
        companies: Arc<dyn CompanyRepository>,
        sync: SyncUseCases,
        clock: Arc<dyn Clock>,
        period: Duration,
    ) -> Self {
        let claimed_for = chrono::Duration::from_std(period * 9 / 10)
            .unwrap_or(chrono::Duration::MAX)
            .max(chrono::Duration::seconds(1));
        Self {
            companies,
            sync,
            clock,
            claimed_for,
        }
    }

    /// Syncs every company that is due (longest due first), claiming each from the shared
    /// schedule so that another process running the job syncs the others. A company whose sync
    /// fails is logged (its id and the kind of failure, nothing else) and counted, and the
    /// others go on; it is due again next period. Only failing to claim fails the round.
    pub fn run_once(&self) -> Result<SyncAllReport, RepoError> {
        let mut report = SyncAllReport::default();
        loop {
            let now = self.clock.now();
            let Some(company) = self.companies.claim_due_sync(now, now + self.claimed_for)? else {
                break;
            };
            match self.sync.execute(&company) {
                Ok(_) => report.synced += 1,
                Err(e) => {
                    report.failed += 1;
                    tracing::warn!(
                        empresa_id = %company.id,
                        error_kind = sync_error_kind(&e),
                        "scheduled use-case sync failed for a company; the others go on"
                    );
                }
            }
        }
        Ok(report)
    }
}

/// A short, data-free name of what went wrong, for the log.
fn sync_error_kind(e: &SyncError) -> &'static str {
    match e {
        SyncError::Pgcc(PgccError::Rejected { .. }) => "pgcc_rejected",
        SyncError::Pgcc(PgccError::TryLater { .. }) => "pgcc_try_later",
        SyncError::Pgcc(PgccError::Failed { .. }) => "pgcc_failed",
        SyncError::Pgcc(PgccError::Unreachable(_)) => "pgcc_unreachable",
        SyncError::Pgcc(PgccError::Timeout) => "pgcc_timeout",
        SyncError::Pgcc(PgccError::Unexpected(_)) => "pgcc_unexpected",
        SyncError::Repo(RepoError::Unavailable(_)) => "repo_unavailable",
        SyncError::Repo(RepoError::Unexpected(_)) => "repo_unexpected",
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use chrono::Duration;
    use domain::{Cnpj, Company, CompanyId, SyncCounts};
    use ports::{MockCompanyRepository, MockPgccGateway, MockUseCaseRepository};
    use uuid::Uuid;

    use super::*;
    use crate::test_support::{fixed_clock, now};

    fn company(n: u128, cnpj: &str) -> Company {
        Company {
            id: CompanyId(Uuid::from_u128(n)),
            name: format!("Empresa {n}"),
            cnpj: Cnpj::parse(cnpj).unwrap(),
            created_at: now() - Duration::days(n as i64),
        }
    }

    const CNPJ_A: &str = "11222333000181";
    const CNPJ_B: &str = "12ABC34501DE35";
    const CNPJ_C: &str = "11444777000161";

    fn three_companies() -> Vec<Company> {
        vec![company(1, CNPJ_A), company(2, CNPJ_B), company(3, CNPJ_C)]
    }

    /// A schedule where `list` is due, claimed one by one in that order, each until an hour
    /// less six minutes after the clock's time (0.9 of the hour's period).
    fn companies_listing(list: Vec<Company>) -> MockCompanyRepository {
        let mut companies = MockCompanyRepository::new();
        let due = Mutex::new(list.into_iter());
        companies
            .expect_claim_due_sync()
            .withf(|at, next| *at == now() && *next == now() + Duration::minutes(54))
            .returning(move |_, _| Ok(due.lock().unwrap().next()));
        companies
    }

    /// A PGCC that records the CNPJs it is asked about and fails for `failing`.
    fn pgcc_failing_for(failing: &'static str, asked: Arc<Mutex<Vec<String>>>) -> MockPgccGateway {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_list_use_cases().returning(move |cnpj| {
            asked.lock().unwrap().push(cnpj.as_str().to_owned());
            if cnpj.as_str() == failing {
                Err(PgccError::Failed { status: 503 })
            } else {
                Ok(Vec::new())
            }
        });
        pgcc.expect_create_consent_request().times(0);
        pgcc
    }

    /// A use-case store that records the companies it applies a sync to.
    fn recording_use_cases(applied: Arc<Mutex<Vec<CompanyId>>>) -> MockUseCaseRepository {
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_apply_sync()
            .returning(move |company, _, _| {
                applied.lock().unwrap().push(company);
                Ok(SyncCounts::default())
            });
        use_cases
    }

    fn service(
        companies: MockCompanyRepository,
        pgcc: MockPgccGateway,
        use_cases: MockUseCaseRepository,
    ) -> SyncAllCompanies {
        SyncAllCompanies::new(
            Arc::new(companies),
            SyncUseCases::new(Arc::new(pgcc), Arc::new(use_cases), fixed_clock()),
            fixed_clock(),
            std::time::Duration::from_secs(3600),
        )
    }

    #[test]
    fn every_due_company_is_claimed_and_synced_in_the_schedules_order() {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let applied = Arc::new(Mutex::new(Vec::new()));

        let report = service(
            companies_listing(three_companies()),
            pgcc_failing_for("none", asked.clone()),
            recording_use_cases(applied.clone()),
        )
        .run_once()
        .unwrap();

        assert_eq!(
            report,
            SyncAllReport {
                synced: 3,
                failed: 0
            }
        );
        assert_eq!(*asked.lock().unwrap(), [CNPJ_A, CNPJ_B, CNPJ_C]);
        assert_eq!(
            *applied.lock().unwrap(),
            three_companies().iter().map(|c| c.id).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_company_whose_pgcc_sync_fails_is_counted_and_the_others_go_on() {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let applied = Arc::new(Mutex::new(Vec::new()));

        let report = service(
            companies_listing(three_companies()),
            pgcc_failing_for(CNPJ_B, asked.clone()),
            recording_use_cases(applied.clone()),
        )
        .run_once()
        .unwrap();

        assert_eq!(
            report,
            SyncAllReport {
                synced: 2,
                failed: 1
            }
        );
        assert_eq!(*asked.lock().unwrap(), [CNPJ_A, CNPJ_B, CNPJ_C]);
        assert_eq!(
            *applied.lock().unwrap(),
            [CompanyId(Uuid::from_u128(1)), CompanyId(Uuid::from_u128(3))]
        );
    }

    #[test]
    fn a_company_whose_store_fails_is_counted_and_the_others_go_on() {
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_apply_sync()
            .times(3)
            .returning(|company, _, _| {
                if company == CompanyId(Uuid::from_u128(1)) {
                    Err(RepoError::Unexpected(anyhow::anyhow!("deadlock")))
                } else {
                    Ok(SyncCounts::default())
                }
            });

        let report = service(
            companies_listing(three_companies()),
            pgcc_failing_for("none", Arc::new(Mutex::new(Vec::new()))),
            use_cases,
        )
        .run_once()
        .unwrap();

        assert_eq!(
            report,
            SyncAllReport {
                synced: 2,
                failed: 1
            }
        );
    }

    #[test]
    fn no_company_is_an_empty_round_without_pgcc_calls() {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_list_use_cases().times(0);
        let mut use_cases = MockUseCaseRepository::new();
        use_cases.expect_apply_sync().times(0);

        let report = service(companies_listing(Vec::new()), pgcc, use_cases)
            .run_once()
            .unwrap();

        assert_eq!(report, SyncAllReport::default());
    }

    #[test]
    fn failing_to_claim_fails_the_round_without_pgcc_calls() {
        let mut companies = MockCompanyRepository::new();
        companies
            .expect_claim_due_sync()
            .times(1)
            .returning(|_, _| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_list_use_cases().times(0);
        let mut use_cases = MockUseCaseRepository::new();
        use_cases.expect_apply_sync().times(0);

        let result = service(companies, pgcc, use_cases).run_once();

        assert!(
            matches!(result, Err(RepoError::Unavailable(_))),
            "{result:?}"
        );
    }

    #[test]
    fn every_failure_has_a_distinct_data_free_kind() {
        let kinds = [
            sync_error_kind(&SyncError::Pgcc(PgccError::Rejected { status: 404 })),
            sync_error_kind(&SyncError::Pgcc(PgccError::Failed { status: 503 })),
            sync_error_kind(&SyncError::Pgcc(PgccError::Unreachable(anyhow::anyhow!(
                "x"
            )))),
            sync_error_kind(&SyncError::Pgcc(PgccError::Timeout)),
            sync_error_kind(&SyncError::Pgcc(PgccError::Unexpected(anyhow::anyhow!(
                "x"
            )))),
            sync_error_kind(&SyncError::Repo(RepoError::Unavailable(anyhow::anyhow!(
                "x"
            )))),
            sync_error_kind(&SyncError::Repo(RepoError::Unexpected(anyhow::anyhow!(
                "x"
            )))),
        ];
        for (i, kind) in kinds.iter().enumerate() {
            assert!(!kinds[i + 1..].contains(kind), "{kind} twice");
            assert!(
                kind.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{kind}"
            );
        }
    }
}
