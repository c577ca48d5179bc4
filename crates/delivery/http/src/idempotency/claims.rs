//! Running a request under its key: claim the key (or replay, or refuse), run, then keep the
//! answer or release the key. The rules of the key's row (lease, holder, fingerprint) are the
//! repository's ([`ports::IdempotencyRepository`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use domain::CompanyId;
use ports::{
    Clock, IdempotencyBegin, IdempotencyClaim, IdempotencyRepository, RepoError, StoredOutcome,
};
use uuid::Uuid;

use super::{IdempotencyKey, StoredResponse, IDEMPOTENCY_LEASE_SECONDS};

/// What a run produced: the caller's result, and the answer to keep for replays (`None`: the
/// outcome is not final, e.g. the PGCC timed out; the key is released so that a retry runs).
#[derive(Debug)]
pub struct Completion<R> {
    pub result: R,
    pub keep: Option<StoredResponse>,
}

/// How an idempotent request ended.
#[derive(Debug)]
pub enum Idempotent<R> {
    /// It ran now.
    Ran(R),
    /// It ran before: this is the answer kept then.
    Replayed(StoredResponse),
}

#[derive(Debug, thiserror::Error)]
pub enum IdempotencyError {
    /// The key was used with another request.
    #[error("the idempotency key was used with another request")]
    Mismatch,
    /// A request with this key is running now.
    #[error("a request with this idempotency key is in progress")]
    InProgress,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct Idempotency {
    keys: Arc<dyn IdempotencyRepository>,
    clock: Arc<dyn Clock>,
    lease: Duration,
    /// Settles retried in the background now (see [`Idempotency::settle_later`]).
    retrying: Arc<AtomicUsize>,
}

/// How often a settle lost to an unreachable database is tried again.
const SETTLE_RETRY_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// At most this many settles are retried at once: one thread each, all asleep but for a
/// statement every [`SETTLE_RETRY_EVERY`]. Beyond it a key waits for its lease, as before.
const MAX_SETTLES_RETRYING: usize = 64;

impl Idempotency {
    pub fn new(keys: Arc<dyn IdempotencyRepository>, clock: Arc<dyn Clock>) -> Self {
        Self {
            keys,
            clock,
            lease: Duration::seconds(IDEMPOTENCY_LEASE_SECONDS),
            retrying: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Keeps `keep` under the key, or releases it (`None`).
    fn settle(
        &self,
        company: CompanyId,
        key: &str,
        owner: Uuid,
        keep: Option<&StoredOutcome>,
        at: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        match keep {
            Some(outcome) => self.keys.complete(company, key, owner, outcome, at),
            None => self.keys.release(company, key, owner, at),
        }
    }

    /// Tries a settle lost to an unreachable database again, in the background, every
    /// [`SETTLE_RETRY_EVERY`] until it goes through or the key's lease ends (then the key is
    /// free anyway). Without it a request cut by a failover held its key for the whole lease:
    /// the client's retries met 409 for a minute (the failover test, issue 23). Answers whether
    /// it was taken (at most [`MAX_SETTLES_RETRYING`] at once).
    fn settle_later(
        &self,
        company: CompanyId,
        key: &str,
        owner: Uuid,
        keep: Option<StoredOutcome>,
        lease_until: DateTime<Utc>,
    ) -> bool {
        if self.retrying.fetch_add(1, Ordering::SeqCst) >= MAX_SETTLES_RETRYING {
            self.retrying.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        let (this, key) = (self.clone(), key.to_owned());
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(SETTLE_RETRY_EVERY);
                let now = this.clock.now();
                if now >= lease_until {
                    break;
                }
                match this.settle(company, &key, owner, keep.as_ref(), now) {
                    Err(RepoError::Unavailable(_)) => continue,
                    Ok(_) => {
                        tracing::info!(empresa_id = %company, "idempotency key settled on a retry");
                        break;
                    }
                    Err(e) => {
                        tracing::warn!(
                            empresa_id = %company,
                            error = format!("{e:#}"),
                            "could not settle an idempotency key; it is free again when its lease ends"
                        );
                        break;
                    }
                }
            }
            this.retrying.fetch_sub(1, Ordering::SeqCst);
        });
        true
    }

