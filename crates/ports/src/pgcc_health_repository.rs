use chrono::{DateTime, Utc};
use domain::{PgccCallTally, PgccHealth, PgccOperation, PgccOutageThreshold};

use crate::RepoError;

/// One process's PGCC calls of one operation in one second, to add to the shared tallies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgccCallSecond {
    pub operation: PgccOperation,
    /// The second the calls ended in (truncated).
    pub second: DateTime<Utc>,
    pub tally: PgccCallTally,
}

/// The PGCC's health shared by every process of the service (docs/decisions.md, "The PGCC's
/// health"): each adds the outcomes of its own PGCC calls, any of them assesses the window, and
/// the status and its changes are the service's, not one process's.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait PgccHealthRepository: Send + Sync {
    /// Adds `calls` to the shared per-second tallies, and forgets the seconds before
    /// `forget_before`.
    fn record(
        &self,
        calls: &[PgccCallSecond],
        forget_before: DateTime<Utc>,
    ) -> Result<(), RepoError>;

    /// Assesses the tallies of the seconds from `since` on, and stores the status at `now`: a
    /// change of code keeps `now` as its detection time, and a change to or from `OK` (checked and
    /// set under the shared row's lock, so exactly once whatever the processes) writes a
    /// transition to tell every company (`announce`). An operation not unavailable in the stored
    /// status becomes so only past `threshold` (`PgccAssessment::past_threshold`). The status
    /// stored comes back.
    fn assess(
        &self,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
        threshold: PgccOutageThreshold,
    ) -> Result<PgccHealth, RepoError>;

    /// The status last stored.
    fn current(&self) -> Result<PgccHealth, RepoError>;

    /// Writes the event of the oldest transition not yet told to every company (with its
    /// deliveries) for up to `companies` more companies, in id order; returns how many were told.
    /// A transition is done (at `now`) when a call tells fewer than asked.
    fn announce(&self, companies: u32, now: DateTime<Utc>) -> Result<u32, RepoError>;
}
