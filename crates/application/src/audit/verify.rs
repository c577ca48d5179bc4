//! `consent-api audit verify`: the log checked from what is stored, as an auditor would. For each
//! company: every entry is canonical JSON of the listed fields; every checkpoint's note is
//! signed by a published key and states the root of the company's first `size` entries (so
//! every two checkpoints are consistent: each is a prefix of the same entries); and each
//! request's current row is what its last entry says (status, PGCC id, the consent hash
//! recomputed from the row's content, the proof's SHA-256); and the stored tree (the leaves'
//! positions and every stored node, which the signer and the proofs read instead of the entries)
//! is what the entries make; and every request's chain is lawful ([`super::chain`]): a confirmed
//! request has entries (a creation first), each entry follows the previous one by a move the
//! state machine allows. The first mismatch is named. Requests created before the log began are
//! named in the report, and so are the integrity incidents (requests the PGCC does not know).

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use domain::CompanyId;
use ports::{
    AuditEntry, AuditLogRepository, ConsentRequestRepository, IntegrityIncident, PublishedKey,
};
use uuid::Uuid;

use super::chain::{check_chain, row_matches, Link};
use super::entry::{EntryFields, CAUSE_RETENTION};
use super::note;
use super::signer::{key_hash, verifies};
use super::stored_tree::{leaf_hash, node_hash, Hash};
use super::tree::LogTree;

/// What was checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    pub companies: u64,
    pub entries: u64,
    pub checkpoints: u64,
    pub requests: u64,
    /// Stored tree nodes held against the entries (leaves included).
    pub nodes: u64,
    /// Confirmed requests with no entry created before the log began (the recorded cut-off,
    /// `log_began`): named, not checked. Company, request, created at.
    pub before_log: Vec<(Uuid, Uuid, DateTime<Utc>)>,
    /// When the log began, if recorded.
    pub log_began: Option<DateTime<Utc>>,
    /// Integrity incidents: confirmed requests the PGCC does not know (company, incident).
    /// `audit verify` lists them and fails.
    pub incidents: Vec<(Uuid, IntegrityIncident)>,
}

