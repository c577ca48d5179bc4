//! Synchronizing a company's use cases: our copy made equal to what the PGCC holds now.

use std::sync::Arc;

use domain::{Company, SyncCounts};
use ports::{CacheChange, Clock, PgccError, PgccGateway, RepoError, UseCaseRepository};

use crate::cache::ChangeTracker;

#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The PGCC could not list the use cases; nothing stored changed.
    #[error(transparent)]
    Pgcc(PgccError),
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct SyncUseCases {
    pgcc: Arc<dyn PgccGateway>,
    use_cases: Arc<dyn UseCaseRepository>,
    clock: Arc<dyn Clock>,
    /// Told at once of this process's own synchronizations (other processes learn of them from
    /// the change feed), so a list right after a sync answers the new list.
    tracker: Option<Arc<ChangeTracker>>,
}

impl SyncUseCases {
    pub fn new(
        pgcc: Arc<dyn PgccGateway>,
        use_cases: Arc<dyn UseCaseRepository>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            pgcc,
            use_cases,
            clock,
            tracker: None,
        }
    }

    /// Invalidates the company's cached values in `tracker` after each synchronization.
    pub fn invalidating(mut self, tracker: Arc<ChangeTracker>) -> Self {
        self.tracker = Some(tracker);
        self
    }

    /// Fetches the company's use cases from the PGCC and applies them to our copy in one go.
    pub fn execute(&self, company: &Company) -> Result<SyncCounts, SyncError> {
        let items = self
            .pgcc
            .list_use_cases(&company.cnpj)
            .inspect_err(|e| {
                tracing::warn!(empresa_id = %company.id, error = %e, "use case sync: PGCC failed");
            })
            .map_err(SyncError::Pgcc)?;
        let counts = self
            .use_cases
            .apply_sync(company.id, &items, self.clock.now())?;
        if let Some(tracker) = &self.tracker {
            tracker.apply(&[CacheChange::Company(company.id)]);
        }
        tracing::info!(
            empresa_id = %company.id,
            inseridos = counts.inserted,
            atualizados = counts.updated,
            removidos = counts.removed,
            total = counts.total,
            "use cases synchronized"
        );
        Ok(counts)
    }
}

#[cfg(test)]
mod tests {
    use ports::{MockPgccGateway, MockUseCaseRepository};
    use uuid::Uuid;

    use domain::PgccUseCase;

    use super::*;
    use crate::test_support::{company, fixed_clock, now};

    fn service(pgcc: MockPgccGateway, use_cases: MockUseCaseRepository) -> SyncUseCases {
        SyncUseCases::new(Arc::new(pgcc), Arc::new(use_cases), fixed_clock())
    }

    fn pgcc_items() -> Vec<PgccUseCase> {
        let link = Uuid::from_u128(7);
        vec![
            PgccUseCase {
                link_id: link,
                template_id: "tpl-1".to_owned(),
                title: "Crédito".to_owned(),
                other_fields: "{}".to_owned(),
            },
            PgccUseCase {
                link_id: link,
                template_id: "tpl-2".to_owned(),
                title: "Seguro".to_owned(),
                other_fields: "{}".to_owned(),
            },
        ]
    }

    #[test]
    fn syncing_applies_what_the_pgcc_lists_at_the_clock_time_and_returns_the_counts() {
        let cnpj = company().cnpj;
        let company_id = company().id;
        let counts = SyncCounts {
            inserted: 1,
            updated: 1,
            removed: 3,
            total: 2,
        };
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_list_use_cases()
            .withf(move |c| *c == cnpj)
            .times(1)
            .returning(|_| Ok(pgcc_items()));
        pgcc.expect_create_consent_request().times(0);
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_apply_sync()
            .withf(move |company, items, at| {
                *company == company_id && items == pgcc_items().as_slice() && *at == now()
            })
            .times(1)
            .returning(move |_, _, _| Ok(counts));

        let result = service(pgcc, use_cases).execute(&company()).unwrap();

        assert_eq!(result, counts);
    }

    #[test]
    fn an_empty_pgcc_list_is_still_applied_so_gone_use_cases_are_removed() {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_list_use_cases()
            .times(1)
            .returning(|_| Ok(Vec::new()));
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_apply_sync()
            .withf(|_, items, _| items.is_empty())
            .times(1)
            .returning(|_, _, _| {
                Ok(SyncCounts {
                    removed: 2,
                    ..SyncCounts::default()
                })
            });

        let result = service(pgcc, use_cases).execute(&company()).unwrap();

        assert_eq!(result.removed, 2);
    }

    #[test]
    fn a_pgcc_failure_is_reported_and_changes_nothing_stored() {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_list_use_cases()
            .times(1)
            .returning(|_| Err(PgccError::Failed { status: 503 }));
        let mut use_cases = MockUseCaseRepository::new();
        use_cases.expect_apply_sync().times(0);

        let result = service(pgcc, use_cases).execute(&company());

        assert!(
            matches!(
                result,
                Err(SyncError::Pgcc(PgccError::Failed { status: 503 }))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn a_pgcc_timeout_is_reported_and_changes_nothing_stored() {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_list_use_cases()
            .times(1)
            .returning(|_| Err(PgccError::Timeout));
        let mut use_cases = MockUseCaseRepository::new();
        use_cases.expect_apply_sync().times(0);

        let result = service(pgcc, use_cases).execute(&company());

        assert!(
            matches!(result, Err(SyncError::Pgcc(PgccError::Timeout))),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_apply_is_a_repository_error() {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_list_use_cases()
            .times(1)
            .returning(|_| Ok(pgcc_items()));
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_apply_sync()
            .times(1)
            .returning(|_, _, _| Err(RepoError::Unexpected(anyhow::anyhow!("deadlock"))));

        let result = service(pgcc, use_cases).execute(&company());

        assert!(
            matches!(result, Err(SyncError::Repo(RepoError::Unexpected(_)))),
            "{result:?}"
        );
    }

    #[test]
    fn a_synchronization_invalidates_the_companys_cached_values_in_this_process_at_once() {
        let tracker = Arc::new(ChangeTracker::new(true, std::time::Duration::from_secs(60)));
        tracker.mark_alive(std::time::Instant::now());
        let before = tracker.stamp().unwrap();
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_list_use_cases().returning(|_| Ok(pgcc_items()));
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_apply_sync()
            .returning(|_, _, _| Ok(SyncCounts::default()));

        service(pgcc, use_cases)
            .invalidating(tracker.clone())
            .execute(&company())
            .unwrap();

        assert!(!tracker.is_valid(before, company().id));
    }
}
