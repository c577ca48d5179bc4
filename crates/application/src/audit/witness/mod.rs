//! Witnessed checkpoints (C2SP `tlog-witness` and `tlog-cosignature`; docs/auditoria.md,
//! "Witnesses"): the verifier keys both sides name each other by (`keys`), the RFC 9162
//! consistency check a witness runs (`consistency`), the witness's own rule (`cosigner`: what
//! `consent-api witness serve` answers) and the checkpoint job's side (`submit`: each new
//! checkpoint goes to every configured witness, and their cosignatures are kept in its note).

pub mod consistency;
pub mod cosigner;
pub mod keys;
pub mod submit;

use domain::Company;

use crate::audit::audit_log::AuditLog;
use crate::audit::note;

/// Whether the company's latest checkpoint carries a signature besides the log's own (a
/// witness's cosignature); `None` before its first checkpoint, without the audit log, or when it
/// cannot be read (`GET /api/status` reports the PGCC's health whatever the log's state).
pub fn latest_cosigned(log: Option<&AuditLog>, company: &Company) -> Option<bool> {
    let checkpoint = log?.checkpoint(company).ok()?;
    note::parse(&checkpoint).map(|parsed| parsed.signatures.len() > 1)
}

/// `n` audit entries of distinct made-up requests, in log order: the witness tests' log.
#[cfg(test)]
pub(crate) fn test_entries(n: u64) -> Vec<ports::AuditEntry> {
    (0..n)
        .map(|i| ports::AuditEntry {
            request_id: uuid::Uuid::from_u128(u128::from(i)),
            bytes: format!("{{\"n\":\"{i}\"}}").into_bytes(),
            position: ports::LogPosition {
                transaction: i as i64,
                sequence: 0,
            },
        })
        .collect()
}
