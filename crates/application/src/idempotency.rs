//! Idempotent requests (header `Idempotency-Key`): the first request with a key runs and its
//! answer is kept; a retry with the same key and the same request gets that answer again instead
//! of running twice (docs/decisions.md, "Idempotency").
//!
//! Keys are scoped by company. A request is identified by its fingerprint (SHA-256 of method,
//! path and body bytes): the same key with another request is refused. While a request runs it
//! holds the key for a lease (60 s): a concurrent retry is refused as in progress, and a retry
//! after its process died takes the key over once the lease is over. Only answers the caller
//! chooses to keep are replayed; otherwise the key is released and the next retry runs again,
//! under the same reserved resource id.

use std::sync::Arc;

use chrono::Duration;
use domain::CompanyId;
use ports::{
    Clock, IdempotencyBegin, IdempotencyClaim, IdempotencyRepository, RepoError, StoredResponse,
};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// How long a running request holds its key before a retry may take it over.
pub const IDEMPOTENCY_LEASE_SECONDS: i64 = 60;

/// The longest key accepted.
pub const IDEMPOTENCY_KEY_MAX_LEN: usize = 255;

/// A valid idempotency key: 1 to 255 visible ASCII characters (`!` to `~`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey(String);

/// The header's value is not a valid key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("an idempotency key is 1 to 255 visible ASCII characters")]
pub struct InvalidIdempotencyKey;

