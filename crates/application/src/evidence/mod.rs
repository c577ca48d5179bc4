//! Evidence files (issue 37, part 5; docs/evidencias.md): a company's files (signed PDFs,
//! images, recordings) stored content-addressed by SHA-256 within the company, linked to its
//! consent requests with a log entry each, downloaded by its auditors, and their bytes deleted by
//! retention ([`EvidenceFiles`]). An upload is hashed and written part by part as it arrives
//! ([`Upload`]), never held whole; each company has a bounded number of uploads under way
//! ([`UploadSlots`]).

mod evidence_files;
mod upload;
mod upload_slots;

pub use evidence_files::{Download, EvidenceError, EvidenceFiles, EvidenceLimits, Uploaded};
pub use upload::Upload;
pub use upload_slots::{UploadSlot, UploadSlots};
