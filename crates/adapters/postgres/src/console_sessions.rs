//! [`ConsoleSessionStore`] on `console_sessoes`: the console's sessions, shared by every API
//! replica. Statements on the primary: a sign-in on one replica must be seen by the next page,
//! served by another. Every statement is within one company (`empresa_id` leads the key and
//! both indexes).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Bytea, Text, Timestamptz, Uuid as SqlUuid};
use domain::CompanyId;
use ports::{ConsoleSessionStore, RepoError, StoredSession};
use uuid::Uuid;

use crate::conn::with_conn;
use crate::fixed_sql::statement;
use crate::PgPool;

/// Sessions one key keeps at most: a new sign-in past it forgets the key's least recently used.
pub const MAX_SESSIONS_PER_KEY: i64 = 50;

statement! {
    /// Forgets up to 100 of the company's idle sessions (oldest first) and the key's least
    /// recently used sessions past [`MAX_SESSIONS_PER_KEY`] (counting the new one), then keeps
    /// the new session.
    struct OpenSession {
        empresa_id: Uuid as SqlUuid,
        id_hash: Vec<u8> as Bytea,
        chave_hash: String as Text,
        csrf: String as Text,
        now: DateTime<Utc> as Timestamptz,
        idle_before: DateTime<Utc> as Timestamptz,
    }
    "WITH ociosas AS (
    DELETE FROM console_sessoes WHERE empresa_id = $empresa_id AND id_hash IN (
        SELECT id_hash FROM console_sessoes
        WHERE empresa_id = $empresa_id AND ultimo_uso <= $idle_before
        ORDER BY ultimo_uso LIMIT 100)
), excedentes AS (
    DELETE FROM console_sessoes WHERE empresa_id = $empresa_id AND id_hash IN (
        SELECT id_hash FROM console_sessoes
        WHERE empresa_id = $empresa_id AND chave_hash = $chave_hash
        ORDER BY ultimo_uso DESC OFFSET 49)  -- MAX_SESSIONS_PER_KEY - 1: room for the new one
)
INSERT INTO console_sessoes (empresa_id, id_hash, chave_hash, csrf, ultimo_uso, criada_em)
VALUES ($empresa_id, $id_hash, $chave_hash, $csrf, $now, $now)"
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
RETURNING chave_hash, csrf"
}

statement! {
    struct CloseSession {
        empresa_id: Uuid as SqlUuid,
        id_hash: Vec<u8> as Bytea,
    }
    "DELETE FROM console_sessoes WHERE empresa_id = $empresa_id AND id_hash = $id_hash"
}

#[derive(QueryableByName)]
struct SessionRow {
    #[diesel(sql_type = Text)]
    chave_hash: String,
    #[diesel(sql_type = Text)]
    csrf: String,
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
        with_conn(&self.pool, "opening a console session", |conn| {
            OpenSession {
                empresa_id: company.0,
                id_hash: id_hash.to_vec(),
                chave_hash: session.key_hash.clone(),
                csrf: session.csrf.clone(),
                now,
                idle_before,
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
        Ok(row.into_iter().next().map(|r| StoredSession {
            key_hash: r.chave_hash,
            csrf: r.csrf,
        }))
    }

    fn close(&self, company: CompanyId, id_hash: [u8; 32]) -> Result<(), RepoError> {
        with_conn(&self.pool, "closing a console session", |conn| {
            CloseSession {
                empresa_id: company.0,
                id_hash: id_hash.to_vec(),
            }
            .execute(conn)
        })?;
        Ok(())
    }
}