impl IdempotencyKey {
    /// The key exactly as sent (no trimming: a space is not a visible character).
    pub fn parse(raw: &str) -> Result<IdempotencyKey, InvalidIdempotencyKey> {
        let valid = (1..=IDEMPOTENCY_KEY_MAX_LEN).contains(&raw.len())
            && raw.bytes().all(|b| b.is_ascii_graphic());
        if valid {
            Ok(IdempotencyKey(raw.to_owned()))
        } else {
            Err(InvalidIdempotencyKey)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Lower-case hex SHA-256 of the canonical request: the method (upper-case), a line feed, the
/// path, a line feed, then the body bytes as received.
pub fn request_fingerprint(method: &str, path: &str, body: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(method.to_ascii_uppercase().as_bytes());
    hasher.update(b"\n");
    hasher.update(path.as_bytes());
    hasher.update(b"\n");
    hasher.update(body);
    hex::encode(hasher.finalize())
}

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
}

impl Idempotency {
    pub fn new(keys: Arc<dyn IdempotencyRepository>, clock: Arc<dyn Clock>) -> Self {
        Self {
            keys,
            clock,
            lease: Duration::seconds(IDEMPOTENCY_LEASE_SECONDS),
        }
    }

    /// Runs `work` under `key` for the company, unless the key answers first: a kept answer is
    /// replayed, another request under the key is `Mismatch`, a running one `InProgress`.
    /// `work` gets the resource id reserved for the key (the same on every retry). After it, the
    /// answer it chose to keep is stored, or the key released. A failure to store or release is
    /// logged and the result returned anyway: the key stays held until its lease ends, and a
    /// retry then runs again under the same resource id.
    pub fn run<R>(
        &self,
        empresa: CompanyId,
        key: &IdempotencyKey,
        fingerprint: &str,
        work: impl FnOnce(Uuid) -> Completion<R>,
    ) -> Result<Idempotent<R>, IdempotencyError> {
        let now = self.clock.now();
        let dono = Uuid::new_v4();
        let claim = IdempotencyClaim {
            empresa,
            chave: key.as_str().to_owned(),
            impressao: fingerprint.to_owned(),
            recurso_id: Uuid::new_v4(),
            dono,
            now,
            lease_until: now + self.lease,
        };
        let recurso_id = match self.keys.begin(&claim)? {
            IdempotencyBegin::Run { recurso_id } => recurso_id,
            IdempotencyBegin::Replay(response) => {
                tracing::info!(empresa_id = %empresa, status = response.status, "idempotent replay");
                return Ok(Idempotent::Replayed(response));
            }
            IdempotencyBegin::Mismatch => return Err(IdempotencyError::Mismatch),
            IdempotencyBegin::InProgress => return Err(IdempotencyError::InProgress),
        };
        let Completion { result, keep } = work(recurso_id);
        let at = self.clock.now();
        let settled = match &keep {
            Some(response) => self
                .keys
                .complete(empresa, key.as_str(), dono, response, at),
            None => self.keys.release(empresa, key.as_str(), dono, at),
        };
        match settled {
            Ok(true) => {}
            Ok(false) => tracing::warn!(
                empresa_id = %empresa,
                "idempotency key taken over by another request while this one ran"
            ),
            Err(e) => tracing::warn!(
                empresa_id = %empresa,
                error = format!("{e:#}"),
                kept = keep.is_some(),
                "could not settle an idempotency key; it is free again when its lease ends"
            ),
        }
        Ok(Idempotent::Ran(result))
    }
}

/// The purge worker's round: forgets keys older than the retention.
#[derive(Clone)]
pub struct PurgeIdempotencyKeys {
    keys: Arc<dyn IdempotencyRepository>,
    clock: Arc<dyn Clock>,
    retention: Duration,
}

impl PurgeIdempotencyKeys {
    pub fn new(
        keys: Arc<dyn IdempotencyRepository>,
        clock: Arc<dyn Clock>,
        retention: Duration,
    ) -> Self {
        Self {
            keys,
            clock,
            retention,
        }
    }

    /// Deletes up to `batch_size` keys created more than the retention ago; returns how many.
    pub fn run_once(&self, batch_size: u32) -> Result<u32, RepoError> {
        self.keys
            .purge_created_before(self.clock.now() - self.retention, batch_size)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use ports::MockIdempotencyRepository;

    use super::*;
    use crate::test_support::{company, fixed_clock, now};

    fn key() -> IdempotencyKey {
        IdempotencyKey::parse("pedido-42").unwrap()
    }

    fn answer(status: u16, body: &str) -> StoredResponse {
        StoredResponse {
            status,
            body: body.as_bytes().to_vec(),
        }
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
    fn keys_are_one_to_255_visible_ascii_characters() {
        for ok in [
            "a",
            "pedido-42",
            "~!#$%&'()*+,-./:;<=>?@[]^_`{|}",
            &"k".repeat(255),
        ] {
            assert_eq!(IdempotencyKey::parse(ok).unwrap().as_str(), ok);
        }
        for bad in [
            "",
            " ",
            "com espaço",
            "tab\t",
            "ç",
            "nul\0",
            &"k".repeat(256),
        ] {
            assert_eq!(
                IdempotencyKey::parse(bad),
                Err(InvalidIdempotencyKey),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn the_fingerprint_covers_method_path_and_body_bytes() {
        let base = request_fingerprint("POST", "/api/x", b"{\"a\":1}");

        assert_eq!(base.len(), 64);
        assert!(base
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_eq!(base, request_fingerprint("post", "/api/x", b"{\"a\":1}"));
        assert_ne!(base, request_fingerprint("PUT", "/api/x", b"{\"a\":1}"));
        assert_ne!(base, request_fingerprint("POST", "/api/y", b"{\"a\":1}"));
        assert_ne!(base, request_fingerprint("POST", "/api/x", b"{\"a\": 1}"));
        // the separator keeps path and body apart
        assert_ne!(
            request_fingerprint("POST", "/a", b"b"),
            request_fingerprint("POST", "/a\nb", b"")
        );
    }

    #[test]
    fn a_new_key_runs_the_work_with_the_reserved_id_and_keeps_its_answer() {
        let claims = Arc::new(Mutex::new(Vec::new()));
        let mut keys = MockIdempotencyRepository::new();
        let recorded = claims.clone();
        keys.expect_begin().times(1).returning(move |claim| {
            recorded.lock().unwrap().push(claim.clone());
            Ok(IdempotencyBegin::Run {
                recurso_id: claim.recurso_id,
            })
        });
        let kept = Arc::new(Mutex::new(Vec::new()));
        let kept_by_repo = kept.clone();
        keys.expect_complete()
            .times(1)
            .returning(move |empresa, chave, dono, response, at| {
                kept_by_repo.lock().unwrap().push((
                    empresa,
                    chave.to_owned(),
                    dono,
                    response.clone(),
                    at,
                ));
                Ok(true)
            });
        keys.expect_release().times(0);
        let mut ran_with = None;

        let outcome = service(keys)
            .run(company().id, &key(), "f".repeat(64).as_str(), |id| {
                ran_with = Some(id);
                Completion {
                    result: "created",
                    keep: Some(answer(200, "{\"ok\":1}")),
                }
            })
            .unwrap();

        assert!(matches!(outcome, Idempotent::Ran("created")));
        let claim = claims.lock().unwrap()[0].clone();
        assert_eq!(claim.empresa, company().id);
        assert_eq!(claim.chave, "pedido-42");
        assert_eq!(claim.impressao, "f".repeat(64));
        assert_eq!(claim.now, now());
        assert_eq!(claim.lease_until, now() + Duration::seconds(60));
        assert_eq!(ran_with, Some(claim.recurso_id));
        assert_eq!(
            *kept.lock().unwrap(),
            [(
                company().id,
                "pedido-42".to_owned(),
                claim.dono,
                answer(200, "{\"ok\":1}"),
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
                recurso_id: reserved,
            },
            claims.clone(),
        );
        keys.expect_complete().times(0);
        let released = Arc::new(Mutex::new(Vec::new()));
        let released_by_repo = released.clone();
        keys.expect_release()
            .times(1)
            .returning(move |_, chave, dono, at| {
                released_by_repo
                    .lock()
                    .unwrap()
                    .push((chave.to_owned(), dono, at));
                Ok(true)
            });

        let outcome = service(keys)
            .run(company().id, &key(), "fp", |id| {
                assert_eq!(id, reserved, "a retry works under the id reserved first");
                Completion {
                    result: "504",
                    keep: None,
                }
            })
            .unwrap();

        assert!(matches!(outcome, Idempotent::Ran("504")));
        let dono = claims.lock().unwrap()[0].dono;
        assert_eq!(
            *released.lock().unwrap(),
            [("pedido-42".to_owned(), dono, now())]
        );
    }

    #[test]
    fn a_completed_key_replays_its_answer_without_running() {
        let mut keys = keys_answering(
            IdempotencyBegin::Replay(answer(422, "{\"erro\":1}")),
            Arc::default(),
        );
        keys.expect_complete().times(0);
        keys.expect_release().times(0);

        let outcome = service(keys)
            .run(company().id, &key(), "fp", |_| -> Completion<()> {
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

            let result = service(keys).run(company().id, &key(), "fp", |_| -> Completion<()> {
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

        let result = service(keys).run(company().id, &key(), "fp", |_| -> Completion<()> {
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
                recurso_id: Uuid::from_u128(1),
            },
            Arc::default(),
        );
        keys.expect_complete()
            .times(1)
            .returning(|_, _, _, _, _| Err(RepoError::Unavailable(anyhow::anyhow!("gone"))));
        keys.expect_release().times(0);

        let outcome = service(keys)
            .run(company().id, &key(), "fp", |_| Completion {
                result: 1,
                keep: Some(answer(200, "{}")),
            })
            .unwrap();

        assert!(matches!(outcome, Idempotent::Ran(1)));
    }

    #[test]
    fn the_purge_forgets_keys_older_than_the_retention() {
        let mut keys = MockIdempotencyRepository::new();
        keys.expect_purge_created_before()
            .withf(|before, limit| *before == now() - Duration::hours(24) && *limit == 500)
            .times(1)
            .returning(|_, _| Ok(3));

        let purged = PurgeIdempotencyKeys::new(Arc::new(keys), fixed_clock(), Duration::hours(24))
            .run_once(500)
            .unwrap();

        assert_eq!(purged, 3);
    }
}
