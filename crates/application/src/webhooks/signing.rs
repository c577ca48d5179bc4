//! Standard Webhooks signatures (<https://www.standardwebhooks.com/>).
//!
//! A secret is `whsec_` + standard base64 of random bytes; the HMAC key is the base64-decoded
//! part after the prefix. A signature is `v1,` + standard base64 of
//! HMAC-SHA256(key, `"{msg_id}.{timestamp}.{body}"`); the `webhook-signature` header carries one
//! per valid secret, separated by spaces (two during a secret rotation's overlap).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use rand::rngs::OsRng;
use rand::RngCore;
use sha2::Sha256;

/// The prefix of every signing secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// How many random bytes a new secret holds.
pub const SECRET_BYTES: usize = 32;

/// The version prefix of a signature.
pub const SIGNATURE_VERSION: &str = "v1";

/// A secret that is not `whsec_` followed by non-empty standard base64. Says nothing about the
/// secret itself, so it may be logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("segredo de webhook inválido")]
pub struct InvalidSecret;

/// A new signing secret: `whsec_` + standard base64 of [`SECRET_BYTES`] bytes from the OS.
pub fn generate_secret() -> String {
    let mut bytes = [0u8; SECRET_BYTES];
    OsRng.fill_bytes(&mut bytes);
    format!("{SECRET_PREFIX}{}", STANDARD.encode(bytes))
}

/// The signature of one message: `v1,<standard base64 HMAC-SHA256>` over
/// `"{msg_id}.{timestamp}.{body}"`, keyed by the decoded `secret`.
pub fn sign(
    secret: &str,
    msg_id: &str,
    timestamp: i64,
    body: &str,
) -> Result<String, InvalidSecret> {
    let key = secret
        .strip_prefix(SECRET_PREFIX)
        .and_then(|encoded| STANDARD.decode(encoded).ok())
        .filter(|key| !key.is_empty())
        .ok_or(InvalidSecret)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| InvalidSecret)?;
    mac.update(msg_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    let digest = mac.finalize().into_bytes();
    Ok(format!("{SIGNATURE_VERSION},{}", STANDARD.encode(digest)))
}

/// The `webhook-signature` header: the signature under each of `secrets`, in order, separated
/// by single spaces. Fails if any secret is invalid.
pub fn signature_header(
    secrets: &[&str],
    msg_id: &str,
    timestamp: i64,
    body: &str,
) -> Result<String, InvalidSecret> {
    let signatures = secrets
        .iter()
        .map(|secret| sign(secret, msg_id, timestamp, body))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(signatures.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    // The published Standard Webhooks test vector (checked independently with Python's
    // hmac/hashlib/base64).
    const VECTOR_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const VECTOR_MSG_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const VECTOR_TIMESTAMP: i64 = 1_614_265_330;
    const VECTOR_BODY: &str = r#"{"test": 2432232314}"#;
    const VECTOR_SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    #[test]
    fn signing_the_standard_webhooks_test_vector_gives_its_published_signature() {
        assert_eq!(
            sign(VECTOR_SECRET, VECTOR_MSG_ID, VECTOR_TIMESTAMP, VECTOR_BODY),
            Ok(VECTOR_SIGNATURE.to_owned())
        );
    }

    #[test]
    fn changing_the_id_the_timestamp_or_the_body_changes_the_signature() {
        for (msg_id, timestamp, body) in [
            ("msg_other", VECTOR_TIMESTAMP, VECTOR_BODY),
            (VECTOR_MSG_ID, VECTOR_TIMESTAMP + 1, VECTOR_BODY),
            (VECTOR_MSG_ID, VECTOR_TIMESTAMP, r#"{"test": 2432232315}"#),
        ] {
            let signature = sign(VECTOR_SECRET, msg_id, timestamp, body).unwrap();
            assert_ne!(signature, VECTOR_SIGNATURE, "{msg_id} {timestamp} {body}");
        }
    }

    #[test]
    fn a_generated_secret_is_the_prefix_and_the_base64_of_32_bytes() {
        let secret = generate_secret();

        let encoded = secret.strip_prefix("whsec_").expect(&secret);
        assert_eq!(STANDARD.decode(encoded).unwrap().len(), 32);
        assert_eq!(encoded.len(), 44);
    }

    #[test]
    fn generated_secrets_differ() {
        assert_ne!(generate_secret(), generate_secret());
    }

    #[test]
    fn a_generated_secret_signs() {
        let signature = sign(&generate_secret(), "msg", 1, "{}").unwrap();

        let encoded = signature.strip_prefix("v1,").expect(&signature);
        assert_eq!(STANDARD.decode(encoded).unwrap().len(), 32);
    }

    #[test]
    fn a_secret_without_the_prefix_bad_base64_or_empty_is_invalid() {
        for secret in [
            "",
            "whsec_",
            "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "whsec_not base64!",
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS",
        ] {
            assert_eq!(
                sign(secret, "msg", 1, "{}"),
                Err(InvalidSecret),
                "{secret:?}"
            );
        }
    }

    #[test]
    fn the_header_of_one_secret_is_its_signature() {
        assert_eq!(
            signature_header(
                &[VECTOR_SECRET],
                VECTOR_MSG_ID,
                VECTOR_TIMESTAMP,
                VECTOR_BODY
            ),
            Ok(VECTOR_SIGNATURE.to_owned())
        );
    }

    #[test]
    fn the_header_of_two_secrets_is_both_signatures_in_order_separated_by_a_space() {
        let other = generate_secret();

        let header = signature_header(
            &[&other, VECTOR_SECRET],
            VECTOR_MSG_ID,
            VECTOR_TIMESTAMP,
            VECTOR_BODY,
        )
        .unwrap();

        let expected_first = sign(&other, VECTOR_MSG_ID, VECTOR_TIMESTAMP, VECTOR_BODY).unwrap();
        assert_eq!(header, format!("{expected_first} {VECTOR_SIGNATURE}"));
    }

    #[test]
    fn the_header_fails_if_any_secret_is_invalid() {
        assert_eq!(
            signature_header(&[VECTOR_SECRET, "nope"], "msg", 1, "{}"),
            Err(InvalidSecret)
        );
    }

    #[test]
    fn the_header_of_no_secret_is_empty() {
        assert_eq!(signature_header(&[], "msg", 1, "{}"), Ok(String::new()));
    }
}
