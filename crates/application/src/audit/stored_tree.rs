//! The company's tree as stored nodes (docs/auditoria.md, "Stored tree"): node (level l, index
//! k) is the root of the perfect subtree of leaves `[k * 2^l, (k + 1) * 2^l)`, stored once that
//! subtree is complete. Every subtree RFC 9162's recursion visits (MTH, PATH and SUBPROOF,
//! sections 2.1.1-2.1.4) starts at a multiple of the largest power of two not above its width,
//! so it is a run of perfect subtrees, largest first (the binary digits of its width): the root
//! of a tree of n leaves, an inclusion proof and a consistency proof each need O(log n) stored
//! nodes, read by key, and appending leaves only hashes the nodes they complete. `LogTree`
//! (ct-merkle) stays the reference the tests hold this against, and the fallback for a log whose
//! nodes are not stored yet.

use std::collections::{BTreeMap, BTreeSet};

use ports::TreeNode;
use sha2::{Digest, Sha256};

pub type Hash = [u8; 32];

/// RFC 9162 leaf hash: SHA-256(0x00 || entry).
pub fn leaf_hash(entry: &[u8]) -> Hash {
    Sha256::new()
        .chain_update([0u8])
        .chain_update(entry)
        .finalize()
        .into()
}

/// RFC 9162 node hash: SHA-256(0x01 || left || right).
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    Sha256::new()
        .chain_update([1u8])
        .chain_update(left)
        .chain_update(right)
        .finalize()
        .into()
}

/// Leaves `[start, end)` of the tree: a subtree of RFC 9162's recursion (or of a proof).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: u64,
    pub end: u64,
}

/// The perfect subtrees that make up `span`, largest (leftmost) first. `span.start` must be a
/// multiple of the largest power of two not above its width, as for every span of the recursion.
pub fn pieces(span: Span) -> Vec<TreeNode> {
    let width = span.end - span.start;
    let mut at = span.start;
    let mut out = Vec::new();
    for level in (0..64u8).rev() {
        if width >> level & 1 == 1 {
            out.push(TreeNode {
                level,
                index: at >> level,
            });
            at += 1 << level;
        }
    }
    out
}

/// The largest power of two smaller than `n` (n >= 2): RFC 9162's split point k.
fn split(n: u64) -> u64 {
    1 << (63 - (n - 1).leading_zeros())
}

/// The spans whose hashes form the inclusion proof of leaf `index` in a tree of `size` leaves,
/// leaf to root (RFC 9162 2.1.3.1, PATH).
pub fn inclusion_spans(index: u64, size: u64) -> Vec<Span> {
    fn path(m: u64, start: u64, end: u64, out: &mut Vec<Span>) {
        let n = end - start;
        if n <= 1 {
            return;
        }
        let k = split(n);
        if m < k {
            path(m, start, start + k, out);
            out.push(Span {
                start: start + k,
                end,
            });
        } else {
            path(m - k, start + k, end, out);
            out.push(Span {
                start,
                end: start + k,
            });
        }
    }
    let mut out = Vec::new();
    if index < size {
        path(index, 0, size, &mut out);
    }
    out
}

/// The spans whose hashes form the consistency proof from the first `old` leaves to `size`
/// leaves (RFC 9162 2.1.4.1, SUBPROOF with b = true); empty when `old` is 0 or `size`.
pub fn consistency_spans(old: u64, size: u64) -> Vec<Span> {
    fn subproof(m: u64, start: u64, end: u64, complete: bool, out: &mut Vec<Span>) {
        let n = end - start;
        if m == n {
            if !complete {
                out.push(Span { start, end });
            }
            return;
        }
        let k = split(n);
        if m <= k {
            subproof(m, start, start + k, complete, out);
            out.push(Span {
                start: start + k,
                end,
            });
        } else {
            subproof(m - k, start + k, end, false, out);
            out.push(Span {
                start,
                end: start + k,
            });
        }
    }
    let mut out = Vec::new();
    if old > 0 && old < size {
        subproof(old, 0, size, true, &mut out);
    }
    out
}

/// The stored nodes the hashes of `spans` are made of (deduplicated: the right edge's spans
/// share their pieces).
pub fn needed<'a>(spans: impl IntoIterator<Item = &'a Span>) -> BTreeSet<TreeNode> {
    spans.into_iter().flat_map(|s| pieces(*s)).collect()
}

/// The hash of `span` from its pieces (`None` when one is missing): RFC 9162's MTH, whose
/// recursion on a run of perfect subtrees folds them from the right.
pub fn span_hash(span: Span, nodes: &BTreeMap<TreeNode, Hash>) -> Option<Hash> {
    let mut parts = pieces(span).into_iter().rev();
    let mut acc = *nodes.get(&parts.next()?)?;
    for piece in parts {
        acc = node_hash(nodes.get(&piece)?, &acc);
    }
    Some(acc)
}

/// The root of the first `size` leaves (`size` >= 1).
pub fn root_span(size: u64) -> Span {
    Span {
        start: 0,
        end: size,
    }
}

