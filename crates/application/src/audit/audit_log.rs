//! What a company (and its auditor) reads of its log: the latest checkpoint, the proofs of a
//! request's entries, a consistency proof between two checkpoints, a signed receipt, and the
//! public keys.

use std::collections::BTreeMap;
use std::sync::Arc;

use domain::Company;
use ports::{
    AuditLogRepository, Clock, ConsentRequestRepository, IndexedEntry, PublishedKey, RepoError,
    SandboxRepository, StoredCheckpoint, TreeNode,
};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::chain::row_matches;
use super::entry::{EntryFields, CAUSE_RETENTION};
use super::signer::AuditSigner;
use super::stored_tree::{consistency_spans, inclusion_spans, needed, root_span, span_hash, Span};
use super::tree::LogTree;

#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// No such request, or another company's.
    #[error("consent request not found")]
    NotFound,
    /// The company's log has no checkpoint yet.
    #[error("no checkpoint has been signed yet")]
    NoCheckpoint,
    /// `de` or `para` is not the size of one of the company's checkpoints.
    #[error("{0} is not the size of a checkpoint of this company's log")]
    UnknownSize(&'static str),
    #[error("de must not be greater than para")]
    Reversed,
    /// A receipt of a request the log has no entry of: nothing backs it.
    #[error("the request has no entry in the audit log")]
    Unlogged,
    /// A receipt of a request whose row is not what its last entry says (changed outside the
    /// log): never signed.
    #[error("the request does not match its last audit entry")]
    RowDiffers,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

/// One of a request's entries with its inclusion proof.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvenEntry {
    pub index: u64,
    pub bytes: Vec<u8>,
    pub proof: Vec<[u8; 32]>,
}

/// The proofs of a request's entries against the latest checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestProofs {
    /// The request's salted consent hash (what the access log records of the read).
    pub hash: String,
    /// The latest checkpoint's note (none before the first one).
    pub checkpoint: Option<String>,
    /// The request's entries that checkpoint covers, in log order.
    pub entries: Vec<ProvenEntry>,
}

/// A request's signed receipt, and its salted consent hash (what the access log records of the
/// read; the receipt carries it too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedReceipt {
    /// The compact JWS.
    pub jws: String,
    pub hash: String,
}

#[derive(Clone)]
pub struct AuditLog {
    log: Arc<dyn AuditLogRepository>,
    consent_requests: Arc<dyn ConsentRequestRepository>,
    signer: Arc<AuditSigner>,
    /// The sandbox companies' signer, and how a sandbox company is told (`empresas.sandbox_de`):
    /// without them every receipt is signed with `signer`.
    sandbox: Option<(Arc<AuditSigner>, Arc<dyn SandboxRepository>)>,
    /// The keys `GET /.well-known/jwks.json` publishes, read once at start: the public route
    /// never reaches the database.
    published: Vec<PublishedKey>,
    clock: Arc<dyn Clock>,
}

