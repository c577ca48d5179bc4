//! Checkpoints in the C2SP `tlog-checkpoint` format, as signed notes (C2SP `signed-note`):
//!
//! ```text
//! <origin>\n<tree size>\n<base64 root hash>\n\n— <key name> <base64(key hash || signature)>\n
//! ```
//!
//! The signature is Ed25519 over the note's text: the three lines, each ending in a newline.
//! The origin names the service and the company: `<name>/empresas/<cnpj>`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use super::signer::AuditSigner;

/// The signature line's dash: U+2014 EM DASH, as C2SP writes it.
const DASH: &str = "\u{2014}";

/// The origin line of a company's log.
pub fn origin(name: &str, company_cnpj: &str) -> String {
    format!("{name}/empresas/{company_cnpj}")
}

/// The checkpoint's text (what is signed).
pub fn body(origin: &str, size: u64, root: &[u8; 32]) -> String {
    format!("{origin}\n{size}\n{}\n", STANDARD.encode(root))
}

/// The whole signed note.
pub fn sign(signer: &AuditSigner, origin: &str, size: u64, root: &[u8; 32]) -> String {
    let text = body(origin, size, root);
    let mut blob = signer.key_hash().to_vec();
    blob.extend_from_slice(&signer.sign(text.as_bytes()));
    format!(
        "{text}\n{DASH} {} {}\n",
        signer.name(),
        STANDARD.encode(blob)
    )
}

/// A note read back: its text and each signature line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedNote {
    pub origin: String,
    pub size: u64,
    pub root: [u8; 32],
    /// The signed text.
    pub text: String,
    /// (key name, key hash, signature) of each signature line.
    pub signatures: Vec<(String, [u8; 4], Vec<u8>)>,
}

/// Reads a checkpoint note; `None` when it is not one.
pub fn parse(note: &str) -> Option<ParsedNote> {
    let (text, signatures) = note.split_once("\n\n")?;
    let text = format!("{text}\n");
    let mut lines = text.lines();
    let origin = lines.next()?.to_owned();
    let size = lines.next()?.parse().ok()?;
    let root: [u8; 32] = STANDARD.decode(lines.next()?).ok()?.try_into().ok()?;
    let signatures = signatures
        .lines()
        .map(|line| {
            let rest = line.strip_prefix(DASH)?.strip_prefix(' ')?;
            let (name, blob) = rest.split_once(' ')?;
            let blob = STANDARD.decode(blob).ok()?;
            if blob.len() < 5 {
                return None;
            }
            let hash = [blob[0], blob[1], blob[2], blob[3]];
            Some((name.to_owned(), hash, blob[4..].to_vec()))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(ParsedNote {
        origin,
        size,
        root,
        text,
        signatures,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::signer::verifies;

    #[test]
    fn a_signed_note_reads_back_and_its_signature_verifies() {
        let signer = AuditSigner::from_seed("consent-api", [3u8; 32]);
        let origin = origin("consent-api", "11222333000181");
        let note = sign(&signer, &origin, 5, &[9u8; 32]);
        assert!(note.starts_with("consent-api/empresas/11222333000181\n5\n"));
        let parsed = parse(&note).unwrap();
        assert_eq!((parsed.size, parsed.root), (5, [9u8; 32]));
        let (name, hash, signature) = &parsed.signatures[0];
        assert_eq!((name.as_str(), *hash), ("consent-api", signer.key_hash()));
        let key = signer.published_key().public_key;
        assert!(verifies(&key, parsed.text.as_bytes(), signature));
    }
}
