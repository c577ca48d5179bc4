//! The CPF searches of the console (issue 38, part 2): a search posts the CPF once and is
//! answered 303 to `/console/titulares/<token>`, a GET that Back and reload repeat without the
//! browser's "Confirm Form Resubmission". The token is opaque and random (244 bits, as session
//! ids): the URL carries neither the CPF nor a hash of it (a CPF's hash is guessable from the
//! 10^9 CPFs). The CPF stays here, on the server, under the token's SHA-256, bound to the
//! company and the session that searched, for `console.search_seconds` (15 minutes by default).
//!
//! Kept in the process's memory: a reload served by another replica finds no token and shows
//! the search form again (the DPO types the CPF again). Nothing personal is written to a table
//! for it, and the CPF goes with the process (docs/console.md, "The subject's page").

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use domain::CompanyId;

use crate::session::{digest, random_token};

/// How many searches are kept at most; past it the expired ones go, then the oldest.
const MAX_SEARCHES: usize = 10_000;

struct Search {
    company: CompanyId,
    /// The SHA-256 of the session id that searched.
    session: [u8; 32],
    cpf: String,
    expires: Instant,
}

/// The live searches of the process, by the SHA-256 of their token.
#[derive(Default)]
pub struct SubjectSearches {
    searches: Mutex<HashMap<[u8; 32], Search>>,
}

impl SubjectSearches {
    /// Keeps `cpf` for the session `session_id` of `company` for `lifetime`; the token to put
    /// in the URL.
    pub fn keep(
        &self,
        company: CompanyId,
        session_id: &str,
        cpf: String,
        lifetime: Duration,
    ) -> String {
        let token = random_token();
        let now = Instant::now();
        let mut searches = self.lock();
        if searches.len() >= MAX_SEARCHES {
            searches.retain(|_, s| s.expires > now);
        }
        if searches.len() >= MAX_SEARCHES {
            if let Some(oldest) = searches
                .iter()
                .min_by_key(|(_, s)| s.expires)
                .map(|(k, _)| *k)
            {
                searches.remove(&oldest);
            }
        }
        searches.insert(
            digest(&token),
            Search {
                company,
                session: digest(session_id),
                cpf,
                expires: now + lifetime,
            },
        );
        token
    }

    /// The CPF of `token` when it is a live search of this company and this session; `None`
    /// for a made-up, expired, another session's or another company's token (all alike: the
    /// page says to search again).
    pub fn find(&self, company: CompanyId, session_id: &str, token: &str) -> Option<String> {
        let key = digest(token);
        let mut searches = self.lock();
        let search = searches.get(&key)?;
        if search.expires <= Instant::now() {
            searches.remove(&key);
            return None;
        }
        (search.company == company && search.session == digest(session_id))
            .then(|| search.cpf.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Search>> {
        self.searches.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;

    #[test]
    fn a_search_is_found_by_its_session_and_company_until_it_expires() {
        let searches = SubjectSearches::default();
        let company = CompanyId(Uuid::from_u128(1));
        let other = CompanyId(Uuid::from_u128(2));
        let token = searches.keep(
            company,
            "a.sessao",
            "52998224725".into(),
            Duration::from_secs(60),
        );
        assert!(!token.contains("52998224725"));
        assert_eq!(
            searches.find(company, "a.sessao", &token).as_deref(),
            Some("52998224725")
        );
        assert_eq!(searches.find(other, "a.sessao", &token), None);
        assert_eq!(searches.find(company, "b.sessao", &token), None);
        assert_eq!(searches.find(company, "a.sessao", "inventado"), None);
        let short = searches.keep(company, "a.sessao", "1".into(), Duration::ZERO);
        assert_eq!(searches.find(company, "a.sessao", &short), None);
    }
}
