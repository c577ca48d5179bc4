//! The console's sessions (docs/console.md, "Sessions"): an API key typed once at sign-in, or a
//! person signed in at the company's identity provider (issue 38), is exchanged for a random
//! session id, sent to the browser only as an HttpOnly cookie. The store
//! ([`ConsoleSessionStore`]) keeps, under the SHA-256 of that id, the hash of the key (never the
//! key) or the person and the scopes their roles gave, and the session's CSRF token; every page
//! authenticates the key's hash again, so a revoked key ends its sessions at once. Every session
//! ends when idle (`console.session_minutes`) and at an absolute end
//! (`console.session_max_minutes`) whatever its use.
//!
//! The cookie's value is `<company id>.<random>`: a session is kept and found within its
//! company (on a database distributed by company, on its company's shard). The company's id is
//! no secret from the people who signed in for it; the random part is the session.
//!
//! The service keeps them in PostgreSQL (`console_sessoes`), so that every API replica serves a
//! browser signed in on another; [`MemorySessions`] keeps them in one process's memory (unit
//! tests, a store-less setup). Every call may reach the database: callers make them in a blocking
//! hop.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use domain::{CompanyId, Person, Scopes};
use ports::{ConsoleSessionStore, EncryptedSecret, RepoError, SessionHolder, StoredSession};
use sha2::{Digest, Sha256};

/// How many sessions [`MemorySessions`] keeps at most; a sign-in beyond that (after dropping the
/// idle ones) is refused rather than growing without bound.
pub const MAX_SESSIONS: usize = 10_000;

/// The cookie that carries the session id.
pub const SESSION_COOKIE: &str = "console_sessao";

/// How the console's sessions behave (config `console.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConsoleSettings {
    /// A session unused this long is gone (`console.session_minutes`).
    pub idle_timeout: Duration,
    /// A session ends this long after it was opened, however used
    /// (`console.session_max_minutes`, `APP__CONSOLE__SESSION_MAX_MINUTES`).
    pub absolute_timeout: Duration,
    /// A CPF search's token opens the subject's page this long (`console.search_seconds`).
    pub search_lifetime: Duration,
    /// Whether cookies carry `Secure` (every environment but development).
    pub secure_cookies: bool,
}

impl Default for ConsoleSettings {
    fn default() -> Self {
        ConsoleSettings {
            idle_timeout: Duration::from_secs(30 * 60),
            absolute_timeout: Duration::from_secs(720 * 60),
            search_lifetime: Duration::from_secs(15 * 60),
            secure_cookies: true,
        }
    }
}

/// What a live session holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The API key's hash it was opened with, or the person.
    pub holder: SessionHolder,
    /// The token every form of the session that changes something must carry.
    pub csrf: String,
}

/// The console's sessions: the settings and the store.
pub struct Sessions {
    settings: ConsoleSettings,
    store: Arc<dyn ConsoleSessionStore>,
}

/// The store is full even after the idle sessions were dropped.
#[derive(Debug)]
pub struct Full;

impl Sessions {
    pub fn new(settings: ConsoleSettings, store: Arc<dyn ConsoleSessionStore>) -> Self {
        Sessions { settings, store }
    }

    pub fn settings(&self) -> ConsoleSettings {
        self.settings
    }

    fn idle_before(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        now - chrono::Duration::from_std(self.settings.idle_timeout)
            .unwrap_or(chrono::Duration::MAX)
    }

    /// Opens a session for the key of hash `key_hash`, of `company`: its id (for the cookie) and
    /// the session; `None` when the store is full.
    pub fn open(
        &self,
        company: CompanyId,
        key_hash: String,
    ) -> Result<Option<(String, Session)>, RepoError> {
        self.open_for(company, SessionHolder::Key(key_hash), None)
    }

    /// Opens a session for `person`, signed in at the company's identity provider with roles
    /// that give `scopes` and the `id_token` (encrypted) kept for the sign-out at the provider;
    /// as [`Sessions::open`].
    pub fn open_person(
        &self,
        company: CompanyId,
        person: Person,
        scopes: Scopes,
        id_token: EncryptedSecret,
    ) -> Result<Option<(String, Session)>, RepoError> {
        self.open_for(
            company,
            SessionHolder::Person {
                session_id: uuid::Uuid::new_v4(),
                person,
                scopes,
            },
            Some(id_token),
        )
    }

