//! A share of the PGCC's quota that every process of the service draws from together.

use chrono::{DateTime, Utc};

use crate::RepoError;

/// The PGCC status calls every process may make, together (`workers.pgcc_status_calls_per_second`):
/// a token bucket kept where all processes see it, so two workers never make twice the calls.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait PgccCallBudget: Send + Sync {
    /// Takes one call at `now`. `Ok(None)`: granted. `Ok(Some(wait))`: none left; one will be
    /// in about `wait`.
    fn try_take(&self, now: DateTime<Utc>) -> Result<Option<std::time::Duration>, RepoError>;
}
