use chrono::{DateTime, Utc};
use domain::{Company, CompanyId, Scopes};
use uuid::Uuid;

use crate::RepoError;

/// A key to store: only its SHA-256 hash (hex) is kept, never the key itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKeyRecord {
    pub id: Uuid,
    pub company_id: CompanyId,
    /// Lower-case hex SHA-256 of the whole key.
    pub hash: String,
    /// The first characters of the key, enough for an operator to recognize it.
    pub prefixo: String,
    pub created_at: DateTime<Utc>,
    /// What the key may do (`escopos`).
    pub scopes: Scopes,
}

/// What an operator may see of a stored key: never the key, never its hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKeySummary {
    pub id: Uuid,
    pub company_id: CompanyId,
    pub prefixo: String,
    pub created_at: DateTime<Utc>,
    /// When the key was last seen authenticating a request (recorded at most once a minute).
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    /// What the key may do (`escopos`).
    pub scopes: Scopes,
}

/// A non-revoked key found by its hash, with the company it authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedApiKey {
    pub id: Uuid,
    pub company: Company,
    pub last_used_at: Option<DateTime<Utc>>,
    /// What the key may do: carried with the resolution (and its cache), so checking a route's
    /// scopes costs no query.
    pub scopes: Scopes,
    /// The company whose rate limit the key's calls take: its own, or for a sandbox's key the
    /// real company's (`empresas.sandbox_de`), so that a sandbox adds no quota of its own.
    pub quota_of: CompanyId,
}

/// The outcome of revoking a key by id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevokeApiKeyOutcome {
    /// Revoked now; the summary carries the revocation time.
    Revoked(ApiKeySummary),
    /// It was already revoked; nothing changed (the summary carries the first revocation time).
    AlreadyRevoked(ApiKeySummary),
    /// No key has this id.
    NotFound,
}

/// Every operation fails with `RepoError::Unavailable` when the database cannot be reached and
/// `RepoError::Unexpected` otherwise; error texts never carry a key or a hash.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait ApiKeyRepository: Send + Sync {
    /// Stores a key for an existing company.
    fn insert(&self, key: &ApiKeyRecord) -> Result<(), RepoError>;

    /// The non-revoked key with this hash and its company; `None` for unknown or revoked keys.
    /// Reads only: one indexed query, no write.
    fn find_by_hash(&self, hash: &str) -> Result<Option<ResolvedApiKey>, RepoError>;

    /// Sets the key's `ultimo_uso_em` to `at`, unless it was already set at or after
    /// `unless_since` (so concurrent requests, on any instance, write it once). Whether it wrote.
    fn record_use(
        &self,
        id: Uuid,
        at: DateTime<Utc>,
        unless_since: DateTime<Utc>,
    ) -> Result<bool, RepoError>;

    /// Every key of the company, revoked ones included, oldest first.
    fn list_by_company(&self, company: CompanyId) -> Result<Vec<ApiKeySummary>, RepoError>;

    /// Revokes the key `id` at `at` (a revoked key never authenticates again).
    fn revoke(&self, id: Uuid, at: DateTime<Utc>) -> Result<RevokeApiKeyOutcome, RepoError>;
}
