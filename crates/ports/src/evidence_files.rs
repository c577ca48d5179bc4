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

/// How old an upload's leftovers must be before the retention purge deletes them
/// ([`EvidenceStore::sweep_abandoned`]): longer than any upload may take
/// (`importacao.upload_timeout_seconds` is at most a day), so an upload under way is never touched.
pub const ABANDONED_UPLOAD_HOURS: i64 = 48;

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
    pub sha256: String,
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

/// Where the bytes are. An upload writes its parts under an object id chosen when it starts
/// (its hash is not known yet); once the bytes are whole and their SHA-256 checked, [`seal`]
/// makes them the company's file of that hash (a store may key it by the hash: the S3 store
/// does). Reads and deletes of a stored file name both the object and the hash. Every call
/// carries the company: no key of one company's objects is ever formed for another.
///
/// [`seal`]: EvidenceStore::seal
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait EvidenceStore: Send + Sync {
    /// Which store this is (recorded with each file).
    fn kind(&self) -> StorageKind;

    /// The size of the parts an upload is cut into (the last may be shorter):
    /// [`EVIDENCE_PART_BYTES`], or more for a store whose parts have a minimum (S3: 5 MiB).
    fn upload_part_bytes(&self) -> usize;

    /// Writes part `index` of the upload `object` (parts come in order, from 0).
    fn write_part(
        &self,
        company: CompanyId,
        object: Uuid,
        index: u32,
        bytes: &[u8],
    ) -> Result<(), RepoError>;

    /// The upload `object` is whole (`parts` parts written) and its bytes hash to `sha256`:
    /// from now on they are the company's file of that hash.
    fn seal(
        &self,
        company: CompanyId,
        object: Uuid,
        parts: u32,
        sha256: &str,
    ) -> Result<(), RepoError>;

    /// Deletes what the upload `object` wrote, sealed or not, without touching a file stored
    /// under its hash by another upload (an upload refused, or whose bytes the company had).
    fn discard(&self, company: CompanyId, object: Uuid) -> Result<(), RepoError>;

    /// Part `index` ([`EVIDENCE_PART_BYTES`] long but the last) of the company's file `sha256`
    /// of `size` bytes, stored by the upload `object`; `None` when it is not there.
    fn read_part(
        &self,
        company: CompanyId,
        object: Uuid,
        sha256: &str,
        index: u32,
        size: u64,
    ) -> Result<Option<Vec<u8>>, RepoError>;

    /// Deletes the company's stored file (retention); nothing when absent.
    fn delete(&self, company: CompanyId, object: Uuid, sha256: &str) -> Result<(), RepoError>;

    /// Deletes up to `limit` leftovers of uploads begun before `before` that no file names (a
    /// process killed mid-upload); returns how many.
    fn sweep_abandoned(&self, before: DateTime<Utc>, limit: u32) -> Result<u32, RepoError>;
}
