//! A bounded concurrent map (quick_cache, weighted by size) whose entries are used only while
//! the [`ChangeTracker`] says their company has not changed since they were read.

use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use domain::CompanyId;
use quick_cache::sync::Cache;
use quick_cache::Weighter;

use super::{ChangeTracker, Stamp};

/// The cost of a cached value against the cache's capacity (bytes, or 1 per entry).
pub trait Weighted {
    fn weight(&self) -> u64;
}

#[derive(Clone)]
struct Entry<V> {
    stamp: Stamp,
    company: CompanyId,
    /// `None`: kept while the tracker allows.
    expires_at: Option<Instant>,
    value: V,
}

#[derive(Clone)]
struct ByWeight;

impl<K, V: Weighted> Weighter<K, Entry<V>> for ByWeight {
    fn weight(&self, _key: &K, entry: &Entry<V>) -> u64 {
        // zero-weight entries would never be evicted
        entry.value.weight().max(1)
    }
}

/// What a cache did since the process started, and holds now (for `/metrics`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups answered from memory.
    pub hits: u64,
    /// Lookups that had to read (nothing cached, or stale, or caching off).
    pub misses: u64,
    pub entries: u64,
    /// Total weight held (bytes for the lists, entries for the keys).
    pub weight: u64,
}

