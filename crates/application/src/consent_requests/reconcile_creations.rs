//! The reconciler's round: settles creations left `em_andamento` (the PGCC timed out, failed or
//! was unreachable, or our process died between storing the row and confirming it) by asking the
//! PGCC whether it holds a request under our id (its `referenciaExterna`): confirmed as soon as it
//! does; cancelled only once it has said it does not over a whole window (the not-found window):
//! a PGCC may commit a creation after our call gave up on it, and a row cancelled too early would
//! leave a consent on the PGCC that we never look at again. The first "not found" is recorded on
//! the row; a later one at least the window after it cancels. So every consent the PGCC holds for
//! us exists here exactly once.
//!
//! Only rows whose last attempt is older than the grace are looked at: the grace must exceed the
//! PGCC timeout, so that a request still waiting for the PGCC is never reconciled under its feet.
//! A cancellation is a compare-and-set on the claim's instant: if a retry attempted the row again
//! after the claim, the row is left to that retry.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use ports::{
    Clock, Confirmation, ConsentRequestRepository, PgccConsentCreated, PgccError, PgccGateway,
    RepoError, UnfinishedCreation,
};

/// The outcome of one round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReconcileReport {
    /// Unfinished creations claimed and asked about.
    pub checked: u32,
    /// Confirmed because the PGCC holds them.
    pub confirmed: u32,
    /// Cancelled because the PGCC has not held them for the whole not-found window.
    pub cancelled: u32,
    /// Not held by the PGCC, but not for the whole window yet: left unfinished, asked again.
    pub not_found: u32,
    /// Creations this round could not settle on their own account: the PGCC refused the lookup
    /// of that one (4xx) or its outcome could not be stored. Looked at again once the grace has
    /// passed since the claim; the round went on with the others.
    pub failed: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// The PGCC could not answer; the round stopped there. The claimed creations are looked at
    /// again once the grace has passed since the claim.
    #[error(transparent)]
    Pgcc(PgccError),
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct ReconcileCreations {
    consent_requests: Arc<dyn ConsentRequestRepository>,
    pgcc: Arc<dyn PgccGateway>,
    clock: Arc<dyn Clock>,
}

