//! The checkpoint job's side of `tlog-witness`: each checkpoint it is about to keep goes to every
//! configured witness (`old <size>`, the consistency proof from that size, the signed note), and
//! the cosignatures that verify with the witness's key are appended to the note it keeps, so
//! `GET /api/auditoria/checkpoint` serves the cosigned note. A witness that answers 409 with a
//! size above the new checkpoint's has cosigned a longer history: the job refuses to keep the
//! checkpoint. A witness that does not answer does not stop the job (it keeps signing, and
//! [`WitnessHealth`] says so to `/api/status` and `/metrics`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ports::{AuditLogRepository, WitnessAnswer, WitnessGateway};

use super::keys::{cosignature_time, signature_line, VerifierKey};
use crate::audit::stored_tree::{consistency_spans, needed, span_hash, Hash};

/// One configured witness: its cosigning key and how to reach it.
#[derive(Clone)]
pub struct Witness {
    /// Where it is (for logs): its URL.
    pub label: String,
    pub key: VerifierKey,
    pub gateway: Arc<dyn WitnessGateway>,
}

impl std::fmt::Debug for Witness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Witness")
            .field("label", &self.label)
            .field("key", &self.key.to_string())
            .finish_non_exhaustive()
    }
}

/// How the witnesses answered the job: read by `/api/status` and `/metrics`.
#[derive(Debug, Default)]
pub struct WitnessHealth {
    /// Checkpoints kept without any witness's cosignature (though witnesses are configured).
    unwitnessed: AtomicU64,
    /// When the last checkpoint was kept without any cosignature (seconds since the epoch), or
    /// 0 when the last one kept was cosigned.
    unwitnessed_since: AtomicI64,
    /// Witnesses configured.
    configured: AtomicU64,
}

impl WitnessHealth {
    /// Checkpoints kept without a cosignature since the process started.
    pub fn unwitnessed_checkpoints(&self) -> u64 {
        self.unwitnessed.load(Ordering::Relaxed)
    }

    /// Whether the last checkpoint kept lacked every witness's cosignature.
    pub fn last_unwitnessed(&self) -> bool {
        self.unwitnessed_since.load(Ordering::Relaxed) != 0
    }

    pub fn configured(&self) -> u64 {
        self.configured.load(Ordering::Relaxed)
    }
}

/// A witness refused the checkpoint because it cosigned a larger tree of the same log, or
/// another tree of the same size (a fork).
#[derive(Debug, thiserror::Error)]
#[error("witness {witness} has cosigned size {cosigned} of {origin}: not signing size {size} (the log was rewritten or rolled back)")]
pub struct RolledBack {
    pub witness: String,
    pub origin: String,
    pub cosigned: u64,
    pub size: u64,
}

/// A checkpoint the job signed and is about to keep.
#[derive(Debug, Clone, Copy)]
pub struct Submission<'a> {
    /// The signed note.
    pub note: &'a str,
    /// Its text (what the log and the witnesses sign).
    pub body: &'a str,
    pub origin: &'a str,
    pub size: u64,
}

/// The witnesses the job submits to.
#[derive(Debug, Clone)]
pub struct Witnesses {
    list: Vec<Witness>,
    health: Arc<WitnessHealth>,
}

impl Witnesses {
    pub fn new(list: Vec<Witness>) -> Self {
        let health = Arc::new(WitnessHealth::default());
        health
            .configured
            .store(list.len() as u64, Ordering::Relaxed);
        Witnesses { list, health }
    }

