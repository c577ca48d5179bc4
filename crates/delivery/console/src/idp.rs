//! The console's calls to a company's identity provider (issue 38): its discovery document
//! (`{issuer}/.well-known/openid-configuration`), its JWKS, and the token endpoint where the
//! authorization code is exchanged. Made with ureq from a blocking thread (never on the async
//! workers, never holding a database connection), each with a timeout and a bound on the answer's
//! size, no redirects followed. The discovery and the JWKS are cached per issuer (at most
//! [`MAX_ISSUERS`], for [`CACHE_TTL`]); a token signed with a `kid` the cached JWKS lacks fetches
//! it again (key rotation), at most once per [`MIN_REFETCH`] per issuer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use jsonwebtoken::jwk::JwkSet;
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// Each call's whole time.
const TIMEOUT: Duration = Duration::from_secs(5);
/// The largest answer read (a discovery document, a JWKS, a token response).
const MAX_ANSWER_BYTES: u64 = 256 * 1024;
/// Issuers cached at most (one per company with a provider; beyond, the cache starts again).
pub const MAX_ISSUERS: usize = 1_000;
/// How long a discovery document and a JWKS are kept.
pub const CACHE_TTL: Duration = Duration::from_secs(10 * 60);
/// The JWKS is fetched again for an unknown `kid` at most this often.
pub const MIN_REFETCH: Duration = Duration::from_secs(30);

/// The parts of the discovery document used.
#[derive(Debug, Clone, Deserialize)]
pub struct Discovery {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub jwks_uri: String,
    /// Where "Sair" sends a person signed in at the provider (OpenID Connect RP-Initiated Logout
    /// 1.0); `None`: the provider offers none, the sign-out is the console's only.
    #[serde(default)]
    pub end_session_endpoint: Option<String>,
}

struct Cached {
    discovery: Arc<Discovery>,
    keys: Arc<JwkSet>,
    fetched: Instant,
}

/// The provider calls and their cache: one per process.
pub struct IdpClient {
    agent: ureq::Agent,
    cache: Mutex<HashMap<String, Cached>>,
}

impl Default for IdpClient {
    fn default() -> Self {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(TIMEOUT))
            .http_status_as_error(false)
            .max_redirects(0)
            .build();
        IdpClient {
            agent: ureq::Agent::new_with_config(config),
            cache: Mutex::default(),
        }
    }
}

#[derive(Deserialize)]
struct TokenAnswer {
    id_token: Option<String>,
}

impl IdpClient {
    /// The issuer's discovery document and keys (cached). The document must name `issuer` itself
    /// (OpenID Connect Discovery 1.0, 4.3).
    pub fn provider(&self, issuer: &str) -> anyhow::Result<(Arc<Discovery>, Arc<JwkSet>)> {
        if let Some(cached) = self.lock().get(issuer) {
            if cached.fetched.elapsed() < CACHE_TTL {
                return Ok((cached.discovery.clone(), cached.keys.clone()));
            }
        }
        self.fetch(issuer)
    }

    /// The keys again when `kid` is not among the cached ones and they were fetched more than
    /// [`MIN_REFETCH`] ago (the provider rotated its keys); the cached ones otherwise.
    pub fn keys_with(&self, issuer: &str, kid: Option<&str>) -> anyhow::Result<Arc<JwkSet>> {
        let (_, keys) = self.provider(issuer)?;
        let known = kid.is_none_or(|kid| keys.find(kid).is_some());
        let recent = self
            .lock()
            .get(issuer)
            .is_some_and(|c| c.fetched.elapsed() < MIN_REFETCH);
        if known || recent {
            return Ok(keys);
        }
        Ok(self.fetch(issuer)?.1)
    }

    fn fetch(&self, issuer: &str) -> anyhow::Result<(Arc<Discovery>, Arc<JwkSet>)> {
        let url = format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        );
        let discovery: Discovery = serde_json::from_str(&self.get(&url)?)
            .with_context(|| format!("the discovery document of {issuer}"))?;
        if discovery.issuer != issuer {
            bail!("the discovery document of {issuer} names another issuer");
        }
        let keys: JwkSet = serde_json::from_str(&self.get(&discovery.jwks_uri)?)
            .with_context(|| format!("the JWKS of {issuer}"))?;
        let (discovery, keys) = (Arc::new(discovery), Arc::new(keys));
        let mut cache = self.lock();
        if cache.len() >= MAX_ISSUERS && !cache.contains_key(issuer) {
            cache.clear();
        }
        cache.insert(
            issuer.to_owned(),
            Cached {
                discovery: discovery.clone(),
                keys: keys.clone(),
                fetched: Instant::now(),
            },
        );
        Ok((discovery, keys))
    }

    /// Exchanges `code` at the token endpoint (client_secret_basic, with the PKCE verifier) for
    /// the `id_token`.
    pub fn exchange(
        &self,
        discovery: &Discovery,
        client_id: &str,
        client_secret: &str,
        code: &str,
        redirect_uri: &str,
        verifier: &str,
    ) -> anyhow::Result<String> {
        let form: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "authorization_code")
            .append_pair("code", code)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("code_verifier", verifier)
            .finish();
        // RFC 6749, 2.3.1: each part form-encoded before the Basic encoding
        let user = form_urlencoded::byte_serialize(client_id.as_bytes()).collect::<String>();
        let pass = form_urlencoded::byte_serialize(client_secret.as_bytes()).collect::<String>();
        let basic = STANDARD.encode(format!("{user}:{pass}"));
        let mut response = self
            .agent
            .post(&discovery.token_endpoint)
            .header("Authorization", &format!("Basic {basic}"))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .header("Accept", "application/json")
            .send(form.as_str())
            .context("calling the token endpoint")?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_string()
            .context("reading the token endpoint's answer")?;
        if status != 200 {
            // the provider's error code only (the answer may echo what was sent)
            let error = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
                .unwrap_or_default();
            bail!("the token endpoint answered {status} {error}");
        }
        serde_json::from_str::<TokenAnswer>(&text)
            .context("the token endpoint's answer")?
            .id_token
            .context("the token endpoint's answer has no id_token")
    }

    fn get(&self, url: &str) -> anyhow::Result<String> {
        let mut response = self
            .agent
            .get(url)
            .header("Accept", "application/json")
            .call()
            .with_context(|| format!("GET {url}"))?;
        let status = response.status().as_u16();
        if status != 200 {
            bail!("GET {url} answered {status}");
        }
        response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_string()
            .with_context(|| format!("reading GET {url}"))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Cached>> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The PKCE S256 challenge of `verifier` (RFC 7636, 4.2).
pub fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pkce_challenge_is_the_base64url_sha256_of_the_verifier() {
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mtG9tMCE9N3b2sZhCxQKL8E7xDj9k"),
            "5Lyy-CSz-Hd5lnGqciXd29VbQ8UJA47MMSZiRNSqEts"
        );
    }
}
