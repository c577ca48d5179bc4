//! What a witness answers to `add-checkpoint` (C2SP `tlog-witness`): it checks the log's
//! signature with the keys it is configured with for the checkpoint's origin, that the old size
//! is the size it last cosigned for that origin and that the consistency proof takes that tree
//! to the new one, and only then cosigns. The process around it (`consent-api witness serve`)
//! holds the state, checks and records under one lock, and persists before answering.

use std::collections::BTreeMap;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use super::consistency::{empty_root, verify_consistency};
use super::keys::{signature_line, CosignerKey, VerifierKey, NOTE_ED25519};
use crate::audit::signer::verifies;
use crate::audit::stored_tree::Hash;

/// The most proof lines the protocol allows.
const MAX_PROOF_LINES: usize = 63;

/// What a witness keeps per log: the latest checkpoint it cosigned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cosigned {
    pub size: u64,
    pub root: Hash,
}

/// Why a checkpoint is not cosigned, one variant per status the protocol names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// 400: the body is not an add-checkpoint request, or the old size is above the new one.
    #[error("bad request: {0}")]
    BadRequest(&'static str),
    /// 404: no log with this origin is configured.
    #[error("unknown origin")]
    UnknownOrigin,
    /// 403: no valid signature by a key configured for the origin.
    #[error("no valid signature by the log's key")]
    Forbidden,
    /// 409: the old size is not the size last cosigned (carried).
    #[error("the latest cosigned size is {0}")]
    Conflict(u64),
    /// 422: the proof does not take the cosigned tree to the new one.
    #[error("not consistent: {0}")]
    Unprocessable(&'static str),
}

impl Refusal {
    pub fn status(&self) -> u16 {
        match self {
            Refusal::BadRequest(_) => 400,
            Refusal::UnknownOrigin => 404,
            Refusal::Forbidden => 403,
            Refusal::Conflict(_) => 409,
            Refusal::Unprocessable(_) => 422,
        }
    }
}

/// A checkpoint the witness accepted: what to record for its origin and the lines to answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    pub origin: String,
    pub cosigned: Cosigned,
    /// The cosignature line(s), each ending in a newline.
    pub cosignatures: String,
}

/// A parsed add-checkpoint request.
struct Request<'a> {
    old: u64,
    proof: Vec<Hash>,
    /// The checkpoint's text (origin, size, root and any extension lines).
    body: &'a str,
    origin: &'a str,
    size: u64,
    root: Hash,
    signatures: Vec<(&'a str, Vec<u8>)>,
}

fn parse(request: &str) -> Result<Request<'_>, Refusal> {
    let bad = Refusal::BadRequest;
    let (head, note) = request
        .split_once("\n\n")
        .ok_or(bad("no empty line before the checkpoint"))?;
    let mut head_lines = head.split('\n');
    let old = head_lines
        .next()
        .and_then(|l| l.strip_prefix("old "))
        .filter(|n| *n == "0" || !n.starts_with('0'))
        .and_then(|n| n.parse::<u64>().ok())
        .ok_or(bad("the first line must be old <size>"))?;
    let proof = head_lines
        .map(|l| {
            STANDARD
                .decode(l)
                .ok()
                .and_then(|h| <Hash>::try_from(h).ok())
        })
        .collect::<Option<Vec<Hash>>>()
        .ok_or(bad("a proof line is not a base64 hash"))?;
    if proof.len() > MAX_PROOF_LINES {
        return Err(bad("more than 63 proof lines"));
    }
    let (text, signatures) = note
        .split_once("\n\n")
        .ok_or(bad("the checkpoint has no signature"))?;
    let body = &note[..text.len() + 1];
    let mut lines = text.split('\n');
    let origin = lines
        .next()
        .filter(|o| !o.is_empty())
        .ok_or(bad("no origin"))?;
    let size = lines
        .next()
        .and_then(|n| n.parse::<u64>().ok())
        .ok_or(bad("no tree size"))?;
    let root = lines
        .next()
        .and_then(|r| STANDARD.decode(r).ok())
        .and_then(|r| <Hash>::try_from(r).ok())
        .ok_or(bad("no root hash"))?;
    if !signatures.ends_with('\n') {
        return Err(bad("the checkpoint must end in a newline"));
    }
    let signatures = signatures
        .trim_end_matches('\n')
        .split('\n')
        .map(signature_line)
        .collect::<Option<Vec<_>>>()
        .ok_or(bad("a signature line is malformed"))?;
    Ok(Request {
        old,
        proof,
        body,
        origin,
        size,
        root,
        signatures,
    })
}

/// The witness: its key, and the logs it knows (origin → the log's verifier keys).
#[derive(Debug)]
pub struct Cosigner {
    key: CosignerKey,
}

impl Cosigner {
    pub fn new(key: CosignerKey) -> Self {
        Cosigner { key }
    }

    pub fn verifier_key(&self) -> VerifierKey {
        self.key.verifier_key()
    }

