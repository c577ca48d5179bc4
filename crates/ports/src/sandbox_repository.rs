//! The sandbox companies (docs/decisions.md, "The sandbox"): a real company's sandbox is a
//! company of its own, linked to it, whose PGCC is simulated in process and whose data is
//! purged after `sandbox.retention_days`.

use chrono::{DateTime, Utc};
use domain::{Cnpj, Company, CompanyId};

use crate::{CreateCompanyError, RepoError};

/// What one purge call of one sandbox company deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SandboxPurged {
    /// Consent requests (with their history and status schedule).
    pub requests: u32,
    /// Webhook events (with their deliveries and attempts).
    pub events: u32,
    /// Records of reads of personal data.
    pub accesses: u32,
}

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait SandboxRepository: Send + Sync {
    /// The sandbox of the real company `real`, if it has one.
    fn sandbox_of(&self, real: CompanyId) -> Result<Option<Company>, RepoError>;

    /// Stores `sandbox` as the sandbox of `real`; when another call stored one first (one per
    /// real company), that one is answered. `DuplicateCnpj` when the sandbox's CNPJ is taken.
    fn create_sandbox(
        &self,
        real: CompanyId,
        sandbox: &Company,
    ) -> Result<Company, CreateCompanyError>;

    /// The real company `id` is the sandbox of, or `None` when `id` is a real company (or none).
    fn real_company_of(&self, id: CompanyId) -> Result<Option<CompanyId>, RepoError>;

    /// Whether the company of this CNPJ is a sandbox (what routes its PGCC calls).
    fn is_sandbox_cnpj(&self, cnpj: &Cnpj) -> Result<bool, RepoError>;

    /// Up to `limit` sandbox companies after `after` (all when `None`), in id order.
    fn sandboxes_after(
        &self,
        after: Option<CompanyId>,
        limit: u32,
    ) -> Result<Vec<CompanyId>, RepoError>;

    /// Deletes up to `limit` of each kind of the sandbox `sandbox`'s data from before `before`
    /// (requests by creation, events by creation once no delivery of theirs is pending, reads
    /// of personal data), each statement scoped to that company. Does nothing to a real company.
    fn purge_sandbox(
        &self,
        sandbox: CompanyId,
        before: DateTime<Utc>,
        limit: u32,
    ) -> Result<SandboxPurged, RepoError>;
}
