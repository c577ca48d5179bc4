//! [`AuditLogRepository`] on `auditoria_entradas`, `auditoria_checkpoints` and
//! `auditoria_chaves` (migration 2026-11-30-002501_create_auditoria). The entries themselves are
//! appended by the statements that change the requests (consent_request_repository,
//! retention_repository); this reads them and keeps checkpoints and keys. Every query of a
//! company's log is bounded by its `empresa_id` (the tables' keys begin with it). These run once
//! per checkpoint round or per proof asked for, never on a change's path, so they are plain
//! `sql_query`s.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_query;
use diesel::sql_types::{BigInt, Binary, Text, Timestamptz, Uuid as SqlUuid};
use domain::CompanyId;
use ports::{
    AuditEntry, AuditLogRepository, LogPosition, PublishedKey, RepoError, StoredCheckpoint,
};
use uuid::Uuid;

use crate::conn::with_conn;
use crate::per_company::CompanyIdRow;
use crate::PgPool;

/// The watermark: transactions below it have all ended (as the events feed uses it).
const SETTLED: &str = "transacao < (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint";

#[derive(Clone)]
pub struct PgAuditLogRepository {
    pool: PgPool,
}

impl PgAuditLogRepository {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[derive(QueryableByName)]
struct EntryRow {
    #[diesel(sql_type = SqlUuid)]
    solicitacao_id: Uuid,
    #[diesel(sql_type = Binary)]
    entrada: Vec<u8>,
    #[diesel(sql_type = BigInt)]
    transacao: i64,
    #[diesel(sql_type = BigInt)]
    posicao: i64,
}

impl From<EntryRow> for AuditEntry {
    fn from(row: EntryRow) -> Self {
        AuditEntry {
            request_id: row.solicitacao_id,
            bytes: row.entrada,
            position: LogPosition {
                transaction: row.transacao,
                sequence: row.posicao,
            },
        }
    }
}

#[derive(QueryableByName)]
struct CheckpointRow {
    #[diesel(sql_type = BigInt)]
    tamanho: i64,
    #[diesel(sql_type = Binary)]
    raiz: Vec<u8>,
    #[diesel(sql_type = BigInt)]
    ate_transacao: i64,
    #[diesel(sql_type = BigInt)]
    ate_posicao: i64,
    #[diesel(sql_type = Text)]
    nota: String,
    #[diesel(sql_type = Text)]
    kid: String,
    #[diesel(sql_type = Timestamptz)]
    criado_em: DateTime<Utc>,
}

impl CheckpointRow {
    fn into_port(self) -> QueryResult<StoredCheckpoint> {
        Ok(StoredCheckpoint {
            size: u64::try_from(self.tamanho).map_err(bad_row)?,
            root: self.raiz.try_into().map_err(|_| bad_row("raiz"))?,
            last: LogPosition {
                transaction: self.ate_transacao,
                sequence: self.ate_posicao,
            },
            note: self.nota,
            kid: self.kid,
            created_at: self.criado_em,
        })
    }
}

#[derive(QueryableByName)]
struct KeyRow {
    #[diesel(sql_type = Text)]
    kid: String,
    #[diesel(sql_type = Binary)]
    chave_publica: Vec<u8>,
}

#[derive(QueryableByName)]
struct SeedRow {
    #[diesel(sql_type = Binary)]
    semente: Vec<u8>,
}

fn bad_row(what: impl std::fmt::Debug) -> diesel::result::Error {
    diesel::result::Error::DeserializationError(
        format!("an audit-log row does not hold what it should: {what:?}").into(),
    )
}

const CHECKPOINT_COLUMNS: &str =
    "tamanho, raiz, ate_transacao, ate_posicao, nota, kid, criado_em FROM auditoria_checkpoints";

fn checkpoints(
    conn: &mut PgConnection,
    sql: String,
    company: CompanyId,
    size: Option<i64>,
) -> QueryResult<Vec<StoredCheckpoint>> {
    let rows: Vec<CheckpointRow> = match size {
        Some(size) => sql_query(sql)
            .bind::<SqlUuid, _>(company.0)
            .bind::<BigInt, _>(size)
            .load(conn)?,
        None => sql_query(sql).bind::<SqlUuid, _>(company.0).load(conn)?,
    };
    rows.into_iter().map(CheckpointRow::into_port).collect()
}

impl AuditLogRepository for PgAuditLogRepository {
    fn companies_with_unsigned_entries(&self, limit: u32) -> Result<Vec<CompanyId>, RepoError> {
        // one probe of each company's log past its latest checkpoint
        let sql = format!(
            "SELECT e.id FROM empresas e
WHERE EXISTS (
    SELECT 1 FROM auditoria_entradas a
    WHERE a.empresa_id = e.id AND a.{SETTLED}
      AND (a.transacao, a.posicao) > COALESCE((
          SELECT (c.ate_transacao, c.ate_posicao) FROM auditoria_checkpoints c
          WHERE c.empresa_id = e.id ORDER BY c.tamanho DESC LIMIT 1), (0::bigint, 0::bigint))
)
ORDER BY e.id
LIMIT $1"
        );
        let rows = with_conn(&self.pool, "finding audit logs to sign", |conn| {
            sql_query(sql)
                .bind::<BigInt, _>(i64::from(limit))
                .load::<CompanyIdRow>(conn)
        })?;
        Ok(rows.into_iter().map(|r| CompanyId(r.id)).collect())
    }

