//! Revocation by the company (`POST /api/solicitacao-consentimento/{id}/revogar`) of an active
//! consent, or withdrawal of a pending request, with an optional reason: on the PGCC first, then
//! here, so that a PGCC failure leaves everything as it was.
//!
//! Safe to retry: when an attempt revoked on the PGCC but failed before storing it here (the
//! row locked past the statement timeout, the process killed), the retry's PGCC answer is 409
//! (not revocable). Then the PGCC is asked for the request's status, and when it holds it
//! `revogado` the retry stores the company's transition (cause `empresa`, its `motivo`) as the
//! first attempt would have (docs/decisions.md, "A revocation safe to retry").

use std::sync::Arc;

use domain::{Company, ConsentStatus, Reason, TransitionCause};
use ports::{
    Clock, ConsentRequestRecord, ConsentRequestRepository, PgccError, PgccGateway, RepoError,
};
use uuid::Uuid;

#[derive(Debug, thiserror::Error)]
pub enum RevokeConsentError {
    /// No such request, or another company's.
    #[error("consent request not found")]
    NotFound,
    /// Only an (effectively) active or pending request can be revoked (a pending one is
    /// withdrawn); this is its effective status now. Nothing was sent to the PGCC, or (when
    /// another process moved it meanwhile) nothing was stored.
    #[error("consent request is {0}, neither ativo nor pendente")]
    NotRevocable(ConsentStatus),
    /// The PGCC refused or failed; nothing was stored.
    #[error(transparent)]
    Pgcc(PgccError),
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct RevokeConsentRequest {
    consent_requests: Arc<dyn ConsentRequestRepository>,
    pgcc: Arc<dyn PgccGateway>,
    clock: Arc<dyn Clock>,
}

impl RevokeConsentRequest {
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

    /// Revokes the company's request `id` if it is effectively `ativo` or `pendente` now (a
    /// pending one is withdrawn before the subject answers): on the PGCC, then stored as
    /// `<status> -> revogado` (cause `empresa`, with `motivo` in the history entry and the
    /// `solicitacao.revogada` event) with a compare-and-set. Returns the request as read after
    /// the change, with its history and effective status.
    pub fn execute(
        &self,
        company: &Company,
        id: Uuid,
        reason: Option<Reason>,
    ) -> Result<ConsentRequestRecord, RevokeConsentError> {
        let now = self.clock.now();
        let record = self.read(company, id)?;
        let effective = record.request.effective_status(now);
        if !matches!(effective, ConsentStatus::Active | ConsentStatus::Pending) {
            return Err(RevokeConsentError::NotRevocable(effective));
        }

        match self.pgcc.revoke_consent_request(&record.request.pgcc_id) {
            Ok(()) => {}
            Err(PgccError::Rejected { status: 409 }) => {
                self.already_revoked_on_pgcc(company, id, &record.request.pgcc_id)?;
            }
            Err(e) => {
                tracing::warn!(
                    empresa_id = %company.id,
                    solicitacao_id = %id,
                    error = %e,
                    "consent revocation: PGCC failed"
                );
                return Err(RevokeConsentError::Pgcc(e));
            }
        }

        let moved = self.consent_requests.transition(
            company.id,
            id,
            effective,
            ConsentStatus::Revoked,
            TransitionCause::Company,
            reason,
            now,
        )?;
        let mut current = self.read(company, id)?;
        current.request.status = current.request.effective_status(now);
        if !moved {
            // another process (the status poller, the expiry worker) moved it first
            tracing::warn!(
                empresa_id = %company.id,
                solicitacao_id = %id,
                status = %current.request.status,
                "consent revocation: revoked on the PGCC, but the request had already moved here"
            );
            return Err(RevokeConsentError::NotRevocable(current.request.status));
        }
        tracing::info!(
            empresa_id = %company.id,
            solicitacao_id = %id,
            de = %effective,
            "consent request revoked by the company"
        );
        Ok(current)
    }

