use chrono::{DateTime, Utc};
use domain::{CompanyId, WebhookUrl};
use uuid::Uuid;

use crate::RepoError;

/// Every operation is scoped by the company.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait WebhookUrlRepository: Send + Sync {
    fn insert(&self, webhook: &WebhookUrl) -> Result<(), RepoError>;

    /// The company's webhook URLs not removed, oldest first.
    fn list_active(&self, empresa: CompanyId) -> Result<Vec<WebhookUrl>, RepoError>;

    /// Sets the removal time of the company's non-removed URL `id`. `false` (and nothing
    /// changed) when there is no such URL for this company, or it was already removed.
    fn soft_delete(
        &self,
        empresa: CompanyId,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<bool, RepoError>;
}
