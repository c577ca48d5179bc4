//! Listing a company's use cases from our synchronized copy (never from the PGCC).

use std::sync::Arc;

use domain::{Company, CompanyId, UseCase};
use ports::{RepoError, UseCaseRepository};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::cache::{CacheStats, ChangeTracker, StampedCache, Weighted};

/// A company's use-case list as the HTTP layer renders it (the whole response body), with the
/// entity tag of those bytes. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedUseCases {
    pub body: Arc<[u8]>,
    /// `"` + 32 hex digits of the body's SHA-256 + `"`: the same bytes give the same tag on
    /// every instance.
    pub etag: Arc<str>,
}

impl RenderedUseCases {
    pub fn new(body: Vec<u8>) -> Self {
        let digest = Sha256::digest(&body);
        let etag = format!("\"{}\"", hex::encode(&digest[..16]));
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
type RenderedCache = StampedCache<(CompanyId, Option<Uuid>), RenderedUseCases>;

#[derive(Clone)]
pub struct ListUseCases {
    use_cases: Arc<dyn UseCaseRepository>,
    rendered: Arc<RenderedCache>,
}

impl ListUseCases {
    /// A service that caches nothing.
    pub fn new(use_cases: Arc<dyn UseCaseRepository>) -> Self {
        Self::cached(use_cases, ChangeTracker::off(), 0)
    }

    /// A service that keeps up to `capacity_bytes` of rendered lists while `tracker` allows
    /// (a synchronization that changes a company's use cases invalidates its lists).
    pub fn cached(
        use_cases: Arc<dyn UseCaseRepository>,
        tracker: Arc<ChangeTracker>,
        capacity_bytes: u64,
    ) -> Self {
        // ~30 KB a list of 100 use cases
        let estimated = usize::try_from(capacity_bytes / 30_000).unwrap_or(1024);
        Self {
            use_cases,
            rendered: Arc::new(StampedCache::new(tracker, capacity_bytes, estimated)),
        }
    }

    /// The company's non-removed use cases, optionally only those of PGCC link `vinculo_id`,
    /// in the repository's stable order.
    pub fn execute(
        &self,
        empresa: &Company,
        vinculo_id: Option<Uuid>,
    ) -> Result<Vec<UseCase>, RepoError> {
        self.use_cases.list(empresa.id, vinculo_id)
    }

    /// The list rendered by `render`, from the cache when it holds a valid rendering, else read,
    /// rendered and cached.
    pub fn rendered<E: From<RepoError>>(
        &self,
        empresa: &Company,
        vinculo_id: Option<Uuid>,
        render: impl FnOnce(Vec<UseCase>) -> Result<Vec<u8>, E>,
    ) -> Result<RenderedUseCases, E> {
        if let Some(hit) = self.cached_rendering(empresa.id, vinculo_id) {
            return Ok(hit);
        }
        self.rendered.read_through(
            (empresa.id, vinculo_id),
            || {
                Ok(RenderedUseCases::new(render(
                    self.execute(empresa, vinculo_id)?,
                )?))
            },
            |rendered| Some((empresa.id, rendered.clone())),
        )
    }

    /// Hits, misses and size of the rendered-list cache.
    pub fn cache_stats(&self) -> CacheStats {
        self.rendered.stats()
    }

    /// The cached rendering, if valid; never reads the database.
    pub fn cached_rendering(
        &self,
        empresa: CompanyId,
        vinculo_id: Option<Uuid>,
    ) -> Option<RenderedUseCases> {
        self.rendered.get(&(empresa, vinculo_id))
    }
}

#[cfg(test)]
mod tests {
    use ports::MockUseCaseRepository;

    use super::*;
    use crate::test_support::{company, now};

    fn use_case(titulo: &str, vinculo_id: Uuid) -> UseCase {
        UseCase {
            id: Uuid::new_v4(),
            empresa_id: company().id,
            vinculo_id: Some(vinculo_id),
            titulo: titulo.to_owned(),
            pgcc_provider_template_id: Some(format!("tpl-{titulo}")),
            data_inclusao: now(),
            data_ultima_sincronizacao_pgcc: Some(now()),
        }
    }

    #[test]
    fn listing_returns_the_companys_use_cases_in_the_repository_order() {
        let vinculo = Uuid::new_v4();
        let expected = vec![use_case("A", vinculo), use_case("B", vinculo)];
        let answer = expected.clone();
        let empresa_id = company().id;
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_list()
            .withf(move |empresa, vinculo| *empresa == empresa_id && vinculo.is_none())
            .times(1)
            .returning(move |_, _| Ok(answer.clone()));
        use_cases.expect_apply_sync().times(0);

        let listed = ListUseCases::new(Arc::new(use_cases))
            .execute(&company(), None)
            .unwrap();

        assert_eq!(listed, expected);
    }

    #[test]
    fn listing_by_link_passes_the_link_to_the_repository() {
        let vinculo = Uuid::new_v4();
        let expected = vec![use_case("A", vinculo)];
        let answer = expected.clone();
        let empresa_id = company().id;
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_list()
            .withf(move |empresa, v| *empresa == empresa_id && *v == Some(vinculo))
            .times(1)
            .returning(move |_, _| Ok(answer.clone()));

        let listed = ListUseCases::new(Arc::new(use_cases))
            .execute(&company(), Some(vinculo))
            .unwrap();

        assert_eq!(listed, expected);
    }

    #[test]
    fn a_company_without_use_cases_gets_an_empty_list() {
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_list()
            .times(1)
            .returning(|_, _| Ok(Vec::new()));

        let listed = ListUseCases::new(Arc::new(use_cases))
            .execute(&company(), None)
            .unwrap();

        assert!(listed.is_empty());
    }

    #[test]
    fn a_failing_repository_is_a_repository_error() {
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_list()
            .times(1)
            .returning(|_, _| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));

        let result = ListUseCases::new(Arc::new(use_cases)).execute(&company(), None);

        assert!(
            matches!(result, Err(RepoError::Unavailable(_))),
            "{result:?}"
        );
    }

    fn live_tracker() -> Arc<ChangeTracker> {
        let tracker = Arc::new(ChangeTracker::new(true, std::time::Duration::from_secs(60)));
        tracker.mark_alive(std::time::Instant::now());
        tracker
    }

    fn render_titles(items: Vec<UseCase>) -> Result<Vec<u8>, RepoError> {
        Ok(items
            .iter()
            .map(|u| u.titulo.as_str())
            .collect::<Vec<_>>()
            .join(",")
            .into_bytes())
    }

    #[test]
    fn a_rendered_list_is_read_once_and_served_from_memory_until_the_company_changes() {
        let tracker = live_tracker();
        let vinculo = Uuid::new_v4();
        let mut use_cases = MockUseCaseRepository::new();
        let mut reads = mockall::Sequence::new();
        use_cases
            .expect_list()
            .times(1)
            .in_sequence(&mut reads)
            .returning(move |_, _| Ok(vec![use_case("A", vinculo)]));
        use_cases
            .expect_list()
            .times(1)
            .in_sequence(&mut reads)
            .returning(move |_, _| Ok(vec![use_case("A", vinculo), use_case("B", vinculo)]));
        let service = ListUseCases::cached(Arc::new(use_cases), tracker.clone(), 1 << 20);

        let first = service.rendered(&company(), None, render_titles).unwrap();
        let again = service.rendered(&company(), None, render_titles).unwrap();
        assert_eq!(&*first.body, b"A");
        assert_eq!(again, first);
        assert_eq!(
            service.cached_rendering(company().id, None),
            Some(first.clone())
        );

        tracker.apply(&[ports::CacheChange::Company(company().id)]);

        assert_eq!(service.cached_rendering(company().id, None), None);
        let changed = service.rendered(&company(), None, render_titles).unwrap();
        assert_eq!(&*changed.body, b"A,B");
        assert_ne!(changed.etag, first.etag, "new bytes, new tag");
    }

    #[test]
    fn each_link_filter_is_its_own_entry_and_the_tag_depends_only_on_the_bytes() {
        let vinculo = Uuid::new_v4();
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_list()
            .times(2)
            .returning(move |_, _| Ok(vec![use_case("A", vinculo)]));
        let service = ListUseCases::cached(Arc::new(use_cases), live_tracker(), 1 << 20);

        let all = service.rendered(&company(), None, render_titles).unwrap();
        let of_link = service
            .rendered(&company(), Some(vinculo), render_titles)
            .unwrap();

        assert_eq!(all.etag, of_link.etag);
        assert_eq!(all.etag, RenderedUseCases::new(b"A".to_vec()).etag);
        assert!(all.etag.starts_with('"') && all.etag.ends_with('"') && all.etag.len() == 34);
    }
}
