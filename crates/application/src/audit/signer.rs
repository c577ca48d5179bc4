//! The Ed25519 key that signs checkpoints and receipts, and what identifies it: the C2SP key hash
//! (the first 4 bytes of SHA-256(name || 0x0A || 0x01 || public key)), whose lower-case hex is
//! the `kid` of the JWKS and of the receipts (docs/auditoria.md, "Keys").

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use ed25519_dalek::{Signature, Signer as _, SigningKey, Verifier as _, VerifyingKey};
use ports::PublishedKey;
use sha2::{Digest, Sha256};

/// The signature type byte of Ed25519 in C2SP signed notes.
const ED25519: u8 = 0x01;

/// Signs with the service's key under its name (the signed notes' key name).
pub struct AuditSigner {
    name: String,
    key: SigningKey,
    key_hash: [u8; 4],
    /// The sandbox key (`auditoria.signing_key_sandbox`), which signs only for the sandbox
    /// companies (docs/auditoria.md, "The sandbox's key").
    sandbox: bool,
}

impl std::fmt::Debug for AuditSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditSigner")
            .field("name", &self.name)
            .field("kid", &self.kid())
            .field("sandbox", &self.sandbox)
            .finish_non_exhaustive()
    }
}

/// `APP__AUDITORIA__SIGNING_KEY` is not base64 of 32 bytes (the value is never echoed).
#[derive(Debug, thiserror::Error)]
#[error("must be base64 of a 32-byte Ed25519 seed (openssl rand -base64 32)")]
pub struct InvalidSigningKey;

impl AuditSigner {
    /// The production signer: it signs the real companies' checkpoints and receipts.
    pub fn from_seed(name: &str, seed: [u8; 32]) -> Self {
        let key = SigningKey::from_bytes(&seed);
        let key_hash = key_hash(name, key.verifying_key().as_bytes());
        AuditSigner {
            name: name.to_owned(),
            key,
            key_hash,
            sandbox: false,
        }
    }

    /// The sandbox signer: the same key name (a sandbox's origin and notes read as any other
    /// company's), a key of its own, so its kid differs and it is published marked as a
    /// sandbox key.
    pub fn sandbox_from_seed(name: &str, seed: [u8; 32]) -> Self {
        AuditSigner {
            sandbox: true,
            ..Self::from_seed(name, seed)
        }
    }

    /// Whether this is the sandbox key.
    pub fn is_sandbox(&self) -> bool {
        self.sandbox
    }

    /// A seed given as base64 (standard alphabet, padding optional) of 32 bytes.
    pub fn seed_from_base64(text: &str) -> Result<[u8; 32], InvalidSigningKey> {
        let text = text.trim();
        let bytes = STANDARD
            .decode(text)
            .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(text))
            .map_err(|_| InvalidSigningKey)?;
        bytes.try_into().map_err(|_| InvalidSigningKey)
    }

    /// 32 random bytes, for a development server's own key.
    pub fn random_seed() -> [u8; 32] {
        rand::random()
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn kid(&self) -> String {
        kid_of(&self.name, self.key.verifying_key().as_bytes())
    }

    pub fn key_hash(&self) -> [u8; 4] {
        self.key_hash
    }

    pub fn published_key(&self) -> PublishedKey {
        PublishedKey {
            kid: self.kid(),
            public_key: self.key.verifying_key().to_bytes(),
            sandbox: self.sandbox,
        }
    }

    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.key.sign(message).to_bytes()
    }

    /// A compact JWS (RFC 7515) of `payload`: header `{"alg":"EdDSA","kid":..,"typ":"JWT"}`,
    /// Ed25519 over `header.payload` (RFC 8037).
    pub fn compact_jws(&self, payload: &serde_json::Value) -> String {
        let header = serde_json::json!({"alg": "EdDSA", "kid": self.kid(), "typ": "JWT"});
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(payload.to_string())
        );
        let signature = self.sign(signing_input.as_bytes());
        format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature))
    }
}

/// The C2SP key hash of an Ed25519 public key under `name`.
pub fn key_hash(name: &str, public_key: &[u8; 32]) -> [u8; 4] {
    let digest = Sha256::new()
        .chain_update(name.as_bytes())
        .chain_update([b'\n', ED25519])
        .chain_update(public_key)
        .finalize();
    [digest[0], digest[1], digest[2], digest[3]]
}

/// The `kid` of an Ed25519 public key under `name`: the lower-case hex of its key hash.
pub fn kid_of(name: &str, public_key: &[u8; 32]) -> String {
    hex::encode(key_hash(name, public_key))
}

/// Whether `signature` is `public_key`'s Ed25519 signature of `message`.
pub fn verifies(public_key: &[u8; 32], message: &[u8], signature: &[u8]) -> bool {
    let Ok(key) = VerifyingKey::from_bytes(public_key) else {
        return false;
    };
    let Ok(signature) = Signature::from_slice(signature) else {
        return false;
    };
    key.verify(message, &signature).is_ok()
}

/// A public key given as base64 of its 32 bytes (`APP__AUDITORIA__RETIRED_PUBLIC_KEYS`).
pub fn public_key_from_base64(text: &str) -> Option<[u8; 32]> {
    let bytes = STANDARD.decode(text.trim()).ok()?;
    let key: [u8; 32] = bytes.try_into().ok()?;
    VerifyingKey::from_bytes(&key).ok()?;
    Some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_verifies_with_the_published_key_only() {
        let signer = AuditSigner::from_seed("consent-api", [7u8; 32]);
        let signature = signer.sign(b"note");
        let key = signer.published_key().public_key;
        assert!(verifies(&key, b"note", &signature));
        assert!(!verifies(&key, b"other", &signature));
    }

    #[test]
    fn the_kid_is_the_hex_c2sp_key_hash() {
        let signer = AuditSigner::from_seed("consent-api", [7u8; 32]);
        let key = signer.published_key().public_key;
        let mut input = b"consent-api\n\x01".to_vec();
        input.extend_from_slice(&key);
        let digest = Sha256::digest(&input);
        assert_eq!(signer.kid(), hex::encode(&digest[..4]));
    }

    #[test]
    fn the_sandbox_key_is_published_marked_under_a_kid_of_its_own() {
        let production = AuditSigner::from_seed("consent-api", [7u8; 32]);
        let sandbox = AuditSigner::sandbox_from_seed("consent-api", [8u8; 32]);
        assert!(!production.published_key().sandbox);
        assert!(sandbox.published_key().sandbox);
        assert_ne!(production.kid(), sandbox.kid());
        assert_eq!(sandbox.name(), production.name());
    }

    #[test]
    fn a_seed_must_be_base64_of_32_bytes() {
        assert!(AuditSigner::seed_from_base64(&STANDARD.encode([1u8; 32])).is_ok());
        assert!(AuditSigner::seed_from_base64(&STANDARD.encode([1u8; 31])).is_err());
        assert!(AuditSigner::seed_from_base64("not base64!").is_err());
    }
}
