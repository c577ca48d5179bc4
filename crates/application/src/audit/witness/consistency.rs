//! The check of an RFC 9162 consistency proof (section 2.1.4.2), as a witness runs it on every
//! checkpoint it is asked to cosign, and as `consent-api audit monitor` runs it.

use sha2::{Digest, Sha256};

use crate::audit::stored_tree::{node_hash, Hash};

/// The root of the empty tree: SHA-256 of the empty string.
pub fn empty_root() -> Hash {
    Sha256::digest([]).into()
}

/// Whether `proof` shows that the tree of `old` leaves with root `old_root` is a prefix of the
/// tree of `new` leaves with root `new_root`.
pub fn verify_consistency(
    old: u64,
    new: u64,
    old_root: &Hash,
    new_root: &Hash,
    proof: &[Hash],
) -> bool {
    if old > new {
        return false;
    }
    if old == new {
        return proof.is_empty() && old_root == new_root;
    }
    if old == 0 {
        return proof.is_empty();
    }
    if proof.is_empty() {
        return false;
    }
    let mut path: Vec<Hash> = Vec::with_capacity(proof.len() + 1);
    if old.is_power_of_two() {
        path.push(*old_root);
    }
    path.extend_from_slice(proof);
    let (mut fn_, mut sn) = (old - 1, new - 1);
    while fn_ & 1 == 1 {
        fn_ >>= 1;
        sn >>= 1;
    }
    let (mut fr, mut sr) = (path[0], path[0]);
    for c in &path[1..] {
        if sn == 0 {
            return false;
        }
        if fn_ & 1 == 1 || fn_ == sn {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            if fn_ & 1 == 0 {
                while fn_ & 1 == 0 && fn_ != 0 {
                    fn_ >>= 1;
                    sn >>= 1;
                }
            }
        } else {
            sr = node_hash(&sr, c);
        }
        fn_ >>= 1;
        sn >>= 1;
    }
    &fr == old_root && &sr == new_root && sn == 0
}

#[cfg(test)]
mod tests {
    use ports::AuditEntry;

    use super::*;
    use crate::audit::tree::LogTree;

    fn entries(n: u64) -> Vec<AuditEntry> {
        crate::audit::witness::test_entries(n)
    }

    #[test]
    fn every_consistency_proof_of_ct_merkle_verifies_and_a_changed_root_does_not() {
        let all = entries(40);
        for new in 1..=40u64 {
            let tree = LogTree::of(&all[..new as usize]);
            for old in 1..new {
                let old_root = LogTree::of(&all[..old as usize]).root();
                let proof = tree.consistency(old);
                assert!(
                    verify_consistency(old, new, &old_root, &tree.root(), &proof),
                    "{old} -> {new}"
                );
                let mut wrong = old_root;
                wrong[0] ^= 1;
                assert!(!verify_consistency(old, new, &wrong, &tree.root(), &proof));
            }
        }
    }

    #[test]
    fn a_smaller_tree_is_never_consistent_with_a_larger_one() {
        let all = entries(4);
        let three = LogTree::of(&all[..3]).root();
        let four = LogTree::of(&all).root();
        assert!(!verify_consistency(4, 3, &four, &three, &[]));
    }
}
