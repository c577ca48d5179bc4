//! [`AesGcmSecretCipher`]: webhook signing secrets encrypted at rest with AES-256-GCM.
//!
//! Stored form: `v1:` + base64 (standard alphabet, padded) of `nonce (12 bytes) || ciphertext
//! || tag (16 bytes)`. The nonce is random per encryption (96 bits from the OS generator): safe
//! far beyond the number of secrets one key will ever encrypt (the usual bound is 2^32
//! encryptions per key). No associated data. Rotating the key means decrypting with the old
//! cipher and encrypting with the new one; the `v1:` prefix leaves room for another format.

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce};
use anyhow::{anyhow, bail};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use ports::{EncryptedSecret, SecretCipher};
use rand::rngs::OsRng;
use rand::RngCore;

const VERSION_PREFIX: &str = "v1:";
const KEY_LEN: usize = 32;
const NONCE_LEN: usize = 12;
const TAG_LEN: usize = 16;

/// AES-256-GCM with a key from configuration. Its `Debug` never shows the key.
pub struct AesGcmSecretCipher {
    cipher: Aes256Gcm,
}

impl std::fmt::Debug for AesGcmSecretCipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AesGcmSecretCipher")
            .field("key", &"<redacted>")
            .finish()
    }
}

impl AesGcmSecretCipher {
    /// The key is base64 (standard alphabet, padded; surrounding whitespace ignored) of exactly
    /// 32 random bytes, e.g. `openssl rand -base64 32`. Errors never echo the key.
    pub fn from_base64_key(key: &str) -> anyhow::Result<Self> {
        // Not the decode error itself: it quotes the offending byte of the key.
        let bytes = STANDARD
            .decode(key.trim())
            .map_err(|_| anyhow!("the webhook secret key is not valid base64"))?;
        if bytes.len() != KEY_LEN {
            bail!(
                "the webhook secret key must decode to {KEY_LEN} bytes, it decodes to {}",
                bytes.len()
            );
        }
        let cipher = Aes256Gcm::new_from_slice(&bytes)
            .map_err(|_| anyhow!("the webhook secret key has the wrong length"))?;
        Ok(Self { cipher })
    }
}

impl SecretCipher for AesGcmSecretCipher {
    fn encrypt(&self, plaintext: &str) -> EncryptedSecret {
        let mut nonce = [0u8; NONCE_LEN];
        OsRng.fill_bytes(&mut nonce);
        let sealed = self
            .cipher
            .encrypt(Nonce::from_slice(&nonce), plaintext.as_bytes())
            // Fails only beyond 64 GiB of plaintext.
            .expect("AES-GCM encryption of a signing secret cannot fail");
        let mut stored = Vec::with_capacity(NONCE_LEN + sealed.len());
        stored.extend_from_slice(&nonce);
        stored.extend_from_slice(&sealed);
        EncryptedSecret(format!("{VERSION_PREFIX}{}", STANDARD.encode(stored)))
    }

