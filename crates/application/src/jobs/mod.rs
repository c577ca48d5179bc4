//! The background jobs' one loop (issue 21, part 7), outside the binary: every job is a
//! [`Job`] whose `run_once` does one bounded piece of work and says what follows
//! ([`Outcome`]), and [`spawn`] runs it on a thread of its own: at start or after one interval,
//! then every interval, draining (running again at once) while it says more is due, waiting
//! when it is throttled, and stopping between rounds on [`Stop`]. A failed round is logged and
//! retried at the next interval. `serve` and `worker` wire the same jobs (`rounds`).
//! zero-to-production's delivery worker is the model (`ExecutionOutcome`).

mod rounds;
mod runner;
mod stop;

pub use rounds::{
    CheckpointJob, ExpiryJob, IdempotencyPurgeJob, ImportJob, JobObserver, ReconcileJob,
    RetentionJob, SandboxPurgeJob, SearchPurgeJob, StatusPollJob, SyncJob, WebhookCapJob,
    WebhookDisableJob, WebhookSettleJob,
};
pub use runner::{join_within, spawn, Job, Outcome, Schedule};
pub use stop::Stop;
