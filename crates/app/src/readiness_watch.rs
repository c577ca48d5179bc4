//! The threads that keep `GET /health/ready` and the database gate current: each probe runs every
//! [`INTERVAL`] on a thread of its own, so a request never runs a probe, never waits on one and
//! never takes a pool connection for one.
//!
//! A probe can hang: a database behind a path that stopped answering holds its query until the
//! kernel gives up. Each check therefore runs on a checker thread of its own; the watcher waits
//! for it up to [`INTERVAL`] and, while it is stuck, starts no other (the answer ages, and
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
    let mut checker = Checker::spawn(operations, index, abandoned);
    // when the check under way started (None: the checker is idle)
    let mut running: Option<Instant> = None;
    loop {
        let round = Instant::now();
        if running.is_none() && checker.go.send(()).is_ok() {
            running = Some(Instant::now());
        }
        if let Some(started) = running {
            match checker.done.recv_timeout(INTERVAL) {
                Ok(()) => running = None,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    checker = Checker::spawn(operations, index, abandoned);
                    running = None;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if started.elapsed() >= ABANDON_AFTER
                        && abandoned.load(Ordering::Acquire) < MAX_ABANDONED
                    {
                        abandoned.fetch_add(1, Ordering::AcqRel);
                        tracing::warn!(
                            probe = index,
                            "a readiness check is stuck; starting another on a new connection"
                        );
                        // dropping the old checker's channels lets it exit once unstuck
                        checker = Checker::spawn(operations, index, abandoned);
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

/// A thread that runs probe `index` each time it is told to and says when it is done: one
/// long-lived thread per probe (a thread per check would cost a spawn, and grow the allocator's
/// per-thread arenas, four times a second).
struct Checker {
    go: mpsc::SyncSender<()>,
    done: mpsc::Receiver<()>,
}

impl Checker {
    fn spawn(operations: &Arc<Operations>, index: usize, abandoned: &Arc<AtomicUsize>) -> Checker {
        let (go, told) = mpsc::sync_channel::<()>(1);
        let (finished, done) = mpsc::sync_channel(1);
        let (operations, abandoned) = (operations.clone(), abandoned.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("readiness-check-{index}"))
            .stack_size(256 * 1024)
            .spawn(move || {
                while told.recv().is_ok() {
                    operations.refresh(index);
                    if finished.send(()).is_err() {
                        // nobody waits for it any more: it had been abandoned
                        abandoned.fetch_sub(1, Ordering::AcqRel);
                        return;
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "could not start a readiness check");
        }
        Checker { go, done }
    }
}
