//! Retention: the purges of old webhook deliveries, blanked creations and idempotency keys.

pub mod purge_idempotency_keys;
pub mod purge_retention;

pub use purge_retention::DEFAULT_EVIDENCE_DAYS;
