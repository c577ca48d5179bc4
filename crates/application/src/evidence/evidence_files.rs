//! [`EvidenceFiles`]: the company's evidence files, from the upload to retention
//! (docs/evidencias.md).

use std::sync::Arc;

use chrono::{DateTime, Utc};
use domain::{evidence_media_type, CompanyId, EvidenceFile, EvidenceLink};
use ports::{
    Clock, ConsentRequestRepository, EvidenceFileRepository, EvidenceStore, RepoError, StoredFile,
    ABANDONED_UPLOAD_HOURS, EVIDENCE_PART_BYTES,
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
            part_bytes: self.store.upload_part_bytes().max(1),
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
            self.store.discard(upload.company, upload.object)?;
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
            let kept = self.keep(&upload, last, &file);
            if kept.is_err() {
                // what was written goes; the answer stays the failure that stopped it
                if let Err(e) = self.discard(&upload) {
                    tracing::warn!(error = %e, "could not delete a failed evidence upload");
                }
            }
            kept?
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

    /// The checked upload kept: its last part written, sealed in the store as the file of its
    /// hash, and its row written (or, the company having these bytes already, the upload's own
    /// object deleted and the existing file answered).
    fn keep(
        &self,
        upload: &Upload,
        last: Option<(u32, Vec<u8>)>,
        file: &EvidenceFile,
    ) -> Result<StoredFile, RepoError> {
        let company = upload.company;
        if let Some((index, bytes)) = last {
            self.write_part(company, upload.object, index, &bytes)?;
        }
        self.store
            .seal(company, upload.object, upload.next_index, &file.sha256)?;
        match self
            .files
            .store(company, file, upload.object, self.store.kind())?
        {
            created @ StoredFile::Created(_) => Ok(created),
            existing @ StoredFile::Existing(_) => {
                self.discard(upload)?;
                Ok(existing)
            }
        }
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
            .read_part(
                company,
                download.object,
                &download.file.sha256,
                index,
                download.file.size,
            )?
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
            self.store
                .delete(object.company, object.object, &object.sha256)?;
        }
        Ok(u32::try_from(expired.len()).unwrap_or(u32::MAX))
    }

    /// Deletes up to `limit` leftovers of uploads a process died in the middle of, once older
    /// than [`ABANDONED_UPLOAD_HOURS`] (docs/evidencias.md, "Uploads cut short"). Returns how
    /// many.
    pub fn sweep_abandoned(&self, now: DateTime<Utc>, limit: u32) -> Result<u32, RepoError> {
        let before = now - chrono::Duration::hours(ABANDONED_UPLOAD_HOURS);
        self.store.sweep_abandoned(before, limit)
    }
}

#[cfg(test)]
mod tests {
    use mockall::predicate::eq;
    use mockall::Sequence;
    use ports::{
        MockConsentRequestRepository, MockEvidenceFileRepository, MockEvidenceStore, StorageKind,
    };

    use super::*;
    use crate::test_support::{company, fixed_clock, now};

    fn service(files: MockEvidenceFileRepository, store: MockEvidenceStore) -> EvidenceFiles {
        EvidenceFiles::new(
            Arc::new(files),
            Arc::new(store),
            Arc::new(MockConsentRequestRepository::new()),
            fixed_clock(),
            EvidenceLimits::default(),
        )
    }

    fn sha256_hex(bytes: &[u8]) -> String {
        hex::encode(sha2::Sha256::digest(bytes))
    }

    /// A store of 4-byte parts, as a bucket's larger parts would cut a bigger file.
    fn store_of_small_parts() -> MockEvidenceStore {
        let mut store = MockEvidenceStore::new();
        store.expect_upload_part_bytes().return_const(4_usize);
        store.expect_kind().return_const(StorageKind::S3);
        store
    }