    /// After the PGCC answered 409 to the revocation: `Ok` when it holds the request as
    /// `revogado` (an earlier attempt of ours revoked it there and failed before storing it
    /// here; a withdrawn pending request is `revogado` there too), so the caller stores the
    /// company's transition now. Otherwise the 409 stands (`Rejected`); a failure to ask is that
    /// failure (not final: the same request may be retried).
    fn already_revoked_on_pgcc(
        &self,
        company: &Company,
        id: Uuid,
        pgcc_id: &str,
    ) -> Result<(), RevokeConsentError> {
        let statuses = self
            .pgcc
            .consent_statuses(&[pgcc_id.to_owned()])
            .map_err(|e| {
                tracing::warn!(
                    empresa_id = %company.id,
                    solicitacao_id = %id,
                    error = %e,
                    "consent revocation: PGCC answered 409, and asking it for the status failed"
                );
                RevokeConsentError::Pgcc(e)
            })?;
        let at_pgcc = statuses
            .into_iter()
            .find(|s| s.pgcc_id == pgcc_id)
            .and_then(|s| s.status);
        if at_pgcc == Some(ConsentStatus::Revoked) {
            tracing::info!(
                empresa_id = %company.id,
                solicitacao_id = %id,
                "consent revocation: already revoked on the PGCC (an earlier attempt); stored as the company's"
            );
            return Ok(());
        }
        tracing::warn!(
            empresa_id = %company.id,
            solicitacao_id = %id,
            status_pgcc = ?at_pgcc,
            "consent revocation: the PGCC refused (HTTP 409)"
        );
        Err(RevokeConsentError::Pgcc(PgccError::Rejected {
            status: 409,
        }))
    }