impl ReconcileCreations {
    pub fn new(
        consent_requests: Arc<dyn ConsentRequestRepository>,
        pgcc: Arc<dyn PgccGateway>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            consent_requests,
            pgcc,
            clock,
        }
    }

    /// Claims up to `batch_size` creations whose last attempt is older than `grace` and settles
    /// each by the PGCC's answer: held, confirmed; not held, cancelled if a first "not found" was
    /// recorded at least `not_found_window` ago, else recorded (the first one) and left for a
    /// later round. Log lines carry ids only.
    pub fn run_once(
        &self,
        batch_size: u32,
        grace: Duration,
        not_found_window: Duration,
    ) -> Result<ReconcileReport, ReconcileError> {
        let now = self.clock.now();
        let claimed =
            self.consent_requests
                .claim_unfinished_creations(batch_size, now - grace, now)?;
        let mut report = ReconcileReport::default();
        for creation in claimed {
            let found = match self
                .pgcc
                .find_by_external_reference(&creation.company_cnpj, creation.id)
            {
                Ok(found) => found,
                // a refusal of this lookup is this creation's business, not its neighbours'
                Err(e @ PgccError::Rejected { .. }) => {
                    report.failed += 1;
                    tracing::warn!(
                        empresa_id = %creation.company_id,
                        solicitacao_id = %creation.id,
                        error = %e,
                        "reconciler: the PGCC refused to look this creation up; asked again later"
                    );
                    continue;
                }
                Err(e) => {
                    tracing::warn!(
                        solicitacao_id = %creation.id,
                        checked = report.checked,
                        error = %e,
                        "reconciler: the PGCC could not answer; stopping this round"
                    );
                    return Err(ReconcileError::Pgcc(e));
                }
            };
            report.checked += 1;
            if let Err(e) = self.settle(&creation, found, now, not_found_window, &mut report) {
                // one creation's storage failure is that creation's: the others are settled
                report.failed += 1;
                tracing::warn!(
                    empresa_id = %creation.company_id,
                    solicitacao_id = %creation.id,
                    error = format!("{e:#}"),
                    "reconciler: could not store this creation's outcome; asked again later"
                );
            }
        }
        Ok(report)
    }

    /// Stores what the PGCC's answer about `creation` means; `report` counts it.
    fn settle(
        &self,
        creation: &UnfinishedCreation,
        found: Option<PgccConsentCreated>,
        now: DateTime<Utc>,
        not_found_window: Duration,
        report: &mut ReconcileReport,
    ) -> Result<(), RepoError> {
        match found {
            Some(held) => {
                let confirmation = self.consent_requests.confirm_creation(
                    &creation.request,
                    &held.pgcc_id,
                    now,
                )?;
                if confirmation == Confirmation::Confirmed {
                    report.confirmed += 1;
                    tracing::info!(
                        empresa_id = %creation.company_id,
                        solicitacao_id = %creation.id,
                        "reconciler: the PGCC holds it; confirmed"
                    );
                }
            }
            None => {
                let first_not_found = creation.not_found_since.unwrap_or(now);
                if now - first_not_found < not_found_window {
                    report.not_found += 1;
                    if creation.not_found_since.is_none() {
                        self.consent_requests.record_creation_not_found(
                            creation.company_id,
                            creation.id,
                            creation.claimed_at,
                            now,
                        )?;
                    }
                    tracing::info!(
                        empresa_id = %creation.company_id,
                        solicitacao_id = %creation.id,
                        nao_encontrada_desde = %first_not_found,
                        "reconciler: the PGCC does not hold it yet; asked again later"
                    );
                    return Ok(());
                }
                if self.consent_requests.cancel_creation(
                    creation.company_id,
                    creation.id,
                    creation.claimed_at,
                )? {
                    report.cancelled += 1;
                    tracing::info!(
                        empresa_id = %creation.company_id,
                        solicitacao_id = %creation.id,
                        nao_encontrada_desde = %first_not_found,
                        "reconciler: the PGCC has not held it for the whole window; cancelled"
                    );
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use domain::{CompanyId, ConsentStatus};
    use ports::{MockConsentRequestRepository, MockPgccGateway};
    use uuid::Uuid;

    use super::*;
    use crate::test_support::{company, consent_request, fixed_clock, now};

    /// A `cancel_creation` call: company, id, the claim's stamp.
    type Cancellation = (CompanyId, Uuid, DateTime<Utc>);

    /// A `record_creation_not_found` call: company, id, the claim's stamp, when.
    type NotFoundRecord = (CompanyId, Uuid, DateTime<Utc>, DateTime<Utc>);

    fn creation(n: u128) -> UnfinishedCreation {
        let mut request = consent_request(Uuid::from_u128(n), ConsentStatus::Active);
        request.pgcc_id = String::new();
        UnfinishedCreation {
            id: request.id,
            company_id: request.company_id,
            company_cnpj: company().cnpj,
            claimed_at: now(),
            not_found_since: None,
            request: Box::new(request),
        }
    }

    /// `creation(n)` the PGCC first said it did not hold `ago` before now.
    fn not_found_for(n: u128, ago: Duration) -> UnfinishedCreation {
        UnfinishedCreation {
            not_found_since: Some(now() - ago),
            ..creation(n)
        }
    }

    fn window() -> Duration {
        Duration::seconds(600)
    }

    fn claiming(items: Vec<UnfinishedCreation>) -> MockConsentRequestRepository {
        let mut store = MockConsentRequestRepository::new();
        store
            .expect_claim_unfinished_creations()
            .withf(|limit, before, at| {
                *limit == 50 && *before == now() - Duration::seconds(30) && *at == now()
            })
            .times(1)
            .returning(move |_, _, _| Ok(items.clone()));
        store
    }

    /// A PGCC holding `pgcc-<n>` for the odd ids and nothing for the even ones.
    fn pgcc_holding_odd_ids() -> MockPgccGateway {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_find_by_external_reference()
            .withf(|cnpj, _| *cnpj == company().cnpj)
            .returning(|_, id| {
                Ok((id.as_u128() % 2 == 1).then(|| PgccConsentCreated {
                    pgcc_id: format!("pgcc-{}", id.as_u128()),
                }))
            });
        pgcc.expect_create_consent_request().times(0);
        pgcc
    }

    fn service(store: MockConsentRequestRepository, pgcc: MockPgccGateway) -> ReconcileCreations {
        ReconcileCreations::new(Arc::new(store), Arc::new(pgcc), fixed_clock())
    }

    #[test]
    fn what_the_pgcc_holds_is_confirmed_and_what_it_has_not_for_the_window_is_cancelled() {
        let mut store = claiming(vec![
            creation(1),
            not_found_for(2, Duration::seconds(600)),
            creation(3),
        ]);
        let confirmed = Arc::new(Mutex::new(Vec::new()));
        let recorded = confirmed.clone();
        store
            .expect_confirm_creation()
            .times(2)
            .returning(move |stored, pgcc_id, at| {
                recorded.lock().unwrap().push((
                    stored.company_id,
                    stored.id,
                    pgcc_id.to_owned(),
                    at,
                ));
                Ok(Confirmation::Confirmed)
            });
        let cancelled: Arc<Mutex<Vec<Cancellation>>> = Arc::default();
        let recorded = cancelled.clone();
        store
            .expect_cancel_creation()
            .times(1)
            .returning(move |company, id, at| {
                recorded.lock().unwrap().push((company, id, at));
                Ok(true)
            });

        let report = service(store, pgcc_holding_odd_ids())
            .run_once(50, Duration::seconds(30), window())
            .unwrap();

        assert_eq!(
            report,
            ReconcileReport {
                checked: 3,
                confirmed: 2,
                cancelled: 1,
                not_found: 0,
                failed: 0,
            }
        );
        assert_eq!(
            *confirmed.lock().unwrap(),
            [
                (company().id, Uuid::from_u128(1), "pgcc-1".to_owned(), now()),
                (company().id, Uuid::from_u128(3), "pgcc-3".to_owned(), now()),
            ]
        );
        // the cancellation is conditioned on the claim's own stamp
        assert_eq!(
            *cancelled.lock().unwrap(),
            [(company().id, Uuid::from_u128(2), now())]
        );
    }

    #[test]
    fn a_first_not_found_is_recorded_and_cancels_nothing() {
        let mut store = claiming(vec![creation(2)]);
        store.expect_cancel_creation().times(0);
        let recorded: Arc<Mutex<Vec<NotFoundRecord>>> = Arc::default();
        let records = recorded.clone();
        store.expect_record_creation_not_found().times(1).returning(
            move |company, id, attempt_at, at| {
                records.lock().unwrap().push((company, id, attempt_at, at));
                Ok(true)
            },
        );

        let report = service(store, pgcc_holding_odd_ids())
            .run_once(50, Duration::seconds(30), window())
            .unwrap();

        assert_eq!(
            report,
            ReconcileReport {
                checked: 1,
                confirmed: 0,
                cancelled: 0,
                not_found: 1,
                failed: 0,
            }
        );
        // conditioned on the claim's stamp, as a cancellation
        assert_eq!(
            *recorded.lock().unwrap(),
            [(company().id, Uuid::from_u128(2), now(), now())]
        );
    }

    #[test]
    fn a_not_found_within_the_window_keeps_the_first_one_and_cancels_nothing() {
        let mut store = claiming(vec![not_found_for(2, Duration::seconds(599))]);
        store.expect_cancel_creation().times(0);
        store.expect_record_creation_not_found().times(0);

        let report = service(store, pgcc_holding_odd_ids())
            .run_once(50, Duration::seconds(30), window())
            .unwrap();

        assert_eq!((report.cancelled, report.not_found), (0, 1));
    }

    #[test]
    fn a_creation_found_after_earlier_not_found_answers_is_confirmed() {
        let mut store = claiming(vec![not_found_for(1, Duration::hours(2))]);
        store.expect_cancel_creation().times(0);
        store
            .expect_confirm_creation()
            .withf(|stored, pgcc_id, _| stored.id == Uuid::from_u128(1) && pgcc_id == "pgcc-1")
            .times(1)
            .returning(|_, _, _| Ok(Confirmation::Confirmed));

        let report = service(store, pgcc_holding_odd_ids())
            .run_once(50, Duration::seconds(30), window())
            .unwrap();

        assert_eq!((report.confirmed, report.cancelled), (1, 0));
    }

    #[test]
    fn nothing_claimed_asks_nothing() {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_find_by_external_reference().times(0);

        let report = service(claiming(vec![]), pgcc)
            .run_once(50, Duration::seconds(30), window())
            .unwrap();

        assert_eq!(report, ReconcileReport::default());
    }

    #[test]
    fn settlements_lost_to_another_process_are_not_counted() {
        let mut store = claiming(vec![creation(1), not_found_for(2, Duration::hours(1))]);
        store
            .expect_confirm_creation()
            .times(1)
            .returning(|_, _, _| {
                Ok(Confirmation::AlreadyConfirmed {
                    pgcc_id: "pgcc-1".to_owned(),
                })
            });
        // a retry attempted it after the claim: the cancellation does not apply
        store
            .expect_cancel_creation()
            .times(1)
            .returning(|_, _, _| Ok(false));

        let report = service(store, pgcc_holding_odd_ids())
            .run_once(50, Duration::seconds(30), window())
            .unwrap();

        assert_eq!(
            report,
            ReconcileReport {
                checked: 2,
                confirmed: 0,
                cancelled: 0,
                not_found: 0,
                failed: 0,
            }
        );
    }

    #[test]
    fn a_pgcc_that_cannot_answer_stops_the_round_and_settles_nothing() {
        let mut store = claiming(vec![creation(1), creation(2)]);
        store.expect_confirm_creation().times(0);
        store.expect_cancel_creation().times(0);
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_find_by_external_reference()
            .times(1)
            .returning(|_, _| Err(PgccError::Timeout));

        let result = service(store, pgcc).run_once(50, Duration::seconds(30), window());

        assert!(
            matches!(result, Err(ReconcileError::Pgcc(PgccError::Timeout))),
            "{result:?}"
        );
    }

    #[test]
    fn one_creations_failure_is_its_own_and_the_round_settles_the_others() {
        let mut store = claiming(vec![creation(1), creation(3), creation(5)]);
        // storing creation 1 fails; 3 and 5 are confirmed all the same
        store
            .expect_confirm_creation()
            .times(2)
            .returning(|request, _, _| {
                if request.id == Uuid::from_u128(1) {
                    Err(RepoError::Unexpected(anyhow::anyhow!("deadlock")))
                } else {
                    Ok(Confirmation::Confirmed)
                }
            });
        let mut pgcc = MockPgccGateway::new();
        // the PGCC refuses the lookup of creation 5 alone
        pgcc.expect_find_by_external_reference()
            .times(3)
            .returning(|_, id| match id.as_u128() {
                5 => Err(PgccError::Rejected { status: 400 }),
                n => Ok(Some(PgccConsentCreated {
                    pgcc_id: format!("pgcc-{n}"),
                })),
            });

        let report = service(store, pgcc)
            .run_once(50, Duration::seconds(30), window())
            .unwrap();

        assert_eq!(
            report,
            ReconcileReport {
                checked: 2,
                confirmed: 1,
                cancelled: 0,
                not_found: 0,
                failed: 2,
            }
        );
    }

    #[test]
    fn a_failing_claim_is_a_repository_error_and_asks_nothing() {
        let mut store = MockConsentRequestRepository::new();
        store
            .expect_claim_unfinished_creations()
            .returning(|_, _, _| Err(RepoError::Unavailable(anyhow::anyhow!("down"))));
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_find_by_external_reference().times(0);

        let result = service(store, pgcc).run_once(50, Duration::seconds(30), window());

        assert!(
            matches!(result, Err(ReconcileError::Repo(RepoError::Unavailable(_)))),
            "{result:?}"
        );
    }
}
