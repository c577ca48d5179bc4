//! Hashes of API keys the database does not know: a flood of made-up (but well-formed) keys,
//! repeated, is refused from memory instead of costing a pool connection and a query each.
//!
//! An entry is believed for at most its time to live, and only while the change feed is alive
//! and has told no change since it was written: issuing a key notifies its company (migration
//! `notify_api_key_issued`), so a key issued anywhere is never refused here because of an
//! earlier miss.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quick_cache::sync::Cache;

use super::{CacheStats, ChangeTracker, Stamp};

pub struct UnknownKeys {
    tracker: Arc<ChangeTracker>,
    ttl: Duration,
    entries: Option<Cache<String, (Instant, Stamp)>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl UnknownKeys {
    /// Up to `capacity` hashes, each believed for `ttl` (0 capacity or ttl: remembers nothing).
    pub fn new(tracker: Arc<ChangeTracker>, capacity: u64, ttl: Duration) -> Self {
        let capacity = usize::try_from(capacity).unwrap_or(usize::MAX);
        let entries =
            (capacity > 0 && !ttl.is_zero() && tracker.is_enabled()).then(|| Cache::new(capacity));
        Self {
            tracker,
            ttl,
            entries,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// Remembers nothing.
    pub fn off() -> Self {
        Self::new(ChangeTracker::off(), 0, Duration::ZERO)
    }

    /// Whether `hash` is known to be unknown now.
    pub fn contains(&self, hash: &str) -> bool {
        let found = self.lookup(hash, Instant::now());
        let counter = if found { &self.hits } else { &self.misses };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    fn lookup(&self, hash: &str, now: Instant) -> bool {
        let Some(entries) = self.entries.as_ref() else {
            return false;
        };
        let Some((at, stamp)) = entries.get(hash) else {
            return false;
        };
        if now.saturating_duration_since(at) < self.ttl && self.tracker.stamp() == Some(stamp) {
            return true;
        }
        entries.remove(hash);
        false
    }

    /// A stamp to take before asking the database (`None`: do not remember the answer).
    pub fn stamp(&self) -> Option<Stamp> {
        self.entries.as_ref()?;
        self.tracker.stamp()
    }

    /// Remembers that the database did not know `hash` when asked after `stamp`.
    pub fn insert(&self, hash: String, stamp: Stamp) {
        if let Some(entries) = self.entries.as_ref() {
            if self.tracker.stamp() == Some(stamp) {
                entries.insert(hash, (Instant::now(), stamp));
            }
        }
    }

    pub fn stats(&self) -> CacheStats {
        let entries = self.entries.as_ref().map_or(0, |e| e.len() as u64);
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            entries,
            weight: entries,
        }
    }
}

#[cfg(test)]
mod tests {
    use domain::CompanyId;
    use ports::CacheChange;
    use uuid::Uuid;

    use super::*;

    fn live_tracker() -> Arc<ChangeTracker> {
        let tracker = Arc::new(ChangeTracker::new(true, Duration::from_secs(60)));
        tracker.mark_alive(Instant::now());
        tracker
    }

    #[test]
    fn an_unknown_key_is_remembered_until_its_time_to_live_ends() {
        let unknown = UnknownKeys::new(live_tracker(), 10, Duration::from_secs(5));
        let stamp = unknown.stamp().unwrap();
        unknown.insert("h".into(), stamp);
        assert!(unknown.contains("h"));
        assert!(!unknown.contains("other"));
        assert!(!unknown.lookup("h", Instant::now() + Duration::from_secs(6)));
    }

    #[test]
    fn any_change_told_by_the_feed_forgets_every_unknown_key() {
        let tracker = live_tracker();
        let unknown = UnknownKeys::new(tracker.clone(), 10, Duration::from_secs(60));
        unknown.insert("h".into(), unknown.stamp().unwrap());

        // a key issued for any company notifies that company
        tracker.apply(&[CacheChange::Company(CompanyId(Uuid::from_u128(1)))]);

        assert!(!unknown.contains("h"));
    }

    #[test]
    fn an_answer_read_across_a_change_is_not_remembered() {
        let tracker = live_tracker();
        let unknown = UnknownKeys::new(tracker.clone(), 10, Duration::from_secs(60));
        let stamp = unknown.stamp().unwrap();
        tracker.apply(&[CacheChange::Everything]);
        unknown.insert("h".into(), stamp);
        assert!(!unknown.contains("h"));
    }

    #[test]
    fn nothing_is_remembered_without_a_live_feed_and_the_capacity_bounds_it() {
        let silent = Arc::new(ChangeTracker::new(true, Duration::from_secs(60)));
        assert_eq!(
            UnknownKeys::new(silent, 10, Duration::from_secs(5)).stamp(),
            None
        );

        let unknown = UnknownKeys::new(live_tracker(), 100, Duration::from_secs(60));
        for i in 0..1_000 {
            unknown.insert(format!("h{i}"), unknown.stamp().unwrap());
        }
        assert!(unknown.stats().entries <= 100, "{:?}", unknown.stats());
    }
}
