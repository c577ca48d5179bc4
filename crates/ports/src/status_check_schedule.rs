//! [`StatusCheckSchedule`]: when each confirmed request's status is next checked with the PGCC,
//! apart from the requests themselves ([`crate::ConsentRequestRepository`]), as a job queue is
//! apart from the data its jobs work on. A young request has a check of its own, due at a time
//! that grows while it stays `pendente`; a settled one is in its company's sweep of its lane,
//! every request of the lane once a period (docs/scaling.md, "The status worker").

use chrono::{DateTime, Utc};
use domain::{CompanyId, ConsentStatus};
use uuid::Uuid;

use crate::RepoError;

/// A request claimed for a status check with the PGCC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusCheckItem {
    pub id: Uuid,
    pub company_id: CompanyId,
    pub pgcc_id: String,
    pub status: ConsentStatus,
    /// Since when the PGCC has answered a status we do not know for this request (`None`: it
    /// has not, or answered a known one since): the poller's backoff grows from it.
    pub unknown_status_since: Option<DateTime<Utc>>,
    /// When this check was due (its lag is measured against it).
    pub due_at: DateTime<Utc>,
    /// The interval its last check scheduled, in seconds (0: never checked yet): a `pendente`
    /// request's interval grows from check to check.
    pub interval_seconds: u32,
    /// `Some`: claimed by its company's sweep of `lane` (see [`StatusSweepLane`]): checking it
    /// writes nothing unless its status changed, and the sweep moves on once the batch's lease
    /// is handed back to [`StatusCheckSchedule::advance_status_sweeps`].
    pub sweep: Option<StatusSweepLease>,
}

/// The steady checks of a company's requests, in passes: every request in the lane once per
/// period, read in id order from where the pass stands. A check that finds no change writes
/// nothing (issue 21, part 1: the cost of a check is a read, not a row update).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StatusSweepLane {
    /// `pendente` requests past their growing intervals: every `pending_recheck_max_seconds`.
    Pending,
    /// `ativo` requests: every `active_recheck_seconds`.
    Active,
}

/// A company with status checks due, and which kind: its own scheduled checks (a young
/// request's), a due pass of one of its sweeps, or both. Found by one probe per company; the
/// claim then reads only the kinds that were due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DueStatusChecks {
    pub company_id: CompanyId,
    /// Checks due by their own schedule row.
    pub scheduled: bool,
    /// A sweep whose pass is due and whose batch nobody holds.
    pub swept: bool,
}

impl DueStatusChecks {
    /// Both kinds: a claim that looks at everything the company may have due.
    pub fn all(company_id: CompanyId) -> Self {
        Self {
            company_id,
            scheduled: true,
            swept: true,
        }
    }
}

/// A batch of a company's sweep, held until `token` (the lease's end, as stored): handed back
/// after the check to move the sweep past it. Not handed back (the PGCC failed, the worker
/// died), the batch is read again once the lease ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StatusSweepLease {
    pub company_id: CompanyId,
    pub lane: StatusSweepLane,
    pub token: DateTime<Utc>,
}

/// When a request is checked next, after a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextStatusCheck {
    /// At `at`, by its own schedule row; `interval_seconds` is the interval that put it there
    /// (a `pendente` request's grows from check to check).
    At {
        at: DateTime<Utc>,
        interval_seconds: u32,
    },
    /// By its company's sweep of `lane`, once every `period_seconds`. A company without such a
    /// sweep yet gets one, its first pass due at `first_pass_at` (a period after this check).
    Sweep {
        lane: StatusSweepLane,
        period_seconds: u32,
        first_pass_at: DateTime<Utc>,
    },
    /// Never again: the request reached a final status.
    Never,
}

/// When a request's next status check is, after a check (see
/// [`StatusCheckSchedule::schedule_status_checks`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduledStatusCheck {
    pub company_id: CompanyId,
    pub id: Uuid,
    pub next: NextStatusCheck,
}

/// The status poller's schedule: which companies have checks due, the claim of one company's
/// due checks, and what each check leaves for the next one. The claims lease what they hand
/// out (`FOR UPDATE SKIP LOCKED`), so that several workers share the schedule without taking
/// the same check twice, and a worker that dies leaves its checks to be claimed again.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait StatusCheckSchedule: Send + Sync {
    /// Up to `limit` companies that have a status check due at `now`, each with the kinds it
    /// has due, in company id order starting after `after` when given and wrapping around (the
    /// caller takes companies in turns: `after` is the last one it found). Found without reading
    /// the due checks themselves: two index probes per company.
    fn companies_with_due_status_checks(
        &self,
        now: DateTime<Utc>,
        after: Option<CompanyId>,
        limit: u32,
    ) -> Result<Vec<DueStatusChecks>, RepoError>;

    /// Claims up to `limit` of `due.company_id`'s status checks due at `now`: first those due by
    /// their own schedule (oldest due first; moved to `lease_until`, so that a worker that dies
    /// mid-check leaves them to be checked again then), then, for the room left, the next batch
    /// of a due sweep (leased as a whole until `lease_until`: see [`StatusSweepLease`]). A kind
    /// `due` does not name is not looked at (no statement: the probe found none due).
    /// `FOR UPDATE SKIP LOCKED`, within that one company: two workers never claim the same
    /// check. Each comes back with its request's stored status (a request that reached a final
    /// status meanwhile comes back too, to be unscheduled). Writes the narrow schedule tables
    /// only, never the request.
    fn claim_status_checks(
        &self,
        due: DueStatusChecks,
        limit: u32,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
    ) -> Result<Vec<StatusCheckItem>, RepoError>;

    /// Stores when each checked request is checked next (its own time, its company's sweep, or
    /// never), in one statement per company. Writes the schedule only, never the request.
    fn schedule_status_checks(&self, schedules: &[ScheduledStatusCheck]) -> Result<(), RepoError>;

    /// Moves each leased sweep past the batch it handed out (a batch that was the last of its
    /// pass ends the pass; the next one is due a period after this one was). A lease that ended
    /// meanwhile (another worker took the batch again) is left alone.
    fn advance_status_sweeps(
        &self,
        leases: &[StatusSweepLease],
        now: DateTime<Utc>,
    ) -> Result<(), RepoError>;

    /// The PGCC answered a status we do not know for the company's request `id`: records
    /// `unknown_since` as the start of the oddity and moves its next status check to
    /// `next_check_at` (the poller's backoff; a request in a sweep stays there: its next pass,
    /// a period away, is its backoff). `false` when the request is absent or swept.
    fn defer_status_check(
        &self,
        company: CompanyId,
        id: Uuid,
        unknown_since: DateTime<Utc>,
        next_check_at: DateTime<Utc>,
    ) -> Result<bool, RepoError>;

    /// The PGCC answers a known status again for request `id`: forgets the oddity, so that a
    /// later one starts its backoff afresh. Its next check is left as claimed.
    fn clear_unknown_status(&self, company: CompanyId, id: Uuid) -> Result<(), RepoError>;
}