    fn open_for(
        &self,
        company: CompanyId,
        holder: SessionHolder,
        id_token: Option<EncryptedSecret>,
    ) -> Result<Option<(String, Session)>, RepoError> {
        let id = format!("{}.{}", company.0.simple(), random_token());
        let session = Session {
            holder,
            csrf: random_token(),
        };
        let now = Utc::now();
        let expires_at = now
            + chrono::Duration::from_std(self.settings.absolute_timeout)
                .unwrap_or(chrono::Duration::MAX);
        let kept = self.store.open(
            company,
            digest(&id),
            StoredSession {
                holder: session.holder.clone(),
                csrf: session.csrf.clone(),
                expires_at,
                id_token,
            },
            now,
            self.idle_before(now),
        )?;
        Ok(kept.then_some((id, session)))
    }

    /// The session of cookie value `id`, when it exists, was used within the idle timeout (which
    /// restarts now) and has not reached its absolute end. A value that names no company (a cookie from before sessions were
    /// kept by company, or made up) has none.
    pub fn touch(&self, id: &str) -> Result<Option<Session>, RepoError> {
        let Some(company) = company_of(id) else {
            return Ok(None);
        };
        let now = Utc::now();
        Ok(self
            .store
            .touch(company, digest(id), now, self.idle_before(now))?
            .map(|s| Session {
                holder: s.holder,
                csrf: s.csrf,
            }))
    }

    /// Ends the session of cookie value `id` (nothing when there is none); the `id_token` (encrypted)
    /// it kept, when a person signed in at the provider.
    pub fn close(&self, id: &str) -> Result<Option<EncryptedSecret>, RepoError> {
        match company_of(id) {
            Some(company) => self.store.close(company, digest(id)),
            None => Ok(None),
        }
    }
}

impl Default for Sessions {
    fn default() -> Self {
        Sessions::new(
            ConsoleSettings::default(),
            Arc::new(MemorySessions::default()),
        )
    }
}

/// The company a session id names (`<company id>.<random>`).
pub(crate) fn company_of(id: &str) -> Option<CompanyId> {
    let (company, _) = id.split_once('.')?;
    uuid::Uuid::try_parse(company).ok().map(CompanyId)
}

/// Each session by its company and the SHA-256 of its id, with its last use.
type MemoryEntries = HashMap<(CompanyId, [u8; 32]), (StoredSession, DateTime<Utc>)>;

/// Sessions in this process's memory, at most [`MAX_SESSIONS`].
#[derive(Default)]
pub struct MemorySessions {
    entries: Mutex<MemoryEntries>,
}

impl MemorySessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, MemoryEntries> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl ConsoleSessionStore for MemorySessions {
    fn open(
        &self,
        company: CompanyId,
        id_hash: [u8; 32],
        session: StoredSession,
        now: DateTime<Utc>,
        idle_before: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        let mut entries = self.lock();
        if entries.len() >= MAX_SESSIONS {
            entries.retain(|_, (_, used)| *used > idle_before);
            if entries.len() >= MAX_SESSIONS {
                return Ok(false);
            }
        }
        entries.insert((company, id_hash), (session, now));
        Ok(true)
    }

    fn touch(
        &self,
        company: CompanyId,
        id_hash: [u8; 32],
        now: DateTime<Utc>,
        idle_before: DateTime<Utc>,
    ) -> Result<Option<StoredSession>, RepoError> {
        let mut entries = self.lock();
        let Some((session, used)) = entries.get_mut(&(company, id_hash)) else {
            return Ok(None);
        };
        if *used <= idle_before || session.expires_at <= now {
            entries.remove(&(company, id_hash));
            return Ok(None);
        }
        *used = now;
        Ok(Some(session.clone()))
    }

