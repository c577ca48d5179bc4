//! The evidence files' bytes in an S3-compatible bucket (docs/evidencias.md, "Storage"), when
//! `evidencias.s3_*` is set: [`S3EvidenceStore`], the [`ports::EvidenceStore`] over the
//! `object_store` crate's S3 client.

mod keys;
mod runtime;
mod settings;
mod store;

pub use keys::{file_key, upload_key, UPLOADS_PREFIX};
pub use settings::S3Settings;
pub use store::S3EvidenceStore;