impl AuditLog {
    /// `retired`: public keys that no longer sign but still verify (configuration). The signing
    /// key is recorded as having signed, and every recorded key is published.
    pub fn new(
        log: Arc<dyn AuditLogRepository>,
        consent_requests: Arc<dyn ConsentRequestRepository>,
        signer: Arc<AuditSigner>,
        retired: Vec<PublishedKey>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, RepoError> {
        log.publish_key(&signer.published_key())?;
        let mut published = vec![signer.published_key()];
        for key in retired.into_iter().chain(log.published_keys()?) {
            if !published.iter().any(|k| k.public_key == key.public_key) {
                published.push(key);
            }
        }
        Ok(Self {
            log,
            consent_requests,
            signer,
            sandbox: None,
            published,
            clock,
        })
    }

    /// Signing the sandbox companies' receipts with the sandbox key (docs/auditoria.md, "The
    /// sandbox's key"), which is recorded and published (marked) too.
    pub fn with_sandbox(
        mut self,
        signer: Arc<AuditSigner>,
        sandboxes: Arc<dyn SandboxRepository>,
    ) -> Result<Self, RepoError> {
        let key = signer.published_key();
        self.log.publish_key(&key)?;
        self.published.retain(|k| k.public_key != key.public_key);
        self.published.insert(1.min(self.published.len()), key);
        self.sandbox = Some((signer, sandboxes));
        Ok(self)
    }

    /// The signer of `company`'s receipts: the sandbox key for a sandbox company, the
    /// production key for every other (never the sandbox key).
    fn signer_of(&self, company: &Company) -> Result<&AuditSigner, RepoError> {
        if let Some((signer, sandboxes)) = &self.sandbox {
            if sandboxes.real_company_of(company.id)?.is_some() {
                return Ok(signer);
            }
        }
        Ok(&self.signer)
    }

    /// The log's repository (integrity incidents are read there too).
    pub fn repository(&self) -> Arc<dyn AuditLogRepository> {
        self.log.clone()
    }

    /// The latest signed note of the company's log.
    pub fn checkpoint(&self, company: &Company) -> Result<String, AuditError> {
        Ok(self
            .log
            .latest_checkpoint(company.id)?
            .ok_or(AuditError::NoCheckpoint)?
            .note)
    }

    pub fn proofs(&self, company: &Company, id: Uuid) -> Result<RequestProofs, AuditError> {
        let hash = self
            .consent_requests
            .get(company.id, id)?
            .ok_or(AuditError::NotFound)?
            .request
            .hash;
        let Some(checkpoint) = self.log.latest_checkpoint(company.id)? else {
            return Ok(RequestProofs {
                hash,
                checkpoint: None,
                entries: Vec::new(),
            });
        };
        let proven = match self.stored_proofs(company, id, &checkpoint)? {
            Some(proven) => proven,
            None => self.rebuilt_proofs(company, id, &checkpoint)?,
        };
        Ok(RequestProofs {
            hash,
            checkpoint: Some(checkpoint.note),
            entries: proven,
        })
    }

    /// The RFC 9162 consistency proof between two of the company's checkpoints.
    pub fn consistency(
        &self,
        company: &Company,
        from: u64,
        to: u64,
    ) -> Result<Vec<[u8; 32]>, AuditError> {
        if from > to {
            return Err(AuditError::Reversed);
        }
        self.log
            .checkpoint(company.id, from)?
            .ok_or(AuditError::UnknownSize("de"))?;
        let newer = self
            .log
            .checkpoint(company.id, to)?
            .ok_or(AuditError::UnknownSize("para"))?;
        let spans = consistency_spans(from, to);
        if let Some(proof) = self.stored_hashes(company, &newer, &spans)? {
            return Ok(proof);
        }
        let entries = self.log.entries(company.id, Some(newer.last))?;
        Ok(LogTree::of(&entries).consistency(from))
    }

    /// The proofs from the stored tree: the request's entries by key, and O(log n) nodes read
    /// by key. `None` when the stored tree does not hold the checkpoint yet (a log from before
    /// it, still being caught up) or does not have its root (a stored node changed: audit verify
    /// names it); the caller then rebuilds the tree from the entries.
    fn stored_proofs(
        &self,
        company: &Company,
        id: Uuid,
        checkpoint: &StoredCheckpoint,
    ) -> Result<Option<Vec<ProvenEntry>>, AuditError> {
        let entries = self.log.request_entries(company.id, id, checkpoint.last)?;
        let mut indexed = Vec::with_capacity(entries.len());
        for item in entries {
            match item.index {
                Some(index) if index < checkpoint.size => indexed.push((index, item.entry)),
                _ => return Ok(None),
            }
        }
        let spans: Vec<Vec<Span>> = indexed
            .iter()
            .map(|(index, _)| inclusion_spans(*index, checkpoint.size))
            .collect();
        let Some(hashes) = self.stored_hashes(company, checkpoint, &spans.concat())? else {
            return Ok(None);
        };
        let mut hashes = hashes.into_iter();
        Ok(Some(
            indexed
                .into_iter()
                .zip(spans)
                .map(|((index, entry), spans)| ProvenEntry {
                    index,
                    bytes: entry.bytes,
                    proof: hashes.by_ref().take(spans.len()).collect(),
                })
                .collect(),
        ))
    }

    /// The hashes of `spans` in the checkpoint's tree from the stored nodes (one read by key),
    /// once the stored nodes are seen to have the checkpoint's root.
    fn stored_hashes(
        &self,
        company: &Company,
        checkpoint: &StoredCheckpoint,
        spans: &[Span],
    ) -> Result<Option<Vec<[u8; 32]>>, AuditError> {
        let root = root_span(checkpoint.size);
        let ids: Vec<TreeNode> = needed(spans.iter().chain([&root])).into_iter().collect();
        let nodes: BTreeMap<TreeNode, [u8; 32]> =
            self.log.nodes(company.id, &ids)?.into_iter().collect();
        if span_hash(root, &nodes) != Some(checkpoint.root) {
            if nodes.len() == ids.len() {
                tracing::error!(
                    company = %company.id.0,
                    size = checkpoint.size,
                    "the stored audit tree does not have the checkpoint's root: proofs rebuilt from the entries (run audit verify)"
                );
            }
            return Ok(None);
        }
        Ok(spans.iter().map(|s| span_hash(*s, &nodes)).collect())
    }

    /// The proofs from the tree rebuilt from the company's entries: linear in its log, only
    /// while the stored tree does not hold the checkpoint.
    fn rebuilt_proofs(
        &self,
        company: &Company,
        id: Uuid,
        checkpoint: &StoredCheckpoint,
    ) -> Result<Vec<ProvenEntry>, AuditError> {
        let entries = self.log.entries(company.id, Some(checkpoint.last))?;
        let tree = LogTree::of(&entries);
        Ok(entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.request_id == id)
            .map(|(index, e)| ProvenEntry {
                index: index as u64,
                bytes: e.bytes.clone(),
                proof: tree.inclusion(index as u64),
            })
            .collect())
    }

