//! The background jobs: each on its own thread, run at start (status checks, expiry) or after one
//! interval (the all-company sync), then every interval. A failed round is logged and retried at
//! the next one; work is shared safely between processes by the repository's row claims.

use std::thread::JoinHandle;
use std::time::Duration;

use application::Workers;

use crate::settings::WorkerSettings;

/// Starts every enabled job; the threads live as long as the process.
pub fn start(workers: Workers, settings: &WorkerSettings) -> Vec<JoinHandle<()>> {
    let mut handles = Vec::new();
    let batch = settings.batch_size;

    if settings.status_poll_seconds > 0 {
        let poll = workers.poll_consent_statuses.clone();
        let every = Duration::from_secs(settings.status_poll_seconds);
        let recheck_after = chrono::Duration::seconds(settings.status_poll_seconds as i64);
        handles.push(every_interval("status-poll", every, true, move || {
            // Drain: a full batch means more are due now.
            loop {
                match poll.run_once(batch, recheck_after) {
                    Ok(report) => {
                        if report.changed > 0 {
                            tracing::info!(
                                checked = report.checked,
                                changed = report.changed,
                                "status poll"
                            );
                        }
                        if report.checked < batch {
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
        }));
    }

    if settings.expiry_seconds > 0 {
        let expire = workers.expire_consent_requests.clone();
        let every = Duration::from_secs(settings.expiry_seconds);
        handles.push(every_interval(
            "expiry",
            every,
            true,
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
        let deliver = workers.deliver_webhooks.clone();
        let every = Duration::from_millis(settings.delivery_poll_ms);
        handles.push(every_interval("webhook-delivery", every, true, move || {
            loop {
                match deliver.run_once(batch) {
                    Ok(report) => {
                        if report.attempted > 0 {
                            tracing::info!(
                                attempted = report.attempted,
                                delivered = report.delivered,
                                retried = report.retried,
                                failed = report.failed,
                                "webhook deliveries"
                            );
                        }
                        if report.attempted < batch {
                            break;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(
                            error = format!("{e:#}"),
                            "webhook delivery round failed; retrying next round"
                        );
                        break;
                    }
                }
            }
        }));
    }

    if settings.disable_check_seconds > 0 {
        let deliver = workers.deliver_webhooks.clone();
        let every = Duration::from_secs(settings.disable_check_seconds);
        handles.push(every_interval(
            "webhook-disable",
            every,
            true,
            move || match deliver.disable_failing_urls() {
                Ok(0) => {}
                Ok(n) => tracing::warn!(
                    disabled = n,
                    "webhook URLs disabled after failing for the whole window"
                ),
                Err(e) => tracing::warn!(
                    error = format!("{e:#}"),
                    "could not check failing webhook URLs"
                ),
            },
        ));
    }

    if settings.sync_seconds > 0 {
        let sync = workers.sync_all_companies.clone();
        let every = Duration::from_secs(settings.sync_seconds);
        // Not at start: a restart should not hit the PGCC for every company at once.
        handles.push(every_interval(
            "use-case-sync",
            every,
            false,
            move || match sync.run_once() {
                Ok(report) => tracing::info!(
                    synced = report.synced,
                    failed = report.failed,
                    "scheduled use-case sync"
                ),
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
    mut round: impl FnMut() + Send + 'static,
) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name(format!("worker-{name}"))
        .spawn(move || {
            if !at_start {
                std::thread::sleep(every);
            }
            loop {
                round();
                std::thread::sleep(every);
            }
        })
        .expect("spawn a worker thread")
}
