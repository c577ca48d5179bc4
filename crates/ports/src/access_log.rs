//! The record of who read personal data (`acessos_dados_pessoais`): one row per answer that
//! carried a full CPF or a proof of collection, and per audit route answered (docs/security.md,
//! "Access log"). Rows never hold a CPF: the requests' ids and their salted consent hashes.

use chrono::{DateTime, Utc};
use domain::CompanyId;
use uuid::Uuid;

use crate::{ListCursor, RepoError};

/// One read of personal data, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessRecord {
    pub id: Uuid,
    pub company_id: CompanyId,
    /// The API key that read.
    pub api_key_id: Uuid,
    /// The person who read, for a console session opened through the company's identity provider
    /// (issue 38; `api_key_id` is then the session's id); `None` for a key.
    pub person: Option<domain::Person>,
    /// The route's template (`/api/solicitacao-consentimento/{id}`), never the concrete path.
    pub route: String,
    /// The consent requests whose data the answer carried (may be empty: an export that found
    /// nothing, an audit route).
    pub request_ids: Vec<Uuid>,
    /// Their salted consent hashes (`hash`), in the same order: what identifies the subject's
    /// consents without the CPF.
    pub hashes: Vec<String>,
    pub at: DateTime<Utc>,
}

/// Which records a page holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessFilter {
    /// Only this key's reads.
    pub api_key_id: Option<Uuid>,
    /// Recorded at or after.
    pub from: Option<DateTime<Utc>>,
    /// Recorded strictly before.
    pub until: Option<DateTime<Utc>>,
}

/// `record` and `list` fail with `RepoError::Unavailable` when the database cannot be reached
/// and `RepoError::Unexpected` otherwise.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait AccessLog: Send + Sync {
    /// Stores `record` (in the request's own connection, before the answer is sent).
    fn record(&self, record: &AccessRecord) -> Result<(), RepoError>;

    /// Up to `limit` of the company's records matching `filter`, ordered by (time, id), strictly
    /// after `after`: the keyset of the other lists (`ListCursor`'s `created_at` is the record's
    /// time).
    fn list(
        &self,
        company: CompanyId,
        filter: &AccessFilter,
        after: Option<ListCursor>,
        limit: u32,
    ) -> Result<Vec<AccessRecord>, RepoError>;

    /// Up to `limit` of the company's records naming any of `request_ids` (the reads of one
    /// subject's data), newest first by (time, id), strictly before `before` when given. Read
    /// along an index of the records' request ids: the cost is the records naming those
    /// requests, never the company's records of a period.
    fn of_requests(
        &self,
        company: CompanyId,
        request_ids: &[Uuid],
        before: Option<ListCursor>,
        limit: u32,
    ) -> Result<Vec<AccessRecord>, RepoError>;
}
