//! `GET /api/casos-de-uso` answered from memory: each company's list is kept as the bytes of its
//! answer (the envelope) with their `ETag`, an HTTP concern, in a [`StampedCache`] (valid while
//! the company's use cases do not change, see `application::cache`).

use std::sync::Arc;

use application::cache::{CacheStats, ChangeTracker, StampedCache, Weighted};
use domain::CompanyId;
use uuid::Uuid;

use crate::error::ApiError;

/// A company's use-case list as answered (the whole response body), with the entity tag of
/// those bytes. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedUseCases {
    pub body: Arc<[u8]>,
    /// `"` + 32 hex digits of the body's SHA-256 + `"`: the same bytes give the same tag on
    /// every instance.
    pub etag: Arc<str>,
}

impl RenderedUseCases {
    pub fn new(body: Vec<u8>) -> Self {
        let etag = crate::conditional::strong_etag(&body);
        Self {
            body: body.into(),
            etag: etag.into(),
        }
    }
}

impl Weighted for RenderedUseCases {
    /// Bytes held (body, tag, and the entry's own size).
    fn weight(&self) -> u64 {
        (self.body.len() + self.etag.len() + 128) as u64
    }
}

/// (company, link filter) -> rendered list.
#[derive(Clone)]
pub struct UseCaseLists {
    rendered: Arc<StampedCache<(CompanyId, Option<Uuid>), RenderedUseCases>>,
}

impl UseCaseLists {
    /// Keeps up to `capacity_bytes` of rendered lists while `tracker` allows (a synchronization
    /// that changes a company's use cases invalidates its lists); 0 keeps nothing.
    pub fn new(tracker: Arc<ChangeTracker>, capacity_bytes: u64) -> Self {
        // ~30 KB a list of 100 use cases
        let estimated = usize::try_from(capacity_bytes / 30_000).unwrap_or(1024);
        Self {
            rendered: Arc::new(StampedCache::new(tracker, capacity_bytes, estimated)),
        }
    }

    /// The cached rendering, if valid; never reads the database.
    pub fn cached(&self, company: CompanyId, link_id: Option<Uuid>) -> Option<RenderedUseCases> {
        self.rendered.get(&(company, link_id))
    }

    /// The list from the cache when it holds a valid rendering, else `render`ed (read and
    /// serialized) and cached, unless the company changed while it was read.
    pub fn rendered(
        &self,
        company: CompanyId,
        link_id: Option<Uuid>,
        render: impl FnOnce() -> Result<Vec<u8>, ApiError>,
    ) -> Result<RenderedUseCases, ApiError> {
        if let Some(hit) = self.cached(company, link_id) {
            return Ok(hit);
        }
        self.rendered.read_through(
            (company, link_id),
            || Ok(RenderedUseCases::new(render()?)),
            |rendered| Some((company, rendered.clone())),
        )
    }

    /// Hits, misses and size of the cache.
    pub fn stats(&self) -> CacheStats {
        self.rendered.stats()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn live_tracker() -> Arc<ChangeTracker> {
        let tracker = Arc::new(ChangeTracker::new(true, std::time::Duration::from_secs(60)));
        tracker.mark_alive(std::time::Instant::now());
        tracker
    }

    fn company() -> CompanyId {
        CompanyId(Uuid::from_u128(1))
    }

    #[test]
    fn a_rendered_list_is_read_once_and_served_from_memory_until_the_company_changes() {
        let tracker = live_tracker();
        let lists = UseCaseLists::new(tracker.clone(), 1 << 20);
        let reads = Cell::new(0);
        let read = |body: &'static [u8]| {
            reads.set(reads.get() + 1);
            Ok(body.to_vec())
        };

        let first = lists.rendered(company(), None, || read(b"A")).unwrap();
        let again = lists.rendered(company(), None, || read(b"never")).unwrap();
        assert_eq!(&*first.body, b"A");
        assert_eq!(again, first);
        assert_eq!(reads.get(), 1, "the second answer came from memory");
        assert_eq!(lists.cached(company(), None), Some(first.clone()));

        tracker.apply(&[ports::CacheChange::Company(company())]);

        assert_eq!(lists.cached(company(), None), None);
        let changed = lists.rendered(company(), None, || read(b"A,B")).unwrap();
        assert_eq!(&*changed.body, b"A,B");
        assert_eq!(reads.get(), 2);
        assert_ne!(changed.etag, first.etag, "new bytes, new tag");
    }

    #[test]
    fn each_link_filter_is_its_own_entry_and_the_tag_depends_only_on_the_bytes() {
        let lists = UseCaseLists::new(live_tracker(), 1 << 20);
        let link = Uuid::new_v4();

        let all = lists
            .rendered(company(), None, || Ok(b"A".to_vec()))
            .unwrap();
        assert_eq!(lists.cached(company(), Some(link)), None, "another entry");
        let of_link = lists
            .rendered(company(), Some(link), || Ok(b"A".to_vec()))
            .unwrap();

        assert_eq!(all.etag, of_link.etag);
        assert_eq!(all.etag, RenderedUseCases::new(b"A".to_vec()).etag);
        assert!(all.etag.starts_with('"') && all.etag.ends_with('"') && all.etag.len() == 34);
    }

    #[test]
    fn a_failed_read_caches_nothing() {
        let lists = UseCaseLists::new(live_tracker(), 1 << 20);

        let failed = lists.rendered(company(), None, || {
            Err(ApiError::Unavailable(anyhow::anyhow!("pool timeout")))
        });

        assert!(matches!(failed, Err(ApiError::Unavailable(_))));
        assert_eq!(lists.cached(company(), None), None);
    }

    #[test]
    fn without_capacity_nothing_is_kept() {
        let lists = UseCaseLists::new(live_tracker(), 0);
        lists
            .rendered(company(), None, || Ok(b"A".to_vec()))
            .unwrap();
        assert_eq!(lists.cached(company(), None), None);
    }
}
