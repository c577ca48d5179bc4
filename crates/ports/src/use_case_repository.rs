use chrono::{DateTime, Utc};
use domain::{CompanyId, PgccUseCase, SyncCounts, UseCase, UseCaseAnnotation, UseCaseVersion};
use uuid::Uuid;

use crate::RepoError;

/// Every operation is scoped by the company: no query can reach another company's rows.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait UseCaseRepository: Send + Sync {
    /// The company's use cases not marked removed, optionally only those of one PGCC link,
    /// ordered by title then id (a stable order for clients).
    fn list(&self, company: CompanyId, link_id: Option<Uuid>) -> Result<Vec<UseCase>, RepoError>;

    /// The company's non-removed use case with this PGCC template id.
    fn find_by_template(
        &self,
        company: CompanyId,
        template_id: &str,
    ) -> Result<Option<UseCase>, RepoError>;

    /// Makes the stored copy equal to `items` in one transaction: inserts new templates, updates
    /// title/link/sync time of known ones (un-removing any that come back), marks the company's
    /// other use cases removed. Upsert key: (company, template id).
    ///
    /// Outbox: in the same transaction, writes `WebhookEvent::sync(empresa, counts, now)` and one pending delivery per webhook URL of
    /// the company that is neither removed nor disabled (crates/ports/src/webhook_delivery_repository.rs).
    ///
    /// Versions (docs/decisions.md, "Use-case versions"): a template whose fingerprint (SHA-256
    /// of `PgccUseCase::purpose_text`) differs from the stored one gets the next version, stored
    /// with its fields; for each, `casos-de-uso.alterado` is written with the company's `ativo`
    /// and `pendente` requests of that use case under older versions.
    fn apply_sync(
        &self,
        company: CompanyId,
        items: &[PgccUseCase],
        now: DateTime<Utc>,
    ) -> Result<SyncCounts, RepoError>;

    /// The versions of the company's use case `use_case_id` (our id, removed or not), oldest
    /// first; `None` when the company has no such use case.
    fn versions(
        &self,
        company: CompanyId,
        use_case_id: Uuid,
    ) -> Result<Option<Vec<UseCaseVersion>>, RepoError>;

    /// The company's annotation of its use case `use_case_id` (our id), `None` when it has none
    /// (or there is no such use case).
    fn annotation(
        &self,
        company: CompanyId,
        use_case_id: Uuid,
    ) -> Result<Option<UseCaseAnnotation>, RepoError>;

    /// Stores (or replaces) the annotation of the company's use case `use_case_id` (removed or
    /// not); `false`, storing nothing, when the company has no such use case.
    fn annotate(
        &self,
        company: CompanyId,
        use_case_id: Uuid,
        annotation: &UseCaseAnnotation,
    ) -> Result<bool, RepoError>;
}
