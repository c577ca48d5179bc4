//! The status worker's round: asks the PGCC about a batch of open requests and applies what the
//! subject did there (accepted, refused, revoked) as transitions caused by `pgcc`.
//!
//! Each request's answer is applied on its own: a status the PGCC names that we do not know
//! skips that request (counted, and its next check backed off), never its batch, so one odd
//! answer cannot keep its neighbours' revocations from reaching us.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use domain::{ConsentStatus, Reason, TransitionCause};
use ports::{Clock, ConsentRequestRepository, PgccError, PgccGateway, RepoError};

/// The outcome of one round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PollReport {
    /// Requests claimed and asked about.
    pub checked: u32,
    /// Requests whose status this round stored a change for.
    pub changed: u32,
    /// Requests for which the PGCC answered a status we do not know (skipped, backed off).
    pub unknown: u32,
    /// Requests whose change could not be stored (skipped: checked again at the time their
    /// claim pushed their next check to; the round went on with the others).
    pub failed: u32,
}

/// The longest a request the PGCC keeps answering an unknown status for waits between checks.
/// Bounded so that once the PGCC answers sense again (say, a revocation), it reaches us within
/// this long.
pub const UNKNOWN_STATUS_MAX_BACKOFF_SECONDS: i64 = 3600;

#[derive(Debug, thiserror::Error)]
pub enum PollError {
    /// The PGCC could not answer; the claimed requests are checked again at their next due time.
    #[error(transparent)]
    Pgcc(PgccError),
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct PollConsentStatuses {
    consent_requests: Arc<dyn ConsentRequestRepository>,
    pgcc: Arc<dyn PgccGateway>,
    clock: Arc<dyn Clock>,
}

impl PollConsentStatuses {
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

    /// Claims up to `batch_size` due requests (pushing their next check `recheck_after` ahead),
    /// asks the PGCC for all of them in one call, and stores each status that differs as the
    /// transition the state machine names. A status the machine cannot reach from the stored one
    /// (the PGCC says `pendente` for an `ativo` request) is logged and skipped; so is a request
    /// the PGCC does not know. A status we do not know is skipped for that request alone, counted
    /// in `unknown`, and its next check pushed back (see [`unknown_status_backoff`]). A
    /// transition lost to another process (compare-and-set `false`) is not counted. A change that
    /// cannot be stored is that request's failure alone, counted in `failed`. Log lines carry ids
    /// and statuses only, never personal data.
    pub fn run_once(
        &self,
        batch_size: u32,
        recheck_after: Duration,
    ) -> Result<PollReport, PollError> {
        let now = self.clock.now();
        let claimed =
            self.consent_requests
                .claim_for_status_check(batch_size, now, now + recheck_after)?;
        if claimed.is_empty() {
            return Ok(PollReport::default());
        }
        let pgcc_ids: Vec<String> = claimed.iter().map(|item| item.pgcc_id.clone()).collect();
        let answers = self
            .pgcc
            .consent_statuses(&pgcc_ids)
            .inspect_err(|e| {
                tracing::warn!(requests = claimed.len(), error = %e, "status poll: PGCC failed");
            })
            .map_err(PollError::Pgcc)?;
        let mut by_pgcc_id: HashMap<&str, (Option<ConsentStatus>, Option<&str>)> =
            HashMap::with_capacity(answers.len());
        for answer in &answers {
            // the first answer for an id wins, as the PGCC answers a repeated id once
            by_pgcc_id
                .entry(answer.pgcc_id.as_str())
                .or_insert((answer.status, answer.reason.as_deref()));
        }

        let mut report = PollReport {
            checked: u32::try_from(claimed.len()).unwrap_or(u32::MAX),
            ..PollReport::default()
        };
        for item in &claimed {
            let Some(&(reported, reason)) = by_pgcc_id.get(item.pgcc_id.as_str()) else {
                tracing::warn!(
                    empresa_id = %item.company_id,
                    solicitacao_id = %item.id,
                    pgcc_id = %item.pgcc_id,
                    "status poll: the PGCC does not know this request"
                );
                continue;
            };
            let Some(reported) = reported else {
                report.unknown += 1;
                self.back_off_unknown_status(item, now, recheck_after);
                continue;
            };
            if item.unknown_status_since.is_some() {
                // sense again: a later oddity starts its backoff afresh
                if let Err(e) = self
                    .consent_requests
                    .clear_unknown_status(item.company_id, item.id)
                {
                    tracing::warn!(
                        solicitacao_id = %item.id,
                        error = format!("{e:#}"),
                        "status poll: could not forget an earlier unknown status"
                    );
                }
            }
            if reported == item.status {
                continue;
            }
            if ConsentStatus::event_towards(item.status, reported).is_none() {
                tracing::warn!(
                    empresa_id = %item.company_id,
                    solicitacao_id = %item.id,
                    pgcc_id = %item.pgcc_id,
                    stored = %item.status,
                    reported = %reported,
                    "status poll: the PGCC reports a status our state machine cannot reach; skipped"
                );
                continue;
            }
            let moved = self.consent_requests.transition(
                item.company_id,
                item.id,
                item.status,
                reported,
                TransitionCause::Pgcc,
                // the subject's reason, as the PGCC reports it (cut to what we keep)
                Reason::from_pgcc(reason),
                now,
            );
            // One request's failure is that request's: its neighbours' changes (another
            // company's revocations among them) are applied all the same, and it is checked again
            // when its claim expires (`recheck_after`). The error names no personal data.
            let moved = match moved {
                Ok(moved) => moved,
                Err(e) => {
                    report.failed += 1;
                    tracing::warn!(
                        empresa_id = %item.company_id,
                        solicitacao_id = %item.id,
                        de = %item.status,
                        para = %reported,
                        error = format!("{e:#}"),
                        "status poll: could not store this request's change; checked again later"
                    );
                    continue;
                }
            };
            if moved {
                report.changed += 1;
                tracing::info!(
                    empresa_id = %item.company_id,
                    solicitacao_id = %item.id,
                    de = %item.status,
                    para = %reported,
                    "consent request status changed on the PGCC"
                );
            }
        }
        Ok(report)
    }

