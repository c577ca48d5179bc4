//! Witnessed checkpoints (C2SP `tlog-witness` and `tlog-cosignature`; docs/auditoria.md,
//! "Witnesses"): the verifier keys both sides name each other by (`keys`), the RFC 9162
//! consistency check a witness runs (`consistency`), the witness's own rule (`cosigner`: what
//! `consent-api witness serve` answers) and the checkpoint job's side (`submit`: each new
//! checkpoint goes to every configured witness, and their cosignatures are kept in its note).

pub mod consistency;
pub mod cosigner;
pub mod keys;
pub mod submit;
