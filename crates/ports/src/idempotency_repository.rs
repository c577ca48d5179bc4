use chrono::{DateTime, Utc};
use domain::CompanyId;
use uuid::Uuid;

use crate::RepoError;

/// What a completed key gives back on a retry, kept byte for byte. Opaque here: the caller that
/// completes a key decides what its status code and bytes mean (the HTTP layer keeps an answer's
/// status and body).
#[derive(Clone, PartialEq, Eq)]
pub struct StoredOutcome {
    pub status: u16,
    pub body: Vec<u8>,
}

/// The body may name a subject's data (a consent's id, a field in error): `Debug` shows its size.
impl std::fmt::Debug for StoredOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredOutcome")
            .field("status", &self.status)
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// A request asking to run under an idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyClaim {
    pub company: CompanyId,
    /// The key as sent (already checked: 1 to 255 visible ASCII characters).
    pub key: String,
    /// Lower-case hex SHA-256 of the canonical request.
    pub fingerprint: String,
    /// The resource id to reserve if the key is new (a retry gets the one reserved first).
    pub resource_id: Uuid,
    /// Who asks: a fresh id per request, so that only its holder completes or releases the key.
    pub owner: Uuid,
    pub now: DateTime<Utc>,
    /// End of the lease taken when the request may run.
    pub lease_until: DateTime<Utc>,
}

/// What [`IdempotencyRepository::begin`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdempotencyBegin {
    /// Run the request now, creating under `recurso_id` (new key, a released one, or one whose
    /// holder's lease is over). The caller holds the lease until `lease_until`.
    Run { resource_id: Uuid },
    /// The key completed earlier with the same request: answer this again.
    Replay(StoredOutcome),
    /// The key was used with another request (another fingerprint).
    Mismatch,
    /// Another request with this key is running (its lease is not over).
    InProgress,
}

/// Idempotency keys, scoped by company. Rows older than the retention are purged by a worker.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait IdempotencyRepository: Send + Sync {
    /// In one transaction: stores the key (`em_andamento`, holder `claim.owner`, lease `claim.lease_until`)
    /// if the company does not have it; otherwise compares fingerprints (`Mismatch` when they
    /// differ, whatever the state), then answers `Replay` for a completed key, `InProgress` while
    /// another holder's lease lasts, and takes the key over (holder `claim.owner`, new lease) when the
    /// lease is over (its holder released it or died).
    fn begin(&self, claim: &IdempotencyClaim) -> Result<IdempotencyBegin, RepoError>;

    /// Keeps `outcome` for replay and marks the key completed, if `owner` still holds it
    /// (`false`, nothing changed, otherwise).
    fn complete(
        &self,
        company: CompanyId,
        key: &str,
        owner: Uuid,
        outcome: &StoredOutcome,
        at: DateTime<Utc>,
    ) -> Result<bool, RepoError>;

    /// Ends `owner`'s lease at `at` without keeping an answer: the next request with the key runs
    /// (under the same resource id). `false` when `owner` no longer holds it.
    fn release(
        &self,
        company: CompanyId,
        key: &str,
        owner: Uuid,
        at: DateTime<Utc>,
    ) -> Result<bool, RepoError>;

    /// Deletes up to `limit` keys (any company, any state) created before `before`; returns how
    /// many.
    fn purge_created_before(&self, before: DateTime<Utc>, limit: u32) -> Result<u32, RepoError>;
}
