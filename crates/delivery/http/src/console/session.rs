//! The console's sessions (docs/console.md, "Sessions"): an API key typed once at sign-in is
//! exchanged for a random session id, sent to the browser only as an HttpOnly cookie. The key
//! itself stays in this process's memory (never in a page, a cookie or the browser's storage),
//! so every page re-authenticates it: a revoked key ends its sessions at once.
//!
//! Kept in memory, per process (decided for this first cut; docs/console.md says what several
//! replicas need). Sessions are indexed by the SHA-256 of their id, so a memory dump does not
//! hand out live cookies.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// How many sessions one process keeps at most; a sign-in beyond that (after dropping the idle
/// ones) is refused rather than growing without bound.
pub const MAX_SESSIONS: usize = 10_000;

/// The cookie that carries the session id.
pub const SESSION_COOKIE: &str = "console_sessao";

/// How the console's sessions behave (config `console.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConsoleSettings {
    /// A session unused this long is gone (`console.session_minutes`).
    pub idle_timeout: Duration,
    /// Whether cookies carry `Secure` (every environment but development).
    pub secure_cookies: bool,
}

impl Default for ConsoleSettings {
    fn default() -> Self {
        ConsoleSettings {
            idle_timeout: Duration::from_secs(30 * 60),
            secure_cookies: true,
        }
    }
}

/// What a live session holds.
#[derive(Clone)]
pub struct Session {
    /// The API key it was opened with (server memory only).
    pub key: String,
    /// The token every form of the session that changes something must carry.
    pub csrf: String,
}

struct Entry {
    session: Session,
    last_used: Instant,
}

/// Every live session of this process.
pub struct Sessions {
    settings: ConsoleSettings,
    entries: Mutex<HashMap<[u8; 32], Entry>>,
}

/// The store is full even after the idle sessions were dropped.
#[derive(Debug)]
pub struct Full;

impl Sessions {
    pub fn new(settings: ConsoleSettings) -> Self {
        Sessions {
            settings,
            entries: Mutex::new(HashMap::new()),
        }
    }

    pub fn settings(&self) -> ConsoleSettings {
        self.settings
    }

    /// Opens a session for `key`: its id (for the cookie) and the session.
    pub fn open(&self, key: String) -> Result<(String, Session), Full> {
        let id = random_token();
        let session = Session {
            key,
            csrf: random_token(),
        };
        let now = Instant::now();
        let mut entries = self.lock();
        if entries.len() >= MAX_SESSIONS {
            let idle = self.settings.idle_timeout;
            entries.retain(|_, e| now.duration_since(e.last_used) < idle);
            if entries.len() >= MAX_SESSIONS {
                return Err(Full);
            }
        }
        entries.insert(
            digest(&id),
            Entry {
                session: session.clone(),
                last_used: now,
            },
        );
        Ok((id, session))
    }

    /// The session of cookie value `id`, when it exists and was used within the idle timeout
    /// (which restarts now); an idle one is dropped.
    pub fn touch(&self, id: &str) -> Option<Session> {
        let now = Instant::now();
        let key = digest(id);
        let mut entries = self.lock();
        let entry = entries.get_mut(&key)?;
        if now.duration_since(entry.last_used) >= self.settings.idle_timeout {
            entries.remove(&key);
            return None;
        }
        entry.last_used = now;
        Some(entry.session.clone())
    }

    /// Ends the session of cookie value `id` (nothing when there is none).
    pub fn close(&self, id: &str) {
        self.lock().remove(&digest(id));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Default for Sessions {
    fn default() -> Self {
        Sessions::new(ConsoleSettings::default())
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

fn digest(id: &str) -> [u8; 32] {
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
        Sessions::new(ConsoleSettings {
            idle_timeout: idle,
            secure_cookies: true,
        })
    }

    #[test]
    fn an_open_session_is_found_by_its_id_until_closed() {
        let sessions = store(Duration::from_secs(60));
        let (id, session) = sessions.open("chave".into()).unwrap();
        assert_eq!(id.len(), 64);
        assert_ne!(id, session.csrf);
        assert_eq!(sessions.touch(&id).unwrap().key, "chave");
        assert!(sessions.touch("outro").is_none());
        sessions.close(&id);
        assert!(sessions.touch(&id).is_none());
    }

    #[test]
    fn an_idle_session_is_gone() {
        let sessions = store(Duration::ZERO);
        let (id, _) = sessions.open("chave".into()).unwrap();
        assert!(sessions.touch(&id).is_none());
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token("abc", "abc"));
        assert!(!same_token("abc", "abd"));
        assert!(!same_token("abc", "ab"));
    }
}