    fn close(
        &self,
        company: CompanyId,
        id_hash: [u8; 32],
    ) -> Result<Option<EncryptedSecret>, RepoError> {
        Ok(self
            .lock()
            .remove(&(company, id_hash))
            .and_then(|(session, _)| session.id_token))
    }
}

/// 244 random bits (two v4 UUIDs, from the operating system's generator), as 64 hex digits.
pub fn random_token() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// The SHA-256 of a session id or a sign-in's `state`: what the stores keep.
pub(crate) fn digest(id: &str) -> [u8; 32] {
    Sha256::digest(id.as_bytes()).into()
}

/// Equal strings, compared in time that does not depend on where they differ (CSRF tokens).
pub fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(idle: Duration) -> Sessions {
        store_ending(idle, Duration::from_secs(3600))
    }

    fn store_ending(idle: Duration, absolute: Duration) -> Sessions {
        Sessions::new(
            ConsoleSettings {
                idle_timeout: idle,
                absolute_timeout: absolute,
                search_lifetime: Duration::from_secs(60),
                secure_cookies: true,
            },
            Arc::new(MemorySessions::default()),
        )
    }

    #[test]
    fn an_open_session_is_found_by_its_id_until_closed() {
        let sessions = store(Duration::from_secs(60));
        let company = CompanyId(uuid::Uuid::from_u128(0xe0));
        let (id, session) = sessions
            .open(company, "hash-da-chave".into())
            .unwrap()
            .unwrap();
        assert_eq!(id.len(), 32 + 1 + 64);
        assert!(id.starts_with(&format!("{}.", company.0.simple())));
        assert_ne!(id, session.csrf);
        assert_eq!(
            sessions.touch(&id).unwrap().unwrap().holder,
            SessionHolder::Key("hash-da-chave".into())
        );
        assert!(sessions.touch("outro").unwrap().is_none());
        let other_company = id.replacen(
            &company.0.simple().to_string(),
            &uuid::Uuid::from_u128(0xe1).simple().to_string(),
            1,
        );
        assert!(
            sessions.touch(&other_company).unwrap().is_none(),
            "found within its own company only"
        );
        assert!(
            sessions.touch(&id[33..]).unwrap().is_none(),
            "a value naming no company (a cookie from before) has no session"
        );
        assert_eq!(
            sessions.close(&id).unwrap(),
            None,
            "a key's keeps no id_token"
        );
        assert!(sessions.touch(&id).unwrap().is_none());
    }

    #[test]
    fn closing_a_persons_session_gives_back_the_id_token_it_kept() {
        let sessions = store(Duration::from_secs(60));
        let person = Person {
            sub: "p-1".into(),
            email: None,
        };
        let kept = EncryptedSecret("v1:cifrado".into());
        let (id, _) = sessions
            .open_person(
                CompanyId(uuid::Uuid::from_u128(0xe0)),
                person,
                Scopes::NONE,
                kept.clone(),
            )
            .unwrap()
            .unwrap();
        assert_eq!(sessions.close(&id).unwrap(), Some(kept));
        assert_eq!(sessions.close(&id).unwrap(), None, "once");
    }

    #[test]
    fn an_idle_session_is_gone() {
        let sessions = store(Duration::ZERO);
        let (id, _) = sessions
            .open(
                CompanyId(uuid::Uuid::from_u128(0xe0)),
                "hash-da-chave".into(),
            )
            .unwrap()
            .unwrap();
        assert!(sessions.touch(&id).unwrap().is_none());
    }

    #[test]
    fn a_session_ends_at_its_absolute_end_however_used() {
        let sessions = store_ending(Duration::from_secs(60), Duration::ZERO);
        let person = Person {
            sub: "p-1".into(),
            email: None,
        };
        let (id, _) = sessions
            .open_person(
                CompanyId(uuid::Uuid::from_u128(0xe0)),
                person,
                Scopes::NONE,
                EncryptedSecret("v1:cifrado".into()),
            )
            .unwrap()
            .unwrap();
        assert!(sessions.touch(&id).unwrap().is_none());
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token("abc", "abc"));
        assert!(!same_token("abc", "abd"));
        assert!(!same_token("abc", "ab"));
    }
}
