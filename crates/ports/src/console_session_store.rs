//! Where the console's sessions are kept (issue 26; docs/console.md, "Sessions"): shared by every
//! API replica in production (PostgreSQL), in memory where there is one process. A session is
//! found by the SHA-256 of its cookie's value, so the store never holds a live cookie, and holds
//! the hash of the API key it was opened with, never the key: each page authenticates that hash
//! again. Every session belongs to the company of its key, and is found within it (the cookie
//! names the company: on a database distributed by company the session lives on its shard).

use chrono::{DateTime, Utc};
use domain::{CompanyId, Person, Scopes};
use uuid::Uuid;

use crate::{EncryptedSecret, RepoError};

/// Who a session was opened for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionHolder {
    /// An API key typed at sign-in: its hash (`hash_api_key`), authenticated again on every page.
    Key(String),
    /// A person signed in at the company's identity provider (issue 38): the session's own id
    /// (what the access log names where a key's id would be), the person, and the scopes the
    /// person's roles gave at sign-in (read again at the next sign-in).
    Person {
        session_id: Uuid,
        person: Person,
        scopes: Scopes,
    },
}

/// What a live session holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSession {
    pub holder: SessionHolder,
    /// The token every form of the session that changes something must carry.
    pub csrf: String,
    /// The session's absolute end (`console.session_max_minutes` after it was opened), whatever
    /// its use.
    pub expires_at: DateTime<Utc>,
    /// The `id_token` a person signed in with, encrypted (`SecretCipher`): the `id_token_hint` of
    /// the sign-out at the provider (OpenID Connect RP-Initiated Logout). `None` for a key's.
    pub id_token: Option<EncryptedSecret>,
}

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait ConsoleSessionStore: Send + Sync {
    /// Keeps a new session of `company` under `id_hash`, used at `now`. Forgets first a bounded
    /// batch of the company's sessions idle since before `idle_before`, and the oldest sessions
    /// of the same key past its bound. `false`: the store is full (in memory only).
    fn open(
        &self,
        company: CompanyId,
        id_hash: [u8; 32],
        session: StoredSession,
        now: DateTime<Utc>,
        idle_before: DateTime<Utc>,
    ) -> Result<bool, RepoError>;

    /// The company's session under `id_hash` when it was used after `idle_before` and its
    /// absolute end is after `now`; its last use moves to `now`. An idle or ended one is `None`
    /// (and may be forgotten).
    fn touch(
        &self,
        company: CompanyId,
        id_hash: [u8; 32],
        now: DateTime<Utc>,
        idle_before: DateTime<Utc>,
    ) -> Result<Option<StoredSession>, RepoError>;

    /// Forgets the company's session under `id_hash` (nothing when there is none); the
    /// `id_token` it kept, for the sign-out at the provider.
    fn close(
        &self,
        company: CompanyId,
        id_hash: [u8; 32],
    ) -> Result<Option<EncryptedSecret>, RepoError>;
}
