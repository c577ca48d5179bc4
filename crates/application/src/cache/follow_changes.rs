//! The loop body that keeps a [`ChangeTracker`] up to date.

use std::time::{Duration, Instant};

use ports::ChangeFeed;

use super::ChangeTracker;

/// Waits up to `wait` for changes and applies them. On a feed failure the caches stop being
/// trusted at once; the error is returned for the caller to log and back off.
pub fn follow_changes(
    feed: &mut dyn ChangeFeed,
    tracker: &ChangeTracker,
    wait: Duration,
) -> Result<usize, ports::RepoError> {
    // Every change committed before this instant reaches us within the call (the feed's round
    // trip is sent after it, and PostgreSQL delivers pending notifications before answering),
    // so the caches may be trusted for `max_silence` from here, not from the call's end.
    let asked_at = Instant::now();
    match feed.next_changes(wait) {
        Ok(changes) => {
            tracker.apply(&changes);
            tracker.mark_alive(asked_at);
            Ok(changes.len())
        }
        Err(e) => {
            tracker.mark_down();
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use domain::CompanyId;
    use ports::{CacheChange, MockChangeFeed, RepoError};
    use uuid::Uuid;

    use super::*;

    #[test]
    fn changes_are_applied_and_the_feed_counts_as_alive() {
        let company = CompanyId(Uuid::from_u128(1));
        let tracker = ChangeTracker::new(true, Duration::from_secs(1));
        let stamp_before = {
            tracker.mark_alive(Instant::now());
            tracker.stamp().unwrap()
        };
        let mut feed = MockChangeFeed::new();
        feed.expect_next_changes()
            .withf(|wait| *wait == Duration::from_millis(200))
            .times(1)
            .returning(move |_| Ok(vec![CacheChange::Company(company)]));

        let applied = follow_changes(&mut feed, &tracker, Duration::from_millis(200)).unwrap();

        assert_eq!(applied, 1);
        assert!(!tracker.is_valid(stamp_before, company));
        assert!(tracker.stamp().is_some());
    }

    #[test]
    fn a_failing_feed_turns_the_caches_off() {
        let tracker = ChangeTracker::new(true, Duration::from_secs(60));
        tracker.mark_alive(Instant::now());
        let mut feed = MockChangeFeed::new();
        feed.expect_next_changes()
            .times(1)
            .returning(|_| Err(RepoError::Unavailable(anyhow::anyhow!("connection lost"))));

        let result = follow_changes(&mut feed, &tracker, Duration::from_millis(200));

        assert!(result.is_err());
        assert_eq!(tracker.stamp(), None);
    }
}
