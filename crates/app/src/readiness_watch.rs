//! The threads that keep `GET /health/ready` and the database gate current: each probe runs every
//! [`INTERVAL`] on a thread of its own, so a request never runs a probe, never waits on one and
//! never takes a pool connection for one.
//!
//! A probe can hang: a database behind a path that stopped answering holds its query until the
//! kernel gives up. Each check therefore runs on a short-lived thread; the watcher waits for it
//! up to [`INTERVAL`] and, while it is stuck, starts no other (the answer ages, and
//! `Operations` reports the probe down once it is older than `FRESH_FOR`). A check stuck for
//! [`ABANDON_AFTER`] is left behind with its connection (the probe opens a new one), so the
//! watcher sees the database come back even if the old connection never returns; at most
//! [`MAX_ABANDONED`] are left behind at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use application::Operations;

use crate::workers::Stop;

/// How often each probe runs (its answer is then at most this old, plus the probe's time).
pub const INTERVAL: Duration = Duration::from_millis(250);
/// A check stuck this long is abandoned and a new one started.
const ABANDON_AFTER: Duration = Duration::from_secs(5);
/// Checks abandoned and still stuck, at most (each holds a thread and a connection).
const MAX_ABANDONED: usize = 16;

/// How long start-up waits for every probe's first answer, so that a process that says it is
/// listening answers `/health/ready` from real checks (a probe that has not answered yet counts
/// as down).
const FIRST_ANSWERS_WITHIN: Duration = Duration::from_secs(3);

/// Starts one watcher per probe (they end with `stop`) and waits, up to a few seconds, for
/// every probe's first answer.
pub fn start(operations: Arc<Operations>, stop: &Stop) -> Vec<JoinHandle<()>> {
    let watchers = spawn_watchers(&operations, stop);
    let deadline = Instant::now() + FIRST_ANSWERS_WITHIN;
    while !operations.all_answered() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    watchers
}

fn spawn_watchers(operations: &Arc<Operations>, stop: &Stop) -> Vec<JoinHandle<()>> {
    let abandoned = Arc::new(AtomicUsize::new(0));
    (0..operations.probe_count())
        .map(|index| {
            let (operations, stop, abandoned) =
                (operations.clone(), stop.clone(), abandoned.clone());
            std::thread::Builder::new()
                .name(format!("readiness-{index}"))
                .spawn(move || watch(&operations, index, &stop, &abandoned))
                .expect("spawn a readiness watcher")
        })
        .collect()
}

fn watch(operations: &Arc<Operations>, index: usize, stop: &Stop, abandoned: &Arc<AtomicUsize>) {
    let mut running: Option<(Instant, mpsc::Receiver<()>)> = None;
    loop {
        let round = Instant::now();
        if running.is_none() {
            running = Some((Instant::now(), spawn_check(operations, index, abandoned)));
        }
        if let Some((started, done)) = &running {
            match done.recv_timeout(INTERVAL) {
                Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => running = None,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if started.elapsed() >= ABANDON_AFTER
                        && abandoned.load(Ordering::Acquire) < MAX_ABANDONED
                    {
                        abandoned.fetch_add(1, Ordering::AcqRel);
                        tracing::warn!(
                            probe = index,
                            "a readiness check is stuck; starting another on a new connection"
                        );
                        running = None;
                    }
                }
            }
        }
        let rest = INTERVAL.saturating_sub(round.elapsed());
        if stop.sleep(rest) {
            return;
        }
    }
}

/// Runs one check on its own thread; the receiver hears when it is done. A check that finishes
/// after it was abandoned gives its place back.
fn spawn_check(
    operations: &Arc<Operations>,
    index: usize,
    abandoned: &Arc<AtomicUsize>,
) -> mpsc::Receiver<()> {
    let (done, heard) = mpsc::sync_channel(1);
    let (operations, abandoned) = (operations.clone(), abandoned.clone());
    let spawned = std::thread::Builder::new()
        .name(format!("readiness-check-{index}"))
        .stack_size(256 * 1024)
        .spawn(move || {
            operations.refresh(index);
            if done.send(()).is_err() {
                // nobody waits for it any more: it had been abandoned
                abandoned.fetch_sub(1, Ordering::AcqRel);
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "could not start a readiness check");
    }
    heard
}
