//! The PGCC's health (issue 25, part 3): every PGCC call of this process is noted by operation
//! and outcome ([`HealthTrackedPgcc`]); once a second [`PgccHealthJob`] adds the notes to the
//! tallies every process shares, assesses the last window and tells every company of a change
//! to or from `OK`, a bounded batch of companies per round. `GET /api/status` reads the shared
//! status ([`GetPgccStatus`]). Why shared, and the rule: docs/decisions.md, "The PGCC's health".

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use domain::{Cnpj, PgccCallTally, PgccHealth, PgccOperation, PgccOutageThreshold, PgccUseCase};
use ports::{
    Clock, PgccCallSecond, PgccConsentCreated, PgccConsentStatus, PgccError, PgccGateway,
    PgccHealthRepository, PgccNewConsent, RepoError,
};
use uuid::Uuid;

use crate::jobs::{Job, Outcome};

/// Whether a call's result found the PGCC unavailable: no connection, no answer in time, or a
/// 5xx. Any other answer (a success, a 4xx, 401/403, 429, an unreadable 2xx) is the PGCC
/// answering: it is up, whatever it said.
pub fn found_unavailable<T>(result: &Result<T, PgccError>) -> bool {
    match result {
        Err(PgccError::Unreachable(_) | PgccError::Timeout) => true,
        Err(PgccError::Failed { status }) => *status >= 500,
        _ => false,
    }
}

/// This process's PGCC calls not yet added to the shared tallies, per operation and second.
pub struct PgccCallNotes {
    pending: Mutex<HashMap<(PgccOperation, DateTime<Utc>), PgccCallTally>>,
    clock: Arc<dyn Clock>,
}

impl PgccCallNotes {
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self {
            pending: Mutex::new(HashMap::new()),
            clock,
        }
    }

    /// Notes one call of `operation` that ended now.
    pub fn note(&self, operation: PgccOperation, unavailable: bool) {
        let second = truncate_to_second(self.clock.now());
        let mut pending = lock(&self.pending);
        let tally = pending.entry((operation, second)).or_default();
        if unavailable {
            tally.unavailable += 1;
        } else {
            tally.answered += 1;
        }
    }

    /// The notes so far, forgotten here.
    pub fn take(&self) -> Vec<PgccCallSecond> {
        lock(&self.pending)
            .drain()
            .map(|((operation, second), tally)| PgccCallSecond {
                operation,
                second,
                tally,
            })
            .collect()
    }

    /// Notes that could not be stored, kept for the next round.
    fn put_back(&self, calls: Vec<PgccCallSecond>) {
        let mut pending = lock(&self.pending);
        for call in calls {
            let tally = pending.entry((call.operation, call.second)).or_default();
            tally.answered += call.tally.answered;
            tally.unavailable += call.tally.unavailable;
        }
    }
}