    /// The request's signed receipt (a compact JWS; docs/auditoria.md, "Receipts"): its
    /// effective state now, the SHA-256 of its proof and the leaf index of its last entry once a
    /// checkpoint covers it (`null` before). Never the CPF.
    pub fn receipt(&self, company: &Company, id: Uuid) -> Result<SignedReceipt, AuditError> {
        let record = self
            .consent_requests
            .get(company.id, id)?
            .ok_or(AuditError::NotFound)?;
        let now = self.clock.now();
        let request = record.request;
        // a receipt states what the log backs: a request with no entry, or whose row is not what
        // its last entry says, gets none (docs/auditoria.md, "Receipts")
        let last = self
            .log
            .last_entry(company.id, id)?
            .ok_or(AuditError::Unlogged)?;
        let matches = EntryFields::parse(&last.bytes)
            .is_ok_and(|fields| fields.cause != CAUSE_RETENTION && row_matches(&request, &fields));
        if !matches {
            return Err(AuditError::RowDiffers);
        }
        let index = match self.log.latest_checkpoint(company.id)? {
            Some(checkpoint) => {
                let entries = self.log.request_entries(company.id, id, checkpoint.last)?;
                match entries.last() {
                    None => None,
                    Some(IndexedEntry {
                        index: Some(index), ..
                    }) => Some(*index),
                    // the stored tree does not hold it yet: its rank among the entries
                    Some(_) => self
                        .log
                        .entries(company.id, Some(checkpoint.last))?
                        .iter()
                        .rposition(|e| e.request_id == id)
                        .map(|i| i as u64),
                }
            }
            None => None,
        };
        let signer = self.signer_of(company)?;
        let content = &request.content;
        let answer = content.answer.as_ref();
        let mut payload = serde_json::json!({
            "id": request.id,
            "pgccId": request.pgcc_id,
            "cnpjEmpresa": company.cnpj.as_str(),
            "casoDeUsoIdTemplate": content.template_id,
            "modalidadeAcesso": content.access_mode.as_str(),
            "cnpjAnuente": content.consenting_cnpj.as_ref().map(|c| c.as_str()),
            "status": request.effective_status(now).as_str(),
            "dataExpiracaoConsentimento": content.consent_expires_at,
            "dataTitularRespondeuConsentimento": answer.map(|a| a.subject_answered_at),
            "hash": request.hash,
            // the use-case version the consent was given under (issue 25; 1 for requests
            // stored before versions)
            "versaoCasoDeUso": request.use_case_version.unwrap_or(1),
            "provaColetaSha256": answer.map(|a| hex::encode(Sha256::digest(a.proof_of_collection.as_bytes()))),
            "indiceLog": index,
            // which key signed it: a sandbox receipt says so, and its kid is the sandbox key's
            "ambiente": environment(signer),
            "iat": now.timestamp(),
            // the receipt's id, the same the consent record of this state names, and the schema
            // of that record (issue 37, part 6; docs/records.md)
            "jti": crate::receipt_id(&request),
            "versaoEsquema": crate::RECORD_SCHEMA,
        });
        // an imported consent says so, as its creation's log entry does (docs/imports.md,
        // "Provenance"); the original answer date is `dataTitularRespondeuConsentimento` above
        if let Some(p) = &record.provenance {
            payload["importacao"] = serde_json::json!({
                "id": p.import_id,
                "idExterno": p.external_id,
                "origem": p.origin,
            });
        }
        Ok(SignedReceipt {
            jws: signer.compact_jws(&payload),
            hash: request.hash,
        })
    }

    /// Every key that signs or signed: the current one, the retired ones configured, and every
    /// key recorded as having signed (as of the start).
    pub fn published_keys(&self) -> &[PublishedKey] {
        &self.published
    }
}

/// The receipt's `ambiente` (and the JWKS's marker): `sandbox` for the sandbox key, `producao`
/// for every other.
pub fn environment(signer: &AuditSigner) -> &'static str {
    if signer.is_sandbox() {
        "sandbox"
    } else {
        "producao"
    }
}
