//! Evidence files (issue 37, part 5; docs/evidencias.md): a company's files, stored
//! content-addressed by SHA-256 within the company, and their links to its consent requests.
//! Two ports: what is known about the files ([`EvidenceFileRepository`], always PostgreSQL) and
//! where their bytes are ([`EvidenceStore`]: PostgreSQL or an S3-compatible bucket). Every
//! operation takes the company: one company never reaches another's file, even by its hash.

use chrono::{DateTime, Utc};
use domain::{CompanyId, EvidenceFile, EvidenceLink};
use uuid::Uuid;

use crate::RepoError;

/// The size of a stored part: an upload is written, and a download read, one part at a time.
pub const EVIDENCE_PART_BYTES: usize = 256 * 1024;

/// What storing a finished upload did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredFile {
    /// A new file of the company.
    Created(EvidenceFile),
    /// The company already had these bytes: the existing file (the upload's object is not used).
    Existing(EvidenceFile),
}

/// Where a file is kept: names the [`EvidenceStore`] the row was written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageKind {
    Postgres,
    S3,
}

impl StorageKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StorageKind::Postgres => "postgres",
            StorageKind::S3 => "s3",
        }
    }
}

/// A file and the object its bytes are in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocatedFile {
    pub file: EvidenceFile,
    pub object: Uuid,
}

/// A file whose bytes retention deleted (its object to remove from the store).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiredObject {
    pub company: CompanyId,
    pub object: Uuid,
}

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait EvidenceFileRepository: Send + Sync {
    /// Records the file `file` of `company`, its bytes in `object`, unless the company already
    /// has a file of that SHA-256 (then that one comes back, unchanged).
    fn store(
        &self,
        company: CompanyId,
        file: &EvidenceFile,
        object: Uuid,
        kind: StorageKind,
    ) -> Result<StoredFile, RepoError>;

    /// The company's file of that SHA-256 (lower-case hex); `None` for another company's.
    fn find(&self, company: CompanyId, sha256: &str) -> Result<Option<LocatedFile>, RepoError>;

    /// Links the company's file to its confirmed request, appending the log entry in the same
    /// transaction (the owner's `evidencia_vincular`).
    fn link(
        &self,
        company: CompanyId,
        request: Uuid,
        sha256: &str,
        at: DateTime<Utc>,
    ) -> Result<EvidenceLink, RepoError>;

    /// The files linked to the company's request, oldest link first.
    fn linked(&self, company: CompanyId, request: Uuid) -> Result<Vec<EvidenceFile>, RepoError>;

    /// Marks deleted (at `now`) the bytes of up to `limit` files of any company that retention no
    /// longer keeps: every request linking them final and last changed before `before`, or
    /// linked to none and uploaded before `before`. Returns their objects, for the store.
    fn expire_bytes(
        &self,
        before: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<ExpiredObject>, RepoError>;
}

/// Where the bytes are. Objects are named by the company and an id chosen when the upload
/// starts; parts are [`EVIDENCE_PART_BYTES`] long but the last.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait EvidenceStore: Send + Sync {
    /// Which store this is (recorded with each file).
    fn kind(&self) -> StorageKind;

    /// Writes part `index` of the object (parts come in order, from 0).
    fn write_part(
        &self,
        company: CompanyId,
        object: Uuid,
        index: u32,
        bytes: &[u8],
    ) -> Result<(), RepoError>;

    /// Part `index` of an object of `size` bytes; `None` when it is not there.
    fn read_part(
        &self,
        company: CompanyId,
        object: Uuid,
        index: u32,
        size: u64,
    ) -> Result<Option<Vec<u8>>, RepoError>;

    /// Deletes the object (every part written); nothing when absent.
    fn delete(&self, company: CompanyId, object: Uuid) -> Result<(), RepoError>;
}
