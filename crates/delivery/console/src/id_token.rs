//! Checking an OpenID Connect `id_token` (issue 38; OpenID Connect Core 1.0, 3.1.3.7): its
//! signature with a key of the issuer's JWKS (by `kid`; RSA or elliptic-curve algorithms only,
//! never a shared-secret one, so a token signed with the public key as an HMAC secret is refused),
//! its issuer, its audience (the client id; `azp` too when there are several), its expiry (and
//! `iat`, `nbf`), and the `nonce` this server sent. The signature and the registered claims are
//! checked by the `jsonwebtoken` crate (on `ring`), nothing by hand; then the person (`sub`,
//! `email`) and the roles claim are read.

use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

use domain::Person;

/// The signature algorithms accepted: public-key ones only.
const ACCEPTED: [Algorithm; 7] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
];

/// The longest `sub` accepted (OpenID Connect Core 1.0, 2).
const MAX_SUB: usize = 255;
/// The longest `email` kept.
const MAX_EMAIL: usize = 320;

/// Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds.
pub const LEEWAY_SECONDS: u64 = 60;

/// What the token must say.
pub struct Expected<'a> {
    pub issuer: &'a str,
    pub client_id: &'a str,
    pub nonce: &'a str,
    /// The claim holding the roles (an array of strings, or one string).
    pub roles_claim: &'a str,
}

/// A token that passed every check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub person: Person,
    /// The roles claim's values (missing claim: none).
    pub roles: Vec<String>,
}

/// Why a token was refused (said in the server's log; the person is told only that the sign-in
/// failed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("the id_token's header is unreadable or its algorithm not accepted")]
    Header,
    #[error("no key of the issuer's JWKS has the id_token's kid")]
    UnknownKey,
    #[error("the id_token failed: {0}")]
    Invalid(String),
    #[error("the id_token's nonce is not the one sent")]
    Nonce,
    #[error("the id_token has several audiences and its azp is not this client")]
    AuthorizedParty,
    #[error("the id_token has no sub")]
    NoSubject,
}

/// Checks `token` against `keys` and `expected` (the time is the system's).
pub fn verify(token: &str, keys: &JwkSet, expected: &Expected<'_>) -> Result<Verified, Refused> {
    let header = jsonwebtoken::decode_header(token).map_err(|_| Refused::Header)?;
    if !ACCEPTED.contains(&header.alg) {
        return Err(Refused::Header);
    }
    let jwk = match &header.kid {
        Some(kid) => keys.find(kid),
        // without a kid, the issuer's only key
        None if keys.keys.len() == 1 => keys.keys.first(),
        None => None,
    }
    .ok_or(Refused::UnknownKey)?;
    if matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)) {
        return Err(Refused::UnknownKey);
    }
    let key = DecodingKey::from_jwk(jwk).map_err(|_| Refused::UnknownKey)?;
    let mut validation = Validation::new(header.alg);
    validation.set_issuer(&[expected.issuer]);
    validation.set_audience(&[expected.client_id]);
    validation.set_required_spec_claims(&["exp", "iat", "iss", "aud", "sub"]);
    validation.validate_nbf = true;
    validation.leeway = LEEWAY_SECONDS;
    let claims = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation)
        .map_err(|e| Refused::Invalid(e.to_string()))?
        .claims;
    if claims.get("nonce").and_then(Value::as_str) != Some(expected.nonce) {
        return Err(Refused::Nonce);
    }
    if let Some(Value::Array(audiences)) = claims.get("aud") {
        if audiences.len() > 1
            && claims.get("azp").and_then(Value::as_str) != Some(expected.client_id)
        {
            return Err(Refused::AuthorizedParty);
        }
    }
    // OpenID Connect Core 2: at most 255 ASCII characters (the access log's bound too)
    let sub = claims
        .get("sub")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() && s.len() <= MAX_SUB)
        .ok_or(Refused::NoSubject)?;
    let roles = match claims.get(expected.roles_claim) {
        Some(Value::Array(values)) => values
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(Value::String(one)) => vec![one.clone()],
        _ => Vec::new(),
    };
    Ok(Verified {
        person: Person {
            sub: sub.to_owned(),
            // an e-mail longer than any address (RFC 5321's 320) is left out, not kept
            email: claims
                .get("email")
                .and_then(Value::as_str)
                .filter(|e| e.len() <= MAX_EMAIL)
                .map(str::to_owned),
        },
        roles,
    })
}

#[cfg(test)]
mod tests {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    use jsonwebtoken::{EncodingKey, Header};
    use ring::rand::SystemRandom;
    use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
    use serde_json::json;

    use super::*;