    /// Runs `work` under `key` for the company, unless the key answers first: a kept answer is
    /// replayed, another request under the key is `Mismatch`, a running one `InProgress`.
    /// `work` gets the resource id reserved for the key (the same on every retry). After it, the
    /// answer it chose to keep is stored, or the key released. A failure to store or release is
    /// logged and the result returned anyway; with the database unreachable it is tried again in
    /// the background until the lease ends (`Idempotency::settle_later`), otherwise the key
    /// stays held until its lease ends, and a retry then runs again under the same resource id.
    pub fn run<R>(
        &self,
        company: CompanyId,
        key: &IdempotencyKey,
        fingerprint: &str,
        work: impl FnOnce(Uuid) -> Completion<R>,
    ) -> Result<Idempotent<R>, IdempotencyError> {
        let now = self.clock.now();
        let owner = Uuid::new_v4();
        let claim = IdempotencyClaim {
            company,
            key: key.as_str().to_owned(),
            fingerprint: fingerprint.to_owned(),
            resource_id: Uuid::new_v4(),
            owner,
            now,
            lease_until: now + self.lease,
        };
        let resource_id = match self.keys.begin(&claim)? {
            IdempotencyBegin::Run { resource_id } => resource_id,
            IdempotencyBegin::Replay(outcome) => {
                tracing::info!(empresa_id = %company, status = outcome.status, "idempotent replay");
                return Ok(Idempotent::Replayed(StoredResponse::from(outcome)));
            }
            IdempotencyBegin::Mismatch => return Err(IdempotencyError::Mismatch),
            IdempotencyBegin::InProgress => return Err(IdempotencyError::InProgress),
        };
        let Completion { result, keep } = work(resource_id);
        let at = self.clock.now();
        let keep = keep.as_ref().map(StoredResponse::to_outcome);
        match self.settle(company, key.as_str(), owner, keep.as_ref(), at) {
            Ok(true) => {}
            Ok(false) => tracing::warn!(
                empresa_id = %company,
                "idempotency key taken over by another request while this one ran"
            ),
            Err(RepoError::Unavailable(_))
                if self.settle_later(
                    company,
                    key.as_str(),
                    owner,
                    keep.clone(),
                    claim.lease_until,
                ) =>
            {
                tracing::warn!(
                    empresa_id = %company,
                    "could not settle an idempotency key, the database unreachable; retrying"
                );
            }
            Err(e) => tracing::warn!(
                empresa_id = %company,
                error = format!("{e:#}"),
                kept = keep.is_some(),
                "could not settle an idempotency key; it is free again when its lease ends"
            ),
        }
        Ok(Idempotent::Ran(result))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use chrono::{DateTime, TimeZone, Utc};
    use ports::{MockClock, MockIdempotencyRepository, StoredOutcome};

    use super::*;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 3, 14, 12, 0, 0).unwrap()
    }

    fn fixed_clock() -> Arc<dyn Clock> {
        let mut clock = MockClock::new();
        clock.expect_now().returning(now);
        Arc::new(clock)
    }

    fn company_id() -> CompanyId {
        CompanyId(Uuid::from_u128(0x0e4a_0000_0000_4000_8000_0000_0000_0001))
    }

    fn key() -> IdempotencyKey {
        IdempotencyKey::parse("pedido-42").unwrap()
    }

    fn answer(status: u16, body: &str) -> StoredResponse {
        StoredResponse {
            status,
            body: body.as_bytes().to_vec(),
        }
    }

    /// [`answer`] as the repository stores it.
    fn stored(status: u16, body: &str) -> StoredOutcome {
        answer(status, body).to_outcome()
    }

    fn service(keys: MockIdempotencyRepository) -> Idempotency {
        Idempotency::new(Arc::new(keys), fixed_clock())
    }

    /// A repository whose `begin` answers `begin` and records the claim.
    fn keys_answering(
        begin: IdempotencyBegin,
        claims: Arc<Mutex<Vec<IdempotencyClaim>>>,
    ) -> MockIdempotencyRepository {
        let mut keys = MockIdempotencyRepository::new();
        keys.expect_begin().times(1).returning(move |claim| {
            claims.lock().unwrap().push(claim.clone());
            Ok(begin.clone())
        });
        keys
    }

    #[test]
    fn a_new_key_runs_the_work_with_the_reserved_id_and_keeps_its_answer() {
        let claims = Arc::new(Mutex::new(Vec::new()));
        let mut keys = MockIdempotencyRepository::new();
        let recorded = claims.clone();
        keys.expect_begin().times(1).returning(move |claim| {
            recorded.lock().unwrap().push(claim.clone());
            Ok(IdempotencyBegin::Run {
                resource_id: claim.resource_id,
            })
        });
        let kept = Arc::new(Mutex::new(Vec::new()));
        let kept_by_repo = kept.clone();
        keys.expect_complete()
            .times(1)
            .returning(move |company, key, owner, response, at| {
                kept_by_repo.lock().unwrap().push((
                    company,
                    key.to_owned(),
                    owner,
                    response.clone(),
                    at,
                ));
                Ok(true)
            });
        keys.expect_release().times(0);
        let mut ran_with = None;

        let outcome = service(keys)
            .run(company_id(), &key(), "f".repeat(64).as_str(), |id| {
                ran_with = Some(id);
                Completion {
                    result: "created",
                    keep: Some(answer(200, "{\"ok\":1}")),
                }
            })
            .unwrap();

        assert!(matches!(outcome, Idempotent::Ran("created")));
        let claim = claims.lock().unwrap()[0].clone();
        assert_eq!(claim.company, company_id());
        assert_eq!(claim.key, "pedido-42");
        assert_eq!(claim.fingerprint, "f".repeat(64));
        assert_eq!(claim.now, now());
        assert_eq!(claim.lease_until, now() + Duration::seconds(60));
        assert_eq!(ran_with, Some(claim.resource_id));
        assert_eq!(
            *kept.lock().unwrap(),
            [(
                company_id(),
                "pedido-42".to_owned(),
                claim.owner,
                stored(200, "{\"ok\":1}"),
                now()
            )]
        );
    }

