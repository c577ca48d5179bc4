//! Retention: the purges of old webhook deliveries, blanked creations, idempotency keys and the
//! console's expired searches.

pub mod purge_console_searches;
pub mod purge_idempotency_keys;
pub mod purge_retention;

pub use purge_retention::DEFAULT_EVIDENCE_DAYS;