/// Appends `leaves` (leaf hashes) to a tree of `size` leaves whose right edge is `edge` (the
/// hashes of `pieces(root_span(size))`, in that order): every node the new leaves complete,
/// level 0 (the leaves) included, in the order they complete.
pub fn extend(size: u64, edge: &[Hash], leaves: &[Hash]) -> Vec<(TreeNode, Hash)> {
    let mut stack: Vec<(TreeNode, Hash)> = pieces(root_span(size))
        .into_iter()
        .zip(edge.iter().copied())
        .collect();
    let mut out = Vec::with_capacity(leaves.len() * 2);
    for (i, leaf) in leaves.iter().enumerate() {
        let index = size + i as u64;
        let mut top = (TreeNode { level: 0, index }, *leaf);
        out.push(top);
        // the right edge's last pieces merge while two of one level end the tree
        while let Some(&(left, left_hash)) = stack.last() {
            if left.level != top.0.level {
                break;
            }
            stack.pop();
            top = (
                TreeNode {
                    level: left.level + 1,
                    index: left.index >> 1,
                },
                node_hash(&left_hash, &top.1),
            );
            out.push(top);
        }
        stack.push(top);
    }
    out
}

#[cfg(test)]
mod tests {
    use ports::{AuditEntry, LogPosition};
    use uuid::Uuid;

    use super::*;
    use crate::audit::tree::LogTree;

    fn entries(n: u64) -> Vec<AuditEntry> {
        (0..n)
            .map(|i| AuditEntry {
                request_id: Uuid::nil(),
                bytes: format!("{{\"n\":\"{i}\"}}").into_bytes(),
                position: LogPosition {
                    transaction: 10,
                    sequence: i as i64,
                },
            })
            .collect()
    }

    /// Every node of a tree of `n` leaves, built by appending in uneven batches (as the signer
    /// does round after round), each batch from the stored right edge only.
    fn stored(entries: &[AuditEntry]) -> BTreeMap<TreeNode, Hash> {
        let mut nodes = BTreeMap::new();
        let mut size = 0u64;
        let mut batch = 1usize;
        while (size as usize) < entries.len() {
            let end = (size as usize + batch).min(entries.len());
            let edge: Vec<Hash> = pieces(root_span(size)).iter().map(|p| nodes[p]).collect();
            let leaves: Vec<Hash> = entries[size as usize..end]
                .iter()
                .map(|e| leaf_hash(&e.bytes))
                .collect();
            nodes.extend(extend(size, &edge, &leaves));
            size = end as u64;
            batch = batch % 7 + 2;
        }
        nodes
    }

    fn hashes(spans: &[Span], nodes: &BTreeMap<TreeNode, Hash>) -> Vec<Hash> {
        spans
            .iter()
            .map(|s| span_hash(*s, nodes).unwrap())
            .collect()
    }

    #[test]
    fn roots_and_inclusion_proofs_from_stored_nodes_are_ct_merkles_for_every_size_and_index() {
        let all = entries(300);
        let nodes = stored(&all);
        for size in 1..=300u64 {
            let reference = LogTree::of(&all[..size as usize]);
            assert_eq!(
                span_hash(root_span(size), &nodes),
                Some(reference.root()),
                "root of {size}"
            );
            for index in 0..size {
                let spans = inclusion_spans(index, size);
                assert_eq!(
                    hashes(&spans, &nodes),
                    reference.inclusion(index),
                    "inclusion of {index} in {size}"
                );
                // O(log n): at most two pieces a level (a sibling, and the right edge's run)
                assert!(needed(&spans).len() <= 2 * 64 - (size.leading_zeros() as usize) * 2);
            }
        }
    }

    #[test]
    fn consistency_proofs_from_stored_nodes_are_ct_merkles_for_every_pair_of_sizes() {
        let all = entries(70);
        let nodes = stored(&all);
        for size in 1..=70u64 {
            let reference = LogTree::of(&all[..size as usize]);
            for old in 1..=size {
                assert_eq!(
                    hashes(&consistency_spans(old, size), &nodes),
                    reference.consistency(old),
                    "consistency {old} -> {size}"
                );
            }
        }
    }

    #[test]
    fn appending_stores_exactly_the_complete_subtrees() {
        let nodes = stored(&entries(13));
        // 13 leaves: 13 at level 0, 6 at 1, 3 at 2, 1 at 3
        for (level, count) in [(0u8, 13u64), (1, 6), (2, 3), (3, 1), (4, 0)] {
            let at: Vec<u64> = nodes
                .keys()
                .filter(|n| n.level == level)
                .map(|n| n.index)
                .collect();
            assert_eq!(at, (0..count).collect::<Vec<_>>(), "level {level}");
        }
    }

    #[test]
    fn a_proof_deep_in_a_large_tree_needs_a_logarithmic_number_of_nodes() {
        let size = 1_000_003u64;
        for index in [0, 1, 524_287, 999_999, size - 1] {
            let spans = inclusion_spans(index, size);
            assert!(spans.len() <= 20, "{index}: {} hashes", spans.len());
            assert!(needed(&spans).len() <= 40, "{index}");
        }
        assert!(needed(&consistency_spans(12_345, size)).len() <= 40);
    }
}