    fn companies_with_entries(&self) -> Result<Vec<CompanyId>, RepoError> {
        let rows = with_conn(&self.pool, "finding audit logs", |conn| {
            sql_query(
                "SELECT e.id FROM empresas e
WHERE EXISTS (SELECT 1 FROM auditoria_entradas a WHERE a.empresa_id = e.id)
ORDER BY e.id",
            )
            .load::<CompanyIdRow>(conn)
        })?;
        Ok(rows.into_iter().map(|r| CompanyId(r.id)).collect())
    }

    fn entries(
        &self,
        company: CompanyId,
        up_to: Option<LogPosition>,
    ) -> Result<Vec<AuditEntry>, RepoError> {
        let rows = with_conn(&self.pool, "reading an audit log", |conn| match up_to {
            Some(last) => sql_query(
                "SELECT solicitacao_id, entrada, transacao, posicao FROM auditoria_entradas
WHERE empresa_id = $1 AND (transacao, posicao) <= ($2, $3)
ORDER BY transacao, posicao",
            )
            .bind::<SqlUuid, _>(company.0)
            .bind::<BigInt, _>(last.transaction)
            .bind::<BigInt, _>(last.sequence)
            .load::<EntryRow>(conn),
            None => sql_query(format!(
                "SELECT solicitacao_id, entrada, transacao, posicao FROM auditoria_entradas
WHERE empresa_id = $1 AND {SETTLED}
ORDER BY transacao, posicao"
            ))
            .bind::<SqlUuid, _>(company.0)
            .load::<EntryRow>(conn),
        })?;
        Ok(rows.into_iter().map(AuditEntry::from).collect())
    }

    fn all_entries(&self, company: CompanyId) -> Result<Vec<AuditEntry>, RepoError> {
        let rows = with_conn(&self.pool, "reading an audit log", |conn| {
            sql_query(
                "SELECT solicitacao_id, entrada, transacao, posicao FROM auditoria_entradas
WHERE empresa_id = $1
ORDER BY transacao, posicao",
            )
            .bind::<SqlUuid, _>(company.0)
            .load::<EntryRow>(conn)
        })?;
        Ok(rows.into_iter().map(AuditEntry::from).collect())
    }

    fn latest_checkpoint(&self, company: CompanyId) -> Result<Option<StoredCheckpoint>, RepoError> {
        let found = with_conn(&self.pool, "reading an audit checkpoint", |conn| {
            checkpoints(
                conn,
                format!(
                    "SELECT {CHECKPOINT_COLUMNS} WHERE empresa_id = $1 ORDER BY tamanho DESC LIMIT 1"
                ),
                company,
                None,
            )
        })?;
        Ok(found.into_iter().next())
    }

    fn checkpoint(
        &self,
        company: CompanyId,
        size: u64,
    ) -> Result<Option<StoredCheckpoint>, RepoError> {
        let Ok(size) = i64::try_from(size) else {
            return Ok(None);
        };
        let found = with_conn(&self.pool, "reading an audit checkpoint", |conn| {
            checkpoints(
                conn,
                format!("SELECT {CHECKPOINT_COLUMNS} WHERE empresa_id = $1 AND tamanho = $2"),
                company,
                Some(size),
            )
        })?;
        Ok(found.into_iter().next())
    }

