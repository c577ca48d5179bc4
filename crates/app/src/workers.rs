//! Wiring of the background jobs: each service as an `application::jobs` job on its own thread,
//! run at start (status checks, expiry, reconciliation of unfinished creations, idempotency key
//! purge, retention purge) or after one interval (the all-company sync), then every interval;
//! webhook deliveries on the pool of sender threads (`delivery_pool`). The loop, the stop and
//! the jobs' rounds live in `application::jobs`; this file only chooses which run and how often.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use application::jobs::{
    self, CheckpointJob, ExpiryJob, IdempotencyPurgeJob, ImportJob, ReconcileJob, RetentionJob,
    SandboxPurgeJob, Schedule, SearchPurgeJob, StatusPollJob, SyncJob, WebhookCapJob,
    WebhookDisableJob, WebhookSettleJob,
};
pub use application::jobs::{join_within, Stop};
use application::Workers;
use metrics::Metrics;

use crate::settings::{AuditSettings, WebhookSettings, WorkerSettings};

/// Every `seconds` (0: off), at start or after one interval.
fn every(seconds: u64, at_start: bool) -> Option<Schedule> {
    (seconds > 0).then(|| Schedule {
        every: Duration::from_secs(seconds),
        at_start,
    })
}

/// Webhook URLs settled per round, and deliveries per URL and batch (also the cap's batch): a
/// million deliveries of a removed URL are 100 short transactions.
const SETTLE_URLS: u32 = 50;
const SETTLE_BATCH: u32 = 10_000;

/// How often each process adds its PGCC calls to the shared health tallies and assesses them:
/// `GET /api/status` is at most about this old.
const PGCC_HEALTH_EVERY: Duration = Duration::from_secs(1);

/// Starts the PGCC health round (see `application::PgccHealthJob`) on its own thread.
pub fn spawn_pgcc_health(job: application::PgccHealthJob, stop: &Stop) -> JoinHandle<()> {
    jobs::spawn(
        job,
        Schedule {
            every: PGCC_HEALTH_EVERY,
            at_start: true,
        },
        stop,
    )
}

/// Starts every enabled job, reporting to the process's `metrics`; the threads run until `stop`
/// (or the process ends).
pub fn start(
    workers: Workers,
    metrics: &Arc<Metrics>,
    settings: &WorkerSettings,
    webhooks: &WebhookSettings,
    audit: &AuditSettings,
    stop: &Stop,
) -> Vec<JoinHandle<()>> {
    let mut handles = Vec::new();
    let batch = settings.batch_size;
    let observer = metrics.clone();

    if let Some(schedule) = every(settings.status_poll_seconds, true) {
        let job = StatusPollJob {
            poll: workers.poll_consent_statuses.clone(),
            observer: observer.clone(),
        };
        handles.push(jobs::spawn(job, schedule, stop));
    }
    // The imports' registrations: polled every second for work; a round drains while lines
    // are due and waits on the imports' own PGCC budget (docs/imports.md).
    {
        let job = ImportJob {
            register: workers.register_imports.clone(),
        };
        let schedule = Schedule {
            every: Duration::from_secs(1),
            at_start: true,
        };
        handles.push(jobs::spawn(job, schedule, stop));
    }
    if let Some(schedule) = every(settings.expiry_seconds, true) {
        let job = ExpiryJob {
            expire: workers.expire_consent_requests.clone(),
            batch,
        };
        handles.push(jobs::spawn(job, schedule, stop));
    }
    if settings.delivery_poll_ms > 0 {
        // A pool of senders, fair across companies: see `delivery_pool`.
        handles.extend(crate::delivery_pool::start(
            workers.deliver_webhooks.clone(),
            metrics.clone(),
            crate::delivery_pool::PoolSettings {
                concurrency: webhooks.concurrency,
                per_company: webhooks.max_in_flight_per_company,
                poll: Duration::from_millis(settings.delivery_poll_ms),
            },
            stop,
        ));
        // Behind a URL's removal, disabling or re-enabling: its pending deliveries cancelled,
        // parked or brought back, in bounded batches (see `DeliverWebhooks::settle_urls`).
        let job = WebhookSettleJob {
            deliver: workers.deliver_webhooks.clone(),
            urls: SETTLE_URLS,
            batch: SETTLE_BATCH,
        };
        let schedule = Schedule {
            every: Duration::from_millis(settings.delivery_poll_ms),
            at_start: true,
        };
        handles.push(jobs::spawn(job, schedule, stop));
    }
    if let Some(schedule) = every(settings.disable_check_seconds, true) {
        let job = WebhookDisableJob {
            deliver: workers.deliver_webhooks.clone(),
        };
        handles.push(jobs::spawn(job, schedule, stop));
        let job = WebhookCapJob {
            deliver: workers.deliver_webhooks.clone(),
            max_pending: webhooks.max_pending_per_company,
            batch: SETTLE_BATCH,
            observer: observer.clone(),
        };
        handles.push(jobs::spawn(job, schedule, stop));
    }
    if let Some(schedule) = every(settings.reconcile_seconds, true) {
        let job = ReconcileJob {
            reconcile: workers.reconcile_creations.clone(),
            batch,
            grace: chrono::Duration::seconds(settings.reconcile_grace_seconds as i64),
            not_found_window: chrono::Duration::seconds(
                settings.reconcile_not_found_seconds.min(i64::MAX as u64) as i64,
            ),
            observer: observer.clone(),
        };
        handles.push(jobs::spawn(job, schedule, stop));
    }
    if let Some(schedule) = every(settings.idempotency_purge_seconds, true) {
        let job = IdempotencyPurgeJob {
            purge: workers.purge_idempotency_keys.clone(),
            batch,
        };
        handles.push(jobs::spawn(job, schedule, stop));
        // The console's expired CPF searches, on the same schedule (short-lived state too).
        if let Some(purge) = workers.purge_console_searches.clone() {
            handles.push(jobs::spawn(SearchPurgeJob { purge, batch }, schedule, stop));
        }
    }
    if let Some(schedule) = every(settings.retention_seconds, true) {
        let job = RetentionJob {
            purge: workers.purge_retention.clone(),
            batch,
        };
        handles.push(jobs::spawn(job, schedule, stop));
        // The sandbox companies' data past `sandbox.retention_days`, on the retention's schedule.
        let job = SandboxPurgeJob {
            purge: workers.purge_sandboxes.clone(),
            batch,
        };
        handles.push(jobs::spawn(job, schedule, stop));
    }
    if let (Some(schedule), Some(sign)) = (
        every(audit.checkpoint_seconds, true),
        workers.sign_checkpoints.clone(),
    ) {
        let job = CheckpointJob { sign, batch };
        handles.push(jobs::spawn(job, schedule, stop));
    }
    // Not at start: a restart should not hit the PGCC for every company at once.
    if let Some(schedule) = every(settings.sync_seconds, false) {
        let job = SyncJob {
            sync: workers.sync_all_companies.clone(),
            observer,
        };
        handles.push(jobs::spawn(job, schedule, stop));
    }
    handles
}
