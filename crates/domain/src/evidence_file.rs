//! Evidence files (issue 37, part 5; docs/evidencias.md): what a company keeps of a file of
//! evidence (a signed PDF, an image, a recording): its SHA-256, size and media type. The bytes
//! themselves live behind a port.

use chrono::{DateTime, Utc};

/// The media types a file may have: documents, images and recordings a consent is proven with.
/// Anything else is refused (415), so a download can never be served as HTML or script.
pub const EVIDENCE_MEDIA_TYPES: &[&str] = &[
    "application/pdf",
    "image/png",
    "image/jpeg",
    "audio/mpeg",
    "audio/ogg",
    "audio/wav",
    "video/mp4",
];

/// The allowed media type `content_type` names (its parameters and case ignored), or `None`.
pub fn evidence_media_type(content_type: &str) -> Option<&'static str> {
    let essence = content_type.split(';').next()?.trim();
    EVIDENCE_MEDIA_TYPES
        .iter()
        .copied()
        .find(|allowed| allowed.eq_ignore_ascii_case(essence))
}

/// Whether `raw` is a SHA-256 as files are named: 64 lower-case hex digits.
pub fn is_sha256_hex(raw: &str) -> bool {
    raw.len() == 64
        && raw
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// One file of a company.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceFile {
    /// Lower-case hex SHA-256 of the bytes.
    pub sha256: String,
    /// Bytes.
    pub size: u64,
    /// One of [`EVIDENCE_MEDIA_TYPES`].
    pub media_type: String,
    /// When the company first uploaded it.
    pub created_at: DateTime<Utc>,
    /// When retention deleted the bytes (the file is then known but not downloadable).
    pub bytes_deleted_at: Option<DateTime<Utc>>,
}

/// What linking a file to a request did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvidenceLink {
    /// Linked now, with its log entry.
    Linked,
    /// It already was (nothing written).
    AlreadyLinked,
    /// The company has no such file (or its bytes are deleted).
    NoFile,
    /// The company has no such confirmed request.
    NoRequest,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_media_type_is_found_whatever_its_case_and_parameters() {
        assert_eq!(
            evidence_media_type("Application/PDF; name=x"),
            Some("application/pdf")
        );
        assert_eq!(evidence_media_type("text/html"), None);
        assert_eq!(evidence_media_type(""), None);
    }

    #[test]
    fn only_64_lower_case_hex_digits_name_a_file() {
        assert!(is_sha256_hex(&"ab".repeat(32)));
        assert!(!is_sha256_hex(&"AB".repeat(32)));
        assert!(!is_sha256_hex(&"ab".repeat(31)));
        assert!(!is_sha256_hex(&"zz".repeat(32)));
    }
}
