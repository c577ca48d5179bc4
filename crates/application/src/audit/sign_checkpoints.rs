//! The checkpoint job's round (the log's sequencer): for each company whose log has settled
//! entries the stored tree does not hold yet, it appends them to the stored tree (a bounded batch
//! a round: their leaf hashes and the nodes they complete, from the tree's right edge only),
//! holds the tree against the previous checkpoint (it must be a prefix: a rewritten log is never
//! signed) and signs its new root. Before storing a batch it holds each of its entries to its
//! request's previous entry (read by key: [`super::chain`], the checker `audit verify` uses): a
//! company whose chain breaks is not signed. Cost: the new entries, one previous entry each by
//! key, plus O(log n) stored nodes, never the whole log (docs/auditoria.md, "Stored tree"). Runs every `APP__AUDITORIA__CHECKPOINT_SECONDS`,
//! in the workers' job loop, off every request's path.

use std::collections::BTreeMap;
use std::sync::Arc;

use ports::{
    AuditLogRepository, Clock, CompanyRepository, SandboxRepository, StoredCheckpoint, TreeNode,
};

use super::chain::{check_chain, Link};
use super::entry::EntryFields;
use super::note;
use super::signer::AuditSigner;
use super::stored_tree::{extend, pieces, root_span, span_hash, Hash};
use super::witness::submit::{stored_consistency, Submission, Witnesses};

/// Entries a company's stored tree takes a round: bounds the round's memory and transaction
/// (a log written before the stored tree existed is caught up over several rounds, which the
/// job loop runs back to back while this is reached).
pub const LEAVES_PER_ROUND: u32 = 10_000;

/// What a round did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckpointRound {
    /// Checkpoints signed.
    pub signed: u32,
    /// Whether a company's stored tree took a full batch (more entries may be waiting).
    pub backlog: bool,
    /// Companies not signed because an entry of theirs breaks its request's chain (logged as an
    /// error; `audit verify` names it).
    pub refused: u32,
}

#[derive(Clone)]
pub struct SignCheckpoints {
    log: Arc<dyn AuditLogRepository>,
    companies: Arc<dyn CompanyRepository>,
    signer: Arc<AuditSigner>,
    clock: Arc<dyn Clock>,
    leaves_per_round: u32,
    witnesses: Option<Witnesses>,
    /// The sandbox companies' signer and how a sandbox is told: their checkpoints are signed
    /// with the sandbox key, never a real company's.
    sandbox: Option<(Arc<AuditSigner>, Arc<dyn SandboxRepository>)>,
}

