//! The CPF searches of the console (issue 38, part 2): a search posts the CPF once and is
//! answered 303 to `/console/titulares/<token>`, a GET that Back and reload repeat without the
//! browser's "Confirm Form Resubmission". The token is opaque and random (244 bits, as session
//! ids): the URL carries neither the CPF nor a hash of it (a CPF's hash is guessable from the
//! 10^9 CPFs).
//!
//! Kept in the store ([`ConsoleSearchStore`]: PostgreSQL in the service, so a reload served by
//! another replica finds it) under the token's SHA-256, bound to the company and the session that
//! searched, for `console.search_seconds` (15 minutes by default). The CPF is sealed before it is
//! stored: AES-256-GCM under a key derived from the token, which the server never keeps (only its
//! hash), with the company and the session as associated data. A row, a dump or the service's
//! configuration alone gives no CPF back; the URL's holder, signed in as the session that
//! searched, does (docs/console.md, "The subject's page").

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use chrono::{DateTime, Utc};
use domain::CompanyId;
use ports::{ConsoleSearchStore, RepoError};
use sha2::{Digest, Sha256};

use crate::session::{digest, random_token};

/// What the sealing key is derived from besides the token (apart from the token's lookup hash,
/// its bare SHA-256).
const KEY_CONTEXT: &[u8] = b"consent-api console busca v1\0";

/// The searches: their store.
pub struct SubjectSearches {
    store: Arc<dyn ConsoleSearchStore>,
}

impl Default for SubjectSearches {
    fn default() -> Self {
        SubjectSearches::new(Arc::new(MemorySearches::default()))
    }
}

impl SubjectSearches {
    pub fn new(store: Arc<dyn ConsoleSearchStore>) -> Self {
        SubjectSearches { store }
    }

    /// Keeps `cpf` for the session `session_id` of `company` for `lifetime`; the token to put
    /// in the URL. May reach the database: called in a blocking hop.
    pub fn keep(
        &self,
        company: CompanyId,
        session_id: &str,
        cpf: &str,
        lifetime: Duration,
    ) -> Result<String, RepoError> {
        let token = random_token();
        let session = digest(session_id);
        let expires_at =
            Utc::now() + chrono::Duration::from_std(lifetime).unwrap_or(chrono::Duration::MAX);
        let sealed = seal(&token, company, &session, cpf);
        self.store
            .keep(company, digest(&token), session, sealed, expires_at)?;
        Ok(token)
    }

    /// The CPF of `token` when it is a live search of this company and this session; `None`
    /// for a made-up, expired, another session's or another company's token (all alike: the
    /// page says to search again). May reach the database: called in a blocking hop.
    pub fn find(
        &self,
        company: CompanyId,
        session_id: &str,
        token: &str,
    ) -> Result<Option<String>, RepoError> {
        let session = digest(session_id);
        let sealed = self
            .store
            .find(company, digest(token), session, Utc::now())?;
        Ok(sealed.and_then(|sealed| open(token, company, &session, &sealed)))
    }
}

/// The key of `token`'s CPF: the SHA-256 of a fixed context and the token (244 random bits: no
/// stretching needed).
fn key_of(token: &str) -> Aes256Gcm {
    let key = Sha256::new()
        .chain_update(KEY_CONTEXT)
        .chain_update(token.as_bytes())
        .finalize();
    Aes256Gcm::new(&key)
}

/// The associated data: the search's company and session, so a row moved to another is refused.
fn bound_to(company: CompanyId, session: &[u8; 32]) -> Vec<u8> {
    let mut aad = company.0.as_bytes().to_vec();
    aad.extend_from_slice(session);
    aad
}

/// The CPF sealed under `token`'s key. Each key seals one CPF once (a token is never reused), so
/// the nonce can be constant.
fn seal(token: &str, company: CompanyId, session: &[u8; 32], cpf: &str) -> Vec<u8> {
    key_of(token)
        .encrypt(
            Nonce::from_slice(&[0u8; 12]),
            Payload {
                msg: cpf.as_bytes(),
                aad: &bound_to(company, session),
            },
        )
        // fails only beyond 64 GiB of plaintext
        .expect("sealing a CPF cannot fail")
}

/// The CPF of `sealed`; `None` when it was not sealed under `token` for this company and session.
fn open(token: &str, company: CompanyId, session: &[u8; 32], sealed: &[u8]) -> Option<String> {
    let plain = key_of(token)
        .decrypt(
            Nonce::from_slice(&[0u8; 12]),
            Payload {
                msg: sealed,
                aad: &bound_to(company, session),
            },
        )
        .ok()?;
    String::from_utf8(plain).ok()
}

/// How many searches [`MemorySearches`] keeps at most; past it the expired ones go, then the
/// oldest.
const MAX_SEARCHES: usize = 10_000;

/// A search kept in memory: its session's hash, the sealed CPF, its expiry.
type MemorySearch = ([u8; 32], Vec<u8>, DateTime<Utc>);

/// Searches in this process's memory, at most [`MAX_SEARCHES`] (unit tests, a store-less setup).
#[derive(Default)]
pub struct MemorySearches {
    entries: Mutex<HashMap<(CompanyId, [u8; 32]), MemorySearch>>,
}

