use domain::{Company, CompanyId};

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

    /// Every company, oldest first (for the scheduled synchronization).
    fn list(&self) -> Result<Vec<Company>, RepoError>;
}
