//! [`ConsoleSessionStore`] on `console_sessoes`: the console's sessions, shared by every API
//! replica. Statements on the primary: a sign-in on one replica must be seen by the next page,
//! served by another. Every statement is within one company (`empresa_id` leads the key and
//! both indexes).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Bytea, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::{CompanyId, Person, Scopes};
use ports::{ConsoleSessionStore, EncryptedSecret, RepoError, SessionHolder, StoredSession};
use uuid::Uuid;

use crate::conn::with_conn;
use crate::fixed_sql::statement;
use crate::PgPool;

/// Sessions one key (or one person, `sub`) keeps at most: a new sign-in past it forgets the least
/// recently used.
pub const MAX_SESSIONS_PER_KEY: i64 = 50;

statement! {
    /// Forgets up to 100 of the company's idle sessions (oldest first) and the key's least
    /// recently used sessions past [`MAX_SESSIONS_PER_KEY`] (counting the new one) (or the
    /// person's, for a session opened at the IdP), then keeps the new session.
    struct OpenSession {
        empresa_id: Uuid as SqlUuid,
        id_hash: Vec<u8> as Bytea,
        chave_hash: Option<String> as Nullable<Text>,
        pessoa_sub: Option<String> as Nullable<Text>,
        csrf: String as Text,
        now: DateTime<Utc> as Timestamptz,
        idle_before: DateTime<Utc> as Timestamptz,
        sessao_id: Option<Uuid> as Nullable<SqlUuid>,
        pessoa_email: Option<String> as Nullable<Text>,
        escopos: Option<String> as Nullable<Text>,
        expira_em: DateTime<Utc> as Timestamptz,
        id_token_cifrado: Option<String> as Nullable<Text>,
    }
    "WITH ociosas AS (
    DELETE FROM console_sessoes WHERE empresa_id = $empresa_id AND id_hash IN (
        SELECT id_hash FROM console_sessoes
        WHERE empresa_id = $empresa_id AND ultimo_uso <= $idle_before
        ORDER BY ultimo_uso LIMIT 100)
), excedentes AS (
    DELETE FROM console_sessoes WHERE empresa_id = $empresa_id AND id_hash IN (
        SELECT id_hash FROM console_sessoes
        WHERE empresa_id = $empresa_id AND (chave_hash = $chave_hash OR pessoa_sub = $pessoa_sub)
        ORDER BY ultimo_uso DESC OFFSET 49)  -- MAX_SESSIONS_PER_KEY - 1: room for the new one
)
INSERT INTO console_sessoes (empresa_id, id_hash, chave_hash, pessoa_sub, csrf, ultimo_uso,
    criada_em, sessao_id, pessoa_email, escopos, expira_em, id_token_cifrado)
VALUES ($empresa_id, $id_hash, $chave_hash, $pessoa_sub, $csrf, $now, $now, $sessao_id,
    $pessoa_email, $escopos, $expira_em, $id_token_cifrado)"
}

statement! {
    /// The company's live session under `id_hash`, its last use moved to `now`.
    struct TouchSession {
        empresa_id: Uuid as SqlUuid,
        id_hash: Vec<u8> as Bytea,
        now: DateTime<Utc> as Timestamptz,
        idle_before: DateTime<Utc> as Timestamptz,
    }
    "UPDATE console_sessoes SET ultimo_uso = $now
WHERE empresa_id = $empresa_id AND id_hash = $id_hash AND ultimo_uso > $idle_before
    AND expira_em > $now
RETURNING chave_hash, csrf, sessao_id, pessoa_sub, pessoa_email, escopos, expira_em,
    id_token_cifrado"
}

statement! {
    /// Ends the session (its searches go with it: `console_buscas`' foreign key), giving back the
    /// `id_token` it kept.
    struct CloseSession {
        empresa_id: Uuid as SqlUuid,
        id_hash: Vec<u8> as Bytea,
    }
    "DELETE FROM console_sessoes WHERE empresa_id = $empresa_id AND id_hash = $id_hash
RETURNING id_token_cifrado"
}