    pub fn health(&self) -> Arc<WitnessHealth> {
        self.health.clone()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Submits the checkpoint to every witness with `old`
    /// (the size of the job's previous checkpoint) and the proof from it, then from the size a
    /// witness says it holds when that differs and is not above `size`; returns the note with
    /// every valid cosignature appended. `Err(RolledBack)` when a witness holds a larger size.
    pub fn cosign(
        &self,
        checkpoint: Submission<'_>,
        old: u64,
        proof: &dyn Fn(u64) -> anyhow::Result<Vec<Hash>>,
        now: i64,
    ) -> anyhow::Result<String> {
        let Submission {
            note,
            body,
            origin,
            size,
        } = checkpoint;
        if self.list.is_empty() {
            return Ok(note.to_owned());
        }
        let mut cosigned = note.to_owned();
        let mut answered = 0;
        for witness in &self.list {
            let mut from = old.min(size);
            for _attempt in 0..2 {
                let mut request = format!("old {from}\n");
                for hash in proof(from)? {
                    request.push_str(&STANDARD.encode(hash));
                    request.push('\n');
                }
                request.push('\n');
                request.push_str(note);
                match witness.gateway.add_checkpoint(&request) {
                    Ok(WitnessAnswer::Cosigned(lines)) => {
                        let mut valid = 0;
                        for line in lines.lines() {
                            let Some((name, blob)) = signature_line(line) else {
                                continue;
                            };
                            if cosignature_time(&witness.key, body, name, &blob).is_some() {
                                cosigned.push_str(line);
                                cosigned.push('\n');
                                valid += 1;
                            }
                        }
                        if valid == 0 {
                            tracing::warn!(witness = %witness.label, origem = origin, "the witness answered no valid cosignature");
                        } else {
                            answered += 1;
                        }
                        break;
                    }
                    Ok(WitnessAnswer::Conflict(held)) if held > size => {
                        return Err(RolledBack {
                            witness: witness.label.clone(),
                            origin: origin.to_owned(),
                            cosigned: held,
                            size,
                        }
                        .into());
                    }
                    Ok(WitnessAnswer::Conflict(held)) if held != from => from = held,
                    Ok(WitnessAnswer::Refused(422)) if from == size && old != size => {
                        // the witness cosigned this very size with another root: a fork
                        return Err(RolledBack {
                            witness: witness.label.clone(),
                            origin: origin.to_owned(),
                            cosigned: size,
                            size,
                        }
                        .into());
                    }
                    Ok(other) => {
                        tracing::warn!(witness = %witness.label, origem = origin, tamanho = size, answer = ?other, "the witness did not cosign the checkpoint");
                        break;
                    }
                    Err(e) => {
                        tracing::warn!(witness = %witness.label, origem = origin, error = format!("{e:#}"), "the witness did not answer");
                        break;
                    }
                }
            }
        }
        if answered == 0 {
            self.health.unwitnessed.fetch_add(1, Ordering::Relaxed);
            self.health
                .unwitnessed_since
                .compare_exchange(0, now.max(1), Ordering::Relaxed, Ordering::Relaxed)
                .ok();
            tracing::error!(
                origem = origin,
                tamanho = size,
                "no witness cosigned the checkpoint: signed without a cosignature"
            );
        } else {
            self.health.unwitnessed_since.store(0, Ordering::Relaxed);
        }
        Ok(cosigned)
    }
}

/// The RFC 9162 consistency proof from `from` to `to` leaves of a company's stored tree (empty
/// when `from` is 0 or `to`).
pub fn stored_consistency(
    log: &dyn AuditLogRepository,
    company: domain::CompanyId,
    from: u64,
    to: u64,
) -> anyhow::Result<Vec<Hash>> {
    let spans = consistency_spans(from, to);
    let ids: Vec<_> = needed(&spans).into_iter().collect();
    let nodes: BTreeMap<_, _> = log.nodes(company, &ids)?.into_iter().collect();
    spans
        .iter()
        .map(|span| {
            span_hash(*span, &nodes).ok_or_else(|| {
                anyhow::anyhow!("the stored audit tree lacks a node of a consistency proof")
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use ports::AuditEntry;

    use super::*;
    use crate::audit::note;
    use crate::audit::signer::AuditSigner;
    use crate::audit::tree::LogTree;
    use crate::audit::witness::cosigner::{Cosigned, Cosigner};
    use crate::audit::witness::keys::{CosignerKey, NOTE_ED25519};

    const ORIGIN: &str = "consent-api/empresas/11222333000181";

    /// A witness in memory, behind the gateway port.
    struct InMemory {
        cosigner: Cosigner,
        logs: BTreeMap<String, Vec<VerifierKey>>,
        state: Mutex<Option<Cosigned>>,
    }

    impl WitnessGateway for InMemory {
        fn add_checkpoint(&self, body: &str) -> anyhow::Result<WitnessAnswer> {
            let mut state = self.state.lock().unwrap();
            Ok(
                match self
                    .cosigner
                    .add_checkpoint(body, &self.logs, |_| *state, 7)
                {
                    Ok(accepted) => {
                        *state = Some(accepted.cosigned);
                        WitnessAnswer::Cosigned(accepted.cosignatures)
                    }
                    Err(refusal) => match refusal {
                        crate::audit::witness::cosigner::Refusal::Conflict(n) => {
                            WitnessAnswer::Conflict(n)
                        }
                        other => WitnessAnswer::Refused(other.status()),
                    },
                },
            )
        }
    }

    fn entries(n: u64) -> Vec<AuditEntry> {
        crate::audit::witness::test_entries(n)
    }

    fn setup() -> (AuditSigner, Arc<InMemory>, Witnesses) {
        let log = AuditSigner::from_seed("consent-api", [1u8; 32]);
        let key = VerifierKey::new("consent-api", NOTE_ED25519, log.published_key().public_key);
        let cosigner = Cosigner::new(CosignerKey::from_seed("w1", [2u8; 32]));
        let vkey = cosigner.verifier_key();
        let witness = Arc::new(InMemory {
            cosigner,
            logs: BTreeMap::from([(ORIGIN.to_owned(), vec![key])]),
            state: Mutex::new(None),
        });
        let witnesses = Witnesses::new(vec![Witness {
            label: "http://w1".into(),
            key: vkey,
            gateway: witness.clone(),
        }]);
        (log, witness, witnesses)
    }

    fn submit(
        log: &AuditSigner,
        witnesses: &Witnesses,
        n: u64,
        old: u64,
    ) -> anyhow::Result<String> {
        let all = entries(n);
        let tree = LogTree::of(&all);
        let signed = note::sign(log, ORIGIN, n, &tree.root());
        let body = note::body(ORIGIN, n, &tree.root());
        let proof = move |from: u64| -> anyhow::Result<Vec<Hash>> {
            Ok(if from == 0 || from == n {
                vec![]
            } else {
                tree.consistency(from)
            })
        };
        let submission = Submission {
            note: &signed,
            body: &body,
            origin: ORIGIN,
            size: n,
        };
        witnesses.cosign(submission, old, &proof, 1)
    }

    #[test]
    fn the_kept_note_carries_the_witness_cosignature() {
        let (log, _, witnesses) = setup();
        let kept = submit(&log, &witnesses, 3, 0).unwrap();
        assert_eq!(note::parse(&kept).unwrap().signatures.len(), 2);
        let kept = submit(&log, &witnesses, 5, 3).unwrap();
        assert_eq!(note::parse(&kept).unwrap().signatures.len(), 2);
        assert!(!witnesses.health().last_unwitnessed());
    }

    #[test]
    fn a_witness_behind_the_job_is_caught_up_from_the_size_it_holds() {
        let (log, witness, witnesses) = setup();
        submit(&log, &witnesses, 2, 0).unwrap();
        // the job's previous checkpoint (4) never reached the witness
        let kept = submit(&log, &witnesses, 6, 4).unwrap();
        assert_eq!(note::parse(&kept).unwrap().signatures.len(), 2);
        assert_eq!(witness.state.lock().unwrap().unwrap().size, 6);
    }

    #[test]
    fn a_smaller_tree_after_a_cosigned_larger_one_is_refused() {
        let (log, _, witnesses) = setup();
        submit(&log, &witnesses, 4, 0).unwrap();
        let err = submit(&log, &witnesses, 3, 0).unwrap_err();
        let rolled: &RolledBack = err.downcast_ref().unwrap();
        assert_eq!((rolled.cosigned, rolled.size), (4, 3));
    }

    #[test]
    fn another_tree_of_a_size_the_witness_cosigned_is_refused_as_a_fork() {
        let (log, _, witnesses) = setup();
        submit(&log, &witnesses, 4, 0).unwrap();
        // the same size, one entry changed, signed as if there were no previous checkpoint
        let mut changed = entries(4);
        changed[3].bytes = b"rewritten".to_vec();
        let tree = LogTree::of(&changed);
        let signed = note::sign(&log, ORIGIN, 4, &tree.root());
        let body = note::body(ORIGIN, 4, &tree.root());
        let submission = Submission {
            note: &signed,
            body: &body,
            origin: ORIGIN,
            size: 4,
        };
        let err = witnesses
            .cosign(submission, 0, &|_| Ok(vec![]), 1)
            .unwrap_err();
        assert!(err.downcast_ref::<RolledBack>().is_some(), "{err}");
    }

    #[test]
    fn an_unreachable_witness_does_not_stop_signing_and_says_so() {
        struct Down;
        impl WitnessGateway for Down {
            fn add_checkpoint(&self, _: &str) -> anyhow::Result<WitnessAnswer> {
                anyhow::bail!("connection refused")
            }
        }
        let (log, _, _) = setup();
        let witnesses = Witnesses::new(vec![Witness {
            label: "http://down".into(),
            key: CosignerKey::from_seed("w1", [2u8; 32]).verifier_key(),
            gateway: Arc::new(Down),
        }]);
        let kept = submit(&log, &witnesses, 3, 0).unwrap();
        assert_eq!(note::parse(&kept).unwrap().signatures.len(), 1);
        assert!(witnesses.health().last_unwitnessed());
        assert_eq!(witnesses.health().unwitnessed_checkpoints(), 1);
    }
}
