//! The verdict every cache lookup asks for: has this company changed since the entry was read?

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use domain::CompanyId;
use ports::CacheChange;

/// The tracker's sequence number when a value was about to be read from the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp(u64);

/// Counts applied changes with a sequence number and remembers, per company, the number of its
/// last change. A value read after taking stamp `s` is still valid while its company's last
/// change (and the last "everything changed") is numbered `s` or less: a change numbered above
/// `s` was applied after the stamp, and so may have committed after the read.
///
/// Liveness: the feed reports in ([`ChangeTracker::mark_alive`]) after every successful wait;
/// when it has not for `max_silence` (database down, feed stuck), stamps are refused and
/// entries are invalid, so a revocation is never missed for longer than `max_silence` plus the
/// feed's own delay.
#[derive(Debug)]
pub struct ChangeTracker {
    enabled: bool,
    max_silence: Duration,
    epoch: Instant,
    seq: AtomicU64,
    flushed_at: AtomicU64,
    /// Nanoseconds after `epoch` until which the feed counts as alive; 0 = not yet alive.
    alive_until: AtomicU64,
    last_change: RwLock<HashMap<CompanyId, u64>>,
}

impl ChangeTracker {
    /// A tracker that trusts caches only while a feed reports in at least every `max_silence`.
    /// `enabled = false` turns every cache off.
    pub fn new(enabled: bool, max_silence: Duration) -> Self {
        Self {
            enabled,
            max_silence,
            epoch: Instant::now(),
            seq: AtomicU64::new(0),
            flushed_at: AtomicU64::new(0),
            alive_until: AtomicU64::new(0),
            last_change: RwLock::new(HashMap::new()),
        }
    }

    /// A tracker that turns every cache off (services built without caching).
    pub fn off() -> Arc<Self> {
        Arc::new(Self::new(false, Duration::ZERO))
    }

    /// A stamp for a value about to be read, or `None` when caching is off or the feed is not
    /// alive (then nothing may be cached).
    pub fn stamp(&self) -> Option<Stamp> {
        self.stamp_at(Instant::now())
    }

    pub fn stamp_at(&self, now: Instant) -> Option<Stamp> {
        self.is_alive_at(now)
            .then(|| Stamp(self.seq.load(Ordering::Acquire)))
    }

    /// Whether a value of `company` read after taking `stamp` may still be used.
    pub fn is_valid(&self, stamp: Stamp, company: CompanyId) -> bool {
        self.is_valid_at(stamp, company, Instant::now())
    }

    pub fn is_valid_at(&self, stamp: Stamp, company: CompanyId, now: Instant) -> bool {
        if !self.is_alive_at(now) || self.flushed_at.load(Ordering::Acquire) > stamp.0 {
            return false;
        }
        let last = self
            .last_change
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(&company)
            .copied();
        last.is_none_or(|changed| changed <= stamp.0)
    }

    /// Records committed changes (each gets the next sequence number).
    pub fn apply(&self, changes: &[CacheChange]) {
        if changes.is_empty() {
            return;
        }
        let mut last_change = self
            .last_change
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for change in changes {
            // numbered before it is recorded: a stamp taken in between sees the new number and
            // the change together (its read comes after the commit the feed just told of)
            let n = self.seq.fetch_add(1, Ordering::AcqRel) + 1;
            match change {
                CacheChange::Company(company) => {
                    last_change.insert(*company, n);
                }
                CacheChange::Everything => {
                    last_change.clear();
                    self.flushed_at.store(n, Ordering::Release);
                }
            }
        }
    }

    /// The feed confirmed its connection at `now`.
    pub fn mark_alive(&self, now: Instant) {
        let until = now.saturating_duration_since(self.epoch) + self.max_silence;
        self.alive_until
            .store(until.as_nanos().max(1) as u64, Ordering::Release);
    }

    /// The feed failed: stop trusting caches now (not `max_silence` later).
    pub fn mark_down(&self) {
        self.alive_until.store(0, Ordering::Release);
    }

    pub fn is_alive_at(&self, now: Instant) -> bool {
        if !self.enabled {
            return false;
        }
        let until = self.alive_until.load(Ordering::Acquire);
        until > 0 && (now.saturating_duration_since(self.epoch).as_nanos() as u64) < until
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled
    }
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;

    fn company(n: u128) -> CompanyId {
        CompanyId(Uuid::from_u128(n))
    }

    fn alive() -> (ChangeTracker, Instant) {
        let tracker = ChangeTracker::new(true, Duration::from_secs(1));
        let now = Instant::now();
        tracker.mark_alive(now);
        (tracker, now)
    }

    #[test]
    fn nothing_is_stamped_before_the_feed_reports_in() {
        let tracker = ChangeTracker::new(true, Duration::from_secs(1));

        assert_eq!(tracker.stamp_at(Instant::now()), None);
    }

    #[test]
    fn a_disabled_tracker_stamps_nothing_even_with_a_live_feed() {
        let tracker = ChangeTracker::new(false, Duration::from_secs(1));
        let now = Instant::now();
        tracker.mark_alive(now);

        assert_eq!(tracker.stamp_at(now), None);
    }

    #[test]
    fn an_entry_stays_valid_while_its_company_does_not_change() {
        let (tracker, now) = alive();
        let stamp = tracker.stamp_at(now).unwrap();

        tracker.apply(&[CacheChange::Company(company(2))]);

        assert!(tracker.is_valid_at(stamp, company(1), now));
        assert!(!tracker.is_valid_at(stamp, company(2), now));
    }

    #[test]
    fn a_change_applied_after_the_stamp_invalidates_and_one_before_does_not() {
        let (tracker, now) = alive();
        tracker.apply(&[CacheChange::Company(company(1))]);
        let after_change = tracker.stamp_at(now).unwrap();
        assert!(tracker.is_valid_at(after_change, company(1), now));

        tracker.apply(&[CacheChange::Company(company(1))]);

        assert!(!tracker.is_valid_at(after_change, company(1), now));
        let newest = tracker.stamp_at(now).unwrap();
        assert!(tracker.is_valid_at(newest, company(1), now));
    }

    #[test]
    fn everything_invalidates_every_earlier_stamp() {
        let (tracker, now) = alive();
        let before = tracker.stamp_at(now).unwrap();

        tracker.apply(&[CacheChange::Everything]);

        assert!(!tracker.is_valid_at(before, company(1), now));
        assert!(!tracker.is_valid_at(before, company(9), now));
        let after = tracker.stamp_at(now).unwrap();
        assert!(tracker.is_valid_at(after, company(9), now));
    }

    #[test]
    fn a_silent_feed_invalidates_everything_after_max_silence() {
        let (tracker, now) = alive();
        let stamp = tracker.stamp_at(now).unwrap();
        let later = now + Duration::from_millis(999);
        let too_late = now + Duration::from_secs(1);

        assert!(tracker.is_valid_at(stamp, company(1), later));
        assert!(!tracker.is_valid_at(stamp, company(1), too_late));
        assert_eq!(tracker.stamp_at(too_late), None);

        tracker.mark_alive(too_late);
        assert!(tracker.is_valid_at(stamp, company(1), too_late));
    }

    #[test]
    fn a_failed_feed_invalidates_at_once() {
        let (tracker, now) = alive();
        let stamp = tracker.stamp_at(now).unwrap();

        tracker.mark_down();

        assert!(!tracker.is_valid_at(stamp, company(1), now));
        assert_eq!(tracker.stamp_at(now), None);
    }
}
