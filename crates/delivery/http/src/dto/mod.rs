//! Wire shapes of the public API, each with its OpenAPI schema. Domain types stay free of
//! framework derives; these are converted from them at the delivery boundary.

pub mod access_log;
pub mod audit;
pub mod consent_check;
pub mod consent_read;
pub mod consent_request;
pub mod enumerations;
pub mod envelope;
pub mod event;
pub mod evidence_file;
pub mod export;
pub mod import;
pub mod pgcc_status;
pub mod record;
pub mod revocation;
pub mod subject_export;
pub mod sync;
pub mod text_rules;
pub mod use_case;
pub mod webhook_event;
pub mod webhook_url;
