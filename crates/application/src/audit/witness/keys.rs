//! Verifier keys (`vkey`s, as Go's `golang.org/x/mod/sumdb/note` writes them:
//! `<name>+<hex key id>+<base64(type || public key)>`) and Ed25519 cosignatures
//! (C2SP `tlog-cosignature`, `cosignature/v1`, type `0x04`).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ed25519_dalek::{Signer as _, SigningKey};
use sha2::{Digest, Sha256};

use crate::audit::signer::verifies;

/// The signature type of a log's Ed25519 note signature.
pub const NOTE_ED25519: u8 = 0x01;
/// The signature type of an Ed25519 `cosignature/v1`.
pub const COSIGNATURE_V1: u8 = 0x04;

/// The signature lines' dash (U+2014).
const DASH: &str = "\u{2014}";

/// The C2SP key id of a key of `key_type` under `name`: the first 4 bytes of
/// `SHA-256(name || 0x0A || type || public key)`.
pub fn key_id(name: &str, key_type: u8, public_key: &[u8; 32]) -> [u8; 4] {
    let digest = Sha256::new()
        .chain_update(name.as_bytes())
        .chain_update([b'\n', key_type])
        .chain_update(public_key)
        .finalize();
    [digest[0], digest[1], digest[2], digest[3]]
}

/// A verifier key: who signs (name, type, key) and the key id its signature lines carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifierKey {
    pub name: String,
    pub key_type: u8,
    pub key_id: [u8; 4],
    pub public_key: [u8; 32],
}

impl VerifierKey {
    pub fn new(name: &str, key_type: u8, public_key: [u8; 32]) -> Self {
        VerifierKey {
            name: name.to_owned(),
            key_type,
            key_id: key_id(name, key_type, &public_key),
            public_key,
        }
    }

    /// Reads `<name>+<hex key id>+<base64(type || key)>`; `None` when it is not one, when the
    /// type is not `0x01` or `0x04`, or when the key id is not the key's. Split from the left,
    /// as Go's `note.NewVerifier` does: a name never holds a `+` (signed-note), the standard
    /// base64 of the key often does.
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.trim().splitn(3, '+');
        let name = parts.next()?;
        let id = hex::decode(parts.next()?).ok()?;
        let blob = STANDARD.decode(parts.next()?).ok()?;
        if name.is_empty() || name.contains(char::is_whitespace) || blob.len() != 33 {
            return None;
        }
        let key_type = blob[0];
        if key_type != NOTE_ED25519 && key_type != COSIGNATURE_V1 {
            return None;
        }
        let public_key: [u8; 32] = blob[1..].try_into().ok()?;
        let key = VerifierKey::new(name, key_type, public_key);
        (id == key.key_id).then_some(key)
    }

    /// Whether a signature line's name and key id are this key's.
    pub fn names(&self, name: &str, key_id: &[u8; 4]) -> bool {
        self.name == name && &self.key_id == key_id
    }
}

impl std::fmt::Display for VerifierKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut blob = vec![self.key_type];
        blob.extend_from_slice(&self.public_key);
        write!(
            f,
            "{}+{}+{}",
            self.name,
            hex::encode(self.key_id),
            STANDARD.encode(blob)
        )
    }
}

/// The message a `cosignature/v1` signs: `cosignature/v1\ntime <t>\n` and the checkpoint's body
/// (its text, without signature lines).
pub fn cosignature_message(time: u64, body: &str) -> String {
    format!("cosignature/v1\ntime {time}\n{body}")
}

/// A cosigner's Ed25519 key under its name.
pub struct CosignerKey {
    name: String,
    key: SigningKey,
}

impl std::fmt::Debug for CosignerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CosignerKey")
            .field("vkey", &self.verifier_key().to_string())
            .finish_non_exhaustive()
    }
}

impl CosignerKey {
    pub fn from_seed(name: &str, seed: [u8; 32]) -> Self {
        CosignerKey {
            name: name.to_owned(),
            key: SigningKey::from_bytes(&seed),
        }
    }

