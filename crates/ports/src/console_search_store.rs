//! Where the console's CPF searches are kept (issue 38, part 2; docs/console.md, "The subject's
//! page"): shared by every API replica (PostgreSQL), so that a reload of
//! `/console/titulares/<token>` served by another replica finds its search. A search is found by
//! the SHA-256 of its token, within its company and for the session that made it (the SHA-256 of
//! its cookie's id); the store holds the CPF sealed by the console (encrypted under a key derived
//! from the token, opaque bytes here), never in clear.

use chrono::{DateTime, Utc};
use domain::CompanyId;

use crate::RepoError;

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait ConsoleSearchStore: Send + Sync {
    /// Keeps the search of the company's session `session_hash` under `token_hash` until
    /// `expires_at`, with the CPF `sealed`.
    fn keep(
        &self,
        company: CompanyId,
        token_hash: [u8; 32],
        session_hash: [u8; 32],
        sealed: Vec<u8>,
        expires_at: DateTime<Utc>,
    ) -> Result<(), RepoError>;

    /// The sealed CPF of the company's search under `token_hash` when session `session_hash` made
    /// it and it expires after `now`; `None` otherwise (made up, expired, another session's or
    /// another company's: all alike).
    fn find(
        &self,
        company: CompanyId,
        token_hash: [u8; 32],
        session_hash: [u8; 32],
        now: DateTime<Utc>,
    ) -> Result<Option<Vec<u8>>, RepoError>;

    /// Deletes up to `limit` searches expired at `now`, company by company; how many.
    fn purge_expired(&self, now: DateTime<Utc>, limit: u32) -> Result<u32, RepoError>;
}
