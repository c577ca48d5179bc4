//! [`spawn`]: the one loop every background job runs in.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::Stop;

/// What a job's round says about the work left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing more due now: wait for the next interval.
    Done,
    /// A full batch: more may be due now, run again at once.
    MoreDue,
    /// Work is due but a shared budget is spent: run again after this long.
    Throttled(Duration),
}

/// A background job: one bounded piece of work per call.
pub trait Job: Send + 'static {
    /// Its name in logs and thread names (`status-poll`, ...).
    fn name(&self) -> &'static str;
    /// One round; an error ends the drain until the next interval.
    fn run_once(&mut self) -> anyhow::Result<Outcome>;
}

/// When a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    pub every: Duration,
    /// Run once at start (else wait one interval first: a restart should not, say, hit the
    /// PGCC for every company at once).
    pub at_start: bool,
}

/// Runs `job` on its own thread until `stop`: a drain every interval (see [`Outcome`]).
pub fn spawn(mut job: impl Job, schedule: Schedule, stop: &Stop) -> JoinHandle<()> {
    let stop = stop.clone();
    let name = job.name();
    std::thread::Builder::new()
        .name(format!("worker-{name}"))
        .spawn(move || {
            if !schedule.at_start && stop.sleep(schedule.every) {
                return;
            }
            while !stop.is_stopped() {
                drain(&mut job, &stop);
                if stop.sleep(schedule.every) {
                    break;
                }
            }
            tracing::debug!(worker = name, "stopped");
        })
        .expect("spawn a worker thread")
}

/// Rounds of `job` until it says nothing more is due, it fails, or `stop`.
fn drain(job: &mut impl Job, stop: &Stop) {
    loop {
        // A round's span (exported with telemetry on; DEBUG, so not in the logs at the usual
        // levels): its statements, PGCC calls and events hang under it.
        let round = tracing::debug_span!(
            "worker round",
            otel.name = job.name(),
            worker = job.name(),
            outcome = tracing::field::Empty,
        );
        let outcome = round.in_scope(|| job.run_once());
        round.record(
            "outcome",
            match &outcome {
                Ok(Outcome::Done) => "done",
                Ok(Outcome::MoreDue) => "more_due",
                Ok(Outcome::Throttled(_)) => "throttled",
                Err(_) => "failed",
            },
        );
        drop(round);
        match outcome {
            Ok(Outcome::Done) => return,
            Ok(Outcome::MoreDue) => {}
            Ok(Outcome::Throttled(wait)) => {
                if stop.sleep(wait) {
                    return;
                }
            }
            Err(e) => {
                tracing::warn!(
                    worker = job.name(),
                    error = format!("{e:#}"),
                    "background round failed; retrying next round"
                );
                return;
            }
        }
        if stop.is_stopped() {
            return;
        }
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A job answering `outcomes` in turn (then `Done`), counting its rounds.
    struct Scripted {
        outcomes: Vec<anyhow::Result<Outcome>>,
        rounds: Arc<AtomicU32>,
        entered: Option<std::sync::mpsc::Sender<()>>,
        hold: Duration,
    }

    impl Job for Scripted {
        fn name(&self) -> &'static str {
            "test"
        }
        fn run_once(&mut self) -> anyhow::Result<Outcome> {
            if let Some(tx) = &self.entered {
                let _ = tx.send(());
            }
            std::thread::sleep(self.hold);
            self.rounds.fetch_add(1, Ordering::SeqCst);
            if self.outcomes.is_empty() {
                Ok(Outcome::Done)
            } else {
                self.outcomes.remove(0)
            }
        }
    }

    fn scripted(outcomes: Vec<anyhow::Result<Outcome>>) -> (Scripted, Arc<AtomicU32>) {
        let rounds = Arc::new(AtomicU32::new(0));
        (
            Scripted {
                outcomes,
                rounds: rounds.clone(),
                entered: None,
                hold: Duration::ZERO,
            },
            rounds,
        )
    }

    #[test]
    fn a_drain_runs_again_while_more_is_due_waits_when_throttled_and_ends_on_done_or_error() {
        let stop = Stop::new();
        let (mut job, rounds) = scripted(vec![
            Ok(Outcome::MoreDue),
            Ok(Outcome::Throttled(Duration::from_millis(1))),
            Ok(Outcome::MoreDue),
            Ok(Outcome::Done),
            Ok(Outcome::MoreDue),
        ]);
        drain(&mut job, &stop);
        assert_eq!(rounds.load(Ordering::SeqCst), 4, "up to the first Done");

        let (mut failing, rounds) =
            scripted(vec![Ok(Outcome::MoreDue), Err(anyhow::anyhow!("down"))]);
        drain(&mut failing, &stop);
        assert_eq!(rounds.load(Ordering::SeqCst), 2, "an error ends the drain");
    }

    #[test]
    fn a_stopped_job_finishes_its_round_then_exits_without_sleeping_out_its_interval() {
        let stop = Stop::new();
        let (entered_tx, entered_rx) = std::sync::mpsc::channel();
        let (mut job, rounds) = scripted(vec![]);
        job.entered = Some(entered_tx);
        // a round in progress when the stop arrives
        job.hold = Duration::from_millis(200);
        let handle = spawn(
            job,
            Schedule {
                every: Duration::from_secs(3600),
                at_start: true,
            },
            &stop,
        );
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
        let ran = Arc::new(Mutex::new(false));
        struct Never(Arc<Mutex<bool>>);
        impl Job for Never {
            fn name(&self) -> &'static str {
                "never"
            }
            fn run_once(&mut self) -> anyhow::Result<Outcome> {
                *self.0.lock().unwrap() = true;
                Ok(Outcome::Done)
            }
        }
        let handle = spawn(
            Never(ran.clone()),
            Schedule {
                every: Duration::from_secs(3600),
                at_start: false,
            },
            &stop,
        );
        stop.stop();
        assert_eq!(
            join_within(vec![handle], Instant::now() + Duration::from_secs(10)),
            0
        );
        assert!(!*ran.lock().unwrap(), "no round may run");
    }

    #[test]
    fn join_within_gives_up_at_the_deadline_and_counts_the_stragglers() {
        let busy = std::thread::spawn(|| std::thread::sleep(Duration::from_secs(2)));
        let left = join_within(vec![busy], Instant::now() + Duration::from_millis(50));
        assert_eq!(left, 1);
    }
}