    #[test]
    fn an_upload_is_cut_at_the_stores_part_size_and_sealed_under_its_hash_before_its_row() {
        let bytes = b"0123456789";
        let hash = sha256_hex(bytes);
        let mut seq = Sequence::new();
        let mut store = store_of_small_parts();
        let mut files = MockEvidenceFileRepository::new();
        store
            .expect_write_part()
            .withf(|_, _, index, bytes| *index == 2 && bytes == b"89")
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _, _, _| Ok(()));
        let sealed = hash.clone();
        store
            .expect_seal()
            .withf(move |_, _, parts, sha256| *parts == 3 && sha256 == sealed)
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _, _, _| Ok(()));
        files
            .expect_store()
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, file, _, kind| {
                assert_eq!(kind, StorageKind::S3);
                Ok(StoredFile::Created(file.clone()))
            });
        store.expect_discard().never();
        let evidence = service(files, store);
        let mut upload = evidence
            .begin(company().id, None, "application/pdf", None)
            .unwrap();
        let parts = upload.push(bytes).unwrap();
        assert_eq!(
            parts,
            vec![(0, b"0123".to_vec()), (1, b"4567".to_vec())],
            "full parts are handed out as they fill"
        );
        let uploaded = evidence.finish(upload, None).unwrap();
        assert_eq!(uploaded.file.sha256, hash);
        assert_eq!(uploaded.file.created_at, now());
        assert!(uploaded.created);
    }

    #[test]
    fn bytes_not_of_the_named_hash_are_discarded_never_sealed_nor_recorded() {
        let mut store = store_of_small_parts();
        let mut files = MockEvidenceFileRepository::new();
        files.expect_find().returning(|_, _| Ok(None));
        store.expect_seal().never();
        files.expect_store().never();
        store
            .expect_discard()
            .with(eq(company().id), mockall::predicate::always())
            .times(1)
            .returning(|_, _| Ok(()));
        let evidence = service(files, store);
        let mut upload = evidence
            .begin(
                company().id,
                None,
                "image/png",
                Some(sha256_hex(b"other bytes")),
            )
            .unwrap();
        assert!(upload.push(b"ab").unwrap().is_empty());
        let err = evidence.finish(upload, None).unwrap_err();
        assert!(matches!(err, EvidenceError::HashMismatch), "{err:?}");
    }

    #[test]
    fn bytes_the_company_had_are_sealed_then_the_uploads_own_object_discarded() {
        let mut seq = Sequence::new();
        let mut store = store_of_small_parts();
        let mut files = MockEvidenceFileRepository::new();
        store.expect_write_part().returning(|_, _, _, _| Ok(()));
        store
            .expect_seal()
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _, _, _| Ok(()));
        files
            .expect_store()
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, file, _, _| Ok(StoredFile::Existing(file.clone())));
        store
            .expect_discard()
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _| Ok(()));
        let evidence = service(files, store);
        let mut upload = evidence
            .begin(company().id, None, "application/pdf", None)
            .unwrap();
        upload.push(b"abc").unwrap();
        let uploaded = evidence.finish(upload, None).unwrap();
        assert!(!uploaded.created);
    }

    #[test]
    fn a_store_that_fails_to_seal_gets_the_upload_discarded_and_no_row_is_written() {
        let mut store = store_of_small_parts();
        let mut files = MockEvidenceFileRepository::new();
        store.expect_write_part().returning(|_, _, _, _| Ok(()));
        store
            .expect_seal()
            .returning(|_, _, _, _| Err(RepoError::Unavailable(anyhow::anyhow!("bucket down"))));
        files.expect_store().never();
        store.expect_discard().times(1).returning(|_, _| Ok(()));
        let evidence = service(files, store);
        let mut upload = evidence
            .begin(company().id, None, "application/pdf", None)
            .unwrap();
        upload.push(b"abc").unwrap();
        let err = evidence.finish(upload, None).unwrap_err();
        assert!(matches!(
            err,
            EvidenceError::Repo(RepoError::Unavailable(_))
        ));
    }

    #[test]
    fn the_sweep_asks_the_store_for_leftovers_older_than_the_bound() {
        let mut store = MockEvidenceStore::new();
        store
            .expect_sweep_abandoned()
            .withf(|before, limit| {
                *before == now() - chrono::Duration::hours(ABANDONED_UPLOAD_HOURS) && *limit == 50
            })
            .times(1)
            .returning(|_, _| Ok(3));
        let evidence = service(MockEvidenceFileRepository::new(), store);
        assert_eq!(evidence.sweep_abandoned(now(), 50).unwrap(), 3);
    }
}