    fn read(
        &self,
        company: &Company,
        id: Uuid,
    ) -> Result<ConsentRequestRecord, RevokeConsentError> {
        self.consent_requests
            .get(company.id, id)?
            .ok_or(RevokeConsentError::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use chrono::{DateTime, Duration, Utc};
    use domain::StatusChange;
    use mockall::Sequence;
    use ports::{MockConsentRequestRepository, MockPgccGateway, PgccConsentStatus};

    use super::*;
    use crate::test_support::{company, consent_request, fixed_clock, now};

    const ID: Uuid = Uuid::from_u128(0x7e0);

    fn record(status: ConsentStatus) -> ConsentRequestRecord {
        let request = consent_request(ID, status);
        ConsentRequestRecord {
            history: vec![StatusChange {
                from: None,
                to: status,
                at: request.created_at,
                cause: TransitionCause::Company,
                reason: None,
            }],
            request,
            provenance: None,
        }
    }

    fn revoked_record() -> ConsentRequestRecord {
        let mut revoked = record(ConsentStatus::Active);
        revoked.request.status = ConsentStatus::Revoked;
        revoked.request.updated_at = now();
        revoked.history.push(StatusChange {
            from: Some(ConsentStatus::Active),
            to: ConsentStatus::Revoked,
            at: now(),
            cause: TransitionCause::Company,
            reason: None,
        });
        revoked
    }

    type TransitionCall = (
        ConsentStatus,
        ConsentStatus,
        TransitionCause,
        Option<Reason>,
        DateTime<Utc>,
    );

    /// A repository whose `get` answers `reads` in turn (for the company and `ID` only) and whose
    /// `transition` answers `moved` (when given) and records its arguments.
    fn repository(
        reads: Vec<Option<ConsentRequestRecord>>,
        moved: Option<Result<bool, RepoError>>,
        transitions: Arc<Mutex<Vec<TransitionCall>>>,
    ) -> MockConsentRequestRepository {
        let company_id = company().id;
        let mut consent_requests = MockConsentRequestRepository::new();
        let mut seq = Sequence::new();
        let mut reads = reads.into_iter();
        if let Some(first) = reads.next() {
            consent_requests
                .expect_get()
                .withf(move |company, id| *company == company_id && *id == ID)
                .times(1)
                .in_sequence(&mut seq)
                .returning(move |_, _| Ok(first.clone()));
        }
        match moved {
            Some(answer) => {
                let mut answer = Some(answer);
                consent_requests
                    .expect_transition()
                    .withf(move |company, id, _, _, _, _, _| *company == company_id && *id == ID)
                    .times(1)
                    .in_sequence(&mut seq)
                    .returning(move |_, _, from, to, cause, reason, at| {
                        transitions
                            .lock()
                            .unwrap()
                            .push((from, to, cause, reason, at));
                        answer.take().unwrap()
                    });
            }
            None => {
                consent_requests.expect_transition().times(0);
            }
        }
        for later in reads {
            consent_requests
                .expect_get()
                .withf(move |company, id| *company == company_id && *id == ID)
                .times(1)
                .in_sequence(&mut seq)
                .returning(move |_, _| Ok(later.clone()));
        }
        consent_requests
    }

    /// A PGCC whose revocation answers `answer` and records the PGCC ids it was asked about.
    fn pgcc_answering(
        answer: Result<(), PgccError>,
        asked: Arc<Mutex<Vec<String>>>,
    ) -> MockPgccGateway {
        let mut pgcc = MockPgccGateway::new();
        let mut answer = Some(answer);
        pgcc.expect_revoke_consent_request()
            .times(1)
            .returning(move |pgcc_id| {
                asked.lock().unwrap().push(pgcc_id.to_owned());
                answer.take().unwrap()
            });
        pgcc.expect_create_consent_request().times(0);
        pgcc.expect_consent_statuses().times(0);
        pgcc
    }

    fn untouched_pgcc() -> MockPgccGateway {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_revoke_consent_request().times(0);
        pgcc.expect_create_consent_request().times(0);
        pgcc.expect_consent_statuses().times(0);
        pgcc
    }

    fn revoke(
        consent_requests: MockConsentRequestRepository,
        pgcc: MockPgccGateway,
    ) -> Result<ConsentRequestRecord, RevokeConsentError> {
        revoke_giving(consent_requests, pgcc, None)
    }

    fn revoke_giving(
        consent_requests: MockConsentRequestRepository,
        pgcc: MockPgccGateway,
        reason: Option<Reason>,
    ) -> Result<ConsentRequestRecord, RevokeConsentError> {
        RevokeConsentRequest::new(Arc::new(consent_requests), Arc::new(pgcc), fixed_clock())
            .execute(&company(), ID, reason)
    }

    #[test]
    fn an_active_request_is_revoked_on_the_pgcc_then_here_and_returned_as_read_after() {
        let transitions = Arc::new(Mutex::new(Vec::new()));
        let asked = Arc::new(Mutex::new(Vec::new()));

        let result = revoke(
            repository(
                vec![Some(record(ConsentStatus::Active)), Some(revoked_record())],
                Some(Ok(true)),
                transitions.clone(),
            ),
            pgcc_answering(Ok(()), asked.clone()),
        )
        .unwrap();

        assert_eq!(result, revoked_record());
        assert_eq!(
            *asked.lock().unwrap(),
            [record(ConsentStatus::Active).request.pgcc_id]
        );
        assert_eq!(
            *transitions.lock().unwrap(),
            vec![(
                ConsentStatus::Active,
                ConsentStatus::Revoked,
                TransitionCause::Company,
                None,
                now()
            )]
        );
    }

    #[test]
    fn an_unknown_or_another_companys_request_is_not_found_and_the_pgcc_is_not_called() {
        let result = revoke(
            repository(vec![None], None, Arc::new(Mutex::new(Vec::new()))),
            untouched_pgcc(),
        );

        assert!(
            matches!(result, Err(RevokeConsentError::NotFound)),
            "{result:?}"
        );
    }

    #[test]
    fn a_pending_request_is_withdrawn_on_the_pgcc_then_here_with_the_reason_given() {
        let transitions = Arc::new(Mutex::new(Vec::new()));
        let asked = Arc::new(Mutex::new(Vec::new()));
        let mut withdrawn = record(ConsentStatus::Pending);
        withdrawn.request.status = ConsentStatus::Revoked;
        let reason = Reason::parse("criada por engano").unwrap();

        let result = revoke_giving(
            repository(
                vec![
                    Some(record(ConsentStatus::Pending)),
                    Some(withdrawn.clone()),
                ],
                Some(Ok(true)),
                transitions.clone(),
            ),
            pgcc_answering(Ok(()), asked.clone()),
            Some(reason.clone()),
        )
        .unwrap();

        assert_eq!(result, withdrawn);
        assert_eq!(asked.lock().unwrap().len(), 1);
        assert_eq!(
            *transitions.lock().unwrap(),
            vec![(
                ConsentStatus::Pending,
                ConsentStatus::Revoked,
                TransitionCause::Company,
                Some(reason),
                now()
            )]
        );
    }

    #[test]
    fn a_request_neither_active_nor_pending_is_refused_with_its_status_and_the_pgcc_is_not_called()
    {
        for status in [
            ConsentStatus::Refused,
            ConsentStatus::Expired,
            ConsentStatus::Revoked,
        ] {
            let result = revoke(
                repository(
                    vec![Some(record(status))],
                    None,
                    Arc::new(Mutex::new(Vec::new())),
                ),
                untouched_pgcc(),
            );

            assert!(
                matches!(result, Err(RevokeConsentError::NotRevocable(s)) if s == status),
                "{status:?}: {result:?}"
            );
        }
    }

    #[test]
    fn a_request_past_its_expiry_is_refused_as_expired_and_the_pgcc_is_not_called() {
        let mut expired = record(ConsentStatus::Active);
        expired.request.content.consent_expires_at = now();

        let result = revoke(
            repository(vec![Some(expired)], None, Arc::new(Mutex::new(Vec::new()))),
            untouched_pgcc(),
        );

        assert!(
            matches!(
                result,
                Err(RevokeConsentError::NotRevocable(ConsentStatus::Expired))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn a_pgcc_refusal_other_than_409_is_reported_without_asking_the_status_and_nothing_is_stored() {
        let result = revoke(
            repository(
                vec![Some(record(ConsentStatus::Active))],
                None,
                Arc::new(Mutex::new(Vec::new())),
            ),
            pgcc_answering(
                Err(PgccError::Rejected { status: 404 }),
                Arc::new(Mutex::new(Vec::new())),
            ),
        );

        assert!(
            matches!(
                result,
                Err(RevokeConsentError::Pgcc(PgccError::Rejected {
                    status: 404
                }))
            ),
            "{result:?}"
        );
    }

    /// A PGCC whose revocation answers 409 and whose status call answers `statuses`; records
    /// the ids each status call asked about.
    fn pgcc_refusing_then_reporting(
        statuses: Result<Vec<PgccConsentStatus>, PgccError>,
        asked: Arc<Mutex<Vec<Vec<String>>>>,
    ) -> MockPgccGateway {
        let mut pgcc = MockPgccGateway::new();
        let mut seq = Sequence::new();
        pgcc.expect_revoke_consent_request()
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_| Err(PgccError::Rejected { status: 409 }));
        let mut statuses = Some(statuses);
        pgcc.expect_consent_statuses()
            .times(1)
            .in_sequence(&mut seq)
            .returning(move |ids| {
                asked.lock().unwrap().push(ids.to_vec());
                statuses.take().unwrap()
            });
        pgcc.expect_create_consent_request().times(0);
        pgcc
    }

    fn at_pgcc(status: Option<ConsentStatus>) -> PgccConsentStatus {
        PgccConsentStatus {
            pgcc_id: record(ConsentStatus::Active).request.pgcc_id,
            status,
            reason: None,
            next_change_at: None,
            company_cnpj: None,
        }
    }

    #[test]
    fn a_409_from_the_pgcc_on_a_request_it_holds_revoked_is_stored_as_the_companys_revocation_with_its_reason(
    ) {
        for before in [ConsentStatus::Active, ConsentStatus::Pending] {
            let transitions = Arc::new(Mutex::new(Vec::new()));
            let asked = Arc::new(Mutex::new(Vec::new()));
            let reason = Reason::parse("pedido do titular por telefone").unwrap();
            let mut after = record(before);
            after.request.status = ConsentStatus::Revoked;

            let result = revoke_giving(
                repository(
                    vec![Some(record(before)), Some(after.clone())],
                    Some(Ok(true)),
                    transitions.clone(),
                ),
                pgcc_refusing_then_reporting(
                    Ok(vec![at_pgcc(Some(ConsentStatus::Revoked))]),
                    asked.clone(),
                ),
                Some(reason.clone()),
            )
            .unwrap();

            assert_eq!(result, after, "{before:?}");
            assert_eq!(
                *asked.lock().unwrap(),
                [vec![record(before).request.pgcc_id]]
            );
            assert_eq!(
                *transitions.lock().unwrap(),
                vec![(
                    before,
                    ConsentStatus::Revoked,
                    TransitionCause::Company,
                    Some(reason),
                    now()
                )],
                "{before:?}"
            );
        }
    }

    #[test]
    fn a_409_from_the_pgcc_on_a_request_it_holds_otherwise_stays_a_refusal_and_nothing_is_stored() {
        for reported in [
            vec![at_pgcc(Some(ConsentStatus::Expired))],
            vec![at_pgcc(Some(ConsentStatus::Refused))],
            vec![at_pgcc(Some(ConsentStatus::Active))],
            // a status outside the contract's five, or the id left out of the answer
            vec![at_pgcc(None)],
            vec![],
            // another request's status is not this one's
            vec![PgccConsentStatus {
                pgcc_id: "pgcc-outra".into(),
                status: Some(ConsentStatus::Revoked),
                reason: None,
                next_change_at: None,
                company_cnpj: None,
            }],
        ] {
            let transitions = Arc::new(Mutex::new(Vec::new()));

            let result = revoke(
                repository(
                    vec![Some(record(ConsentStatus::Active))],
                    None,
                    transitions.clone(),
                ),
                pgcc_refusing_then_reporting(Ok(reported.clone()), Arc::default()),
            );

            assert!(
                matches!(
                    result,
                    Err(RevokeConsentError::Pgcc(PgccError::Rejected {
                        status: 409
                    }))
                ),
                "{reported:?}: {result:?}"
            );
            assert!(transitions.lock().unwrap().is_empty());
        }
    }

    #[test]
    fn a_409_whose_status_cannot_be_asked_is_that_failure_and_nothing_is_stored() {
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let result = revoke(
            repository(
                vec![Some(record(ConsentStatus::Active))],
                None,
                transitions.clone(),
            ),
            pgcc_refusing_then_reporting(Err(PgccError::Timeout), Arc::default()),
        );

        assert!(
            matches!(result, Err(RevokeConsentError::Pgcc(PgccError::Timeout))),
            "{result:?}"
        );
        assert!(transitions.lock().unwrap().is_empty());
    }

    #[test]
    fn a_pgcc_timeout_is_reported_and_nothing_is_stored() {
        let result = revoke(
            repository(
                vec![Some(record(ConsentStatus::Active))],
                None,
                Arc::new(Mutex::new(Vec::new())),
            ),
            pgcc_answering(Err(PgccError::Timeout), Arc::new(Mutex::new(Vec::new()))),
        );

        assert!(
            matches!(result, Err(RevokeConsentError::Pgcc(PgccError::Timeout))),
            "{result:?}"
        );
    }

    #[test]
    fn a_pgcc_asking_to_try_later_is_reported_and_nothing_is_stored() {
        let transitions = Arc::new(Mutex::new(Vec::new()));
        let result = revoke(
            repository(
                vec![Some(record(ConsentStatus::Active))],
                None,
                transitions.clone(),
            ),
            pgcc_answering(
                Err(PgccError::TryLater {
                    status: 429,
                    retry_after_seconds: Some(3),
                }),
                Arc::new(Mutex::new(Vec::new())),
            ),
        );

        assert!(
            matches!(
                result,
                Err(RevokeConsentError::Pgcc(PgccError::TryLater {
                    status: 429,
                    retry_after_seconds: Some(3)
                }))
            ),
            "{result:?}"
        );
        assert!(transitions.lock().unwrap().is_empty());
    }

    #[test]
    fn a_request_moved_by_another_process_meanwhile_is_reported_with_its_current_status() {
        let mut expired_meanwhile = record(ConsentStatus::Active);
        expired_meanwhile.request.status = ConsentStatus::Expired;
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let result = revoke(
            repository(
                vec![Some(record(ConsentStatus::Active)), Some(expired_meanwhile)],
                Some(Ok(false)),
                transitions.clone(),
            ),
            pgcc_answering(Ok(()), Arc::new(Mutex::new(Vec::new()))),
        );

        assert!(
            matches!(
                result,
                Err(RevokeConsentError::NotRevocable(ConsentStatus::Expired))
            ),
            "{result:?}"
        );
        assert_eq!(transitions.lock().unwrap().len(), 1);
    }

    #[test]
    fn a_failing_first_read_is_a_repository_error_and_the_pgcc_is_not_called() {
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests
            .expect_get()
            .times(1)
            .returning(|_, _| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));
        consent_requests.expect_transition().times(0);

        let result = revoke(consent_requests, untouched_pgcc());

        assert!(
            matches!(
                result,
                Err(RevokeConsentError::Repo(RepoError::Unavailable(_)))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_transition_after_the_pgcc_revoked_is_a_repository_error() {
        let result = revoke(
            repository(
                vec![Some(record(ConsentStatus::Active))],
                Some(Err(RepoError::Unexpected(anyhow::anyhow!("deadlock")))),
                Arc::new(Mutex::new(Vec::new())),
            ),
            pgcc_answering(Ok(()), Arc::new(Mutex::new(Vec::new()))),
        );

        assert!(
            matches!(
                result,
                Err(RevokeConsentError::Repo(RepoError::Unexpected(_)))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_read_after_the_transition_is_a_repository_error() {
        let company_id = company().id;
        let mut consent_requests = MockConsentRequestRepository::new();
        let mut seq = Sequence::new();
        consent_requests
            .expect_get()
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _| Ok(Some(record(ConsentStatus::Active))));
        consent_requests
            .expect_transition()
            .withf(move |company, id, _, _, _, _, _| *company == company_id && *id == ID)
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _, _, _, _, _, _| Ok(true));
        consent_requests
            .expect_get()
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));

        let result = revoke(
            consent_requests,
            pgcc_answering(Ok(()), Arc::new(Mutex::new(Vec::new()))),
        );

        assert!(
            matches!(
                result,
                Err(RevokeConsentError::Repo(RepoError::Unavailable(_)))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn a_request_gone_after_the_transition_is_not_found() {
        let result = revoke(
            repository(
                vec![Some(record(ConsentStatus::Active)), None],
                Some(Ok(true)),
                Arc::new(Mutex::new(Vec::new())),
            ),
            pgcc_answering(Ok(()), Arc::new(Mutex::new(Vec::new()))),
        );

        assert!(
            matches!(result, Err(RevokeConsentError::NotFound)),
            "{result:?}"
        );
    }

    #[test]
    fn the_request_is_judged_active_at_the_clock_time_not_at_its_expiry_margin() {
        // expires one microsecond after now: still active, so revocable
        let mut nearly_expired = record(ConsentStatus::Active);
        nearly_expired.request.content.consent_expires_at = now() + Duration::microseconds(1);
        let mut after = nearly_expired.clone();
        after.request.status = ConsentStatus::Revoked;

        let result = revoke(
            repository(
                vec![Some(nearly_expired), Some(after)],
                Some(Ok(true)),
                Arc::new(Mutex::new(Vec::new())),
            ),
            pgcc_answering(Ok(()), Arc::new(Mutex::new(Vec::new()))),
        )
        .unwrap();

        assert_eq!(result.request.status, ConsentStatus::Revoked);
    }
}