#[derive(QueryableByName)]
struct ClosedRow {
    #[diesel(sql_type = Nullable<Text>)]
    id_token_cifrado: Option<String>,
}

#[derive(QueryableByName)]
struct SessionRow {
    #[diesel(sql_type = Nullable<Text>)]
    chave_hash: Option<String>,
    #[diesel(sql_type = Text)]
    csrf: String,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    sessao_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<Text>)]
    pessoa_sub: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pessoa_email: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    escopos: Option<String>,
    // NULL only on a row written by an older process mid-upgrade: the touch refuses it
    #[diesel(sql_type = Timestamptz)]
    expira_em: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Text>)]
    id_token_cifrado: Option<String>,
}

impl SessionRow {
    /// The session; `None` for a row that is neither a key's nor a person's (never written).
    fn into_session(self) -> Option<StoredSession> {
        let holder = match (self.chave_hash, self.sessao_id, self.pessoa_sub) {
            (Some(key_hash), _, _) => SessionHolder::Key(key_hash),
            (None, Some(session_id), Some(sub)) => SessionHolder::Person {
                session_id,
                person: Person {
                    sub,
                    email: self.pessoa_email,
                },
                scopes: scopes_of(self.escopos.as_deref().unwrap_or_default())?,
            },
            _ => return None,
        };
        Some(StoredSession {
            holder,
            csrf: self.csrf,
            expires_at: self.expira_em,
            id_token: self.id_token_cifrado.map(EncryptedSecret),
        })
    }
}

/// The scopes as kept in `escopos` (comma-separated names; empty: none).
fn scopes_of(names: &str) -> Option<Scopes> {
    if names.is_empty() {
        Some(Scopes::NONE)
    } else {
        Scopes::parse_list(names).ok()
    }
}

#[derive(Clone)]
pub struct PgConsoleSessionStore {
    pool: PgPool,
}

impl PgConsoleSessionStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

impl ConsoleSessionStore for PgConsoleSessionStore {
    fn open(
        &self,
        company: CompanyId,
        id_hash: [u8; 32],
        session: StoredSession,
        now: DateTime<Utc>,
        idle_before: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        let (chave_hash, sessao_id, person, escopos) = match &session.holder {
            SessionHolder::Key(hash) => (Some(hash.clone()), None, None, None),
            SessionHolder::Person {
                session_id,
                person,
                scopes,
            } => (
                None,
                Some(*session_id),
                Some(person.clone()),
                Some(scopes.to_string()),
            ),
        };
        with_conn(&self.pool, "opening a console session", |conn| {
            OpenSession {
                empresa_id: company.0,
                id_hash: id_hash.to_vec(),
                chave_hash: chave_hash.clone(),
                pessoa_sub: person.as_ref().map(|p| p.sub.clone()),
                csrf: session.csrf.clone(),
                now,
                idle_before,
                sessao_id,
                pessoa_email: person.as_ref().and_then(|p| p.email.clone()),
                escopos: escopos.clone(),
                expira_em: session.expires_at,
                id_token_cifrado: session.id_token.as_ref().map(|t| t.0.clone()),
            }
            .execute(conn)
        })?;
        Ok(true)
    }

    fn touch(
        &self,
        company: CompanyId,
        id_hash: [u8; 32],
        now: DateTime<Utc>,
        idle_before: DateTime<Utc>,
    ) -> Result<Option<StoredSession>, RepoError> {
        let row = with_conn(&self.pool, "reading a console session", |conn| {
            TouchSession {
                empresa_id: company.0,
                id_hash: id_hash.to_vec(),
                now,
                idle_before,
            }
            .load::<SessionRow>(conn)
        })?;
        Ok(row.into_iter().next().and_then(SessionRow::into_session))
    }

    fn close(
        &self,
        company: CompanyId,
        id_hash: [u8; 32],
    ) -> Result<Option<EncryptedSecret>, RepoError> {
        let rows = with_conn(&self.pool, "closing a console session", |conn| {
            CloseSession {
                empresa_id: company.0,
                id_hash: id_hash.to_vec(),
            }
            .load::<ClosedRow>(conn)
        })?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|r| r.id_token_cifrado.map(EncryptedSecret)))
    }
}