impl SignCheckpoints {
    pub fn new(
        log: Arc<dyn AuditLogRepository>,
        companies: Arc<dyn CompanyRepository>,
        signer: Arc<AuditSigner>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            log,
            companies,
            signer,
            clock,
            leaves_per_round: LEAVES_PER_ROUND,
            witnesses: None,
            sandbox: None,
        }
    }

    /// Signs the sandbox companies' checkpoints with the sandbox key (docs/auditoria.md, "The
    /// sandbox's key").
    pub fn with_sandbox(
        mut self,
        signer: Arc<AuditSigner>,
        sandboxes: Arc<dyn SandboxRepository>,
    ) -> Self {
        self.sandbox = Some((signer, sandboxes));
        self
    }

    /// The signer of the company's checkpoints: the sandbox key for a sandbox, the production
    /// key for every other company.
    fn signer_of(&self, company: domain::CompanyId) -> Result<&AuditSigner, ports::RepoError> {
        if let Some((signer, sandboxes)) = &self.sandbox {
            if sandboxes.real_company_of(company)?.is_some() {
                return Ok(signer);
            }
        }
        Ok(&self.signer)
    }

    /// Submits each checkpoint to these witnesses before keeping it (docs/auditoria.md,
    /// "Witnesses").
    pub fn with_witnesses(mut self, witnesses: Witnesses) -> Self {
        self.witnesses = Some(witnesses);
        self
    }

    /// Another batch size (tests: a log caught up over several rounds).
    pub fn with_leaves_per_round(mut self, leaves: u32) -> Self {
        self.leaves_per_round = leaves.max(1);
        self
    }

    /// Extends the stored trees and signs the checkpoints due, up to `limit` companies.
    pub fn run_once(&self, limit: u32) -> anyhow::Result<CheckpointRound> {
        let mut round = CheckpointRound::default();
        for company_id in self.log.companies_with_unsigned_entries(limit)? {
            let Some(company) = self.companies.get(company_id)? else {
                continue;
            };
            let stored = self.log.stored_tree(company_id)?;
            let (mut size, last) = stored.map_or((0, None), |(size, last)| (size, Some(last)));
            let mut edge = self.nodes(company_id, &pieces(root_span(size)))?;
            let leaves = self
                .log
                .leaves_after(company_id, last, self.leaves_per_round)?;
            if let Some(up_to) = leaves.last().map(|l| l.position) {
                if let Some(broken) = self.chain_break(company_id, last, up_to)? {
                    tracing::error!(
                        empresa_id = %company_id.0,
                        "the audit log breaks a request's chain: not signing ({broken}); run audit verify"
                    );
                    round.refused += 1;
                    continue;
                }
            }
            if !leaves.is_empty() {
                let hashes: Vec<Hash> = leaves.iter().map(|l| l.hash).collect();
                let edge_hashes: Vec<Hash> =
                    pieces(root_span(size)).iter().map(|p| edge[p]).collect();
                let added = extend(size, &edge_hashes, &hashes);
                let positions: Vec<_> = leaves.iter().map(|l| l.position).collect();
                if !self.log.extend_tree(company_id, size, &positions, &added)? {
                    // another process extended it: its round signs
                    continue;
                }
                round.backlog |= leaves.len() as u64 >= u64::from(self.leaves_per_round);
                size += leaves.len() as u64;
                edge.extend(added);
            }
            if size == 0 {
                continue;
            }
            let previous = self.log.latest_checkpoint(company_id)?;
            if let Some(previous) = &previous {
                if size < previous.size {
                    // a log from before the stored tree, still being caught up: signed once
                    // the stored tree holds what the checkpoint covers
                    continue;
                }
                let ends_where_signed =
                    self.log.leaf_position(company_id, previous.size - 1)? == Some(previous.last);
                let root = self.root(company_id, previous.size, &edge)?;
                if root != Some(previous.root) || !ends_where_signed {
                    // never sign a log that does not extend what was signed: audit verify names
                    // what changed
                    anyhow::bail!(
                        "the audit log of company {} does not extend its checkpoint of size {}: not signing",
                        company_id.0,
                        previous.size
                    );
                }
                if size == previous.size {
                    continue;
                }
            }
            let root = self
                .root(company_id, size, &edge)?
                .ok_or_else(|| anyhow::anyhow!("the stored audit tree lacks its right edge"))?;
            let last = match leaves.last() {
                Some(leaf) => leaf.position,
                None => self
                    .log
                    .leaf_position(company_id, size - 1)?
                    .ok_or_else(|| anyhow::anyhow!("the stored audit tree lacks its last leaf"))?,
            };
            let signer = self.signer_of(company_id)?;
            let origin = note::origin(signer.name(), company.cnpj.as_str());
            let mut signed = note::sign(signer, &origin, size, &root);
            if let Some(witnesses) = &self.witnesses {
                let old = previous.as_ref().map_or(0, |p| p.size);
                let proof = |from| stored_consistency(self.log.as_ref(), company_id, from, size);
                let body = note::body(&origin, size, &root);
                let now = self.clock.now().timestamp();
                let submission = Submission {
                    note: &signed,
                    body: &body,
                    origin: &origin,
                    size,
                };
                signed = witnesses.cosign(submission, old, &proof, now)?;
            }
            let checkpoint = StoredCheckpoint {
                size,
                root,
                last,
                note: signed,
                kid: signer.kid(),
                created_at: self.clock.now(),
            };
            if self.log.add_checkpoint(company_id, &checkpoint)? {
                round.signed += 1;
            }
        }
        Ok(round)
    }

    /// The first entry of `(after, up_to]` that does not follow its request's previous entry
    /// (each read by key), in words; `None` when every one does.
    fn chain_break(
        &self,
        company: domain::CompanyId,
        after: Option<ports::LogPosition>,
        up_to: ports::LogPosition,
    ) -> anyhow::Result<Option<String>> {
        let linked = self.log.linked_entries(company, after, up_to)?;
        let mut parsed = Vec::with_capacity(linked.len());
        for item in &linked {
            let entry = EntryFields::parse(&item.entry.bytes);
            let previous = item.previous.as_deref().map(EntryFields::parse).transpose();
            match (entry, previous) {
                (Ok(entry), Ok(previous)) => parsed.push((previous, entry)),
                _ => {
                    return Ok(Some(format!(
                        "an entry of request {} is not an entry's canonical JSON",
                        item.entry.request_id
                    )))
                }
            }
        }
        let links = parsed.iter().map(|(previous, entry)| Link {
            previous: previous.as_ref(),
            entry,
        });
        let broken = check_chain(links, |id| match uuid::Uuid::parse_str(id) {
            Ok(id) => self.log.created_before_log(company, id),
            Err(_) => Ok(false),
        })?;
        Ok(broken.map(|b| b.to_string()))
    }

    fn nodes(
        &self,
        company: domain::CompanyId,
        ids: &[TreeNode],
    ) -> anyhow::Result<BTreeMap<TreeNode, Hash>> {
        let found: BTreeMap<TreeNode, Hash> = self.log.nodes(company, ids)?.into_iter().collect();
        if let Some(missing) = ids.iter().find(|id| !found.contains_key(id)) {
            anyhow::bail!(
                "the stored audit tree of company {} lacks node {missing:?}",
                company.0
            );
        }
        Ok(found)
    }

    /// The root of the first `size` stored leaves, from `known` nodes and those read by key.
    fn root(
        &self,
        company: domain::CompanyId,
        size: u64,
        known: &BTreeMap<TreeNode, Hash>,
    ) -> anyhow::Result<Option<Hash>> {
        let span = root_span(size);
        let mut nodes = BTreeMap::new();
        let mut missing = Vec::new();
        for piece in pieces(span) {
            match known.get(&piece) {
                Some(hash) => {
                    nodes.insert(piece, *hash);
                }
                None => missing.push(piece),
            }
        }
        if !missing.is_empty() {
            nodes.extend(self.log.nodes(company, &missing)?);
        }
        Ok(span_hash(span, &nodes))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use ports::{AuditEntry, LeafHash, LogPosition, MockAuditLogRepository, MockCompanyRepository};
    use uuid::Uuid;

    use super::*;
    use crate::audit::note;
    use crate::audit::stored_tree::leaf_hash;
    use crate::audit::tree::LogTree;
    use crate::test_support::{company, fixed_clock, now};

    fn entries(n: i64) -> Vec<AuditEntry> {
        (0..n)
            .map(|i| AuditEntry {
                request_id: Uuid::from_u128(i as u128),
                bytes: format!("{{\"n\":\"{i}\"}}").into_bytes(),
                position: LogPosition {
                    transaction: 100 + i,
                    sequence: i,
                },
            })
            .collect()
    }

    fn leaves(entries: &[AuditEntry]) -> Vec<LeafHash> {
        entries
            .iter()
            .map(|e| LeafHash {
                position: e.position,
                hash: leaf_hash(&e.bytes),
            })
            .collect()
    }

    /// A repository whose stored tree lives in memory: the nodes `extend_tree` stores are those
    /// `nodes` answers, and `leaves_after` hands out `log` past the stored leaves.
    fn repository(log: Vec<AuditEntry>, batch: usize) -> MockAuditLogRepository {
        let stored: Arc<Mutex<(u64, BTreeMap<TreeNode, Hash>)>> = Arc::default();
        let mut repo = MockAuditLogRepository::new();
        repo.expect_companies_with_unsigned_entries()
            .returning(|_| Ok(vec![company().id]));
        // these entries' chains are not what these tests are about (see the chain's own test)
        repo.expect_linked_entries().returning(|_, _, _| Ok(vec![]));
        let s = stored.clone();
        let positions: Vec<LogPosition> = log.iter().map(|e| e.position).collect();
        let p = positions.clone();
        repo.expect_stored_tree().returning(move |_| {
            let size = s.lock().unwrap().0;
            Ok((size > 0).then(|| (size, p[size as usize - 1])))
        });
        let s = stored.clone();
        repo.expect_leaves_after().returning(move |_, _, _| {
            let size = s.lock().unwrap().0 as usize;
            let end = (size + batch).min(log.len());
            Ok(leaves(&log[size..end]))
        });
        let s = stored.clone();
        repo.expect_nodes().returning(move |_, ids| {
            let nodes = &s.lock().unwrap().1;
            Ok(ids
                .iter()
                .filter_map(|id| nodes.get(id).map(|h| (*id, *h)))
                .collect())
        });
        repo.expect_leaf_position()
            .returning(move |_, index| Ok(positions.get(index as usize).copied()));
        repo.expect_extend_tree()
            .returning(move |_, first, leaves, nodes| {
                let mut s = stored.lock().unwrap();
                if s.0 != first {
                    return Ok(false);
                }
                s.0 += leaves.len() as u64;
                s.1.extend(nodes.iter().copied());
                Ok(true)
            });
        repo
    }

    fn job(log: MockAuditLogRepository) -> SignCheckpoints {
        let mut companies = MockCompanyRepository::new();
        companies.expect_get().returning(|_| Ok(Some(company())));
        SignCheckpoints::new(
            Arc::new(log),
            Arc::new(companies),
            Arc::new(AuditSigner::from_seed("consent-api", [5u8; 32])),
            fixed_clock(),
        )
        .with_leaves_per_round(4)
    }

    fn checkpoint_of(signed: &[AuditEntry]) -> StoredCheckpoint {
        StoredCheckpoint {
            size: signed.len() as u64,
            root: LogTree::of(signed).root(),
            last: signed.last().unwrap().position,
            note: String::new(),
            kid: String::new(),
            created_at: now(),
        }
    }

    #[test]
    fn a_grown_log_gets_a_signed_checkpoint_of_all_its_settled_entries() {
        let mut log = repository(entries(3), 4);
        log.expect_latest_checkpoint().returning(|_| Ok(None));
        log.expect_add_checkpoint()
            .withf(|id, c| {
                let parsed = note::parse(&c.note).unwrap();
                *id == company().id
                    && c.size == 3
                    && c.root == LogTree::of(&entries(3)).root()
                    && c.last == entries(3)[2].position
                    && c.created_at == now()
                    && parsed.origin == format!("consent-api/empresas/{}", company().cnpj.as_str())
                    && (parsed.size, parsed.root) == (3, c.root)
            })
            .times(1)
            .returning(|_, _| Ok(true));

        let round = job(log).run_once(10).unwrap();
        assert_eq!(round.signed, 1);
        assert!(!round.backlog);
    }

    #[test]
    fn a_log_from_before_the_stored_tree_is_caught_up_in_batches_then_signed_on_top_of_its_checkpoint(
    ) {
        let mut log = repository(entries(11), 4);
        // signed by the whole-tree signer, before nodes were stored
        log.expect_latest_checkpoint()
            .returning(|_| Ok(Some(checkpoint_of(&entries(9)))));
        log.expect_add_checkpoint()
            .withf(|_, c| c.size == 11 && c.root == LogTree::of(&entries(11)).root())
            .times(1)
            .returning(|_, _| Ok(true));
        let job = job(log);

        // 4 then 8 leaves: below the checkpoint's 9, nothing signed yet, more to come
        for _ in 0..2 {
            let round = job.run_once(10).unwrap();
            assert_eq!(
                round,
                CheckpointRound {
                    signed: 0,
                    backlog: true,
                    refused: 0,
                }
            );
        }
        // 11: the stored tree holds the checkpoint's 9 with its root, and the new root is signed
        assert_eq!(job.run_once(10).unwrap().signed, 1);
    }

    /// An entry of request 7 moving `from` (`None`: its creation) to `to`.
    fn entry_moving(from: Option<&str>, to: &str) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "casoDeUsoIdTemplate": "tpl", "causa": "empresa", "cnpjEmpresa": "11222333000181",
            "em": "2026-01-10T12:00:05.000000Z", "hash": "ab", "id": Uuid::from_u128(7).to_string(),
            "motivoSha256": null, "pgccId": "pgcc-7", "provaColetaSha256": null,
            "status": to, "statusAnterior": from,
        }))
        .unwrap()
    }

    #[test]
    fn a_company_whose_new_entries_break_a_chain_is_not_signed_and_the_others_are() {
        let mut log = MockAuditLogRepository::new();
        let (bad, good) = (company().id, domain::CompanyId(Uuid::from_u128(0xbeef)));
        log.expect_companies_with_unsigned_entries()
            .returning(move |_| Ok(vec![bad, good]));
        log.expect_stored_tree().returning(|_| Ok(None));
        log.expect_nodes().returning(|_, _| Ok(vec![]));
        log.expect_leaves_after()
            .returning(|_, _, _| Ok(leaves(&entries(1))));
        // the batch of `bad` is a revived consent: revogado -> ativo, read with its previous entry
        log.expect_linked_entries().returning(move |company, _, _| {
            let entry = AuditEntry {
                request_id: Uuid::from_u128(7),
                bytes: entry_moving(Some("revogado"), "ativo"),
                position: entries(1)[0].position,
            };
            Ok(if company == bad {
                vec![ports::LinkedEntry {
                    entry,
                    previous: Some(entry_moving(Some("ativo"), "revogado")),
                }]
            } else {
                vec![ports::LinkedEntry {
                    entry: AuditEntry {
                        bytes: entry_moving(None, "ativo"),
                        ..entry
                    },
                    previous: None,
                }]
            })
        });
        log.expect_extend_tree()
            .withf(move |company, _, _, _| *company == good)
            .times(1)
            .returning(|_, _, _, _| Ok(true));
        log.expect_latest_checkpoint().returning(|_| Ok(None));
        log.expect_add_checkpoint()
            .withf(move |company, _| *company == good)
            .times(1)
            .returning(|_, _| Ok(true));

        let round = job(log).run_once(10).unwrap();
        assert_eq!((round.signed, round.refused), (1, 1));
    }

    #[test]
    fn a_log_that_no_longer_extends_its_checkpoint_is_not_signed() {
        // the first entry was removed behind the service's back before the tree was stored
        let mut log = repository(entries(4).split_off(1), 4);
        log.expect_latest_checkpoint()
            .returning(|_| Ok(Some(checkpoint_of(&entries(2)))));
        log.expect_add_checkpoint().never();

        let err = job(log).run_once(10).unwrap_err();
        assert!(err.to_string().contains("does not extend"), "{err}");
    }
}
