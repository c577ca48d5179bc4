//! [`S3EvidenceStore`]: an upload goes to the bucket as an S3 multipart upload of its parts
//! (5 MiB each, S3's minimum but for the last), under `envios/<company>/<upload id>`; once the
//! service has checked the bytes' SHA-256, the upload is completed and copied (server side) to
//! `<company>/<sha256>`, and the upload's key deleted. An upload refused (a wrong hash, over the
//! limit, its client gone) is aborted: nothing of it stays in the bucket. A download reads the
//! file by ranges of [`EVIDENCE_PART_BYTES`], one per blocking hop, so neither side ever holds a
//! whole file.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use domain::CompanyId;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::{
    ClientOptions, MultipartId, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig,
};
use ports::{EvidenceStore, RepoError, StorageKind, EVIDENCE_PART_BYTES};
use uuid::Uuid;

use crate::keys::{file_key, upload_key, UPLOADS_PREFIX};
use crate::runtime::ClientRuntime;
use crate::S3Settings;

/// S3's smallest part of a multipart upload (all but the last): the size an upload is cut into.
const S3_PART_BYTES: usize = 5 * 1024 * 1024;

/// The SHA-256 of no bytes: the one upload with no multipart upload.
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// A multipart upload under way in this process: S3 needs its id and each part's ETag to
/// complete it. Gone once sealed or discarded.
struct Multipart {
    id: MultipartId,
    parts: Vec<PartId>,
    started: DateTime<Utc>,
}

pub struct S3EvidenceStore {
    s3: Arc<AmazonS3>,
    runtime: ClientRuntime,
    uploads: Mutex<HashMap<(CompanyId, Uuid), Multipart>>,
}

impl S3EvidenceStore {
    /// The store of `settings`' bucket; nothing is sent to it yet.
    pub fn new(settings: &S3Settings) -> anyhow::Result<Self> {
        // reqwest is built without a crypto provider of its own (Cargo.toml: ring, not a second
        // library): it takes the process's default, installed here once. `Err` means one is
        // installed already, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let s3 = AmazonS3Builder::new()
            .with_endpoint(&settings.endpoint)
            .with_bucket_name(&settings.bucket)
            .with_region(&settings.region)
            .with_access_key_id(&settings.access_key_id)
            .with_secret_access_key(&settings.secret_access_key)
            .with_allow_http(settings.allow_http())
            .with_client_options(
                ClientOptions::new()
                    .with_allow_http(settings.allow_http())
                    .with_connect_timeout(std::time::Duration::from_secs(5))
                    .with_timeout(std::time::Duration::from_secs(60)),
            )
            // a part is a few MiB: a bucket that fails it three times in 30 s is down, and the
            // upload's client hears 503 rather than waiting minutes
            .with_retry(RetryConfig {
                max_retries: 3,
                retry_timeout: std::time::Duration::from_secs(30),
                ..RetryConfig::default()
            })
            .build()
            .map_err(|e| anyhow::anyhow!("evidencias.s3_*: {e}"))?;
        Ok(Self {
            s3: Arc::new(s3),
            runtime: ClientRuntime::new()?,
            uploads: Mutex::new(HashMap::new()),
        })
    }

    fn uploads(&self) -> std::sync::MutexGuard<'_, HashMap<(CompanyId, Uuid), Multipart>> {
        self.uploads.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Aborts a multipart upload and deletes the upload's key (completed but not yet copied);
    /// either being absent is fine.
    fn remove_upload(
        &self,
        company: CompanyId,
        object: Uuid,
        multipart: Option<Multipart>,
    ) -> Result<(), RepoError> {
        let s3 = self.s3.clone();
        let key = upload_key(company, object);
        self.runtime
            .run("discarding an evidence upload in S3", async move {
                if let Some(m) = multipart {
                    match s3.abort_multipart(&key, &m.id).await {
                        Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                        Err(e) => return Err(e),
                    }
                }
                absent_is_fine(s3.delete(&key).await)
            })
    }
}

fn absent_is_fine(r: Result<(), object_store::Error>) -> Result<(), object_store::Error> {
    match r {
        Err(object_store::Error::NotFound { .. }) => Ok(()),
        other => other,
    }
}

impl EvidenceStore for S3EvidenceStore {
    fn kind(&self) -> StorageKind {
        StorageKind::S3
    }

    fn upload_part_bytes(&self) -> usize {
        S3_PART_BYTES
    }

    fn write_part(
        &self,
        company: CompanyId,
        object: Uuid,
        index: u32,
        bytes: &[u8],
    ) -> Result<(), RepoError> {
        // an empty file has one empty part: S3 takes no empty multipart upload, so nothing is
        // sent and the seal writes the empty object
        if index == 0 && bytes.is_empty() {
            return Ok(());
        }
        let key = upload_key(company, object);
        let id = if index == 0 {
            let (s3, key) = (self.s3.clone(), key.clone());
            let id = self
                .runtime
                .run("starting an evidence upload in S3", async move {
                    s3.create_multipart(&key).await
                })?;
            self.uploads().insert(
                (company, object),
                Multipart {
                    id: id.clone(),
                    parts: Vec::new(),
                    started: Utc::now(),
                },
            );
            id
        } else {
            self.uploads()
                .get(&(company, object))
                .map(|m| m.id.clone())
                .ok_or_else(|| {
                    RepoError::Unexpected(anyhow::anyhow!(
                        "part {index} of an evidence upload with no multipart upload under way"
                    ))
                })?
        };
        let (s3, payload) = (self.s3.clone(), PutPayload::from(bytes.to_vec()));
        let part = self
            .runtime
            .run("writing a part of an evidence upload to S3", async move {
                s3.put_part(&key, &id, index as usize, payload).await
            })?;
        if let Some(m) = self.uploads().get_mut(&(company, object)) {
            m.parts.push(part);
        }
        Ok(())
    }

