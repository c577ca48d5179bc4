//! Consent requests: creation, reads, revocation, the subject export, HashConsulta and the
//! workers that keep their statuses (status poll, expiry, reconciler).

pub mod check;
pub mod counts;
pub mod create;
pub mod cursor;
pub mod expire;
pub mod export_subject;
pub mod get;
pub mod hash;
pub mod list;
pub mod page_bytes;
pub mod poll_statuses;
pub mod reconcile_creations;
pub mod revoke;
