//! [`EvidenceFiles`]: the company's evidence files, from the upload to retention
//! (docs/evidencias.md).

use std::sync::Arc;

use chrono::{DateTime, Utc};
use domain::{evidence_media_type, CompanyId, EvidenceFile, EvidenceLink};
use ports::{
    Clock, ConsentRequestRepository, EvidenceFileRepository, EvidenceStore, RepoError, StoredFile,
    EVIDENCE_PART_BYTES,
};
use sha2::Digest;
use uuid::Uuid;

use super::upload::Upload;
use super::upload_slots::UploadSlots;

/// The bounds of the uploads (`evidencias.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvidenceLimits {
    /// Bytes a file may have (`evidencias.max_bytes`).
    pub max_bytes: u64,
    /// Uploads one company may have under way in one process (`evidencias.uploads_por_empresa`).
    pub uploads_per_company: u32,
}

/// `evidencias.max_bytes`' default: 20 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 20 * 1024 * 1024;

impl Default for EvidenceLimits {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_BYTES,
            uploads_per_company: 4,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    /// No such request, or no such file, of the company (another company's is not found either).
    #[error("not found")]
    NotFound,
    /// A media type outside [`domain::EVIDENCE_MEDIA_TYPES`].
    #[error("unsupported media type")]
    UnsupportedType,
    #[error("the file is over {limit} bytes")]
    TooLarge { limit: u64 },
    /// The bytes do not have the SHA-256 the path named.
    #[error("the bytes do not have the SHA-256 named")]
    HashMismatch,
    /// Retention deleted the file's bytes.
    #[error("the file's bytes were deleted by retention")]
    BytesDeleted,
    /// The company has its bound of uploads under way.
    #[error("too many uploads under way")]
    Busy,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

/// What a finished upload did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uploaded {
    pub file: EvidenceFile,
    /// Something new: the company's file, or (uploaded to a request) its link.
    pub created: bool,
}

/// A file to download: read part by part with [`EvidenceFiles::read_part`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    pub file: EvidenceFile,
    pub object: Uuid,
    pub parts: u32,
    /// The request it was downloaded through and its salted consent hash (for the access log).
    pub request: Option<(Uuid, String)>,
}

#[derive(Clone)]
pub struct EvidenceFiles {
    files: Arc<dyn EvidenceFileRepository>,
    store: Arc<dyn EvidenceStore>,
    consent_requests: Arc<dyn ConsentRequestRepository>,
    clock: Arc<dyn Clock>,
    limits: EvidenceLimits,
    slots: Arc<UploadSlots>,
}

impl EvidenceFiles {
    pub fn new(
        files: Arc<dyn EvidenceFileRepository>,
        store: Arc<dyn EvidenceStore>,
        consent_requests: Arc<dyn ConsentRequestRepository>,
        clock: Arc<dyn Clock>,
        limits: EvidenceLimits,
    ) -> Self {
        Self {
            files,
            store,
            consent_requests,
            clock,
            limits,
            slots: Arc::new(UploadSlots::new(limits.uploads_per_company)),
        }
    }

    pub fn limits(&self) -> EvidenceLimits {
        self.limits
    }

    /// Starts an upload of `content_type` for the company, to link to its `request` when given
    /// (which must be its own: 404 before a byte is read), checked against `expected` (lower-case
    /// hex) when given. Refused with 415 for a media type not allowed, 429 past the company's
    /// uploads under way.
    pub fn begin(
        &self,
        company: CompanyId,
        request: Option<Uuid>,
        content_type: &str,
        expected: Option<String>,
    ) -> Result<Upload, EvidenceError> {
        let media_type = evidence_media_type(content_type).ok_or(EvidenceError::UnsupportedType)?;
        if let Some(request) = request {
            self.consent_requests
                .get(company, request)?
                .ok_or(EvidenceError::NotFound)?;
        }
        let slot = self.slots.take(company).ok_or(EvidenceError::Busy)?;
        // a hash the company already has (bytes kept) is only checked: nothing to store again
        let keep_parts = match &expected {
            Some(sha256) => self
                .files
                .find(company, sha256)?
                .is_none_or(|found| found.file.bytes_deleted_at.is_some()),
            None => true,
        };
        Ok(Upload {
            company,
            object: Uuid::new_v4(),
            media_type,
            expected,
            keep_parts,
            max_bytes: self.limits.max_bytes,
            hasher: sha2::Sha256::new(),
            size: 0,
            part: Vec::new(),
            next_index: 0,
            written: false,
            _slot: slot,
        })
    }

    /// Writes one part an [`Upload`] handed out (of its company and object).
    pub fn write_part(
        &self,
        company: CompanyId,
        object: Uuid,
        index: u32,
        bytes: &[u8],
    ) -> Result<(), RepoError> {
        self.store.write_part(company, object, index, bytes)
    }

    /// Deletes what a failed upload wrote (its client went away, it broke a bound).
    pub fn discard(&self, upload: &Upload) -> Result<(), RepoError> {
        if upload.written {
            self.store.delete(upload.company, upload.object)?;
        }
        Ok(())
    }

