//! The verifiable log of consent requests (issue 24; docs/auditoria.md): one RFC 9162 Merkle tree
//! per company over the entries its changes appended, signed checkpoints (C2SP signed notes),
//! inclusion and consistency proofs, signed receipts (JWS) and the offline check of it all.

pub mod audit_log;
pub mod chain;
pub mod entry;
pub mod note;
pub mod sign_checkpoints;
pub mod signer;
pub mod stored_tree;
pub mod tree;
pub mod verify;
pub mod witness;