fn truncate_to_second(at: DateTime<Utc>) -> DateTime<Utc> {
    at.duration_trunc(TimeDelta::seconds(1)).unwrap_or(at)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A [`PgccGateway`] that forwards every call to `inner` and notes its outcome by operation.
pub struct HealthTrackedPgcc {
    inner: Arc<dyn PgccGateway>,
    notes: Arc<PgccCallNotes>,
}

impl HealthTrackedPgcc {
    pub fn new(inner: Arc<dyn PgccGateway>, notes: Arc<PgccCallNotes>) -> Self {
        Self { inner, notes }
    }

    fn noted<T>(
        &self,
        operation: PgccOperation,
        result: Result<T, PgccError>,
    ) -> Result<T, PgccError> {
        self.notes.note(operation, found_unavailable(&result));
        result
    }
}

impl PgccGateway for HealthTrackedPgcc {
    fn list_use_cases(&self, company_cnpj: &Cnpj) -> Result<Vec<PgccUseCase>, PgccError> {
        self.noted(
            PgccOperation::UseCases,
            self.inner.list_use_cases(company_cnpj),
        )
    }

    fn create_consent_request(
        &self,
        consent: &PgccNewConsent,
    ) -> Result<PgccConsentCreated, PgccError> {
        self.noted(
            PgccOperation::Creation,
            self.inner.create_consent_request(consent),
        )
    }

    fn consent_statuses(&self, pgcc_ids: &[String]) -> Result<Vec<PgccConsentStatus>, PgccError> {
        self.noted(PgccOperation::Status, self.inner.consent_statuses(pgcc_ids))
    }

    fn revoke_consent_request(&self, pgcc_id: &str) -> Result<(), PgccError> {
        self.noted(
            PgccOperation::Revocation,
            self.inner.revoke_consent_request(pgcc_id),
        )
    }

    fn find_by_external_reference(
        &self,
        company_cnpj: &Cnpj,
        referencia_externa: Uuid,
    ) -> Result<Option<PgccConsentCreated>, PgccError> {
        // the creation's own recovery: it is the creation endpoint's health
        self.noted(
            PgccOperation::Creation,
            self.inner
                .find_by_external_reference(company_cnpj, referencia_externa),
        )
    }
}

/// One round: this process's notes added to the shared tallies, the window assessed, and a
/// batch of companies told of the oldest change not yet told to all.
pub struct PgccHealthJob {
    pub notes: Arc<PgccCallNotes>,
    pub health: Arc<dyn PgccHealthRepository>,
    pub clock: Arc<dyn Clock>,
    /// The window assessed (`pgcc_status.window_seconds`).
    pub window: TimeDelta,
    /// Companies told per statement.
    pub announce_batch: u32,
    /// What it takes to leave `OK` (`pgcc_status.min_failed_calls`,
    /// `pgcc_status.min_failure_seconds`).
    pub threshold: PgccOutageThreshold,
}

impl Job for PgccHealthJob {
    fn name(&self) -> &'static str {
        "pgcc-health"
    }

    fn run_once(&mut self) -> anyhow::Result<Outcome> {
        let now = self.clock.now();
        let since = now - self.window;
        let calls = self.notes.take();
        if !calls.is_empty() {
            // seconds older than two windows are no longer read by anyone
            if let Err(error) = self.health.record(&calls, since - self.window) {
                self.notes.put_back(calls);
                return Err(error.into());
            }
        }
        let status = self.health.assess(since, now, self.threshold)?;
        tracing::debug!(code = status.code.as_str(), "PGCC health assessed");
        let told = self.health.announce(self.announce_batch, now)?;
        Ok(if told >= self.announce_batch {
            Outcome::MoreDue
        } else {
            Outcome::Done
        })
    }
}

/// `GET /api/status`: the status the service last stored.
#[derive(Clone)]
pub struct GetPgccStatus {
    health: Arc<dyn PgccHealthRepository>,
}

impl GetPgccStatus {
    pub fn new(health: Arc<dyn PgccHealthRepository>) -> Self {
        Self { health }
    }

    pub fn execute(&self) -> Result<PgccHealth, RepoError> {
        self.health.current()
    }
}

#[cfg(test)]
mod tests {
    use domain::PgccHealthCode;
    use ports::{MockPgccGateway, MockPgccHealthRepository};

    use super::*;
    use crate::test_support::{fixed_clock, now};

    #[test]
    fn only_no_connection_no_answer_in_time_and_5xx_find_the_pgcc_unavailable() {
        let unavailable = |e: PgccError| found_unavailable::<()>(&Err(e));
        assert!(unavailable(PgccError::Timeout));
        assert!(unavailable(PgccError::Unreachable(anyhow::anyhow!(
            "refused"
        ))));
        assert!(unavailable(PgccError::Failed { status: 503 }));
        assert!(!unavailable(PgccError::Failed { status: 401 }));
        assert!(!unavailable(PgccError::Rejected { status: 422 }));
        assert!(!unavailable(PgccError::TryLater {
            status: 429,
            retry_after_seconds: None
        }));
        assert!(!found_unavailable(&Ok(())));
    }

