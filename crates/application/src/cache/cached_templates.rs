//! A [`UseCaseRepository`] that answers `find_by_template` from memory while the company's use
//! cases have not changed: a creation's template check without a database round trip.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use domain::{CompanyId, PgccUseCase, SyncCounts, UseCase};
use ports::{RepoError, UseCaseRepository};
use uuid::Uuid;

use super::{ChangeTracker, StampedCache, Weighted};

impl Weighted for Arc<UseCase> {
    /// Bytes held, roughly: the struct, its strings, the key and the map's own share.
    fn weight(&self) -> u64 {
        let strings = self.title.len()
            + self
                .pgcc_provider_template_id
                .as_ref()
                .map_or(0, String::len);
        (256 + 2 * strings) as u64
    }
}

/// Found use cases by (company, template); a template not found is not cached (it is looked up
/// again, so a sync that adds it is seen at once).
pub struct CachedTemplates {
    inner: Arc<dyn UseCaseRepository>,
    found: StampedCache<(CompanyId, String), Arc<UseCase>>,
}

impl CachedTemplates {
    /// Keeps up to `capacity_bytes` of use cases while `tracker` allows.
    pub fn new(
        inner: Arc<dyn UseCaseRepository>,
        tracker: Arc<ChangeTracker>,
        capacity_bytes: u64,
    ) -> Self {
        let estimated = usize::try_from(capacity_bytes / 300).unwrap_or(100_000);
        Self {
            inner,
            found: StampedCache::new(tracker, capacity_bytes, estimated),
        }
    }
}

impl UseCaseRepository for CachedTemplates {
    fn list(&self, company: CompanyId, link_id: Option<Uuid>) -> Result<Vec<UseCase>, RepoError> {
        self.inner.list(company, link_id)
    }

    fn find_by_template(
        &self,
        company: CompanyId,
        template_id: &str,
    ) -> Result<Option<UseCase>, RepoError> {
        let key = (company, template_id.to_owned());
        if let Some(hit) = self.found.get(&key) {
            return Ok(Some((*hit).clone()));
        }
        self.found.read_through(
            key,
            || self.inner.find_by_template(company, template_id),
            |found| {
                found
                    .as_ref()
                    .map(|use_case| (company, Arc::new(use_case.clone())))
            },
        )
    }

    fn apply_sync(
        &self,
        company: CompanyId,
        items: &[PgccUseCase],
        now: DateTime<Utc>,
    ) -> Result<SyncCounts, RepoError> {
        self.inner.apply_sync(company, items, now)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use ports::{CacheChange, MockUseCaseRepository};

    use super::*;
    use crate::test_support::{company, now};

    fn use_case() -> UseCase {
        UseCase {
            id: Uuid::from_u128(5),
            company_id: company().id,
            link_id: Some(Uuid::from_u128(7)),
            title: "Marketing".to_owned(),
            pgcc_provider_template_id: Some("tpl-1".to_owned()),
            added_at: now(),
            last_synced_at: Some(now()),
        }
    }

    #[test]
    fn a_found_template_is_read_once_until_the_company_changes_and_a_missing_one_every_time() {
        let tracker = Arc::new(ChangeTracker::new(true, Duration::from_secs(60)));
        tracker.mark_alive(Instant::now());
        let mut inner = MockUseCaseRepository::new();
        inner
            .expect_find_by_template()
            .withf(|_, t| t == "tpl-1")
            .times(2)
            .returning(|_, _| Ok(Some(use_case())));
        inner
            .expect_find_by_template()
            .withf(|_, t| t == "tpl-none")
            .times(2)
            .returning(|_, _| Ok(None));
        let cached = CachedTemplates::new(Arc::new(inner), tracker.clone(), 1 << 20);
        let id = company().id;

        for _ in 0..3 {
            assert_eq!(
                cached.find_by_template(id, "tpl-1").unwrap(),
                Some(use_case())
            );
        }
        assert_eq!(cached.find_by_template(id, "tpl-none").unwrap(), None);
        assert_eq!(cached.find_by_template(id, "tpl-none").unwrap(), None);

        tracker.apply(&[CacheChange::Company(id)]);
        assert_eq!(
            cached.find_by_template(id, "tpl-1").unwrap(),
            Some(use_case())
        );
    }
}
