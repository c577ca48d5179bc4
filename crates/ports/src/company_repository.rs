use chrono::{DateTime, Utc};
use domain::{Company, CompanyId, ControllerProfile};

use crate::RepoError;

#[derive(Debug, thiserror::Error)]
pub enum CreateCompanyError {
    /// Another company already has this CNPJ.
    #[error("a company with this CNPJ already exists")]
    DuplicateCnpj,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait CompanyRepository: Send + Sync {
    /// Stores a new company. `DuplicateCnpj` when the CNPJ is taken (unique index).
    fn create(&self, company: &Company) -> Result<(), CreateCompanyError>;

    fn get(&self, id: CompanyId) -> Result<Option<Company>, RepoError>;

    /// Every company, oldest first.
    fn list(&self) -> Result<Vec<Company>, RepoError>;

    /// Claims one company whose scheduled synchronization is due at `now` (longest due first)
    /// and makes it due again at `next`, within that company's row: however many processes run
    /// the schedule, each company is claimed once until `next`. `None` when no company is due
    /// (or the due ones are being claimed by other processes).
    fn claim_due_sync(
        &self,
        now: DateTime<Utc>,
        next: DateTime<Utc>,
    ) -> Result<Option<Company>, RepoError>;

    /// The company's controller profile (docs/records.md), `None` until one is set.
    fn controller_profile(&self, id: CompanyId) -> Result<Option<ControllerProfile>, RepoError>;

    /// Sets the company's controller profile (the owner's connection: the runtime role cannot
    /// write companies). `false` when there is no such company.
    fn set_controller_profile(
        &self,
        id: CompanyId,
        profile: &ControllerProfile,
    ) -> Result<bool, RepoError>;
}
