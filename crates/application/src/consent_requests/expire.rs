//! The expiry worker's round: stores `expirado` on every `pendente`/`ativo` request whose expiry
//! has passed (reads already report them expired; this makes it durable and produces the
//! history entry).

use std::sync::Arc;

use ports::{Clock, ConsentRequestRepository, RepoError};

#[derive(Clone)]
pub struct ExpireConsentRequests {
    consent_requests: Arc<dyn ConsentRequestRepository>,
    clock: Arc<dyn Clock>,
}

impl ExpireConsentRequests {
    pub fn new(consent_requests: Arc<dyn ConsentRequestRepository>, clock: Arc<dyn Clock>) -> Self {
        Self {
            consent_requests,
            clock,
        }
    }

    /// Expires every due request, `batch_size` per transaction, until a batch comes back short;
    /// returns how many moved. All batches use the instant the round started at, so a round
    /// ends even while requests keep falling due. A `batch_size` of 0 does nothing.
    pub fn run_once(&self, batch_size: u32) -> Result<u32, RepoError> {
        if batch_size == 0 {
            return Ok(0);
        }
        let now = self.clock.now();
        let mut total = 0u32;
        loop {
            let moved = self.consent_requests.expire_due(now, batch_size)?;
            total = total.saturating_add(moved);
            if moved < batch_size {
                return Ok(total);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use mockall::Sequence;
    use ports::MockConsentRequestRepository;

    use super::*;
    use crate::test_support::{fixed_clock, now};

    /// The arguments of one `expire_due` call: instant and limit.
    type ExpireCall = (chrono::DateTime<chrono::Utc>, u32);

    /// A repository whose `expire_due` answers `answers` in turn and records its arguments.
    fn answering(
        answers: Vec<Result<u32, RepoError>>,
        calls: Arc<Mutex<Vec<ExpireCall>>>,
    ) -> MockConsentRequestRepository {
        let mut consent_requests = MockConsentRequestRepository::new();
        let mut seq = Sequence::new();
        for answer in answers {
            let calls = calls.clone();
            let mut answer = Some(answer);
            consent_requests
                .expect_expire_due()
                .times(1)
                .in_sequence(&mut seq)
                .returning(move |now, limit| {
                    calls.lock().unwrap().push((now, limit));
                    answer.take().unwrap()
                });
        }
        consent_requests
    }

    fn run(consent_requests: MockConsentRequestRepository, batch: u32) -> Result<u32, RepoError> {
        ExpireConsentRequests::new(Arc::new(consent_requests), fixed_clock()).run_once(batch)
    }

    #[test]
    fn a_short_first_batch_ends_the_round_with_its_count() {
        let calls = Arc::new(Mutex::new(Vec::new()));

        let total = run(answering(vec![Ok(3)], calls.clone()), 100).unwrap();

        assert_eq!(total, 3);
        assert_eq!(*calls.lock().unwrap(), vec![(now(), 100)]);
    }

    #[test]
    fn full_batches_are_followed_by_more_until_one_comes_back_short() {
        let calls = Arc::new(Mutex::new(Vec::new()));

        let total = run(answering(vec![Ok(10), Ok(10), Ok(4)], calls.clone()), 10).unwrap();

        assert_eq!(total, 24);
        assert_eq!(*calls.lock().unwrap(), vec![(now(), 10); 3]);
    }

    #[test]
    fn a_full_batch_followed_by_an_empty_one_ends_the_round() {
        let calls = Arc::new(Mutex::new(Vec::new()));

        let total = run(answering(vec![Ok(5), Ok(0)], calls.clone()), 5).unwrap();

        assert_eq!(total, 5);
        assert_eq!(calls.lock().unwrap().len(), 2);
    }

    #[test]
    fn nothing_due_is_a_round_of_zero() {
        let total = run(answering(vec![Ok(0)], Arc::new(Mutex::new(Vec::new()))), 50).unwrap();

        assert_eq!(total, 0);
    }

    #[test]
    fn a_batch_size_of_zero_does_nothing() {
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests.expect_expire_due().times(0);

        assert_eq!(run(consent_requests, 0).unwrap(), 0);
    }

    #[test]
    fn a_failing_batch_ends_the_round_with_the_repository_error() {
        let calls = Arc::new(Mutex::new(Vec::new()));

        let result = run(
            answering(
                vec![
                    Ok(2),
                    Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))),
                ],
                calls.clone(),
            ),
            2,
        );

        assert!(
            matches!(result, Err(RepoError::Unavailable(_))),
            "{result:?}"
        );
        assert_eq!(calls.lock().unwrap().len(), 2);
    }
}