    fn decrypt(&self, secret: &EncryptedSecret) -> Result<String, anyhow::Error> {
        let encoded = secret
            .0
            .strip_prefix(VERSION_PREFIX)
            .ok_or_else(|| anyhow!("unsupported encrypted secret format (expected v1)"))?;
        let stored = STANDARD
            .decode(encoded)
            .map_err(|_| anyhow!("the encrypted secret is not valid base64"))?;
        if stored.len() < NONCE_LEN + TAG_LEN {
            bail!("the encrypted secret is too short");
        }
        let (nonce, sealed) = stored.split_at(NONCE_LEN);
        let plaintext = self
            .cipher
            .decrypt(Nonce::from_slice(nonce), sealed)
            .map_err(|_| {
                anyhow!("the secret could not be decrypted: wrong key, or it was altered")
            })?;
        String::from_utf8(plaintext).map_err(|_| anyhow!("the decrypted secret is not UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    const OTHER_KEY: &str = "Hx4dHBsaGRgXFhUUExIREA8ODQwLCgkIBwYFBAMCAQA=";
    const SECRET: &str = "whsec_c2VjcmV0LXNpZ25pbmcta2V5";

    fn cipher(key: &str) -> AesGcmSecretCipher {
        AesGcmSecretCipher::from_base64_key(key).expect("valid test key")
    }

    fn error_text(error: &anyhow::Error) -> String {
        format!("{error:#} {error:?}")
    }

    #[test]
    fn round_trip() {
        let cipher = cipher(KEY);
        for plaintext in [SECRET, "", "ção ✓", &"x".repeat(1000)] {
            let encrypted = cipher.encrypt(plaintext);
            assert!(encrypted.0.starts_with("v1:"));
            assert!(!encrypted.0.contains(plaintext) || plaintext.is_empty());
            assert_eq!(cipher.decrypt(&encrypted).unwrap(), plaintext);
        }
    }

    #[test]
    fn the_stored_form_is_nonce_ciphertext_and_tag() {
        let encrypted = cipher(KEY).encrypt(SECRET);
        let raw = STANDARD.decode(&encrypted.0[3..]).unwrap();
        assert_eq!(raw.len(), NONCE_LEN + SECRET.len() + TAG_LEN);
    }

    #[test]
    fn two_encryptions_of_the_same_text_differ() {
        let cipher = cipher(KEY);
        let first = cipher.encrypt(SECRET);
        let second = cipher.encrypt(SECRET);
        assert_ne!(first, second);
        assert_ne!(first.0[3..19], second.0[3..19], "nonces must differ");
        assert_eq!(
            cipher.decrypt(&first).unwrap(),
            cipher.decrypt(&second).unwrap()
        );
    }

    #[test]
    fn a_wrong_key_fails_without_leaking() {
        let encrypted = cipher(KEY).encrypt(SECRET);
        let error = cipher(OTHER_KEY).decrypt(&encrypted).unwrap_err();
        let text = error_text(&error);
        assert!(!text.contains(SECRET), "{text}");
        assert!(!text.contains(KEY) && !text.contains(OTHER_KEY), "{text}");
    }

    #[test]
    fn tampering_is_detected() {
        let cipher = cipher(KEY);
        let encrypted = cipher.encrypt(SECRET);
        let raw = STANDARD.decode(&encrypted.0[3..]).unwrap();
        for index in [0, NONCE_LEN, raw.len() - 1] {
            let mut altered = raw.clone();
            altered[index] ^= 0x01;
            let altered = EncryptedSecret(format!("v1:{}", STANDARD.encode(&altered)));
            let error = cipher.decrypt(&altered).unwrap_err();
            assert!(!error_text(&error).contains(SECRET));
        }
        // Truncated: tag missing its last byte.
        let truncated = EncryptedSecret(format!("v1:{}", STANDARD.encode(&raw[..raw.len() - 1])));
        assert!(cipher.decrypt(&truncated).is_err());
    }

    #[test]
    fn malformed_stored_forms_are_refused() {
        let cipher = cipher(KEY);
        let encrypted = cipher.encrypt(SECRET);
        let unversioned = EncryptedSecret(encrypted.0[3..].to_owned());
        let other_version = EncryptedSecret(format!("v2:{}", &encrypted.0[3..]));
        let bad_base64 = EncryptedSecret("v1:not base64!".to_owned());
        let short = EncryptedSecret(format!("v1:{}", STANDARD.encode([0u8; 27])));
        let empty = EncryptedSecret(String::new());
        let plaintext = EncryptedSecret(SECRET.to_owned());
        for stored in [
            unversioned,
            other_version,
            bad_base64,
            short,
            empty,
            plaintext,
        ] {
            let error = cipher.decrypt(&stored).unwrap_err();
            assert!(!error_text(&error).contains(SECRET));
        }
    }

    #[test]
    fn keys_must_be_32_bytes_of_base64_and_are_never_echoed() {
        let short = STANDARD.encode([7u8; 16]);
        let long = STANDARD.encode([7u8; 33]);
        let not_base64 = "this-is-not-base64-key-material!";
        for key in [short.as_str(), long.as_str(), not_base64, ""] {
            let error = AesGcmSecretCipher::from_base64_key(key).unwrap_err();
            let text = error_text(&error);
            assert!(key.is_empty() || !text.contains(key), "{text}");
        }
        // Surrounding whitespace (a newline from a file) is fine.
        assert!(AesGcmSecretCipher::from_base64_key(&format!(" {KEY}\n")).is_ok());
    }

    #[test]
    fn debug_hides_the_key() {
        let text = format!("{:?}", cipher(KEY));
        assert_eq!(text, "AesGcmSecretCipher { key: \"<redacted>\" }");
    }
}