    fn checkpoints(&self, company: CompanyId) -> Result<Vec<StoredCheckpoint>, RepoError> {
        with_conn(&self.pool, "reading audit checkpoints", |conn| {
            checkpoints(
                conn,
                format!("SELECT {CHECKPOINT_COLUMNS} WHERE empresa_id = $1 ORDER BY tamanho"),
                company,
                None,
            )
        })
    }

    fn add_checkpoint(
        &self,
        company: CompanyId,
        checkpoint: &StoredCheckpoint,
    ) -> Result<bool, RepoError> {
        let size = i64::try_from(checkpoint.size).map_err(|e| RepoError::Unexpected(e.into()))?;
        let added = with_conn(&self.pool, "keeping an audit checkpoint", |conn| {
            sql_query(
                "INSERT INTO auditoria_checkpoints
    (empresa_id, tamanho, raiz, ate_transacao, ate_posicao, nota, kid, criado_em)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT DO NOTHING",
            )
            .bind::<SqlUuid, _>(company.0)
            .bind::<BigInt, _>(size)
            .bind::<Binary, _>(checkpoint.root.to_vec())
            .bind::<BigInt, _>(checkpoint.last.transaction)
            .bind::<BigInt, _>(checkpoint.last.sequence)
            .bind::<Text, _>(&checkpoint.note)
            .bind::<Text, _>(&checkpoint.kid)
            .bind::<Timestamptz, _>(checkpoint.created_at)
            .execute(conn)
        })?;
        Ok(added == 1)
    }

    fn published_keys(&self) -> Result<Vec<PublishedKey>, RepoError> {
        let rows = with_conn(&self.pool, "reading the audit keys", |conn| {
            sql_query("SELECT kid, chave_publica FROM auditoria_chaves ORDER BY criada_em, kid")
                .load::<KeyRow>(conn)
        })?;
        rows.into_iter()
            .map(|row| {
                Ok(PublishedKey {
                    kid: row.kid,
                    public_key: row.chave_publica.try_into().map_err(|_| {
                        RepoError::Unexpected(anyhow::anyhow!(
                            "an audit public key is not 32 bytes"
                        ))
                    })?,
                })
            })
            .collect()
    }

    fn publish_key(&self, key: &PublishedKey) -> Result<(), RepoError> {
        with_conn(&self.pool, "recording an audit key", |conn| {
            sql_query(
                "INSERT INTO auditoria_chaves (kid, chave_publica) VALUES ($1, $2)
ON CONFLICT DO NOTHING",
            )
            .bind::<Text, _>(&key.kid)
            .bind::<Binary, _>(key.public_key.to_vec())
            .execute(conn)
        })?;
        Ok(())
    }

    fn development_seed(
        &self,
        generated: [u8; 32],
        key: &PublishedKey,
    ) -> Result<[u8; 32], RepoError> {
        let kept = with_conn(&self.pool, "keeping the development audit key", |conn| {
            conn.transaction(|conn| {
                // one development key per database, whichever process comes first
                sql_query("SELECT pg_advisory_xact_lock(hashtext('auditoria_chaves'))")
                    .execute(conn)?;
                let kept: Vec<SeedRow> = sql_query(
                    "SELECT semente FROM auditoria_chaves WHERE semente IS NOT NULL
ORDER BY criada_em LIMIT 1",
                )
                .load(conn)?;
                if let Some(row) = kept.into_iter().next() {
                    return Ok(row.semente);
                }
                sql_query(
                    "INSERT INTO auditoria_chaves (kid, chave_publica, semente) VALUES ($1, $2, $3)",
                )
                .bind::<Text, _>(&key.kid)
                .bind::<Binary, _>(key.public_key.to_vec())
                .bind::<Binary, _>(generated.to_vec())
                .execute(conn)?;
                Ok(generated.to_vec())
            })
        })?;
        kept.try_into().map_err(|_| {
            RepoError::Unexpected(anyhow::anyhow!("the kept audit seed is not 32 bytes"))
        })
    }
}