/// The first thing that does not match, in words naming it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("company {company}: {what}")]
pub struct Mismatch {
    pub company: Uuid,
    pub what: String,
}

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Mismatch(#[from] Mismatch),
    #[error(transparent)]
    Repo(#[from] ports::RepoError),
}

pub struct VerifyAuditLog {
    log: Arc<dyn AuditLogRepository>,
    consent_requests: Arc<dyn ConsentRequestRepository>,
    /// Keys that verify besides those the database recorded (the configured and retired ones).
    keys: Vec<PublishedKey>,
    /// The sandbox companies, whose requests the sandbox purge deletes (their entries stay).
    sandboxes: Option<Arc<dyn ports::SandboxRepository>>,
}

impl VerifyAuditLog {
    pub fn new(
        log: Arc<dyn AuditLogRepository>,
        consent_requests: Arc<dyn ConsentRequestRepository>,
        keys: Vec<PublishedKey>,
    ) -> Self {
        Self {
            log,
            consent_requests,
            keys,
            sandboxes: None,
        }
    }

    /// Knowing the sandbox companies: a sandbox's request purged after
    /// `sandbox.retention_days` is not a mismatch (docs/decisions.md, "The sandbox").
    pub fn with_sandboxes(mut self, sandboxes: Arc<dyn ports::SandboxRepository>) -> Self {
        self.sandboxes = Some(sandboxes);
        self
    }

    /// Whether the company is a sandbox (`empresas.sandbox_de`); without the sandboxes known,
    /// none is.
    fn is_sandbox(&self, company: CompanyId) -> Result<bool, ports::RepoError> {
        match &self.sandboxes {
            Some(sandboxes) => Ok(sandboxes.real_company_of(company)?.is_some()),
            None => Ok(false),
        }
    }

    /// Checks one company, or every company that has a log.
    pub fn run(&self, only: Option<CompanyId>) -> Result<VerifyReport, VerifyError> {
        let mut keys = self.keys.clone();
        keys.extend(self.log.published_keys()?);
        let companies = match only {
            Some(company) => vec![company],
            None => self.log.companies_with_entries()?,
        };
        let mut report = VerifyReport {
            log_began: self.log.log_began()?,
            ..VerifyReport::default()
        };
        for company in companies {
            self.company(company, &keys, &mut report)?;
            report.companies += 1;
        }
        Ok(report)
    }

    fn company(
        &self,
        company: CompanyId,
        keys: &[PublishedKey],
        report: &mut VerifyReport,
    ) -> Result<(), VerifyError> {
        let mismatch = |what: String| Mismatch {
            company: company.0,
            what,
        };
        let entries = self.log.all_entries(company)?;
        let mut last_of_request: BTreeMap<Uuid, (usize, EntryFields)> = BTreeMap::new();
        for (index, entry) in entries.iter().enumerate() {
            let fields = EntryFields::parse(&entry.bytes)
                .map_err(|_| mismatch(format!("entry {index} is not an entry's canonical JSON")))?;
            if fields.id != entry.request_id.to_string() {
                return Err(mismatch(format!(
                    "entry {index} names request {} but is stored under request {}",
                    fields.id, entry.request_id
                ))
                .into());
            }
            let link = Link {
                previous: last_of_request.get(&entry.request_id).map(|(_, f)| f),
                entry: &fields,
            };
            let request = entry.request_id;
            if let Some(broken) =
                check_chain([link], |_| self.log.created_before_log(company, request))?
            {
                return Err(mismatch(format!("entry {index}: {broken}")).into());
            }
            last_of_request.insert(entry.request_id, (index, fields));
        }
        report.entries += entries.len() as u64;

        // a real company's checkpoints verify with production keys only: the sandbox key never
        // vouches for one (a sandbox's may carry either: those signed before it had its key)
        let sandbox = self.is_sandbox(company)?;
        for checkpoint in self.log.checkpoints(company)? {
            let size = checkpoint.size;
            let parsed = note::parse(&checkpoint.note)
                .ok_or_else(|| mismatch(format!("checkpoint {size} is not a signed note")))?;
            let signer = |allowed: &dyn Fn(&PublishedKey) -> bool| {
                parsed.signatures.iter().any(|(name, hash, signature)| {
                    keys.iter().any(|key| {
                        allowed(key)
                            && key_hash(name, &key.public_key) == *hash
                            && verifies(&key.public_key, parsed.text.as_bytes(), signature)
                    })
                })
            };
            if !signer(&|key| sandbox || !key.sandbox) {
                let what = if signer(&|key| key.sandbox) {
                    format!("checkpoint {size}: signed by the sandbox key, but the company is not a sandbox")
                } else {
                    format!("checkpoint {size}: no valid signature by a published key")
                };
                return Err(mismatch(what).into());
            }
            if parsed.size != size || parsed.root != checkpoint.root {
                return Err(
                    mismatch(format!("checkpoint {size}: the note says another tree")).into(),
                );
            }
            let covered = usize::try_from(size).unwrap_or(usize::MAX);
            if covered > entries.len() {
                return Err(mismatch(format!(
                    "checkpoint {size} covers more entries than the log holds ({}): entries were removed",
                    entries.len()
                ))
                .into());
            }
            if LogTree::of(&entries[..covered]).root() != checkpoint.root
                || entries[covered - 1].position != checkpoint.last
            {
                return Err(mismatch(format!(
                    "checkpoint {size}: the stored entries 0..{size} do not have its root (entries were removed, changed or inserted; entry {} is now request {})",
                    covered - 1,
                    entries[covered - 1].request_id
                ))
                .into());
            }
            report.checkpoints += 1;
        }

        if let Some(what) = self.stored_tree(company, &entries, report)? {
            return Err(mismatch(what).into());
        }

        for (id, (index, fields)) in &last_of_request {
            if fields.cause == CAUSE_RETENTION {
                continue;
            }
            let Some(record) = self.consent_requests.get(company, *id)? else {
                if sandbox {
                    // purged with the sandbox's data
                    continue;
                }
                return Err(mismatch(format!(
                    "request {id}: its last entry ({index}) has no stored request"
                ))
                .into());
            };
            if !row_matches(&record.request, fields) {
                return Err(mismatch(format!(
                    "request {id} does not match its last entry ({index}): its stored status, PGCC id, content or proof changed outside the log"
                ))
                .into());
            }
            report.requests += 1;
        }

        for unlogged in self.log.unlogged_requests(company)? {
            if !unlogged.before_log {
                return Err(mismatch(format!(
                    "request {} is confirmed but has no entry in the log (created {}, after the log began)",
                    unlogged.id,
                    unlogged.created_at.to_rfc3339()
                ))
                .into());
            }
            report
                .before_log
                .push((company.0, unlogged.id, unlogged.created_at));
        }
        report.incidents.extend(
            self.log
                .integrity_incidents(company)?
                .into_iter()
                .map(|incident| (company.0, incident)),
        );
        Ok(())
    }
}

impl VerifyAuditLog {
    /// The stored tree recomputed from the entries, one level at a time: leaf k must be entry k
    /// (same position, its leaf hash), and node (l, k) the hash of its two children; a level
    /// holds exactly the complete subtrees of the stored leaves. A stored node changed, removed
    /// or added is named.
    fn stored_tree(
        &self,
        company: CompanyId,
        entries: &[AuditEntry],
        report: &mut VerifyReport,
    ) -> Result<Option<String>, ports::RepoError> {
        let positions = self.log.leaf_positions(company)?;
        for (i, (index, position)) in positions.iter().enumerate() {
            if *index != i as u64 || entries.get(i).map(|e| e.position) != Some(*position) {
                return Ok(Some(format!(
                    "stored tree leaf {i} is not entry {i} of the log (leaves were removed, changed or inserted)"
                )));
            }
        }
        let stored = positions.len();
        let mut expected: Vec<Hash> = entries[..stored]
            .iter()
            .map(|e| leaf_hash(&e.bytes))
            .collect();
        for level in 0..64u8 {
            let found = self.log.level(company, level)?;
            let differs = found
                .iter()
                .enumerate()
                .find(|(k, (index, hash))| *index != *k as u64 || expected.get(*k) != Some(hash))
                .map(|(k, _)| k)
                .or_else(|| (found.len() < expected.len()).then_some(found.len()));
            if let Some(k) = differs {
                return Ok(Some(format!(
                    "stored tree node (level {level}, index {k}) does not match the entries"
                )));
            }
            report.nodes += found.len() as u64;
            if expected.is_empty() {
                break;
            }
            expected = expected
                .chunks_exact(2)
                .map(|pair| node_hash(&pair[0], &pair[1]))
                .collect();
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use domain::ConsentStatus;
    use ports::{
        AuditEntry, ConsentRequestRecord, LogPosition, MockAuditLogRepository,
        MockConsentRequestRepository,
    };
    use serde_json::json;
    use sha2::{Digest, Sha256};

    use super::*;
    use crate::test_support::{company, consent_request};

    const ID: Uuid = Uuid::from_u128(0x501);

    /// The creation entry of the test request, as the database writes it.
    fn creation_entry() -> AuditEntry {
        let request = consent_request(ID, ConsentStatus::Active);
        let proof = &request.content.answer.as_ref().unwrap().proof_of_collection;
        let entry = json!({
            "casoDeUsoIdTemplate": request.content.template_id, "causa": "empresa",
            "cnpjEmpresa": company().cnpj.as_str(), "em": "2025-03-13T12:00:00.000000Z",
            "hash": request.hash, "id": ID.to_string(), "motivoSha256": null,
            "pgccId": request.pgcc_id,
            "provaColetaSha256": hex::encode(Sha256::digest(proof.as_bytes())),
            "status": "ativo", "statusAnterior": null,
        });
        AuditEntry {
            request_id: ID,
            bytes: serde_json::to_vec(&entry).unwrap(),
            position: LogPosition {
                transaction: 10,
                sequence: 1,
            },
        }
    }

    fn verify(row_status: ConsentStatus, expiry_moved: bool) -> Result<VerifyReport, VerifyError> {
        let mut log = MockAuditLogRepository::new();
        log.expect_published_keys().returning(|| Ok(vec![]));
        log.expect_log_began().returning(|| Ok(None));
        log.expect_unlogged_requests().returning(|_| Ok(vec![]));
        log.expect_integrity_incidents().returning(|_| Ok(vec![]));
        log.expect_all_entries()
            .returning(|_| Ok(vec![creation_entry()]));
        log.expect_checkpoints().returning(|_| Ok(vec![]));
        log.expect_leaf_positions().returning(|_| Ok(vec![]));
        log.expect_level().returning(|_, _| Ok(vec![]));
        let mut requests = MockConsentRequestRepository::new();
        requests.expect_get().returning(move |_, _| {
            let mut request = consent_request(ID, row_status);
            if expiry_moved {
                request.content.consent_expires_at += chrono::Duration::days(3650);
            }
            Ok(Some(ConsentRequestRecord {
                request,
                history: vec![],
                provenance: None,
            }))
        });
        VerifyAuditLog::new(Arc::new(log), Arc::new(requests), vec![]).run(Some(company().id))
    }

    #[test]
    fn a_row_that_is_what_its_last_entry_says_verifies() {
        let report = verify(ConsentStatus::Active, false).unwrap();
        assert_eq!((report.entries, report.requests), (1, 1));
    }

    #[test]
    fn a_status_or_an_expiry_changed_outside_the_log_names_the_request() {
        for (status, moved) in [
            (ConsentStatus::Revoked, false),
            (ConsentStatus::Active, true),
        ] {
            let Err(VerifyError::Mismatch(m)) = verify(status, moved) else {
                panic!("{status:?} {moved}: verified");
            };
            assert!(m.what.contains(&ID.to_string()), "{m}");
        }
    }

    /// An entry of the test request moving `from` to `to`, at sequence `sequence`.
    fn moving(from: &str, to: &str, sequence: i64) -> AuditEntry {
        let mut value: serde_json::Value = serde_json::from_slice(&creation_entry().bytes).unwrap();
        value["statusAnterior"] = json!(from);
        value["status"] = json!(to);
        AuditEntry {
            request_id: ID,
            bytes: serde_json::to_vec(&value).unwrap(),
            position: LogPosition {
                transaction: 10 + sequence,
                sequence,
            },
        }
    }

    fn verify_log(
        entries: Vec<AuditEntry>,
        unlogged: Vec<ports::UnloggedRequest>,
    ) -> Result<VerifyReport, VerifyError> {
        let mut log = MockAuditLogRepository::new();
        log.expect_published_keys().returning(|| Ok(vec![]));
        log.expect_log_began().returning(|| Ok(None));
        log.expect_unlogged_requests()
            .returning(move |_| Ok(unlogged.clone()));
        log.expect_integrity_incidents().returning(|_| Ok(vec![]));
        log.expect_created_before_log().returning(|_, _| Ok(false));
        log.expect_all_entries()
            .returning(move |_| Ok(entries.clone()));
        log.expect_checkpoints().returning(|_| Ok(vec![]));
        log.expect_leaf_positions().returning(|_| Ok(vec![]));
        log.expect_level().returning(|_, _| Ok(vec![]));
        let mut requests = MockConsentRequestRepository::new();
        requests.expect_get().returning(|_, _| {
            Ok(Some(ConsentRequestRecord {
                request: consent_request(ID, ConsentStatus::Active),
                history: vec![],
                provenance: None,
            }))
        });
        VerifyAuditLog::new(Arc::new(log), Arc::new(requests), vec![]).run(Some(company().id))
    }

    #[test]
    fn a_revoked_consent_brought_back_with_a_forged_entry_names_the_request_and_the_move() {
        // the row says ativo and so does the last entry: only the chain shows the forgery
        let entries = vec![
            creation_entry(),
            moving("ativo", "revogado", 2),
            moving("revogado", "ativo", 3),
        ];
        let Err(VerifyError::Mismatch(m)) = verify_log(entries, vec![]) else {
            panic!("a revived consent verified");
        };
        assert!(m.what.contains(&ID.to_string()), "{m}");
        assert!(m.what.contains("revogado -> ativo"), "{m}");
    }

    #[test]
    fn a_confirmed_request_with_no_entry_fails_unless_it_is_older_than_the_log() {
        let unlogged = |before_log| ports::UnloggedRequest {
            id: Uuid::from_u128(0x777),
            created_at: crate::test_support::now(),
            before_log,
        };
        let Err(VerifyError::Mismatch(m)) =
            verify_log(vec![creation_entry()], vec![unlogged(false)])
        else {
            panic!("a request with no entry verified");
        };
        assert!(m.what.contains(&Uuid::from_u128(0x777).to_string()), "{m}");
        let report = verify_log(vec![creation_entry()], vec![unlogged(true)]).unwrap();
        assert_eq!(report.before_log.len(), 1);
    }

    fn verify_stored(level_0: [u8; 32]) -> Result<VerifyReport, VerifyError> {
        let mut log = MockAuditLogRepository::new();
        log.expect_published_keys().returning(|| Ok(vec![]));
        log.expect_log_began().returning(|| Ok(None));
        log.expect_unlogged_requests().returning(|_| Ok(vec![]));
        log.expect_integrity_incidents().returning(|_| Ok(vec![]));
        log.expect_all_entries()
            .returning(|_| Ok(vec![creation_entry()]));
        log.expect_checkpoints().returning(|_| Ok(vec![]));
        log.expect_leaf_positions()
            .returning(|_| Ok(vec![(0, creation_entry().position)]));
        log.expect_level().returning(move |_, level| {
            Ok(if level == 0 {
                vec![(0, level_0)]
            } else {
                vec![]
            })
        });
        let mut requests = MockConsentRequestRepository::new();
        requests.expect_get().returning(|_, _| {
            Ok(Some(ConsentRequestRecord {
                request: consent_request(ID, ConsentStatus::Active),
                history: vec![],
                provenance: None,
            }))
        });
        VerifyAuditLog::new(Arc::new(log), Arc::new(requests), vec![]).run(Some(company().id))
    }

    #[test]
    fn a_stored_tree_that_is_what_the_entries_make_verifies_and_a_changed_node_is_named() {
        let report = verify_stored(leaf_hash(&creation_entry().bytes)).unwrap();
        assert_eq!(report.nodes, 1);
        let Err(VerifyError::Mismatch(m)) = verify_stored([7u8; 32]) else {
            panic!("a forged stored node verified");
        };
        assert!(
            m.what.contains("stored tree node (level 0, index 0)"),
            "{m}"
        );
    }
}