    fn seal(
        &self,
        company: CompanyId,
        object: Uuid,
        _parts: u32,
        sha256: &str,
    ) -> Result<(), RepoError> {
        let multipart = self.uploads().remove(&(company, object));
        let (s3, from, to) = (
            self.s3.clone(),
            upload_key(company, object),
            file_key(company, sha256),
        );
        let Some(m) = multipart else {
            // only the empty file has no multipart upload (see write_part); anything else lost
            // its upload (swept as abandoned) and must not be stored as empty
            if sha256 != EMPTY_SHA256 {
                return Err(RepoError::Unexpected(anyhow::anyhow!(
                    "sealing an evidence upload with no multipart upload under way"
                )));
            }
            return self
                .runtime
                .run("storing an empty evidence file in S3", async move {
                    s3.put(&to, PutPayload::default()).await.map(|_| ())
                });
        };
        self.runtime
            .run("sealing an evidence upload in S3", async move {
                s3.complete_multipart(&from, &m.id, m.parts).await?;
                // the same bytes of the same company may be there already: the copy rewrites
                // them with themselves
                s3.copy(&from, &to).await?;
                absent_is_fine(s3.delete(&from).await)
            })
    }

    fn discard(&self, company: CompanyId, object: Uuid) -> Result<(), RepoError> {
        let multipart = self.uploads().remove(&(company, object));
        self.remove_upload(company, object, multipart)
    }

    fn read_part(
        &self,
        company: CompanyId,
        _object: Uuid,
        sha256: &str,
        index: u32,
        size: u64,
    ) -> Result<Option<Vec<u8>>, RepoError> {
        let part = EVIDENCE_PART_BYTES as u64;
        let start = u64::from(index) * part;
        if size == 0 && index == 0 {
            return Ok(Some(Vec::new()));
        }
        if start >= size {
            return Ok(None);
        }
        let end = (start + part).min(size);
        let (s3, key) = (self.s3.clone(), file_key(company, sha256));
        self.runtime
            .run("reading a part of an evidence file from S3", async move {
                match s3.get_range(&key, start..end).await {
                    Ok(bytes) => Ok(Some(bytes.to_vec())),
                    Err(object_store::Error::NotFound { .. }) => Ok(None),
                    Err(e) => Err(e),
                }
            })
    }

    fn delete(&self, company: CompanyId, _object: Uuid, sha256: &str) -> Result<(), RepoError> {
        let (s3, key) = (self.s3.clone(), file_key(company, sha256));
        self.runtime
            .run("deleting an evidence file from S3", async move {
                absent_is_fine(s3.delete(&key).await)
            })
    }

    /// The uploads' keys older than `before` (a process died between completing an upload and
    /// copying it), and this process's multipart uploads that neither ended nor failed (their
    /// request dropped mid-way). Multipart uploads a killed process left are not listed by the
    /// client: the bucket's lifecycle rule aborts them (docs/evidencias.md, "Uploads cut short").
    fn sweep_abandoned(&self, before: DateTime<Utc>, limit: u32) -> Result<u32, RepoError> {
        let stale: Vec<((CompanyId, Uuid), Multipart)> = {
            let mut uploads = self.uploads();
            let keys: Vec<(CompanyId, Uuid)> = uploads
                .iter()
                .filter(|(_, m)| m.started < before)
                .map(|(k, _)| *k)
                .take(limit as usize)
                .collect();
            keys.into_iter()
                .filter_map(|k| uploads.remove(&k).map(|m| (k, m)))
                .collect()
        };
        let mut swept = 0_u32;
        for ((company, object), m) in stale {
            self.remove_upload(company, object, Some(m))?;
            swept += 1;
        }
        let room = limit.saturating_sub(swept) as usize;
        if room == 0 {
            return Ok(swept);
        }
        let s3 = self.s3.clone();
        let deleted =
            self.runtime
                .run("deleting abandoned evidence uploads from S3", async move {
                    let prefix = Path::from(UPLOADS_PREFIX);
                    let mut listing = s3.list(Some(&prefix));
                    let mut old = Vec::new();
                    while old.len() < room {
                        let next = std::future::poll_fn(|cx| {
                            futures_core::Stream::poll_next(Pin::new(&mut listing), cx)
                        })
                        .await;
                        match next {
                            None => break,
                            Some(Ok(meta)) if meta.last_modified < before => {
                                old.push(meta.location)
                            }
                            Some(Ok(_)) => {}
                            Some(Err(e)) => return Err(e),
                        }
                    }
                    for key in &old {
                        absent_is_fine(s3.delete(key).await)?;
                    }
                    Ok(old.len())
                })?;
        Ok(swept + u32::try_from(deleted).unwrap_or(u32::MAX))
    }
}
