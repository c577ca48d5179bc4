//! Reading one of the company's consent requests, with its history.

use std::sync::Arc;

use domain::Company;
use ports::{Clock, ConsentRequestRecord, ConsentRequestRepository, RepoError};
use uuid::Uuid;

#[derive(Debug, thiserror::Error)]
pub enum GetConsentError {
    /// No such request, or another company's.
    #[error("consent request not found")]
    NotFound,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct GetConsentRequest {
    consent_requests: Arc<dyn ConsentRequestRepository>,
    clock: Arc<dyn Clock>,
}

impl GetConsentRequest {
    pub fn new(consent_requests: Arc<dyn ConsentRequestRepository>, clock: Arc<dyn Clock>) -> Self {
        Self {
            consent_requests,
            clock,
        }
    }

    /// The company's request `id` with its history. Its `status` is the effective one now: a
    /// read never reports a consent valid after its expiry, even before the expiry worker ran
    /// (the history shows only stored changes).
    pub fn execute(
        &self,
        company: &Company,
        id: Uuid,
    ) -> Result<ConsentRequestRecord, GetConsentError> {
        let mut record = self
            .consent_requests
            .get(company.id, id)?
            .ok_or(GetConsentError::NotFound)?;
        record.request.status = record.request.effective_status(self.clock.now());
        Ok(record)
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;
    use domain::{ConsentStatus, StatusChange, TransitionCause};
    use ports::MockConsentRequestRepository;

    use super::*;
    use crate::test_support::{company, consent_request, fixed_clock, now};

    fn record(status: ConsentStatus, expires_in: Duration) -> ConsentRequestRecord {
        let mut request = consent_request(Uuid::from_u128(0x501), status);
        request.content.consent_expires_at = now() + expires_in;
        ConsentRequestRecord {
            request,
            history: vec![StatusChange {
                from: None,
                to: status,
                at: now() - Duration::days(1),
                cause: TransitionCause::Company,
                reason: None,
            }],
            provenance: None,
        }
    }

    fn repository_answering(answer: Option<ConsentRequestRecord>) -> MockConsentRequestRepository {
        let company_id = company().id;
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests
            .expect_get()
            .withf(move |company, id| *company == company_id && *id == Uuid::from_u128(0x501))
            .times(1)
            .returning(move |_, _| Ok(answer.clone()));
        consent_requests
    }

    fn get(
        consent_requests: MockConsentRequestRepository,
    ) -> Result<ConsentRequestRecord, GetConsentError> {
        GetConsentRequest::new(Arc::new(consent_requests), fixed_clock())
            .execute(&company(), Uuid::from_u128(0x501))
    }

    #[test]
    fn reading_returns_the_companys_request_with_its_history() {
        let stored = record(ConsentStatus::Active, Duration::days(30));

        let read = get(repository_answering(Some(stored.clone()))).unwrap();

        assert_eq!(read, stored);
    }

    #[test]
    fn an_active_request_past_its_expiry_is_read_as_expired_with_its_stored_history() {
        let stored = record(ConsentStatus::Active, Duration::zero());

        let read = get(repository_answering(Some(stored.clone()))).unwrap();

        assert_eq!(read.request.status, ConsentStatus::Expired);
        assert_eq!(read.history, stored.history);
        assert_eq!(read.request.id, stored.request.id);
    }

    #[test]
    fn a_pending_request_past_its_expiry_is_read_as_expired() {
        let stored = record(ConsentStatus::Pending, -Duration::seconds(1));

        let read = get(repository_answering(Some(stored))).unwrap();

        assert_eq!(read.request.status, ConsentStatus::Expired);
    }

    #[test]
    fn a_revoked_request_past_its_expiry_is_still_read_as_revoked() {
        let stored = record(ConsentStatus::Revoked, -Duration::days(1));

        let read = get(repository_answering(Some(stored))).unwrap();

        assert_eq!(read.request.status, ConsentStatus::Revoked);
    }

    #[test]
    fn an_absent_or_another_companys_request_is_not_found() {
        let result = get(repository_answering(None));

        assert!(
            matches!(result, Err(GetConsentError::NotFound)),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_repository_is_a_repository_error() {
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests
            .expect_get()
            .times(1)
            .returning(|_, _| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));

        let result = get(consent_requests);

        assert!(
            matches!(
                result,
                Err(GetConsentError::Repo(RepoError::Unavailable(_)))
            ),
            "{result:?}"
        );
    }
}
