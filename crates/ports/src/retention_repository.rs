//! Retention: what the purge worker deletes or blanks once it is old enough (docs/security.md,
//! "Retention"). Every operation spans companies and handles at most `limit` rows in one
//! transaction, so a large backlog never holds locks long; the caller repeats it until it
//! returns less than `limit`.

use chrono::{DateTime, Utc};

use crate::RepoError;

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait RetentionRepository: Send + Sync {
    /// Deletes up to `limit` webhook deliveries in a final state (`entregue`, `falhou`,
    /// `cancelada`) last changed before `before`, with their attempts; returns how many
    /// deliveries. Pending deliveries are never touched.
    fn purge_webhook_deliveries(&self, before: DateTime<Utc>, limit: u32)
        -> Result<u32, RepoError>;

    /// Deletes up to `limit` webhook events created before `before` that have no delivery left
    /// (so never one still pending); returns how many.
    fn purge_webhook_events(&self, before: DateTime<Utc>, limit: u32) -> Result<u32, RepoError>;

    /// Blanks the personal data (CPF, proof of collection, the hash derived from them) of up to
    /// `limit` cancelled creations last attempted before `before`, not already blanked and no
    /// longer reachable by a retry under an idempotency key, marking them blanked at `now`;
    /// returns how many. Confirmed requests are never touched.
    fn blank_cancelled_creations(
        &self,
        before: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<u32, RepoError>;
}