impl MemorySearches {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(CompanyId, [u8; 32]), MemorySearch>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl ConsoleSearchStore for MemorySearches {
    fn keep(
        &self,
        company: CompanyId,
        token_hash: [u8; 32],
        session_hash: [u8; 32],
        sealed: Vec<u8>,
        expires_at: DateTime<Utc>,
    ) -> Result<(), RepoError> {
        let mut entries = self.lock();
        if entries.len() >= MAX_SEARCHES {
            let now = Utc::now();
            entries.retain(|_, (_, _, expires)| *expires > now);
        }
        if entries.len() >= MAX_SEARCHES {
            if let Some(oldest) = entries
                .iter()
                .min_by_key(|(_, (_, _, expires))| *expires)
                .map(|(k, _)| *k)
            {
                entries.remove(&oldest);
            }
        }
        entries.insert((company, token_hash), (session_hash, sealed, expires_at));
        Ok(())
    }

    fn find(
        &self,
        company: CompanyId,
        token_hash: [u8; 32],
        session_hash: [u8; 32],
        now: DateTime<Utc>,
    ) -> Result<Option<Vec<u8>>, RepoError> {
        let entries = self.lock();
        Ok(entries
            .get(&(company, token_hash))
            .filter(|(session, _, expires)| *session == session_hash && *expires > now)
            .map(|(_, sealed, _)| sealed.clone()))
    }

    fn purge_expired(&self, now: DateTime<Utc>, limit: u32) -> Result<u32, RepoError> {
        let mut entries = self.lock();
        let expired: Vec<_> = entries
            .iter()
            .filter(|(_, (_, _, expires))| *expires <= now)
            .map(|(k, _)| *k)
            .take(limit as usize)
            .collect();
        for key in &expired {
            entries.remove(key);
        }
        Ok(expired.len() as u32)
    }
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;

    /// What the store keeps for a search, to look at.
    #[derive(Default)]
    struct Peek(MemorySearches);

    impl ConsoleSearchStore for Peek {
        fn keep(
            &self,
            company: CompanyId,
            token_hash: [u8; 32],
            session_hash: [u8; 32],
            sealed: Vec<u8>,
            expires_at: DateTime<Utc>,
        ) -> Result<(), RepoError> {
            self.0
                .keep(company, token_hash, session_hash, sealed, expires_at)
        }
        fn find(
            &self,
            company: CompanyId,
            token_hash: [u8; 32],
            session_hash: [u8; 32],
            now: DateTime<Utc>,
        ) -> Result<Option<Vec<u8>>, RepoError> {
            self.0.find(company, token_hash, session_hash, now)
        }
        fn purge_expired(&self, now: DateTime<Utc>, limit: u32) -> Result<u32, RepoError> {
            self.0.purge_expired(now, limit)
        }
    }

    #[test]
    fn a_search_is_found_by_its_session_and_company_until_it_expires() {
        let searches = SubjectSearches::default();
        let company = CompanyId(Uuid::from_u128(1));
        let other = CompanyId(Uuid::from_u128(2));
        let token = searches
            .keep(company, "a.sessao", "52998224725", Duration::from_secs(60))
            .unwrap();
        assert!(!token.contains("52998224725"));
        assert_eq!(
            searches
                .find(company, "a.sessao", &token)
                .unwrap()
                .as_deref(),
            Some("52998224725")
        );
        assert_eq!(searches.find(other, "a.sessao", &token).unwrap(), None);
        assert_eq!(searches.find(company, "b.sessao", &token).unwrap(), None);
        assert_eq!(
            searches.find(company, "a.sessao", "inventado").unwrap(),
            None
        );
        let short = searches
            .keep(company, "a.sessao", "1", Duration::ZERO)
            .unwrap();
        assert_eq!(searches.find(company, "a.sessao", &short).unwrap(), None);
    }

    #[test]
    fn the_store_holds_the_cpf_sealed_under_the_token_and_bound_to_its_session() {
        let store = Arc::new(Peek::default());
        let searches = SubjectSearches::new(store.clone());
        let company = CompanyId(Uuid::from_u128(1));
        let token = searches
            .keep(company, "a.sessao", "52998224725", Duration::from_secs(60))
            .unwrap();
        let session = digest("a.sessao");
        let sealed = store
            .find(company, digest(&token), session, Utc::now())
            .unwrap()
            .unwrap();
        assert!(
            !sealed.windows(11).any(|w| w == b"52998224725"),
            "never in clear"
        );
        // the token opens it; another token, or the same bytes under another session, do not
        assert_eq!(
            open(&token, company, &session, &sealed).as_deref(),
            Some("52998224725")
        );
        assert_eq!(open(&random_token(), company, &session, &sealed), None);
        assert_eq!(open(&token, company, &digest("b.sessao"), &sealed), None);
        // expired ones are purged, live ones stay
        let gone = searches
            .keep(company, "a.sessao", "1", Duration::ZERO)
            .unwrap();
        assert_eq!(store.purge_expired(Utc::now(), 10).unwrap(), 1);
        assert_eq!(searches.find(company, "a.sessao", &gone).unwrap(), None);
        assert!(searches
            .find(company, "a.sessao", &token)
            .unwrap()
            .is_some());
    }
}