    #[test]
    fn an_answer_not_kept_releases_the_key_for_a_retry() {
        let claims = Arc::new(Mutex::new(Vec::new()));
        let reserved = Uuid::from_u128(7);
        let mut keys = keys_answering(
            IdempotencyBegin::Run {
                resource_id: reserved,
            },
            claims.clone(),
        );
        keys.expect_complete().times(0);
        let released = Arc::new(Mutex::new(Vec::new()));
        let released_by_repo = released.clone();
        keys.expect_release()
            .times(1)
            .returning(move |_, key, owner, at| {
                released_by_repo
                    .lock()
                    .unwrap()
                    .push((key.to_owned(), owner, at));
                Ok(true)
            });

        let outcome = service(keys)
            .run(company_id(), &key(), "fp", |id| {
                assert_eq!(id, reserved, "a retry works under the id reserved first");
                Completion {
                    result: "504",
                    keep: None,
                }
            })
            .unwrap();

        assert!(matches!(outcome, Idempotent::Ran("504")));
        let owner = claims.lock().unwrap()[0].owner;
        assert_eq!(
            *released.lock().unwrap(),
            [("pedido-42".to_owned(), owner, now())]
        );
    }

    #[test]
    fn a_release_lost_to_an_unreachable_database_is_retried_until_it_goes_through() {
        let claims = Arc::new(Mutex::new(Vec::new()));
        let mut keys = keys_answering(
            IdempotencyBegin::Run {
                resource_id: Uuid::from_u128(7),
            },
            claims.clone(),
        );
        let (released, went_through) = std::sync::mpsc::channel();
        let mut seq = mockall::Sequence::new();
        keys.expect_release()
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _, _, _| Err(RepoError::Unavailable(anyhow::anyhow!("failover"))));
        keys.expect_release()
            .times(1)
            .in_sequence(&mut seq)
            .returning(move |_, key, owner, _| {
                released.send((key.to_owned(), owner)).unwrap();
                Ok(true)
            });

        let outcome = service(keys)
            .run(company_id(), &key(), "fp", |_| Completion {
                result: "503",
                keep: None,
            })
            .unwrap();

        assert!(
            matches!(outcome, Idempotent::Ran("503")),
            "answered at once"
        );
        let owner = claims.lock().unwrap()[0].owner;
        assert_eq!(
            went_through
                .recv_timeout(std::time::Duration::from_secs(10))
                .expect("the release tried again"),
            ("pedido-42".to_owned(), owner)
        );
    }

    #[test]
    fn a_completed_key_replays_its_answer_without_running() {
        let mut keys = keys_answering(
            IdempotencyBegin::Replay(stored(422, "{\"erro\":1}")),
            Arc::default(),
        );
        keys.expect_complete().times(0);
        keys.expect_release().times(0);

        let outcome = service(keys)
            .run(company_id(), &key(), "fp", |_| -> Completion<()> {
                panic!("a replay runs nothing")
            })
            .unwrap();

        match outcome {
            Idempotent::Replayed(response) => assert_eq!(response, answer(422, "{\"erro\":1}")),
            Idempotent::Ran(()) => panic!("expected a replay"),
        }
    }

    #[test]
    fn another_request_under_the_key_or_one_in_progress_is_refused_without_running() {
        for (begin, expected) in [
            (IdempotencyBegin::Mismatch, "mismatch"),
            (IdempotencyBegin::InProgress, "in progress"),
        ] {
            let keys = keys_answering(begin, Arc::default());

            let result = service(keys).run(company_id(), &key(), "fp", |_| -> Completion<()> {
                panic!("nothing runs")
            });

            match (result, expected) {
                (Err(IdempotencyError::Mismatch), "mismatch") => {}
                (Err(IdempotencyError::InProgress), "in progress") => {}
                (other, _) => panic!("expected {expected}, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_failing_begin_is_a_repository_error_and_nothing_runs() {
        let mut keys = MockIdempotencyRepository::new();
        keys.expect_begin()
            .returning(|_| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));

        let result = service(keys).run(company_id(), &key(), "fp", |_| -> Completion<()> {
            panic!("nothing runs")
        });

        assert!(
            matches!(
                result,
                Err(IdempotencyError::Repo(RepoError::Unavailable(_)))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn a_failure_to_keep_the_answer_still_returns_the_result() {
        let mut keys = keys_answering(
            IdempotencyBegin::Run {
                resource_id: Uuid::from_u128(1),
            },
            Arc::default(),
        );
        keys.expect_complete()
            .times(1)
            .returning(|_, _, _, _, _| Err(RepoError::Unavailable(anyhow::anyhow!("gone"))));
        keys.expect_release().times(0);

        let outcome = service(keys)
            .run(company_id(), &key(), "fp", |_| Completion {
                result: 1,
                keep: Some(answer(200, "{}")),
            })
            .unwrap();

        assert!(matches!(outcome, Idempotent::Ran(1)));
    }
}
