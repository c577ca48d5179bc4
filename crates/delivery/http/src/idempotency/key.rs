//! The `Idempotency-Key` itself and the fingerprint of the request it is sent with.

use sha2::{Digest, Sha256};

/// The longest key accepted.
pub const IDEMPOTENCY_KEY_MAX_LEN: usize = 255;

/// A valid idempotency key: 1 to 255 visible ASCII characters (`!` to `~`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey(String);

/// The header's value is not a valid key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("an idempotency key is 1 to 255 visible ASCII characters")]
pub struct InvalidIdempotencyKey;

impl IdempotencyKey {
    /// The key exactly as sent (no trimming: a space is not a visible character).
    pub fn parse(raw: &str) -> Result<IdempotencyKey, InvalidIdempotencyKey> {
        let valid = (1..=IDEMPOTENCY_KEY_MAX_LEN).contains(&raw.len())
            && raw.bytes().all(|b| b.is_ascii_graphic());
        if valid {
            Ok(IdempotencyKey(raw.to_owned()))
        } else {
            Err(InvalidIdempotencyKey)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Lower-case hex SHA-256 of the canonical request: the method (upper-case), a line feed, the
/// path, a line feed, then the body bytes as received.
pub fn request_fingerprint(method: &str, path: &str, body: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(method.to_ascii_uppercase().as_bytes());
    hasher.update(b"\n");
    hasher.update(path.as_bytes());
    hasher.update(b"\n");
    hasher.update(body);
    hex::encode(hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_one_to_255_visible_ascii_characters() {
        for ok in [
            "a",
            "pedido-42",
            "~!#$%&'()*+,-./:;<=>?@[]^_`{|}",
            &"k".repeat(255),
        ] {
            assert_eq!(IdempotencyKey::parse(ok).unwrap().as_str(), ok);
        }
        for bad in [
            "",
            " ",
            "com espaço",
            "tab\t",
            "ç",
            "nul\0",
            &"k".repeat(256),
        ] {
            assert_eq!(
                IdempotencyKey::parse(bad),
                Err(InvalidIdempotencyKey),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn the_fingerprint_covers_method_path_and_body_bytes() {
        let base = request_fingerprint("POST", "/api/x", b"{\"a\":1}");

        assert_eq!(base.len(), 64);
        assert!(base
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_eq!(base, request_fingerprint("post", "/api/x", b"{\"a\":1}"));
        assert_ne!(base, request_fingerprint("PUT", "/api/x", b"{\"a\":1}"));
        assert_ne!(base, request_fingerprint("POST", "/api/y", b"{\"a\":1}"));
        assert_ne!(base, request_fingerprint("POST", "/api/x", b"{\"a\": 1}"));
        // the separator keeps path and body apart
        assert_ne!(
            request_fingerprint("POST", "/a", b"b"),
            request_fingerprint("POST", "/a\nb", b"")
        );
    }
}