/// Keys `K` to values `V` (cheap to clone: an `Arc` or small) of one company each.
pub struct StampedCache<K, V> {
    tracker: Arc<ChangeTracker>,
    entries: Option<Cache<K, Entry<V>, ByWeight>>,
    /// How long an entry lives at most, whatever the tracker says.
    ttl: Option<Duration>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl<K: Eq + Hash + Clone, V: Clone + Weighted> StampedCache<K, V> {
    /// Holds at most `capacity` of weight (0 = caches nothing); `estimated_items` sizes it.
    pub fn new(tracker: Arc<ChangeTracker>, capacity: u64, estimated_items: usize) -> Self {
        let entries = (capacity > 0 && tracker.is_enabled())
            .then(|| Cache::with_weighter(estimated_items.max(1), capacity, ByWeight));
        Self {
            tracker,
            entries,
            ttl: None,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// Entries expire `ttl` after they are cached even when the tracker still trusts them: a
    /// bound that does not depend on the change feed at all.
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// The value cached under `key` if it is still valid; a stale one is dropped.
    pub fn get(&self, key: &K) -> Option<V> {
        let found = self.lookup(key);
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    fn lookup(&self, key: &K) -> Option<V> {
        let entries = self.entries.as_ref()?;
        let entry = entries.get(key)?;
        let expired = entry.expires_at.is_some_and(|at| Instant::now() >= at);
        if !expired && self.tracker.is_valid(entry.stamp, entry.company) {
            return Some(entry.value);
        }
        entries.remove(key);
        None
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            entries: self.len() as u64,
            weight: self.weight(),
        }
    }

    /// A stamp to take before reading what will be cached; `None`: do not cache it.
    pub fn stamp(&self) -> Option<Stamp> {
        self.entries.as_ref()?;
        self.tracker.stamp()
    }

    /// Caches `value` of `company`, read after taking `stamp`, unless it is already stale.
    pub fn insert(&self, key: K, stamp: Stamp, company: CompanyId, value: V) {
        let Some(entries) = self.entries.as_ref() else {
            return;
        };
        if self.tracker.is_valid(stamp, company) {
            entries.insert(
                key,
                Entry {
                    stamp,
                    company,
                    // from before the insert, not the read: at worst a few ms early
                    expires_at: self.ttl.map(|ttl| Instant::now() + ttl),
                    value,
                },
            );
        }
    }

    /// Runs `read` (the database) with a stamp taken before it, and caches under `key` what
    /// `keep` makes of its answer (the company and value; `None`: nothing to cache). A change
    /// committed while `read` runs keeps its answer out of the cache.
    pub fn read_through<T, E>(
        &self,
        key: K,
        read: impl FnOnce() -> Result<T, E>,
        keep: impl FnOnce(&T) -> Option<(CompanyId, V)>,
    ) -> Result<T, E> {
        let stamp = self.stamp();
        let answer = read()?;
        if let Some(stamp) = stamp {
            if let Some((company, value)) = keep(&answer) {
                self.insert(key, stamp, company, value);
            }
        }
        Ok(answer)
    }

    /// Drops the entry under `key`.
    pub fn remove(&self, key: &K) {
        if let Some(entries) = self.entries.as_ref() {
            entries.remove(key);
        }
    }

    /// Entries held now (valid or not yet found stale).
    pub fn len(&self) -> usize {
        self.entries.as_ref().map_or(0, Cache::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Total weight held now.
    pub fn weight(&self) -> u64 {
        self.entries.as_ref().map_or(0, Cache::weight)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use ports::CacheChange;
    use uuid::Uuid;

    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct Blob(usize);

    impl Weighted for Blob {
        fn weight(&self) -> u64 {
            self.0 as u64
        }
    }

    fn company(n: u128) -> CompanyId {
        CompanyId(Uuid::from_u128(n))
    }

    fn live_tracker() -> Arc<ChangeTracker> {
        let tracker = Arc::new(ChangeTracker::new(true, Duration::from_secs(60)));
        tracker.mark_alive(Instant::now());
        tracker
    }

    #[test]
    fn a_value_is_served_until_its_company_changes() {
        let tracker = live_tracker();
        let cache = StampedCache::new(tracker.clone(), 1_000, 10);
        let stamp = cache.stamp().unwrap();
        cache.insert("a", stamp, company(1), Blob(10));
        assert_eq!(cache.get(&"a"), Some(Blob(10)));

        tracker.apply(&[CacheChange::Company(company(1))]);

        assert_eq!(cache.get(&"a"), None);
        assert!(cache.is_empty(), "the stale entry is dropped");
    }

    #[test]
    fn a_value_read_before_a_change_is_not_cached_after_it() {
        let tracker = live_tracker();
        let cache = StampedCache::new(tracker.clone(), 1_000, 10);
        let stamp = cache.stamp().unwrap();

        // the change is told while the value is being read
        tracker.apply(&[CacheChange::Company(company(1))]);
        cache.insert("a", stamp, company(1), Blob(10));

        assert_eq!(cache.get(&"a"), None);
        assert!(cache.is_empty());
    }

    #[test]
    fn nothing_is_cached_without_a_live_feed() {
        let tracker = Arc::new(ChangeTracker::new(true, Duration::from_secs(60)));
        let cache: StampedCache<&str, Blob> = StampedCache::new(tracker, 1_000, 10);

        assert_eq!(cache.stamp(), None);
    }

    #[test]
    fn a_value_expires_after_its_ttl_though_its_company_never_changes() {
        let cache =
            StampedCache::new(live_tracker(), 1_000, 10).with_ttl(Duration::from_millis(50));
        let stamp = cache.stamp().unwrap();
        cache.insert("a", stamp, company(1), Blob(10));
        assert_eq!(cache.get(&"a"), Some(Blob(10)));

        std::thread::sleep(Duration::from_millis(60));

        assert_eq!(cache.get(&"a"), None);
        assert!(cache.is_empty(), "the expired entry is dropped");
    }

    #[test]
    fn a_zero_capacity_caches_nothing() {
        let cache: StampedCache<&str, Blob> = StampedCache::new(live_tracker(), 0, 10);

        assert_eq!(cache.stamp(), None);
        assert_eq!(cache.get(&"a"), None);
    }

    #[test]
    fn the_capacity_bounds_the_total_weight() {
        let cache = StampedCache::new(live_tracker(), 1_000, 10);
        for i in 0..50u128 {
            let stamp = cache.stamp().unwrap();
            cache.insert(i, stamp, company(i), Blob(100));
        }

        assert!(cache.weight() <= 1_000, "{}", cache.weight());
        assert!(cache.len() <= 10, "{}", cache.len());
    }
}