    /// Checks `request` against the logs the witness knows and what it last cosigned for the
    /// origin (`latest`), and cosigns at `now` (POSIX seconds). The caller records the accepted
    /// state before answering, under the same lock as the read of `latest`.
    pub fn add_checkpoint(
        &self,
        request: &str,
        logs: &BTreeMap<String, Vec<VerifierKey>>,
        latest: impl FnOnce(&str) -> Option<Cosigned>,
        now: u64,
    ) -> Result<Accepted, Refusal> {
        let request = parse(request)?;
        let keys = logs.get(request.origin).ok_or(Refusal::UnknownOrigin)?;
        let mut signed = false;
        for (name, blob) in &request.signatures {
            let Some(id) = blob.get(..4) else { continue };
            for key in keys.iter().filter(|k| k.key_type == NOTE_ED25519) {
                if key.names(name, &[id[0], id[1], id[2], id[3]]) {
                    if !verifies(&key.public_key, request.body.as_bytes(), &blob[4..]) {
                        return Err(Refusal::Forbidden);
                    }
                    signed = true;
                }
            }
        }
        if !signed {
            return Err(Refusal::Forbidden);
        }
        if request.old > request.size {
            return Err(Refusal::BadRequest(
                "the old size is above the checkpoint's",
            ));
        }
        let previous = latest(request.origin);
        let cosigned_size = previous.map_or(0, |p| p.size);
        if request.old != cosigned_size {
            return Err(Refusal::Conflict(cosigned_size));
        }
        if request.size == 0 && request.root != empty_root() {
            return Err(Refusal::Unprocessable("an empty tree has another root"));
        }
        let consistent = match previous {
            None => request.proof.is_empty(),
            Some(previous) => verify_consistency(
                previous.size,
                request.size,
                &previous.root,
                &request.root,
                &request.proof,
            ),
        };
        if !consistent {
            return Err(Refusal::Unprocessable(
                "the proof does not take the cosigned tree to this one",
            ));
        }
        Ok(Accepted {
            origin: request.origin.to_owned(),
            cosigned: Cosigned {
                size: request.size,
                root: request.root,
            },
            cosignatures: self.key.cosign(now, request.body),
        })
    }
}

#[cfg(test)]
mod tests {
    use ports::AuditEntry;

    use super::*;
    use crate::audit::note;
    use crate::audit::signer::AuditSigner;
    use crate::audit::tree::LogTree;
    use crate::audit::witness::keys::cosignature_time;

    const ORIGIN: &str = "consent-api/empresas/11222333000181";

    fn entries(n: u64) -> Vec<AuditEntry> {
        crate::audit::witness::test_entries(n)
    }

    fn log() -> AuditSigner {
        AuditSigner::from_seed("consent-api", [1u8; 32])
    }

    fn logs() -> BTreeMap<String, Vec<VerifierKey>> {
        let key = VerifierKey::new(
            "consent-api",
            NOTE_ED25519,
            log().published_key().public_key,
        );
        BTreeMap::from([(ORIGIN.to_owned(), vec![key])])
    }

    fn request(old: u64, entries: &[AuditEntry]) -> String {
        let tree = LogTree::of(entries);
        let proof: String = if old == 0 || old == tree.size() {
            String::new()
        } else {
            tree.consistency(old)
                .iter()
                .map(|h| format!("{}\n", STANDARD.encode(h)))
                .collect()
        };
        let checkpoint = note::sign(&log(), ORIGIN, tree.size(), &tree.root());
        format!("old {old}\n{proof}\n{checkpoint}")
    }

    fn witness() -> Cosigner {
        Cosigner::new(CosignerKey::from_seed("witness.test/w1", [2u8; 32]))
    }

    fn cosigned(n: u64) -> Option<Cosigned> {
        Some(Cosigned {
            size: n,
            root: LogTree::of(&entries(n)).root(),
        })
    }

    #[test]
    fn a_first_checkpoint_is_cosigned_and_its_cosignature_verifies() {
        let all = entries(4);
        let accepted = witness()
            .add_checkpoint(&request(0, &all), &logs(), |_| None, 1_700_000_000)
            .unwrap();
        assert_eq!(accepted.cosigned, cosigned(4).unwrap());
        let (name, blob) = signature_line(accepted.cosignatures.trim_end()).unwrap();
        let body = note::body(ORIGIN, 4, &LogTree::of(&all).root());
        let key = witness().verifier_key();
        assert_eq!(
            cosignature_time(&key, &body, name, &blob),
            Some(1_700_000_000)
        );
    }

    #[test]
    fn a_consistent_checkpoint_from_the_cosigned_size_is_cosigned() {
        let accepted =
            witness().add_checkpoint(&request(3, &entries(7)), &logs(), |_| cosigned(3), 1);
        assert_eq!(accepted.unwrap().cosigned.size, 7);
    }

    #[test]
    fn a_smaller_checkpoint_after_a_larger_one_is_a_conflict_naming_the_cosigned_size() {
        let refusal = witness()
            .add_checkpoint(&request(0, &entries(3)), &logs(), |_| cosigned(4), 1)
            .unwrap_err();
        assert_eq!(refusal, Refusal::Conflict(4));
        assert_eq!(refusal.status(), 409);
    }

    #[test]
    fn a_rewritten_log_is_not_cosigned() {
        let mut rewritten = entries(6);
        rewritten[1].bytes = b"changed".to_vec();
        let refusal = witness()
            .add_checkpoint(&request(3, &rewritten), &logs(), |_| cosigned(3), 1)
            .unwrap_err();
        assert_eq!(refusal.status(), 422);
    }

    #[test]
    fn an_unknown_origin_is_404_and_a_foreign_signature_403() {
        let req = request(0, &entries(2)).replace(ORIGIN, "other/empresas/1");
        let refusal = witness()
            .add_checkpoint(&req, &logs(), |_| None, 1)
            .unwrap_err();
        assert_eq!(refusal.status(), 404);

        let stranger = AuditSigner::from_seed("consent-api", [9u8; 32]);
        let tree = LogTree::of(&entries(2));
        let req = format!(
            "old 0\n\n{}",
            note::sign(&stranger, ORIGIN, 2, &tree.root())
        );
        let refusal = witness()
            .add_checkpoint(&req, &logs(), |_| None, 1)
            .unwrap_err();
        assert_eq!(refusal.status(), 403);
    }
}
