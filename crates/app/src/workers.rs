//! The background jobs: each on its own thread, run at start (status checks, expiry,
//! reconciliation of unfinished creations, idempotency key purge, retention purge) or after one
//! interval (the
//! all-company sync), then every interval. A failed round is logged and retried at
//! the next one; work is shared safely between processes by the repository's row claims.
//! Webhook deliveries run on a pool of sender threads (`delivery_pool`).
//! A [`Stop`] ends them gracefully: each thread finishes the round it is in (a drain loop stops
//! between batches, a webhook sender after its current send) and exits instead of sleeping;
//! [`join_within`] waits for them up to a deadline.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use application::Workers;

use crate::settings::{WebhookSettings, WorkerSettings};

/// Asks the job threads to stop. Cheap to clone; every clone is the same signal.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<(Mutex<bool>, Condvar)>);

impl Stop {
    pub fn new() -> Stop {
        Stop::default()
    }

    /// From now on every job exits after its current round; sleeping jobs wake up and exit.
    pub fn stop(&self) {
        let (flag, wake) = &*self.0;
        *flag.lock().unwrap_or_else(|p| p.into_inner()) = true;
        wake.notify_all();
    }

    pub fn is_stopped(&self) -> bool {
        *self.0 .0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sleeps up to `duration`, waking early on [`Stop::stop`]; true when stopped.
    pub fn sleep(&self, duration: Duration) -> bool {
        let (flag, wake) = &*self.0;
        let guard = flag.lock().unwrap_or_else(|p| p.into_inner());
        let (guard, _) = wake
            .wait_timeout_while(guard, duration, |stopped| !*stopped)
            .unwrap_or_else(|p| p.into_inner());
        *guard
    }
}

/// Waits for the threads to end, up to `deadline`; answers how many were still running then
/// (they are left to die with the process).
pub fn join_within(handles: Vec<JoinHandle<()>>, deadline: Instant) -> usize {
    let mut running = handles;
    loop {
        let (done, rest): (Vec<_>, Vec<_>) = running.into_iter().partition(|h| h.is_finished());
        for handle in done {
            let _ = handle.join();
        }
        running = rest;
        if running.is_empty() || Instant::now() >= deadline {
            return running.len();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Webhook URLs settled per round, deliveries per URL and batch (also the cap's batch), and
/// rounds per tick of `webhook-settle` (10^6 deliveries of a removed URL: 100 batches).
const SETTLE_URLS: u32 = 50;
const SETTLE_BATCH: u32 = 10_000;
const SETTLE_ROUNDS_PER_TICK: u32 = 20;

/// Starts every enabled job; the threads run until `stop` (or the process ends).
pub fn start(
    workers: Workers,
    settings: &WorkerSettings,
    webhooks: &WebhookSettings,
    stop: &Stop,
) -> Vec<JoinHandle<()>> {
    let mut handles = Vec::new();
    let batch = settings.batch_size;

    if settings.status_poll_seconds > 0 {
        let poll = workers.poll_consent_statuses.clone();
        let every = Duration::from_secs(settings.status_poll_seconds);
        let recheck_after = chrono::Duration::seconds(settings.status_poll_seconds as i64);
        let draining = stop.clone();
        handles.push(every_interval(
            "status-poll",
            every,
            true,
            stop,
            move || {
                // Drain: a full batch means more are due now.
                loop {
                    match poll.run_once(batch, recheck_after) {
                        Ok(report) => {
                            if report.unknown > 0 {
                                crate::wiring::metrics()
                                    .pgcc_unknown_statuses(u64::from(report.unknown));
                            }
                            if report.failed > 0 {
                                crate::wiring::metrics()
                                    .worker_item_failures("status_poll", u64::from(report.failed));
                            }
                            if report.changed > 0 || report.unknown > 0 || report.failed > 0 {
                                tracing::info!(
                                    checked = report.checked,
                                    changed = report.changed,
                                    unknown = report.unknown,
                                    failed = report.failed,
                                    "status poll"
                                );
                            }
                            if report.checked < batch || draining.is_stopped() {
                                break;
                            }
                        }
                        Err(e) => {
                            tracing::warn!(
                                error = format!("{e:#}"),
                                "status poll failed; retrying next round"
                            );
                            break;
                        }
                    }
                }
            },
        ));
    }

    if settings.expiry_seconds > 0 {
        let expire = workers.expire_consent_requests.clone();
        let every = Duration::from_secs(settings.expiry_seconds);
        handles.push(every_interval(
            "expiry",
            every,
            true,
            stop,
            move || match expire.run_once(batch) {
                Ok(0) => {}
                Ok(n) => tracing::info!(expired = n, "consent requests expired"),
                Err(e) => tracing::warn!(
                    error = format!("{e:#}"),
                    "expiry round failed; retrying next round"
                ),
            },
        ));
    }

    if settings.delivery_poll_ms > 0 {
        // A pool of senders, fair across companies: see `delivery_pool`.
        handles.extend(crate::delivery_pool::start(
            workers.deliver_webhooks.clone(),
            crate::delivery_pool::PoolSettings {
                concurrency: webhooks.concurrency,
                per_company: webhooks.max_in_flight_per_company,
                poll: Duration::from_millis(settings.delivery_poll_ms),
            },
            stop,
        ));
        // Behind a URL's removal, disabling or re-enabling: its pending deliveries cancelled,
        // parked or brought back, in bounded batches (see `DeliverWebhooks::settle_urls`).
        let deliver = workers.deliver_webhooks.clone();
        let every = Duration::from_millis(settings.delivery_poll_ms);
        handles.push(every_interval(
            "webhook-settle",
            every,
            true,
            stop,
            move || {
                for _ in 0..SETTLE_ROUNDS_PER_TICK {
                    match deliver.settle_urls(SETTLE_URLS, SETTLE_BATCH) {
                        Ok(0) => return,
                        Ok(_) => {}
                        Err(e) => {
                            tracing::warn!(
                                error = format!("{e:#}"),
                                "could not settle webhook URLs' deliveries"
                            );
                            return;
                        }
                    }
                }
            },
        ));
    }

    if settings.disable_check_seconds > 0 {
        let deliver = workers.deliver_webhooks.clone();
        let every = Duration::from_secs(settings.disable_check_seconds);
        let max_pending = webhooks.max_pending_per_company;
        handles.push(every_interval(
            "webhook-disable",
            every,
            true,
            stop,
            move || {
                match deliver.disable_failing_urls() {
                    Ok(0) => {}
                    Ok(n) => tracing::warn!(
                        disabled = n,
                        "webhook URLs disabled after failing for the whole window"
                    ),
                    Err(e) => tracing::warn!(
                        error = format!("{e:#}"),
                        "could not check failing webhook URLs"
                    ),
                }
                match deliver.cap_pending(max_pending, SETTLE_BATCH) {
                    Ok(n) => crate::wiring::metrics().webhook_deliveries_dropped(n),
                    Err(e) => tracing::warn!(
                        error = format!("{e:#}"),
                        "could not cap the companies' pending webhook deliveries"
                    ),
                }
            },
        ));
    }

    if settings.reconcile_seconds > 0 {
        let reconcile = workers.reconcile_creations.clone();
        let every = Duration::from_secs(settings.reconcile_seconds);
        let grace = chrono::Duration::seconds(settings.reconcile_grace_seconds as i64);
        let not_found_window = chrono::Duration::seconds(
            settings.reconcile_not_found_seconds.min(i64::MAX as u64) as i64,
        );
        let draining = stop.clone();
        handles.push(every_interval("reconcile", every, true, stop, move || {
            // Drain: a full batch means more are due now.
            loop {
                match reconcile.run_once(batch, grace, not_found_window) {
                    Ok(report) => {
                        if report.failed > 0 {
                            crate::wiring::metrics()
                                .worker_item_failures("reconcile", u64::from(report.failed));
                        }
                        if report.confirmed > 0
                            || report.cancelled > 0
                            || report.not_found > 0
                            || report.failed > 0
                        {
                            tracing::info!(
                                checked = report.checked,
                                confirmed = report.confirmed,
                                cancelled = report.cancelled,
                                not_found = report.not_found,
                                failed = report.failed,
                                "unfinished creations reconciled"
                            );
                        }
                        if report.checked < batch || draining.is_stopped() {
                            break;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(
                            error = format!("{e:#}"),
                            "reconciliation round failed; retrying next round"
                        );
                        break;
                    }
                }
            }
        }));
    }

    if settings.idempotency_purge_seconds > 0 {
        let purge = workers.purge_idempotency_keys.clone();
        let every = Duration::from_secs(settings.idempotency_purge_seconds);
        let draining = stop.clone();
        handles.push(every_interval(
            "idempotency-purge",
            every,
            true,
            stop,
            move || {
                let mut purged = 0u64;
                loop {
                    match purge.run_once(batch) {
                        Ok(n) => {
                            purged += u64::from(n);
                            if n < batch || draining.is_stopped() {
                                break;
                            }
                        }
                        Err(e) => {
                            tracing::warn!(
                                error = format!("{e:#}"),
                                "idempotency key purge failed; retrying next round"
                            );
                            break;
                        }
                    }
                }
                if purged > 0 {
                    tracing::info!(purged, "idempotency keys past their retention purged");
                }
            },
        ));
    }

    if settings.retention_seconds > 0 {
        let purge = workers.purge_retention.clone();
        let every = Duration::from_secs(settings.retention_seconds);
        let draining = stop.clone();
        handles.push(every_interval("retention", every, true, stop, move || {
            // Drain in bounded transactions: a kind that filled its batch may have more.
            let mut total = application::PurgeReport::default();
            loop {
                match purge.run_once(batch) {
                    Ok(report) => {
                        total.deliveries += report.deliveries;
                        total.events += report.events;
                        total.blanked += report.blanked;
                        if !report.full(batch) || draining.is_stopped() {
                            break;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(
                            error = format!("{e:#}"),
                            "retention purge failed; retrying next round"
                        );
                        break;
                    }
                }
            }
            if !total.is_empty() {
                tracing::info!(
                    deliveries = total.deliveries,
                    events = total.events,
                    cancelled_creations_blanked = total.blanked,
                    "retention purge"
                );
            }
        }));
    }

    if settings.sync_seconds > 0 {
        let sync = workers.sync_all_companies.clone();
        let every = Duration::from_secs(settings.sync_seconds);
        // Not at start: a restart should not hit the PGCC for every company at once.
        handles.push(every_interval(
            "use-case-sync",
            every,
            false,
            stop,
            move || match sync.run_once() {
                Ok(report) => {
                    crate::wiring::metrics()
                        .sync_results(u64::from(report.synced), u64::from(report.failed));
                    tracing::info!(
                        synced = report.synced,
                        failed = report.failed,
                        "scheduled use-case sync"
                    )
                }
                Err(e) => tracing::warn!(
                    error = format!("{e:#}"),
                    "scheduled sync could not list companies"
                ),
            },
        ));
    }
    handles
}

fn every_interval(
    name: &'static str,
    every: Duration,
    at_start: bool,
    stop: &Stop,
    mut round: impl FnMut() + Send + 'static,
) -> JoinHandle<()> {
    let stop = stop.clone();
    std::thread::Builder::new()
        .name(format!("worker-{name}"))
        .spawn(move || {
            if !at_start && stop.sleep(every) {
                return;
            }
            while !stop.is_stopped() {
                round();
                if stop.sleep(every) {
                    break;
                }
            }
            tracing::debug!(worker = name, "stopped");
        })
        .expect("spawn a worker thread")
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    #[test]
    fn a_stopped_job_finishes_its_round_then_exits_without_sleeping_out_its_interval() {
        let stop = Stop::new();
        let rounds = Arc::new(AtomicU32::new(0));
        let (entered_tx, entered_rx) = std::sync::mpsc::channel();
        let counted = rounds.clone();
        let handle = every_interval("test", Duration::from_secs(3600), true, &stop, move || {
            let _ = entered_tx.send(());
            // a round in progress when the stop arrives
            std::thread::sleep(Duration::from_millis(200));
            counted.fetch_add(1, Ordering::SeqCst);
        });
        entered_rx.recv().unwrap();
        stop.stop();
        let left = join_within(vec![handle], Instant::now() + Duration::from_secs(10));
        assert_eq!(left, 0, "the job did not exit");
        assert_eq!(
            rounds.load(Ordering::SeqCst),
            1,
            "the round in progress completed"
        );
    }

    #[test]
    fn a_job_waiting_for_its_first_interval_exits_at_once_when_stopped() {
        let stop = Stop::new();
        let handle = every_interval("test", Duration::from_secs(3600), false, &stop, || {
            panic!("no round may run")
        });
        stop.stop();
        assert_eq!(
            join_within(vec![handle], Instant::now() + Duration::from_secs(10)),
            0
        );
    }

    #[test]
    fn join_within_gives_up_at_the_deadline_and_counts_the_stragglers() {
        let busy = std::thread::spawn(|| std::thread::sleep(Duration::from_secs(2)));
        let left = join_within(vec![busy], Instant::now() + Duration::from_millis(50));
        assert_eq!(left, 1);
    }
}
