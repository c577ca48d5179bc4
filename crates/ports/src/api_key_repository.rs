use chrono::{DateTime, Utc};
use domain::{Company, CompanyId};
use uuid::Uuid;

use crate::RepoError;

/// A stored API key: only its SHA-256 hash (hex) is kept, never the key itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKeyRecord {
    pub id: Uuid,
    pub empresa_id: CompanyId,
    /// Lower-case hex SHA-256 of the whole key.
    pub hash: String,
    /// The first characters of the key, enough for an operator to recognize it.
    pub prefixo: String,
    pub criado_em: DateTime<Utc>,
}

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait ApiKeyRepository: Send + Sync {
    /// Stores a key for an existing company.
    fn insert(&self, key: &ApiKeyRecord) -> Result<(), RepoError>;

    /// The company owning the non-revoked key with this hash; `None` for unknown or revoked keys.
    fn find_company_by_hash(&self, hash: &str) -> Result<Option<Company>, RepoError>;
}
