//! What other writers changed, told by the database after they committed: the signal that lets
//! in-process caches (resolved API keys, rendered use-case lists) be shared across instances.

use std::time::Duration;

use domain::CompanyId;

use crate::RepoError;

/// One committed change that makes cached data stale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheChange {
    /// Something of this company changed: its use cases, one of its API keys (revoked,
    /// removed), or the company itself.
    Company(CompanyId),
    /// Changes may have been missed (the feed just (re)connected, or a table was truncated):
    /// nothing cached before now can be trusted.
    Everything,
}

/// A subscription to committed changes (PostgreSQL `LISTEN`/`NOTIFY` in the adapter). Used by
/// one thread at a time.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait ChangeFeed: Send {
    /// Waits at most `wait` and answers the changes committed since the previous call (often
    /// none). After connecting or reconnecting, the first answer holds
    /// [`CacheChange::Everything`]. `Ok` also means the feed proved, during the call, that it
    /// hears what this process writes (every change committed before the call is in this
    /// answer or an earlier one); an error means changes may be being missed until a later call
    /// answers `Ok` again.
    fn next_changes(&mut self, wait: Duration) -> Result<Vec<CacheChange>, RepoError>;
}