    #[test]
    fn every_call_is_noted_under_its_operation_and_second() {
        let notes = Arc::new(PgccCallNotes::new(fixed_clock()));
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_consent_statuses()
            .returning(|_| Err(PgccError::Timeout));
        pgcc.expect_revoke_consent_request().returning(|_| Ok(()));
        pgcc.expect_find_by_external_reference()
            .returning(|_, _| Ok(None));
        let tracked = HealthTrackedPgcc::new(Arc::new(pgcc), notes.clone());

        let _ = tracked.consent_statuses(&["a".to_owned()]);
        let _ = tracked.consent_statuses(&["b".to_owned()]);
        let _ = tracked.revoke_consent_request("a");
        let _ =
            tracked.find_by_external_reference(&crate::test_support::company().cnpj, Uuid::nil());

        let mut calls = notes.take();
        calls.sort_by_key(|c| c.operation);
        let second = truncate_to_second(now());
        assert_eq!(
            calls,
            [
                PgccCallSecond {
                    operation: PgccOperation::Creation,
                    second,
                    tally: PgccCallTally {
                        answered: 1,
                        unavailable: 0
                    }
                },
                PgccCallSecond {
                    operation: PgccOperation::Status,
                    second,
                    tally: PgccCallTally {
                        answered: 0,
                        unavailable: 2
                    }
                },
                PgccCallSecond {
                    operation: PgccOperation::Revocation,
                    second,
                    tally: PgccCallTally {
                        answered: 1,
                        unavailable: 0
                    }
                },
            ]
        );
        assert!(notes.take().is_empty(), "taken once");
    }

    #[test]
    fn notes_that_could_not_be_stored_are_kept_for_the_next_round() {
        let notes = Arc::new(PgccCallNotes::new(fixed_clock()));
        notes.note(PgccOperation::Creation, true);
        let mut health = MockPgccHealthRepository::new();
        health
            .expect_record()
            .times(1)
            .returning(|_, _| Err(RepoError::Unavailable(anyhow::anyhow!("down"))));
        health.expect_assess().times(0);
        let mut job = PgccHealthJob {
            notes: notes.clone(),
            health: Arc::new(health),
            clock: fixed_clock(),
            window: TimeDelta::seconds(60),
            announce_batch: 10,
            threshold: PgccOutageThreshold::NONE,
        };

        assert!(job.run_once().is_err());
        assert_eq!(notes.take().len(), 1);
    }

    #[test]
    fn a_round_records_assesses_the_window_and_tells_a_batch_of_companies() {
        let notes = Arc::new(PgccCallNotes::new(fixed_clock()));
        notes.note(PgccOperation::Status, false);
        let mut health = MockPgccHealthRepository::new();
        health
            .expect_record()
            .withf(|calls, before| calls.len() == 1 && *before == now() - TimeDelta::seconds(120))
            .times(1)
            .returning(|_, _| Ok(()));
        health
            .expect_assess()
            .withf(|since, at, threshold| {
                *since == now() - TimeDelta::seconds(60)
                    && *at == now()
                    && *threshold == PgccOutageThreshold::NONE
            })
            .times(1)
            .returning(|_, at, _| Ok(PgccHealth::new(&domain::PgccAssessment::of(&[]), at, at)));
        health
            .expect_announce()
            .withf(|batch, at| *batch == 10 && *at == now())
            .times(1)
            .returning(|_, _| Ok(10));
        let mut job = PgccHealthJob {
            notes,
            health: Arc::new(health),
            clock: fixed_clock(),
            window: TimeDelta::seconds(60),
            announce_batch: 10,
            threshold: PgccOutageThreshold::NONE,
        };

        assert_eq!(job.run_once().unwrap(), Outcome::MoreDue);
        assert_eq!(PgccHealthCode::Ok.as_str(), "OK");
    }
}