    /// The key others configure to check this cosigner's lines (type `0x04`).
    pub fn verifier_key(&self) -> VerifierKey {
        VerifierKey::new(
            &self.name,
            COSIGNATURE_V1,
            self.key.verifying_key().to_bytes(),
        )
    }

    /// The cosignature line of `body` at `time` (POSIX seconds):
    /// `— <name> base64(key id || u64 time, big-endian || signature)\n`.
    pub fn cosign(&self, time: u64, body: &str) -> String {
        let signature = self
            .key
            .sign(cosignature_message(time, body).as_bytes())
            .to_bytes();
        let mut blob = self.verifier_key().key_id.to_vec();
        blob.extend_from_slice(&time.to_be_bytes());
        blob.extend_from_slice(&signature);
        format!("{DASH} {} {}\n", self.name, STANDARD.encode(blob))
    }
}

/// The time of a valid `cosignature/v1` by `key` over `body`, given a signature line's name and
/// decoded blob (key id || time || signature); `None` when it is not one.
pub fn cosignature_time(key: &VerifierKey, body: &str, name: &str, blob: &[u8]) -> Option<u64> {
    if key.key_type != COSIGNATURE_V1 || blob.len() != 4 + 8 + 64 {
        return None;
    }
    let id: [u8; 4] = blob[..4].try_into().ok()?;
    if !key.names(name, &id) {
        return None;
    }
    let time = u64::from_be_bytes(blob[4..12].try_into().ok()?);
    verifies(
        &key.public_key,
        cosignature_message(time, body).as_bytes(),
        &blob[12..],
    )
    .then_some(time)
}

/// Splits a signature line (`— <name> <base64>`) into its name and decoded blob.
pub fn signature_line(line: &str) -> Option<(&str, Vec<u8>)> {
    let rest = line.strip_prefix(DASH)?.strip_prefix(' ')?;
    let (name, blob) = rest.split_once(' ')?;
    Some((name, STANDARD.decode(blob.trim_end()).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vkey_reads_back_and_a_wrong_key_id_is_refused() {
        let key = CosignerKey::from_seed("witness.example/w1", [4u8; 32]).verifier_key();
        let text = key.to_string();
        assert!(text.starts_with("witness.example/w1+"));
        assert_eq!(VerifierKey::parse(&text), Some(key.clone()));
        let wrong = text.replacen(&hex::encode(key.key_id), "00000000", 1);
        assert_eq!(VerifierKey::parse(&wrong), None);
    }

    #[test]
    fn a_vkey_whose_base64_holds_a_plus_reads_back() {
        // the vkey aics-witness (PyPI) printed for its key: `+` inside the key's base64
        let text = "witness.test/aics+cbeaef6b+BBHnRq74IqdJy7GvWFhv5QWK7xLMo2+Yz4BHU7Dwf23Y";
        let key = VerifierKey::parse(text).expect("a valid vkey");
        assert_eq!(key.name, "witness.test/aics");
        assert_eq!(key.key_type, COSIGNATURE_V1);
        assert_eq!(key.to_string(), text);
        // and one of ours (a seed whose key encodes with a `+`)
        let ours = (0u8..=255)
            .map(|b| CosignerKey::from_seed("w.example/w1", [b; 32]).verifier_key())
            .find(|k| k.to_string().matches('+').count() > 2)
            .expect("some seed's key holds a `+` in base64");
        assert_eq!(VerifierKey::parse(&ours.to_string()), Some(ours));
    }

    #[test]
    fn a_cosignature_verifies_over_the_checkpoint_at_its_time_only() {
        let cosigner = CosignerKey::from_seed("w", [4u8; 32]);
        let body = "example/log\n3\nAAAA\n";
        let line = cosigner.cosign(1_700_000_000, body);
        let (name, blob) = signature_line(line.trim_end()).unwrap();
        let key = cosigner.verifier_key();
        assert_eq!(
            cosignature_time(&key, body, name, &blob),
            Some(1_700_000_000)
        );
        assert_eq!(
            cosignature_time(&key, "example/log\n4\nAAAA\n", name, &blob),
            None
        );
        let mut later = blob.clone();
        later[11] ^= 1;
        assert_eq!(cosignature_time(&key, body, name, &later), None);
    }
}
