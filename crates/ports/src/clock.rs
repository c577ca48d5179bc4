use chrono::{DateTime, DurationRound, TimeDelta, Utc};

/// The current instant, injected so that rules about time (expiry, answer dates) are testable.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

/// The wall clock, in microseconds: PostgreSQL's precision, so an instant we answer right after
/// a write is the same instant a later read answers.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        let now = Utc::now();
        now.duration_trunc(TimeDelta::microseconds(1))
            .unwrap_or(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Timelike;

    #[test]
    fn the_system_clock_answers_whole_microseconds() {
        assert_eq!(SystemClock.now().nanosecond() % 1_000, 0);
    }
}