    /// Ends the upload: the last part written, the hash checked against the one named (422 and
    /// nothing kept when it differs), the file recorded (or the company's existing file of these
    /// bytes kept, and this upload's object deleted), then linked to `request` when given (its
    /// log entry in the link's transaction).
    pub fn finish(
        &self,
        mut upload: Upload,
        request: Option<Uuid>,
    ) -> Result<Uploaded, EvidenceError> {
        let (last, sha256) = upload.end();
        if upload.expected.as_deref().is_some_and(|e| e != sha256) {
            self.discard(&upload)?;
            return Err(EvidenceError::HashMismatch);
        }
        let company = upload.company;
        let now = self.clock.now();
        let file = EvidenceFile {
            sha256,
            size: upload.size,
            media_type: upload.media_type.to_owned(),
            created_at: now,
            bytes_deleted_at: None,
        };
        let stored = if upload.keep_parts {
            if let Some((index, bytes)) = last {
                self.write_part(company, upload.object, index, &bytes)?;
            }
            match self
                .files
                .store(company, &file, upload.object, self.store.kind())?
            {
                created @ StoredFile::Created(_) => created,
                existing @ StoredFile::Existing(_) => {
                    self.discard(&upload)?;
                    existing
                }
            }
        } else {
            match self.files.find(company, &file.sha256)? {
                Some(found) => StoredFile::Existing(found.file),
                // deleted since the upload began: nothing stored, the client sends it again
                None => return Err(EvidenceError::NotFound),
            }
        };
        let (file, mut created) = match stored {
            StoredFile::Created(file) => (file, true),
            StoredFile::Existing(file) => (file, false),
        };
        if let Some(request) = request {
            created = match self.files.link(company, request, &file.sha256, now)? {
                EvidenceLink::Linked => true,
                EvidenceLink::AlreadyLinked => false,
                EvidenceLink::NoFile | EvidenceLink::NoRequest => {
                    return Err(EvidenceError::NotFound)
                }
            };
        }
        Ok(Uploaded { file, created })
    }

    /// Links the company's file `sha256` to its request `request` (the import's lines):
    /// [`EvidenceLink::NoFile`] for a hash the company does not have.
    pub fn link(
        &self,
        company: CompanyId,
        request: Uuid,
        sha256: &str,
    ) -> Result<EvidenceLink, RepoError> {
        self.files.link(company, request, sha256, self.clock.now())
    }

    /// Whether the company has the file `sha256` with its bytes (an import line may name it).
    pub fn has(&self, company: CompanyId, sha256: &str) -> Result<bool, RepoError> {
        Ok(self
            .files
            .find(company, sha256)?
            .is_some_and(|found| found.file.bytes_deleted_at.is_none()))
    }

    /// The files of the company's request (404 for a request not its own).
    pub fn list(
        &self,
        company: CompanyId,
        request: Uuid,
    ) -> Result<Vec<EvidenceFile>, EvidenceError> {
        self.consent_requests
            .get(company, request)?
            .ok_or(EvidenceError::NotFound)?;
        Ok(self.files.linked(company, request)?)
    }

    /// The files of a request, for its record (the request is known to be the company's).
    pub fn of_request(
        &self,
        company: CompanyId,
        request: Uuid,
    ) -> Result<Vec<EvidenceFile>, RepoError> {
        self.files.linked(company, request)
    }

    /// The company's file `sha256` linked to its `request` (when given), to download: 404 when
    /// either is not the company's or not linked, 410 when retention deleted the bytes.
    pub fn download(
        &self,
        company: CompanyId,
        request: Option<Uuid>,
        sha256: &str,
    ) -> Result<Download, EvidenceError> {
        let found = self
            .files
            .find(company, sha256)?
            .ok_or(EvidenceError::NotFound)?;
        let request = match request {
            Some(id) => {
                let record = self
                    .consent_requests
                    .get(company, id)?
                    .ok_or(EvidenceError::NotFound)?;
                let linked = self.files.linked(company, id)?;
                if !linked.iter().any(|f| f.sha256 == sha256) {
                    return Err(EvidenceError::NotFound);
                }
                Some((id, record.request.hash))
            }
            None => None,
        };
        if found.file.bytes_deleted_at.is_some() {
            return Err(EvidenceError::BytesDeleted);
        }
        let parts = found.file.size.div_ceil(EVIDENCE_PART_BYTES as u64).max(1);
        Ok(Download {
            parts: u32::try_from(parts).unwrap_or(u32::MAX),
            file: found.file,
            object: found.object,
            request,
        })
    }

    /// Part `index` of a download's bytes.
    pub fn read_part(
        &self,
        company: CompanyId,
        download: &Download,
        index: u32,
    ) -> Result<Vec<u8>, RepoError> {
        self.store
            .read_part(company, download.object, index, download.file.size)?
            .ok_or_else(|| {
                RepoError::Unexpected(anyhow::anyhow!(
                    "part {index} of an evidence file is missing from its store"
                ))
            })
    }

    /// Retention: deletes the bytes of up to `limit` files no longer kept (docs/evidencias.md,
    /// "Retention"): marked first (a download then answers 410), then removed from the store.
    /// Returns how many.
    pub fn expire(
        &self,
        before: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<u32, RepoError> {
        let expired = self.files.expire_bytes(before, now, limit)?;
        for object in &expired {
            self.store.delete(object.company, object.object)?;
        }
        Ok(u32::try_from(expired.len()).unwrap_or(u32::MAX))
    }
}
