//! Whether a run measured the service or the generator: the rate loadgen actually achieved
//! against the one it was asked for, and the rate to try next when it fell behind.
//!
//! An open-loop generator that cannot send on time (its own CPU, or every connection busy)
//! queues requests itself; their latencies, counted from the due time, then measure that queue,
//! not the service (a `/health/live` p50 of 164-415 ms on a busy day, issue 15). So a run that
//! fell behind its schedule by more than [`MAX_SHORTFALL`] is reported as generator-bound, with
//! no latency, and the next attempt goes at a lower rate: every latency printed is the service's.

use std::time::Duration;

/// How far behind its schedule a run may fall and still count: 5% of the rate asked for.
pub const MAX_SHORTFALL: f64 = 0.05;

/// Each new attempt after a generator-bound one asks for at most this fraction of the rate the
/// failed one achieved (and of the rate it asked for): below what the generator and the service
/// just showed they can sustain together, with a margin so that the next try is not on the edge.
pub const STEP_DOWN: f64 = 0.5;

/// How one run kept its schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    /// Requests per second asked for.
    pub target: f64,
    /// Requests sent (every one the schedule had, late or not).
    pub sent: u64,
    /// The scheduled duration of the run.
    pub duration: Duration,
    /// When, after the start, the last request was sent.
    pub last_send: Duration,
}

impl Pace {
    /// Requests sent per second over the time it took to send them (at least the scheduled
    /// duration: a run on time sends its last request just before the end).
    pub fn achieved(&self) -> f64 {
        let span = self.duration.max(self.last_send).as_secs_f64();
        if span <= 0.0 {
            return 0.0;
        }
        self.sent as f64 / span
    }

    /// True when the run achieved less than (1 - [`MAX_SHORTFALL`]) of its rate: its latencies
    /// include the generator's own queue and are not printed.
    pub fn generator_bound(&self) -> bool {
        self.achieved() < self.target * (1.0 - MAX_SHORTFALL)
    }

    /// The rate of the next attempt after this generator-bound run; `None` when the run kept
    /// its schedule, or when the next rate would fall below `min_rate`.
    pub fn next_rate(&self, min_rate: f64) -> Option<f64> {
        if !self.generator_bound() {
            return None;
        }
        let next = (self.target * STEP_DOWN).min(self.achieved() * STEP_DOWN);
        (next >= min_rate && next > 0.0).then_some(next)
    }
}

/// Runs attempts until one keeps its schedule: the first at `rate`, each next one at
/// [`Pace::next_rate`] of the one before, at most `max_attempts` in all. `run` sends one attempt
/// at the rate given and says how it kept its schedule. Every attempt is returned, in order;
/// the last one is the result (generator-bound still when no attempt kept up).
pub fn attempts<R>(
    rate: f64,
    max_attempts: usize,
    min_rate: f64,
    mut run: impl FnMut(f64) -> (Pace, R),
) -> Vec<(Pace, R)> {
    let mut done = Vec::new();
    let mut next = Some(rate);
    while let Some(rate) = next {
        let (pace, result) = run(rate);
        next = pace
            .next_rate(min_rate)
            .filter(|_| done.len() + 1 < max_attempts.max(1));
        done.push((pace, result));
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pace(target: f64, sent: u64, last_send_ms: u64) -> Pace {
        Pace {
            target,
            sent,
            duration: Duration::from_secs(3),
            last_send: Duration::from_millis(last_send_ms),
        }
    }

    #[test]
    fn a_run_on_schedule_achieves_its_rate_and_is_the_services() {
        // 3,000 requests due over 3 s, the last one sent at 2.999 s
        let p = pace(1000.0, 3000, 2999);
        assert!((p.achieved() - 1000.0).abs() < 1e-9);
        assert!(!p.generator_bound());
        assert_eq!(p.next_rate(1.0), None);
    }

    #[test]
    fn up_to_five_percent_behind_still_counts() {
        // the last request went out 150 ms late: 3,000 in 3.15 s = 952/s, within 5% of 1,000
        let p = pace(1000.0, 3000, 3150);
        assert!(p.achieved() > 950.0);
        assert!(!p.generator_bound());
    }

    #[test]
    fn more_than_five_percent_behind_is_generator_bound_and_the_next_rate_is_lower() {
        // the schedule's 3,000 requests took 4 s to send: 750/s achieved of 1,000/s asked
        let p = pace(1000.0, 3000, 4000);
        assert!((p.achieved() - 750.0).abs() < 1e-9);
        assert!(p.generator_bound());
        assert_eq!(p.next_rate(1.0), Some(375.0), "half of what it achieved");
    }

    #[test]
    fn the_next_rate_is_never_above_half_the_one_asked_for() {
        // sent fewer than planned yet on time (it cannot happen with every request sent, but the
        // rule must not raise the rate whatever the figures)
        let p = Pace {
            target: 1000.0,
            sent: 2000,
            duration: Duration::from_secs(3),
            last_send: Duration::from_millis(2999),
        };
        assert!(p.generator_bound());
        assert!(p.next_rate(1.0).unwrap() <= 500.0);
    }

    #[test]
    fn no_next_rate_below_the_floor() {
        let p = pace(10.0, 30, 6000);
        assert!(p.generator_bound());
        assert_eq!(p.next_rate(2.5), Some(2.5));
        assert_eq!(p.next_rate(3.0), None);
    }

    #[test]
    fn an_empty_run_achieves_nothing() {
        let p = Pace {
            target: 100.0,
            sent: 0,
            duration: Duration::ZERO,
            last_send: Duration::ZERO,
        };
        assert_eq!(p.achieved(), 0.0);
        assert!(p.generator_bound());
    }

    /// A generator and service that together sustain `capacity` requests/s over 3 s.
    fn limited(capacity: f64) -> impl FnMut(f64) -> (Pace, f64) {
        move |rate| {
            let sent = (rate * 3.0) as u64;
            let span = (sent as f64 / capacity).max(3.0);
            let pace = Pace {
                target: rate,
                sent,
                duration: Duration::from_secs(3),
                last_send: Duration::from_secs_f64(span),
            };
            (pace, rate)
        }
    }

    #[test]
    fn attempts_step_down_until_one_keeps_its_schedule() {
        let tried = attempts(1000.0, 4, 1.0, limited(400.0));
        let rates: Vec<f64> = tried.iter().map(|(_, r)| *r).collect();
        // 1,000/s achieved 400/s: next 200/s, which keeps up
        assert_eq!(rates, [1000.0, 200.0]);
        assert!(tried[0].0.generator_bound());
        assert!(!tried[1].0.generator_bound());
    }

    #[test]
    fn a_run_on_schedule_is_the_only_attempt() {
        let tried = attempts(300.0, 4, 1.0, limited(400.0));
        assert_eq!(tried.len(), 1);
        assert!(!tried[0].0.generator_bound());
    }

    #[test]
    fn attempts_stop_at_the_limit_still_generator_bound() {
        // 10/s sustainable: 1,000 -> 5 would keep up but only 2 attempts are allowed
        let tried = attempts(1000.0, 2, 1.0, limited(10.0));
        let rates: Vec<f64> = tried.iter().map(|(_, r)| *r).collect();
        assert_eq!(rates, [1000.0, 5.0]);
        let tried = attempts(1000.0, 1, 1.0, limited(10.0));
        assert_eq!(tried.len(), 1);
        assert!(
            tried[0].0.generator_bound(),
            "the verdict stays generator-bound"
        );
    }
}