    /// Skips `item` this round and checks it again later, later each time the PGCC keeps
    /// answering a status we do not know. A failure to store the backoff is logged only: the
    /// request is then checked at its claimed time, and its neighbours are applied all the same.
    fn back_off_unknown_status(
        &self,
        item: &ports::StatusCheckItem,
        now: DateTime<Utc>,
        recheck_after: Duration,
    ) {
        let since = item.unknown_status_since.unwrap_or(now);
        let next_check_at = now + unknown_status_backoff(now - since, recheck_after);
        tracing::warn!(
            empresa_id = %item.company_id,
            solicitacao_id = %item.id,
            pgcc_id = %item.pgcc_id,
            desde = %since,
            proxima_verificacao = %next_check_at,
            "status poll: the PGCC answered a status we do not know; skipped, checked again later"
        );
        if let Err(e) =
            self.consent_requests
                .defer_status_check(item.company_id, item.id, since, next_check_at)
        {
            tracing::warn!(
                solicitacao_id = %item.id,
                error = format!("{e:#}"),
                "status poll: could not back off a request with an unknown status"
            );
        }
    }
}

/// How long to wait before asking again about a request whose status the PGCC has answered
/// unknown for `unknown_for`: twice the usual interval at first, then as long as it has lasted
/// (so the wait doubles from check to check), at most [`UNKNOWN_STATUS_MAX_BACKOFF_SECONDS`].
pub fn unknown_status_backoff(unknown_for: Duration, recheck_after: Duration) -> Duration {
    let max = Duration::seconds(UNKNOWN_STATUS_MAX_BACKOFF_SECONDS);
    (recheck_after * 2).max(unknown_for).min(max)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use chrono::{DateTime, Utc};
    use domain::CompanyId;
    use mockall::predicate::eq;
    use ports::{
        MockConsentRequestRepository, MockPgccGateway, PgccConsentStatus, StatusCheckItem,
    };
    use uuid::Uuid;

    use super::*;
    use crate::test_support::{fixed_clock, now};

    fn item(n: u128, status: ConsentStatus) -> StatusCheckItem {
        StatusCheckItem {
            id: Uuid::from_u128(n),
            company_id: CompanyId(Uuid::from_u128(0xe0 + n % 2)),
            pgcc_id: format!("pgcc-{n}"),
            status,
            unknown_status_since: None,
        }
    }

    fn answer(n: u128, status: ConsentStatus) -> PgccConsentStatus {
        PgccConsentStatus {
            pgcc_id: format!("pgcc-{n}"),
            status: Some(status),
            reason: None,
        }
    }

    /// The PGCC names a status we do not know for request `n`.
    fn odd_answer(n: u128) -> PgccConsentStatus {
        PgccConsentStatus {
            pgcc_id: format!("pgcc-{n}"),
            status: None,
            reason: None,
        }
    }

    type TransitionCall = (
        CompanyId,
        Uuid,
        ConsentStatus,
        ConsentStatus,
        TransitionCause,
        Option<Reason>,
        DateTime<Utc>,
    );

    /// A repository that hands out `claimed` for (10, now, now + 30 s) and answers each
    /// transition with `moved(id)`, recording it.
    fn repository(
        claimed: Vec<StatusCheckItem>,
        moved: fn(Uuid) -> Result<bool, RepoError>,
        transitions: Arc<Mutex<Vec<TransitionCall>>>,
    ) -> MockConsentRequestRepository {
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests
            .expect_claim_for_status_check()
            .with(eq(10), eq(now()), eq(now() + Duration::seconds(30)))
            .times(1)
            .returning(move |_, _, _| Ok(claimed.clone()));
        consent_requests.expect_transition().returning(
            move |company, id, from, to, cause, reason, at| {
                transitions
                    .lock()
                    .unwrap()
                    .push((company, id, from, to, cause, reason, at));
                moved(id)
            },
        );
        consent_requests
    }

    /// A PGCC answering `answers` once, recording the ids it was asked about.
    fn pgcc(
        answers: Result<Vec<PgccConsentStatus>, PgccError>,
        asked: Arc<Mutex<Vec<Vec<String>>>>,
    ) -> MockPgccGateway {
        let mut pgcc = MockPgccGateway::new();
        let mut answers = Some(answers);
        pgcc.expect_consent_statuses()
            .times(1)
            .returning(move |ids| {
                asked.lock().unwrap().push(ids.to_vec());
                answers.take().unwrap()
            });
        pgcc.expect_revoke_consent_request().times(0);
        pgcc.expect_create_consent_request().times(0);
        pgcc
    }

    fn run(
        consent_requests: MockConsentRequestRepository,
        pgcc: MockPgccGateway,
    ) -> Result<PollReport, PollError> {
        PollConsentStatuses::new(Arc::new(consent_requests), Arc::new(pgcc), fixed_clock())
            .run_once(10, Duration::seconds(30))
    }

    fn always_moved(_: Uuid) -> Result<bool, RepoError> {
        Ok(true)
    }

    #[test]
    fn every_difference_the_pgcc_reports_is_stored_as_a_pgcc_transition() {
        use ConsentStatus::*;
        let claimed = vec![
            item(1, Pending),
            item(2, Pending),
            item(3, Active),
            item(4, Pending),
            item(5, Active),
        ];
        let transitions = Arc::new(Mutex::new(Vec::new()));
        let asked = Arc::new(Mutex::new(Vec::new()));

        let report = run(
            repository(claimed.clone(), always_moved, transitions.clone()),
            pgcc(
                Ok(vec![
                    answer(1, Active),
                    answer(2, Refused),
                    answer(3, Revoked),
                    answer(4, Expired),
                    answer(5, Expired),
                ]),
                asked.clone(),
            ),
        )
        .unwrap();

        assert_eq!(
            report,
            PollReport {
                checked: 5,
                changed: 5,
                unknown: 0,
                failed: 0,
            }
        );
        assert_eq!(
            *asked.lock().unwrap(),
            vec![vec!["pgcc-1", "pgcc-2", "pgcc-3", "pgcc-4", "pgcc-5"]]
        );
        let expected: Vec<TransitionCall> = [
            (1, Pending, Active),
            (2, Pending, Refused),
            (3, Active, Revoked),
            (4, Pending, Expired),
            (5, Active, Expired),
        ]
        .into_iter()
        .map(|(n, from, to)| {
            let it = item(n, from);
            (
                it.company_id,
                it.id,
                from,
                to,
                TransitionCause::Pgcc,
                None,
                now(),
            )
        })
        .collect();
        assert_eq!(*transitions.lock().unwrap(), expected);
    }

    #[test]
    fn the_reason_the_pgcc_reports_is_stored_with_the_change_cut_to_500_characters() {
        use ConsentStatus::*;
        let transitions = Arc::new(Mutex::new(Vec::new()));
        let mut refused = answer(1, Refused);
        refused.reason = Some("não reconheço esta empresa".to_owned());
        let mut revoked = answer(2, Revoked);
        revoked.reason = Some("x".repeat(600));
        let mut withdrawn = answer(3, Revoked);
        withdrawn.reason = Some("   ".to_owned());

        run(
            repository(
                vec![item(1, Pending), item(2, Active), item(3, Pending)],
                always_moved,
                transitions.clone(),
            ),
            pgcc(Ok(vec![refused, revoked, withdrawn]), Arc::default()),
        )
        .unwrap();

        let reasons: Vec<Option<String>> = transitions
            .lock()
            .unwrap()
            .iter()
            .map(|t| t.5.as_ref().map(|m| m.as_str().to_owned()))
            .collect();
        assert_eq!(
            reasons,
            [
                Some("não reconheço esta empresa".to_owned()),
                Some("x".repeat(500)),
                None
            ]
        );
    }

    #[test]
    fn an_unchanged_status_stores_nothing_but_is_counted_as_checked() {
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let report = run(
            repository(
                vec![
                    item(1, ConsentStatus::Active),
                    item(2, ConsentStatus::Pending),
                ],
                always_moved,
                transitions.clone(),
            ),
            pgcc(
                Ok(vec![
                    answer(1, ConsentStatus::Active),
                    answer(2, ConsentStatus::Pending),
                ]),
                Arc::new(Mutex::new(Vec::new())),
            ),
        )
        .unwrap();

        assert_eq!(
            report,
            PollReport {
                checked: 2,
                changed: 0,
                unknown: 0,
                failed: 0,
            }
        );
        assert!(transitions.lock().unwrap().is_empty());
    }

    #[test]
    fn nothing_due_is_an_empty_round_without_a_pgcc_call() {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_consent_statuses().times(0);
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let report = run(
            repository(Vec::new(), always_moved, transitions.clone()),
            pgcc,
        )
        .unwrap();

        assert_eq!(report, PollReport::default());
        assert!(transitions.lock().unwrap().is_empty());
    }

    #[test]
    fn a_status_the_state_machine_cannot_reach_is_skipped_and_the_others_applied() {
        use ConsentStatus::*;
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let report = run(
            repository(
                vec![item(1, Active), item(2, Active), item(3, Pending)],
                always_moved,
                transitions.clone(),
            ),
            pgcc(
                Ok(vec![
                    answer(1, Pending),
                    answer(2, Refused),
                    answer(3, Active),
                ]),
                Arc::new(Mutex::new(Vec::new())),
            ),
        )
        .unwrap();

        assert_eq!(
            report,
            PollReport {
                checked: 3,
                changed: 1,
                unknown: 0,
                failed: 0,
            }
        );
        let transitions = transitions.lock().unwrap();
        assert_eq!(transitions.len(), 1);
        assert_eq!(transitions[0].1, Uuid::from_u128(3));
        assert_eq!((transitions[0].2, transitions[0].3), (Pending, Active));
    }

    #[test]
    fn a_request_the_pgcc_does_not_know_is_skipped_and_the_others_applied() {
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let report = run(
            repository(
                vec![
                    item(1, ConsentStatus::Pending),
                    item(2, ConsentStatus::Pending),
                ],
                always_moved,
                transitions.clone(),
            ),
            pgcc(
                Ok(vec![answer(2, ConsentStatus::Active)]),
                Arc::new(Mutex::new(Vec::new())),
            ),
        )
        .unwrap();

        assert_eq!(
            report,
            PollReport {
                checked: 2,
                changed: 1,
                unknown: 0,
                failed: 0,
            }
        );
        assert_eq!(transitions.lock().unwrap()[0].1, Uuid::from_u128(2));
    }

    #[test]
    fn answers_about_requests_not_claimed_are_ignored() {
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let report = run(
            repository(
                vec![item(1, ConsentStatus::Pending)],
                always_moved,
                transitions.clone(),
            ),
            pgcc(
                Ok(vec![
                    answer(9, ConsentStatus::Active),
                    answer(1, ConsentStatus::Pending),
                ]),
                Arc::new(Mutex::new(Vec::new())),
            ),
        )
        .unwrap();

        assert_eq!(
            report,
            PollReport {
                checked: 1,
                changed: 0,
                unknown: 0,
                failed: 0,
            }
        );
        assert!(transitions.lock().unwrap().is_empty());
    }

    #[test]
    fn a_transition_lost_to_another_process_is_not_counted() {
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let report = run(
            repository(
                vec![
                    item(1, ConsentStatus::Pending),
                    item(2, ConsentStatus::Active),
                ],
                |id| Ok(id != Uuid::from_u128(1)),
                transitions.clone(),
            ),
            pgcc(
                Ok(vec![
                    answer(1, ConsentStatus::Active),
                    answer(2, ConsentStatus::Revoked),
                ]),
                Arc::new(Mutex::new(Vec::new())),
            ),
        )
        .unwrap();

        assert_eq!(
            report,
            PollReport {
                checked: 2,
                changed: 1,
                unknown: 0,
                failed: 0,
            }
        );
        assert_eq!(transitions.lock().unwrap().len(), 2);
    }

    #[test]
    fn a_pgcc_failure_fails_the_round_and_stores_nothing() {
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let result = run(
            repository(
                vec![item(1, ConsentStatus::Pending)],
                always_moved,
                transitions.clone(),
            ),
            pgcc(
                Err(PgccError::Failed { status: 503 }),
                Arc::new(Mutex::new(Vec::new())),
            ),
        );

        assert!(
            matches!(
                result,
                Err(PollError::Pgcc(PgccError::Failed { status: 503 }))
            ),
            "{result:?}"
        );
        assert!(transitions.lock().unwrap().is_empty());
    }

    #[test]
    fn a_failing_claim_fails_the_round_without_a_pgcc_call() {
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests
            .expect_claim_for_status_check()
            .times(1)
            .returning(|_, _, _| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));
        consent_requests.expect_transition().times(0);
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_consent_statuses().times(0);

        let result = run(consent_requests, pgcc);

        assert!(
            matches!(result, Err(PollError::Repo(RepoError::Unavailable(_)))),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_transition_is_that_requests_alone_and_the_round_goes_on() {
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let report = run(
            repository(
                vec![
                    item(1, ConsentStatus::Active),
                    item(2, ConsentStatus::Active),
                    item(3, ConsentStatus::Pending),
                ],
                |id| {
                    if id == Uuid::from_u128(1) {
                        Err(RepoError::Unexpected(anyhow::anyhow!(
                            "invalid byte sequence for encoding \"UTF8\": 0x00"
                        )))
                    } else {
                        Ok(true)
                    }
                },
                transitions.clone(),
            ),
            pgcc(
                Ok(vec![
                    answer(1, ConsentStatus::Revoked),
                    answer(2, ConsentStatus::Revoked),
                    answer(3, ConsentStatus::Active),
                ]),
                Arc::new(Mutex::new(Vec::new())),
            ),
        )
        .unwrap();

        assert_eq!(
            report,
            PollReport {
                checked: 3,
                changed: 2,
                unknown: 0,
                failed: 1,
            }
        );
        assert_eq!(transitions.lock().unwrap().len(), 3, "all three were tried");
    }

    type Deferral = (CompanyId, Uuid, DateTime<Utc>, DateTime<Utc>);

    #[test]
    fn an_unknown_status_skips_that_request_alone_counts_it_and_backs_it_off() {
        use ConsentStatus::*;
        let transitions = Arc::new(Mutex::new(Vec::new()));
        let deferred: Arc<Mutex<Vec<Deferral>>> = Arc::default();
        let mut consent_requests = repository(
            vec![item(1, Pending), item(2, Active), item(3, Pending)],
            always_moved,
            transitions.clone(),
        );
        let recorded = deferred.clone();
        consent_requests
            .expect_defer_status_check()
            .times(1)
            .returning(move |company, id, since, next| {
                recorded.lock().unwrap().push((company, id, since, next));
                Ok(true)
            });
        consent_requests.expect_clear_unknown_status().times(0);

        let report = run(
            consent_requests,
            pgcc(
                Ok(vec![answer(1, Active), odd_answer(2), answer(3, Refused)]),
                Arc::new(Mutex::new(Vec::new())),
            ),
        )
        .unwrap();

        assert_eq!(
            report,
            PollReport {
                checked: 3,
                changed: 2,
                unknown: 1,
                failed: 0,
            }
        );
        let moved: Vec<_> = transitions
            .lock()
            .unwrap()
            .iter()
            .map(|t| (t.1, t.3))
            .collect();
        assert_eq!(
            moved,
            [(Uuid::from_u128(1), Active), (Uuid::from_u128(3), Refused)],
            "its neighbours are applied"
        );
        let odd = item(2, Active);
        assert_eq!(
            *deferred.lock().unwrap(),
            [(odd.company_id, odd.id, now(), now() + Duration::seconds(60))],
            "first time: since now, checked again after twice the interval"
        );
    }

    #[test]
    fn a_lasting_unknown_status_waits_longer_each_time_up_to_the_cap() {
        let thirty = Duration::seconds(30);
        assert_eq!(
            unknown_status_backoff(Duration::zero(), thirty),
            Duration::seconds(60)
        );
        assert_eq!(
            unknown_status_backoff(Duration::seconds(60), thirty),
            Duration::seconds(60)
        );
        assert_eq!(
            unknown_status_backoff(Duration::seconds(120), thirty),
            Duration::seconds(120)
        );
        assert_eq!(
            unknown_status_backoff(Duration::seconds(240), thirty),
            Duration::seconds(240)
        );
        assert_eq!(
            unknown_status_backoff(Duration::days(3), thirty),
            Duration::seconds(UNKNOWN_STATUS_MAX_BACKOFF_SECONDS)
        );

        let mut odd = item(2, ConsentStatus::Active);
        odd.unknown_status_since = Some(now() - Duration::seconds(240));
        let deferred: Arc<Mutex<Vec<Deferral>>> = Arc::default();
        let mut consent_requests = repository(vec![odd.clone()], always_moved, Arc::default());
        let recorded = deferred.clone();
        consent_requests
            .expect_defer_status_check()
            .times(1)
            .returning(move |company, id, since, next| {
                recorded.lock().unwrap().push((company, id, since, next));
                Ok(true)
            });

        run(
            consent_requests,
            pgcc(Ok(vec![odd_answer(2)]), Arc::default()),
        )
        .unwrap();

        assert_eq!(
            *deferred.lock().unwrap(),
            [(
                odd.company_id,
                odd.id,
                now() - Duration::seconds(240),
                now() + Duration::seconds(240)
            )],
            "the first sighting is kept; the wait doubles"
        );
    }

    #[test]
    fn a_failing_backoff_is_logged_and_the_neighbours_are_applied_all_the_same() {
        let transitions = Arc::new(Mutex::new(Vec::new()));
        let mut consent_requests = repository(
            vec![
                item(1, ConsentStatus::Active),
                item(2, ConsentStatus::Pending),
            ],
            always_moved,
            transitions.clone(),
        );
        consent_requests
            .expect_defer_status_check()
            .times(1)
            .returning(|_, _, _, _| Err(RepoError::Unavailable(anyhow::anyhow!("gone"))));

        let report = run(
            consent_requests,
            pgcc(
                Ok(vec![odd_answer(1), answer(2, ConsentStatus::Active)]),
                Arc::default(),
            ),
        )
        .unwrap();

        assert_eq!((report.changed, report.unknown), (1, 1));
        assert_eq!(transitions.lock().unwrap()[0].1, Uuid::from_u128(2));
    }

    #[test]
    fn a_known_status_again_forgets_the_oddity_and_is_applied() {
        let mut back = item(1, ConsentStatus::Active);
        back.unknown_status_since = Some(now() - Duration::seconds(600));
        let transitions = Arc::new(Mutex::new(Vec::new()));
        let mut consent_requests =
            repository(vec![back.clone()], always_moved, transitions.clone());
        consent_requests
            .expect_clear_unknown_status()
            .with(eq(back.company_id), eq(back.id))
            .times(1)
            .returning(|_, _| Ok(()));
        consent_requests.expect_defer_status_check().times(0);

        let report = run(
            consent_requests,
            pgcc(Ok(vec![answer(1, ConsentStatus::Revoked)]), Arc::default()),
        )
        .unwrap();

        assert_eq!((report.changed, report.unknown), (1, 0));
        assert_eq!(transitions.lock().unwrap()[0].3, ConsentStatus::Revoked);
    }

    #[test]
    fn the_error_message_is_the_causes_own() {
        let e = PollError::Pgcc(PgccError::Timeout);
        assert_eq!(e.to_string(), "the PGCC timed out");
    }
}
