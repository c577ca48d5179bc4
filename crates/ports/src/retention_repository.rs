//! Retention: what the purge worker deletes or blanks once it is old enough (docs/security.md,
//! "Retention"). Every operation handles at most `limit` rows, company by company (each
//! company's batch its own short transaction, never a lock across companies), reading only rows
//! it can purge; the caller repeats it until it returns less than `limit`.

use chrono::{DateTime, Utc};

use crate::RepoError;

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait RetentionRepository: Send + Sync {
    /// Deletes up to `limit` webhook deliveries in a final state (`entregue`, `falhou`,
    /// `cancelada`) last changed before `before`, with their attempts, and their events once no
    /// delivery of them is left; returns how many deliveries. Pending deliveries are never
    /// touched.
    fn purge_webhook_deliveries(&self, before: DateTime<Utc>, limit: u32)
        -> Result<u32, RepoError>;

    /// Deletes up to `limit` webhook events created before `before` that never had a delivery;
    /// returns how many. An event with deliveries goes with its last one, in
    /// [`RetentionRepository::purge_webhook_deliveries`] (not counted here).
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

    /// Deletes up to `limit` rows of the record of reads of personal data
    /// (`acessos_dados_pessoais`) recorded before `before`; returns how many.
    fn purge_access_log(&self, before: DateTime<Utc>, limit: u32) -> Result<u32, RepoError>;
}
