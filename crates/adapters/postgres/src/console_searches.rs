//! [`ConsoleSearchStore`] on `console_buscas`: the console's CPF searches, shared by every API
//! replica (issue 38, part 2). Statements on the primary: the reload after a search may be served
//! by another replica at once. Every statement is within one company (`empresa_id` leads the key
//! and both indexes); the worker's purge finds the companies with expired searches first.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bytea, Timestamptz, Uuid as SqlUuid};
use domain::CompanyId;
use ports::{ConsoleSearchStore, RepoError};
use uuid::Uuid;

use crate::conn::with_conn;
use crate::fixed_sql::statement;
use crate::per_company::{companies_with, each_company};
use crate::PgPool;

statement! {
    /// A new search (its token is new: 244 random bits).
    struct KeepSearch {
        empresa_id: Uuid as SqlUuid,
        token_hash: Vec<u8> as Bytea,
        sessao_hash: Vec<u8> as Bytea,
        cpf_cifrado: Vec<u8> as Bytea,
        expira_em: DateTime<Utc> as Timestamptz,
    }
    "INSERT INTO console_buscas (empresa_id, token_hash, sessao_hash, cpf_cifrado, expira_em)
VALUES ($empresa_id, $token_hash, $sessao_hash, $cpf_cifrado, $expira_em)"
}

statement! {
    /// The company's live search under `token_hash`, when the session `sessao_hash` made it.
    struct FindSearch {
        empresa_id: Uuid as SqlUuid,
        token_hash: Vec<u8> as Bytea,
        sessao_hash: Vec<u8> as Bytea,
        now: DateTime<Utc> as Timestamptz,
    }
    "SELECT cpf_cifrado FROM console_buscas
WHERE empresa_id = $empresa_id AND token_hash = $token_hash AND sessao_hash = $sessao_hash
    AND expira_em > $now"
}

statement! {
    /// Companies (in id order) with an expired search: one probe of `console_buscas_expira_idx`
    /// each.
    struct CompaniesWithExpiredSearches {
        now: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    companies_with!(
        "SELECT 1 FROM console_buscas b WHERE b.empresa_id = e.empresa_id AND b.expira_em <= $now"
    )
}

statement! {
    /// One company's expired searches, oldest first along `console_buscas_expira_idx`.
    struct PurgeSearches {
        empresa_id: Uuid as SqlUuid,
        now: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    "DELETE FROM console_buscas
WHERE empresa_id = $empresa_id AND token_hash IN (
    SELECT token_hash FROM console_buscas
    WHERE empresa_id = $empresa_id AND expira_em <= $now
    ORDER BY expira_em
    LIMIT $limit
)"
}

#[derive(QueryableByName)]
struct SealedRow {
    #[diesel(sql_type = Bytea)]
    cpf_cifrado: Vec<u8>,
}

#[derive(Clone)]
pub struct PgConsoleSearchStore {
    pool: PgPool,
}

impl PgConsoleSearchStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

impl ConsoleSearchStore for PgConsoleSearchStore {
    fn keep(
        &self,
        company: CompanyId,
        token_hash: [u8; 32],
        session_hash: [u8; 32],
        sealed: Vec<u8>,
        expires_at: DateTime<Utc>,
    ) -> Result<(), RepoError> {
        with_conn(&self.pool, "keeping a console search", |conn| {
            KeepSearch {
                empresa_id: company.0,
                token_hash: token_hash.to_vec(),
                sessao_hash: session_hash.to_vec(),
                cpf_cifrado: sealed.clone(),
                expira_em: expires_at,
            }
            .execute(conn)
        })?;
        Ok(())
    }

    fn find(
        &self,
        company: CompanyId,
        token_hash: [u8; 32],
        session_hash: [u8; 32],
        now: DateTime<Utc>,
    ) -> Result<Option<Vec<u8>>, RepoError> {
        let rows = with_conn(&self.pool, "reading a console search", |conn| {
            FindSearch {
                empresa_id: company.0,
                token_hash: token_hash.to_vec(),
                sessao_hash: session_hash.to_vec(),
                now,
            }
            .load::<SealedRow>(conn)
        })?;
        Ok(rows.into_iter().next().map(|r| r.cpf_cifrado))
    }

    /// Per company: `CompaniesWithExpiredSearches`, then `PurgeSearches` with what is left of
    /// `limit`.
    fn purge_expired(&self, now: DateTime<Utc>, limit: u32) -> Result<u32, RepoError> {
        each_company(
            &self.pool,
            limit,
            "purging expired console searches",
            |conn, limit| CompaniesWithExpiredSearches { now, limit }.load(conn),
            |conn, empresa_id, limit| {
                PurgeSearches {
                    empresa_id,
                    now,
                    limit,
                }
                .execute(conn)
            },
        )
    }
}
