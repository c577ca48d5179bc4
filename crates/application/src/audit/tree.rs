//! The company's log as an RFC 9162 tree (ct-merkle's memory-backed tree): leaves are the
//! entries' canonical bytes, leaf hash SHA-256(0x00 || entry), node SHA-256(0x01 || left ||
//! right). The reference the stored tree (`stored_tree`) is tested against, and the fallback that
//! rebuilds a company's tree from its entries while its stored tree is not there yet
//! (docs/auditoria.md, "Stored tree").

use ct_merkle::mem_backed_tree::MemoryBackedTree;
use ports::AuditEntry;
use sha2_ct::Sha256;

/// A company's tree over the first entries of its log.
pub struct LogTree(MemoryBackedTree<Sha256, Vec<u8>>);

impl LogTree {
    /// The tree of `entries`, in log order.
    pub fn of(entries: &[AuditEntry]) -> Self {
        let mut tree = MemoryBackedTree::new();
        for entry in entries {
            tree.push(entry.bytes.clone());
        }
        LogTree(tree)
    }

    pub fn size(&self) -> u64 {
        self.0.len()
    }

    /// The root hash (SHA-256 of nothing for an empty tree, as RFC 9162 says).
    pub fn root(&self) -> [u8; 32] {
        digest32(self.0.root().as_bytes())
    }

    /// The inclusion proof of leaf `index` (< size): sibling hashes, leaf to root.
    pub fn inclusion(&self, index: u64) -> Vec<[u8; 32]> {
        hashes(self.0.prove_inclusion(index as usize).as_bytes())
    }

    /// The consistency proof from the tree's first `old_size` leaves (1 ..= size) to the whole.
    pub fn consistency(&self, old_size: u64) -> Vec<[u8; 32]> {
        let additions = self.size() - old_size;
        hashes(self.0.prove_consistency(additions as usize).as_bytes())
    }
}

fn digest32(bytes: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(bytes);
    out
}

fn hashes(bytes: &[u8]) -> Vec<[u8; 32]> {
    bytes.chunks_exact(32).map(digest32).collect()
}

#[cfg(test)]
mod tests {
    use ports::LogPosition;
    use sha2::{Digest, Sha256};
    use uuid::Uuid;

    use super::*;

    fn entries(n: usize) -> Vec<AuditEntry> {
        (0..n)
            .map(|i| AuditEntry {
                request_id: Uuid::nil(),
                bytes: format!("entry {i}").into_bytes(),
                position: LogPosition {
                    transaction: 10,
                    sequence: i as i64,
                },
            })
            .collect()
    }

    fn leaf(bytes: &[u8]) -> [u8; 32] {
        Sha256::new()
            .chain_update([0u8])
            .chain_update(bytes)
            .finalize()
            .into()
    }

    fn node(left: &[u8; 32], right: &[u8; 32]) -> [u8; 32] {
        Sha256::new()
            .chain_update([1u8])
            .chain_update(left)
            .chain_update(right)
            .finalize()
            .into()
    }

    #[test]
    fn the_root_of_three_entries_is_rfc_9162s() {
        let e = entries(3);
        let expected = node(
            &node(&leaf(&e[0].bytes), &leaf(&e[1].bytes)),
            &leaf(&e[2].bytes),
        );
        assert_eq!(LogTree::of(&e).root(), expected);
    }

    #[test]
    fn an_inclusion_proof_names_the_siblings_leaf_to_root() {
        let e = entries(3);
        let proof = LogTree::of(&e).inclusion(2);
        assert_eq!(proof, vec![node(&leaf(&e[0].bytes), &leaf(&e[1].bytes))]);
    }
}