    /// A P-256 key generated for the test: its signing key and its JWK (kid `k1`).
    fn key(kid: &str) -> (EncodingKey, Value) {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        // the public key is the uncompressed point: 0x04, x, y
        let public = pair.public_key().as_ref();
        let jwk = json!({
            "kty": "EC", "crv": "P-256", "kid": kid, "use": "sig", "alg": "ES256",
            "x": URL_SAFE_NO_PAD.encode(&public[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&public[33..65]),
        });
        (EncodingKey::from_ec_der(pkcs8.as_ref()), jwk)
    }

    fn jwks(keys: &[&Value]) -> JwkSet {
        serde_json::from_value(json!({ "keys": keys })).unwrap()
    }

    fn now() -> i64 {
        chrono::Utc::now().timestamp()
    }

    fn claims() -> Value {
        json!({
            "iss": "https://idp.example", "aud": "console", "sub": "pessoa-1",
            "email": "dpo@empresa.example", "nonce": "n-1", "roles": ["dpo"],
            "iat": now(), "exp": now() + 300,
        })
    }

    fn sign(key: &EncodingKey, kid: &str, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(kid.into());
        jsonwebtoken::encode(&header, claims, key).unwrap()
    }

    fn expected() -> Expected<'static> {
        Expected {
            issuer: "https://idp.example",
            client_id: "console",
            nonce: "n-1",
            roles_claim: "roles",
        }
    }

    #[test]
    fn a_good_token_names_the_person_and_the_roles() {
        let (signing, jwk) = key("k1");
        let token = sign(&signing, "k1", &claims());
        let verified = verify(&token, &jwks(&[&jwk]), &expected()).unwrap();
        assert_eq!(verified.person.sub, "pessoa-1");
        assert_eq!(
            verified.person.email.as_deref(),
            Some("dpo@empresa.example")
        );
        assert_eq!(verified.roles, vec!["dpo".to_owned()]);
    }

    #[test]
    fn a_token_signed_by_another_key_or_altered_is_refused() {
        let (_, published) = key("k1");
        let (forger, _) = key("k1");
        let forged = sign(&forger, "k1", &claims());
        assert!(matches!(
            verify(&forged, &jwks(&[&published]), &expected()),
            Err(Refused::Invalid(_))
        ));

        let (signing, jwk) = key("k1");
        let token = sign(&signing, "k1", &claims());
        // the payload swapped for one granting more, the signature kept
        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        let mut more = claims();
        more["roles"] = json!(["dpo", "operador"]);
        parts[1] = URL_SAFE_NO_PAD.encode(more.to_string());
        assert!(matches!(
            verify(&parts.join("."), &jwks(&[&jwk]), &expected()),
            Err(Refused::Invalid(_))
        ));
        assert_eq!(
            verify(&token, &jwks(&[&jwk]), &Expected { ..expected() }).map(|v| v.person.sub),
            Ok("pessoa-1".into())
        );
    }

    #[test]
    fn an_expired_token_is_refused() {
        let (signing, jwk) = key("k1");
        let mut old = claims();
        old["iat"] = json!(now() - 3600);
        old["exp"] = json!(now() - 2 * LEEWAY_SECONDS as i64);
        let token = sign(&signing, "k1", &old);
        assert!(matches!(
            verify(&token, &jwks(&[&jwk]), &expected()),
            Err(Refused::Invalid(e)) if e.contains("ExpiredSignature")
        ));
    }

    #[test]
    fn a_wrong_nonce_audience_or_issuer_is_refused() {
        let (signing, jwk) = key("k1");
        let keys = jwks(&[&jwk]);
        let token = sign(&signing, "k1", &claims());
        assert_eq!(
            verify(
                &token,
                &keys,
                &Expected {
                    nonce: "outro",
                    ..expected()
                }
            ),
            Err(Refused::Nonce)
        );
        let mut other_aud = claims();
        other_aud["aud"] = json!("outro-cliente");
        assert!(matches!(
            verify(&sign(&signing, "k1", &other_aud), &keys, &expected()),
            Err(Refused::Invalid(e)) if e.contains("InvalidAudience")
        ));
        let mut other_iss = claims();
        other_iss["iss"] = json!("https://outro.example");
        assert!(matches!(
            verify(&sign(&signing, "k1", &other_iss), &keys, &expected()),
            Err(Refused::Invalid(e)) if e.contains("InvalidIssuer")
        ));
        let mut several = claims();
        several["aud"] = json!(["console", "outro-cliente"]);
        assert_eq!(
            verify(&sign(&signing, "k1", &several), &keys, &expected()),
            Err(Refused::AuthorizedParty)
        );
    }

    #[test]
    fn an_unknown_kid_or_a_shared_secret_algorithm_is_refused() {
        let (signing, jwk) = key("k1");
        let token = sign(&signing, "k2", &claims());
        assert_eq!(
            verify(&token, &jwks(&[&jwk]), &expected()),
            Err(Refused::UnknownKey)
        );
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("k1".into());
        let hmac =
            jsonwebtoken::encode(&header, &claims(), &EncodingKey::from_secret(b"x")).unwrap();
        assert_eq!(
            verify(&hmac, &jwks(&[&jwk]), &expected()),
            Err(Refused::Header)
        );
    }
}
