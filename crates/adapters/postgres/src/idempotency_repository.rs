use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{BigInt, Timestamptz, Uuid as SqlUuid};
use domain::CompanyId;
use ports::{IdempotencyBegin, IdempotencyClaim, IdempotencyRepository, RepoError, StoredOutcome};
use uuid::Uuid;

use crate::conn::with_conn;
use crate::fixed_sql::statement;
use crate::models::chave_idempotencia::{ESTADO_CONCLUIDA, ESTADO_EM_ANDAMENTO};
use crate::models::{ChaveIdempotenciaRow, NewChaveIdempotencia};
use crate::per_company::companies_with;
use crate::per_company::each_company;
use crate::schema::chaves_idempotencia as ci;
use crate::PgPool;

statement! {
    /// Companies (in id order) with a key created before `before`: one probe of
    /// `chaves_idempotencia_empresa_criado_em_idx` each.
    struct CompaniesWithOldKeys {
        before: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    companies_with!(
        "SELECT 1 FROM chaves_idempotencia k WHERE k.empresa_id = e.empresa_id AND k.criado_em < $before"
    )
}

statement! {
    /// One batch of the purge within one company: its keys created before `before`, oldest
    /// first along `chaves_idempotencia_empresa_criado_em_idx`; a key locked by a running request
    /// is skipped (purged next round).
    struct PurgeKeys {
        empresa_id: Uuid as SqlUuid,
        before: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    "DELETE FROM chaves_idempotencia
WHERE empresa_id = $empresa_id AND chave IN (
    SELECT chave FROM chaves_idempotencia
    WHERE empresa_id = $empresa_id AND criado_em < $before
    ORDER BY criado_em
    LIMIT $limit
    FOR UPDATE SKIP LOCKED
)"
}

/// [`IdempotencyRepository`] on `chaves_idempotencia`; every operation filters by `empresa_id`
/// (the purge finds the companies with old keys first, then purges each one's).
#[derive(Clone)]
pub struct PgIdempotencyRepository {
    pool: PgPool,
}

impl PgIdempotencyRepository {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

/// What the existing row of a key means for `claim`, decided under its row lock.
fn decide(
    conn: &mut PgConnection,
    row: ChaveIdempotenciaRow,
    claim: &IdempotencyClaim,
) -> QueryResult<IdempotencyBegin> {
    if row.impressao != claim.fingerprint {
        return Ok(IdempotencyBegin::Mismatch);
    }
    if row.estado == ESTADO_CONCLUIDA {
        let (Some(status), Some(body)) = (row.status_http, row.corpo) else {
            return Err(DieselError::DeserializationError(
                "a completed idempotency key has no kept answer".into(),
            ));
        };
        let status = u16::try_from(status).map_err(|_| {
            DieselError::DeserializationError("a kept answer has an invalid HTTP status".into())
        })?;
        return Ok(IdempotencyBegin::Replay(StoredOutcome { status, body }));
    }
    if row.bloqueada_ate.is_some_and(|until| until > claim.now) {
        return Ok(IdempotencyBegin::InProgress);
    }
    // released, or its holder's lease is over: take it over, keeping the reserved resource id
    diesel::update(
        ci::table
            .filter(ci::empresa_id.eq(row.empresa_id))
            .filter(ci::chave.eq(&row.chave)),
    )
    .set((
        ci::dono.eq(claim.owner),
        ci::bloqueada_ate.eq(Some(claim.lease_until)),
    ))
    .execute(conn)?;
    Ok(IdempotencyBegin::Run {
        resource_id: row.recurso_id,
    })
}

impl IdempotencyRepository for PgIdempotencyRepository {
    /// `INSERT ... ON CONFLICT DO NOTHING`; when the key exists, its row is read `FOR UPDATE`
    /// (a concurrent request with the same key waits here, then sees the first one's lease) and
    /// decided on, in the same transaction. A key purged between the two statements is inserted
    /// on the second pass.
    fn begin(&self, claim: &IdempotencyClaim) -> Result<IdempotencyBegin, RepoError> {
        let new = NewChaveIdempotencia {
            empresa_id: claim.company.0,
            chave: &claim.key,
            impressao: &claim.fingerprint,
            estado: ESTADO_EM_ANDAMENTO,
            recurso_id: claim.resource_id,
            dono: claim.owner,
            bloqueada_ate: Some(claim.lease_until),
            criado_em: claim.now,
        };
        with_conn(&self.pool, "beginning an idempotent request", |conn| {
            conn.transaction(|conn| {
                for _ in 0..2 {
                    let inserted = diesel::insert_into(ci::table)
                        .values(&new)
                        .on_conflict((ci::empresa_id, ci::chave))
                        .do_nothing()
                        .execute(conn)?;
                    if inserted == 1 {
                        return Ok(IdempotencyBegin::Run {
                            resource_id: claim.resource_id,
                        });
                    }
                    let existing = ci::table
                        .filter(ci::empresa_id.eq(claim.company.0))
                        .filter(ci::chave.eq(&claim.key))
                        .select(ChaveIdempotenciaRow::as_select())
                        .for_update()
                        .first(conn)
                        .optional()?;
                    if let Some(row) = existing {
                        return decide(conn, row, claim);
                    }
                }
                Err(DieselError::DeserializationError(
                    "an idempotency key vanished twice while it was being taken".into(),
                ))
            })
        })
    }

    fn complete(
        &self,
        empresa: CompanyId,
        chave: &str,
        dono: Uuid,
        outcome: &StoredOutcome,
        at: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        let changed = with_conn(&self.pool, "completing an idempotent request", |conn| {
            diesel::update(
                ci::table
                    .filter(ci::empresa_id.eq(empresa.0))
                    .filter(ci::chave.eq(chave))
                    .filter(ci::dono.eq(dono))
                    .filter(ci::estado.eq(ESTADO_EM_ANDAMENTO)),
            )
            .set((
                ci::estado.eq(ESTADO_CONCLUIDA),
                ci::status_http.eq(Some(i32::from(outcome.status))),
                ci::corpo.eq(Some(&outcome.body)),
                ci::concluida_em.eq(Some(at)),
                ci::bloqueada_ate.eq(None::<DateTime<Utc>>),
            ))
            .execute(conn)
        })?;
        Ok(changed == 1)
    }

    fn release(
        &self,
        empresa: CompanyId,
        chave: &str,
        dono: Uuid,
        at: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        let changed = with_conn(&self.pool, "releasing an idempotency key", |conn| {
            diesel::update(
                ci::table
                    .filter(ci::empresa_id.eq(empresa.0))
                    .filter(ci::chave.eq(chave))
                    .filter(ci::dono.eq(dono))
                    .filter(ci::estado.eq(ESTADO_EM_ANDAMENTO)),
            )
            .set(ci::bloqueada_ate.eq(Some(at)))
            .execute(conn)
        })?;
        Ok(changed == 1)
    }

    /// Per company: `CompaniesWithOldKeys`, then `PurgeKeys` with what is left of `limit`.
    fn purge_created_before(&self, before: DateTime<Utc>, limit: u32) -> Result<u32, RepoError> {
        each_company(
            &self.pool,
            limit,
            "purging idempotency keys",
            |conn, limit| CompaniesWithOldKeys { before, limit }.load(conn),
            |conn, empresa_id, limit| {
                PurgeKeys {
                    empresa_id,
                    before,
                    limit,
                }
                .execute(conn)
            },
        )
    }
}
