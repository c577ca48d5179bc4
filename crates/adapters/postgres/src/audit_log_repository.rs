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
use diesel::sql_types::{
    Array, BigInt, Binary, Nullable, SmallInt, Text, Timestamptz, Uuid as SqlUuid,
};
use domain::{AuditCheckpointData, CompanyId, WebhookEvent};
use ports::{
    AuditEntry, AuditLogRepository, IndexedEntry, IntegrityIncident, LeafHash, LinkedEntry,
    LogPosition, PublishedKey, RepoError, StoredCheckpoint, TreeNode, UnloggedRequest,
};
use uuid::Uuid;

use crate::audit_integrity;
use crate::conn::with_conn;
use crate::outbox;
use crate::per_company::CompanyIdRow;
use crate::settled;
use crate::topology::Topology;
use crate::PgPool;

/// Whether company `$company`'s log has something to sign, the entries' watermark being `$settled`
/// ([`settled::watermark`]), from three reads by key: its stored tree's last leaf, its latest
/// checkpoint and the first entry past that leaf (in log order, LIMIT 1: settled entries are a
/// prefix of that order, so the first one says whether any is settled). Written so that each is
/// an index probe whatever the statistics say (an EXISTS with the settled filter was planned as
/// a scan of the company's whole log, every round). Due: a settled entry past the stored tree,
/// or stored leaves no checkpoint covers yet (a round that stored leaves but did not sign).
macro_rules! unsigned_probe {
    ($company:literal, $settled:literal) => {
        concat!(
            "LEFT JOIN LATERAL (
    SELECT f.indice, f.transacao, f.posicao FROM auditoria_folhas f
    WHERE f.empresa_id = ",
            $company,
            " ORDER BY f.indice DESC LIMIT 1) folha ON true
LEFT JOIN LATERAL (
    SELECT c.tamanho FROM auditoria_checkpoints c
    WHERE c.empresa_id = ",
            $company,
            " ORDER BY c.tamanho DESC LIMIT 1) ponto ON true
LEFT JOIN LATERAL (
    SELECT a.transacao FROM auditoria_entradas a
    WHERE a.empresa_id = ",
            $company,
            "
      AND (a.transacao, a.posicao)
          > (coalesce(folha.transacao, 0::bigint), coalesce(folha.posicao, 0::bigint))
    ORDER BY a.transacao, a.posicao LIMIT 1) proxima ON true
WHERE coalesce(folha.indice + 1, 0) > coalesce(ponto.tamanho, 0)
   OR proxima.transacao < ",
            $settled
        )
    };
}

/// Every company's [`unsigned_probe`] in one statement, in id order.
const COMPANIES_WITH_UNSIGNED: &str = concat!(
    "SELECT e.id FROM empresas e\n",
    unsigned_probe!("e.id", "$2"),
    "\nORDER BY e.id\nLIMIT $1"
);

/// One company's [`unsigned_probe`]: a row when it has something to sign. Citus plans
/// [`COMPANIES_WITH_UNSIGNED`] as a join of the reference table `empresas` with three
/// distributed tables and refuses it ("complex joins"); with the company a parameter, every
/// table it reads is on that company's shard (router).
const UNSIGNED_OF_COMPANY: &str = concat!(
    "SELECT $1::uuid AS id FROM (SELECT 1) um\n",
    unsigned_probe!("$1", "$2")
);

#[derive(Clone)]
pub struct PgAuditLogRepository {
    pool: PgPool,
    topology: Topology,
}

impl PgAuditLogRepository {
    pub fn new(pool: PgPool) -> Self {
        Self {
            pool,
            topology: Topology::default(),
        }
    }

    /// The signer's company choice as on a Citus coordinator (a probe per company), on any
    /// database: lets one node's tests check that it finds what the single statement finds.
    pub fn choosing_as_on_citus(self) -> Self {
        self.topology.assume(true);
        self
    }
}

/// What the owner's `auditoria_guardar_*` functions answer: whether they kept what was given.
#[derive(QueryableByName)]
struct Kept {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    guardado: bool,
}

/// An entry as stored, read back (also by `audit_integrity.rs`).
#[derive(QueryableByName)]
pub(crate) struct EntryRow {
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
struct LeafRow {
    #[diesel(sql_type = BigInt)]
    transacao: i64,
    #[diesel(sql_type = BigInt)]
    posicao: i64,
    #[diesel(sql_type = Binary)]
    hash_folha: Vec<u8>,
}

#[derive(QueryableByName)]
struct StoredLeafRow {
    #[diesel(sql_type = BigInt)]
    indice: i64,
    #[diesel(sql_type = BigInt)]
    transacao: i64,
    #[diesel(sql_type = BigInt)]
    posicao: i64,
}

#[derive(QueryableByName)]
struct NodeRow {
    #[diesel(sql_type = SmallInt)]
    nivel: i16,
    #[diesel(sql_type = BigInt)]
    indice: i64,
    #[diesel(sql_type = Binary)]
    hash: Vec<u8>,
}

#[derive(QueryableByName)]
struct IndexedEntryRow {
    #[diesel(sql_type = SqlUuid)]
    solicitacao_id: Uuid,
    #[diesel(sql_type = Binary)]
    entrada: Vec<u8>,
    #[diesel(sql_type = BigInt)]
    transacao: i64,
    #[diesel(sql_type = BigInt)]
    posicao: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    indice: Option<i64>,
}

fn hash32(bytes: Vec<u8>) -> QueryResult<[u8; 32]> {
    bytes
        .try_into()
        .map_err(|_| bad_row("a hash is not 32 bytes"))
}

fn index(value: i64) -> QueryResult<u64> {
    u64::try_from(value).map_err(bad_row)
}

fn to_i64(value: u64) -> Result<i64, RepoError> {
    i64::try_from(value).map_err(|e| RepoError::Unexpected(e.into()))
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
    /// `producao` or `sandbox` (migration 2026-12-07-003620).
    #[diesel(sql_type = Text)]
    ambiente: String,
}

/// `auditoria_chaves.ambiente` of a key.
fn environment(key: &PublishedKey) -> &'static str {
    if key.sandbox {
        "sandbox"
    } else {
        "producao"
    }
}

#[derive(QueryableByName)]
struct SeedRow {
    #[diesel(sql_type = Binary)]
    semente: Vec<u8>,
}

/// The `auditoria.checkpoint` event of a checkpoint just kept, in its transaction, when a URL of
/// the company names it (only those take it: `EventType::only_when_named`); otherwise nothing,
/// so a log nobody asked to be pushed adds no event a minute to the outbox.
fn checkpoint_event(
    conn: &mut PgConnection,
    company: CompanyId,
    checkpoint: &StoredCheckpoint,
) -> QueryResult<()> {
    let wanted = sql_query(
        "SELECT EXISTS (SELECT 1 FROM webhook_urls
WHERE empresa_id = $1 AND removido_em IS NULL AND desativado_em IS NULL
  AND 'auditoria.checkpoint' = ANY (eventos)) AS guardado",
    )
    .bind::<SqlUuid, _>(company.0)
    .get_result::<Kept>(conn)?;
    if !wanted.guardado {
        return Ok(());
    }
    let data = AuditCheckpointData::of_note(&checkpoint.note)
        .ok_or_else(|| bad_row("a checkpoint whose note is not a signed note"))?;
    outbox::write_event(
        conn,
        &WebhookEvent::audit_checkpoint(company, data, checkpoint.created_at),
    )
}

fn bad_row(what: impl std::fmt::Debug) -> diesel::result::Error {
    diesel::result::Error::DeserializationError(
        format!("an audit-log row does not hold what it should: {what:?}").into(),
    )
}

const CHECKPOINT_COLUMNS: &str =
    "tamanho, raiz, ate_transacao, ate_posicao, nota, kid, criado_em FROM auditoria_checkpoints";

/// Every company, in id order, from `empresas` (on Citus a reference table: read where it is).
fn every_company(conn: &mut PgConnection) -> QueryResult<Vec<CompanyIdRow>> {
    sql_query("SELECT id FROM empresas ORDER BY id").load(conn)
}

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
    /// On one node, one statement over `empresas` (`COMPANIES_WITH_UNSIGNED`). On a Citus
    /// coordinator, the companies from `empresas` (a reference table, read where it is) and one
    /// routed probe each (`UNSIGNED_OF_COMPANY`) until `limit` are found: the same O(companies)
    /// index probes as the single statement, with a round trip each.
    fn companies_with_unsigned_entries(&self, limit: u32) -> Result<Vec<CompanyId>, RepoError> {
        let distributed = self.topology.distributed(&self.pool)?;
        let rows = with_conn(&self.pool, "finding audit logs to sign", |conn| {
            let settled = settled::watermark(conn, distributed)?;
            if !distributed {
                return sql_query(COMPANIES_WITH_UNSIGNED)
                    .bind::<BigInt, _>(i64::from(limit))
                    .bind::<BigInt, _>(settled)
                    .load::<CompanyIdRow>(conn);
            }
            let companies = every_company(conn)?;
            let mut due = Vec::new();
            for company in companies {
                if due.len() >= limit as usize {
                    break;
                }
                due.extend(
                    sql_query(UNSIGNED_OF_COMPANY)
                        .bind::<SqlUuid, _>(company.id)
                        .bind::<BigInt, _>(settled)
                        .load::<CompanyIdRow>(conn)?,
                );
            }
            Ok(due)
        })?;
        Ok(rows.into_iter().map(|r| CompanyId(r.id)).collect())
    }

    /// The companies from `empresas`, then one probe of the company's log (or, for a company
    /// with no entry, of its confirmed requests) each: for the CLI's verification of every log, which reads each whole log anyway. One statement joining
    /// `empresas` to the log is refused on Citus (a correlated subquery beside a reference
    /// table); each probe here is routed to the company's shard.
    fn companies_with_entries(&self) -> Result<Vec<CompanyId>, RepoError> {
        let rows = with_conn(&self.pool, "finding audit logs", |conn| {
            let companies = every_company(conn)?;
            let mut with_entries = Vec::new();
            for company in companies {
                with_entries.extend(
                    sql_query(
                        "SELECT $1::uuid AS id
WHERE EXISTS (SELECT 1 FROM auditoria_entradas WHERE empresa_id = $1)
   OR EXISTS (SELECT 1 FROM solicitacoes_consentimento
              WHERE empresa_id = $1 AND criacao = 'confirmada')",
                    )
                    .bind::<SqlUuid, _>(company.id)
                    .load::<CompanyIdRow>(conn)?,
                );
            }
            Ok(with_entries)
        })?;
        Ok(rows.into_iter().map(|r| CompanyId(r.id)).collect())
    }

    fn entries(
        &self,
        company: CompanyId,
        up_to: Option<LogPosition>,
    ) -> Result<Vec<AuditEntry>, RepoError> {
        let distributed = self.topology.distributed(&self.pool)?;
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
            None => {
                let settled = settled::watermark(conn, distributed)?;
                sql_query(
                    "SELECT solicitacao_id, entrada, transacao, posicao FROM auditoria_entradas
WHERE empresa_id = $1 AND transacao < $2
ORDER BY transacao, posicao",
                )
                .bind::<SqlUuid, _>(company.0)
                .bind::<BigInt, _>(settled)
                .load::<EntryRow>(conn)
            }
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
            conn.transaction(|conn| {
                // the owner's function: the service's role writes no checkpoint itself, and none
                // below the largest kept (issue 36)
                let kept = sql_query(
                    "SELECT auditoria_guardar_checkpoint($1, $2, $3, $4, $5, $6, $7, $8) AS guardado",
                )
                .bind::<SqlUuid, _>(company.0)
                .bind::<BigInt, _>(size)
                .bind::<Binary, _>(checkpoint.root.to_vec())
                .bind::<BigInt, _>(checkpoint.last.transaction)
                .bind::<BigInt, _>(checkpoint.last.sequence)
                .bind::<Text, _>(&checkpoint.note)
                .bind::<Text, _>(&checkpoint.kid)
                .bind::<Timestamptz, _>(checkpoint.created_at)
                .get_result::<Kept>(conn)?;
                if kept.guardado {
                    checkpoint_event(conn, company, checkpoint)?;
                }
                Ok(kept)
            })
        })?;
        Ok(added.guardado)
    }

    fn stored_tree(&self, company: CompanyId) -> Result<Option<(u64, LogPosition)>, RepoError> {
        let rows = with_conn(&self.pool, "reading the stored audit tree", |conn| {
            sql_query(
                "SELECT indice, transacao, posicao FROM auditoria_folhas
WHERE empresa_id = $1 ORDER BY indice DESC LIMIT 1",
            )
            .bind::<SqlUuid, _>(company.0)
            .load::<StoredLeafRow>(conn)
        })?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(None);
        };
        let size = u64::try_from(row.indice + 1).map_err(|e| RepoError::Unexpected(e.into()))?;
        Ok(Some((
            size,
            LogPosition {
                transaction: row.transacao,
                sequence: row.posicao,
            },
        )))
    }

    fn leaves_after(
        &self,
        company: CompanyId,
        after: Option<LogPosition>,
        limit: u32,
    ) -> Result<Vec<LeafHash>, RepoError> {
        let after = after.unwrap_or(LogPosition {
            transaction: 0,
            sequence: 0,
        });
        let distributed = self.topology.distributed(&self.pool)?;
        let rows = with_conn(&self.pool, "reading audit leaves", |conn| {
            let settled = settled::watermark(conn, distributed)?;
            sql_query(
                "SELECT transacao, posicao, hash_folha FROM auditoria_entradas
WHERE empresa_id = $1 AND (transacao, posicao) > ($2, $3) AND transacao < $5
ORDER BY transacao, posicao
LIMIT $4",
            )
            .bind::<SqlUuid, _>(company.0)
            .bind::<BigInt, _>(after.transaction)
            .bind::<BigInt, _>(after.sequence)
            .bind::<BigInt, _>(i64::from(limit))
            .bind::<BigInt, _>(settled)
            .load::<LeafRow>(conn)
        })?;
        rows.into_iter()
            .map(|row| {
                Ok(LeafHash {
                    position: LogPosition {
                        transaction: row.transacao,
                        sequence: row.posicao,
                    },
                    hash: hash32(row.hash_folha)?,
                })
            })
            .collect::<QueryResult<_>>()
            .map_err(|e| RepoError::Unexpected(e.into()))
    }

    fn nodes(
        &self,
        company: CompanyId,
        ids: &[TreeNode],
    ) -> Result<Vec<(TreeNode, [u8; 32])>, RepoError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let levels: Vec<i16> = ids.iter().map(|n| i16::from(n.level)).collect();
        let indices = ids
            .iter()
            .map(|n| to_i64(n.index))
            .collect::<Result<Vec<_>, _>>()?;
        // one index probe a key (the keys are O(log n))
        let rows = with_conn(&self.pool, "reading stored audit nodes", |conn| {
            sql_query(
                "SELECT n.nivel, n.indice, n.hash
FROM unnest($2::smallint[], $3::bigint[]) AS k (nivel, indice)
JOIN auditoria_nos n ON n.empresa_id = $1 AND n.nivel = k.nivel AND n.indice = k.indice",
            )
            .bind::<SqlUuid, _>(company.0)
            .bind::<Array<SmallInt>, _>(levels)
            .bind::<Array<BigInt>, _>(indices)
            .load::<NodeRow>(conn)
        })?;
        rows.into_iter()
            .map(|row| {
                Ok((
                    TreeNode {
                        level: u8::try_from(row.nivel).map_err(bad_row)?,
                        index: index(row.indice)?,
                    },
                    hash32(row.hash)?,
                ))
            })
            .collect::<QueryResult<_>>()
            .map_err(|e| RepoError::Unexpected(e.into()))
    }

    fn level(&self, company: CompanyId, level: u8) -> Result<Vec<(u64, [u8; 32])>, RepoError> {
        let rows = with_conn(&self.pool, "reading stored audit nodes", |conn| {
            sql_query(
                "SELECT nivel, indice, hash FROM auditoria_nos
WHERE empresa_id = $1 AND nivel = $2 ORDER BY indice",
            )
            .bind::<SqlUuid, _>(company.0)
            .bind::<SmallInt, _>(i16::from(level))
            .load::<NodeRow>(conn)
        })?;
        rows.into_iter()
            .map(|row| Ok((index(row.indice)?, hash32(row.hash)?)))
            .collect::<QueryResult<_>>()
            .map_err(|e| RepoError::Unexpected(e.into()))
    }

    fn leaf_positions(&self, company: CompanyId) -> Result<Vec<(u64, LogPosition)>, RepoError> {
        let rows = with_conn(&self.pool, "reading stored audit leaves", |conn| {
            sql_query(
                "SELECT indice, transacao, posicao FROM auditoria_folhas
WHERE empresa_id = $1 ORDER BY indice",
            )
            .bind::<SqlUuid, _>(company.0)
            .load::<StoredLeafRow>(conn)
        })?;
        rows.into_iter()
            .map(|row| {
                Ok((
                    index(row.indice)?,
                    LogPosition {
                        transaction: row.transacao,
                        sequence: row.posicao,
                    },
                ))
            })
            .collect::<QueryResult<_>>()
            .map_err(|e| RepoError::Unexpected(e.into()))
    }

    fn leaf_position(
        &self,
        company: CompanyId,
        index: u64,
    ) -> Result<Option<LogPosition>, RepoError> {
        let at = to_i64(index)?;
        let rows = with_conn(&self.pool, "reading a stored audit leaf", |conn| {
            sql_query(
                "SELECT indice, transacao, posicao FROM auditoria_folhas
WHERE empresa_id = $1 AND indice = $2",
            )
            .bind::<SqlUuid, _>(company.0)
            .bind::<BigInt, _>(at)
            .load::<StoredLeafRow>(conn)
        })?;
        Ok(rows.into_iter().next().map(|row| LogPosition {
            transaction: row.transacao,
            sequence: row.posicao,
        }))
    }

    fn extend_tree(
        &self,
        company: CompanyId,
        first_index: u64,
        leaves: &[LogPosition],
        nodes: &[(TreeNode, [u8; 32])],
    ) -> Result<bool, RepoError> {
        let first = to_i64(first_index)?;
        let leaf_indices: Vec<i64> = (0..leaves.len() as i64).map(|i| first + i).collect();
        let transactions: Vec<i64> = leaves.iter().map(|p| p.transaction).collect();
        let sequences: Vec<i64> = leaves.iter().map(|p| p.sequence).collect();
        let levels: Vec<i16> = nodes.iter().map(|(n, _)| i16::from(n.level)).collect();
        let node_indices = nodes
            .iter()
            .map(|(n, _)| to_i64(n.index))
            .collect::<Result<Vec<_>, _>>()?;
        let hashes: Vec<Vec<u8>> = nodes.iter().map(|(_, h)| h.to_vec()).collect();
        with_conn(&self.pool, "storing audit tree nodes", |conn| {
            // the owner's function: one writer of a company's tree at a time, the size checked
            // under its lock; the service's role writes no leaf or node itself (issue 36)
            sql_query("SELECT auditoria_guardar_arvore($1, $2, $3, $4, $5, $6, $7, $8) AS guardado")
                .bind::<SqlUuid, _>(company.0)
                .bind::<BigInt, _>(first)
                .bind::<Array<BigInt>, _>(&leaf_indices)
                .bind::<Array<BigInt>, _>(&transactions)
                .bind::<Array<BigInt>, _>(&sequences)
                .bind::<Array<SmallInt>, _>(&levels)
                .bind::<Array<BigInt>, _>(&node_indices)
                .bind::<Array<Binary>, _>(&hashes)
                .get_result::<Kept>(conn)
                .map(|kept| kept.guardado)
        })
    }

    fn request_entries(
        &self,
        company: CompanyId,
        request: Uuid,
        up_to: LogPosition,
    ) -> Result<Vec<IndexedEntry>, RepoError> {
        // the request's entries by the (empresa_id, solicitacao_id, ...) key, each leaf by the
        // leaves' (empresa_id, transacao, posicao) key
        let rows = with_conn(&self.pool, "reading a request's audit entries", |conn| {
            sql_query(
                "SELECT a.solicitacao_id, a.entrada, a.transacao, a.posicao, f.indice
FROM auditoria_entradas a
LEFT JOIN auditoria_folhas f
    ON f.empresa_id = a.empresa_id AND f.transacao = a.transacao AND f.posicao = a.posicao
WHERE a.empresa_id = $1 AND a.solicitacao_id = $2 AND (a.transacao, a.posicao) <= ($3, $4)
ORDER BY a.transacao, a.posicao",
            )
            .bind::<SqlUuid, _>(company.0)
            .bind::<SqlUuid, _>(request)
            .bind::<BigInt, _>(up_to.transaction)
            .bind::<BigInt, _>(up_to.sequence)
            .load::<IndexedEntryRow>(conn)
        })?;
        rows.into_iter()
            .map(|row| {
                Ok(IndexedEntry {
                    entry: AuditEntry {
                        request_id: row.solicitacao_id,
                        bytes: row.entrada,
                        position: LogPosition {
                            transaction: row.transacao,
                            sequence: row.posicao,
                        },
                    },
                    index: row.indice.map(index).transpose()?,
                })
            })
            .collect::<QueryResult<_>>()
            .map_err(|e| RepoError::Unexpected(e.into()))
    }

    fn linked_entries(
        &self,
        company: CompanyId,
        after: Option<LogPosition>,
        up_to: LogPosition,
    ) -> Result<Vec<LinkedEntry>, RepoError> {
        audit_integrity::linked_entries(&self.pool, company, after, up_to)
    }

    fn created_before_log(&self, company: CompanyId, request: Uuid) -> Result<bool, RepoError> {
        audit_integrity::created_before_log(&self.pool, company, request)
    }

    fn log_began(&self) -> Result<Option<DateTime<Utc>>, RepoError> {
        audit_integrity::log_began(&self.pool)
    }

    fn unlogged_requests(&self, company: CompanyId) -> Result<Vec<UnloggedRequest>, RepoError> {
        audit_integrity::unlogged_requests(&self.pool, company)
    }

    fn last_entry(
        &self,
        company: CompanyId,
        request: Uuid,
    ) -> Result<Option<AuditEntry>, RepoError> {
        audit_integrity::last_entry(&self.pool, company, request)
    }

    fn note_pgcc_not_found(
        &self,
        company: CompanyId,
        request: Uuid,
        now: DateTime<Utc>,
        window: chrono::Duration,
    ) -> Result<Option<IntegrityIncident>, RepoError> {
        audit_integrity::note_pgcc_not_found(&self.pool, company, request, now, window)
    }

    fn forget_pgcc_not_found(
        &self,
        company: CompanyId,
        requests: &[Uuid],
    ) -> Result<(), RepoError> {
        audit_integrity::forget_pgcc_not_found(&self.pool, company, requests)
    }

    fn integrity_incident(
        &self,
        company: CompanyId,
        request: Uuid,
    ) -> Result<Option<IntegrityIncident>, RepoError> {
        Ok(
            audit_integrity::integrity_incidents(&self.pool, company, Some(request))?
                .into_iter()
                .next(),
        )
    }

    fn integrity_incidents(&self, company: CompanyId) -> Result<Vec<IntegrityIncident>, RepoError> {
        audit_integrity::integrity_incidents(&self.pool, company, None)
    }

    fn published_keys(&self) -> Result<Vec<PublishedKey>, RepoError> {
        let rows = with_conn(&self.pool, "reading the audit keys", |conn| {
            sql_query(
                "SELECT kid, chave_publica, ambiente FROM auditoria_chaves ORDER BY criada_em, kid",
            )
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
                    sandbox: row.ambiente == "sandbox",
                })
            })
            .collect()
    }

    fn publish_key(&self, key: &PublishedKey) -> Result<(), RepoError> {
        let known = with_conn(&self.pool, "recording an audit key", |conn| {
            // Already published (by the owner at start, `consent-api migrate`): nothing to
            // write, which the service's role may not (issue 36).
            let known: Vec<KeyRow> = sql_query(
                "SELECT kid, chave_publica, ambiente FROM auditoria_chaves WHERE kid = $1",
            )
            .bind::<Text, _>(&key.kid)
            .load(conn)?;
            if let Some(row) = known.first() {
                return Ok(Some(row.ambiente.clone()));
            }
            sql_query(
                "INSERT INTO auditoria_chaves (kid, chave_publica, ambiente) VALUES ($1, $2, $3)
ON CONFLICT DO NOTHING",
            )
            .bind::<Text, _>(&key.kid)
            .bind::<Binary, _>(key.public_key.to_vec())
            .bind::<Text, _>(environment(key))
            .execute(conn)?;
            Ok(None)
        })?;
        match known {
            // one key, one use: the production key never becomes the sandbox's, nor back
            Some(recorded) if recorded != environment(key) => Err(RepoError::Unexpected(
                anyhow::anyhow!(
                    "the audit key {} is recorded as a {recorded} key: it cannot sign as a {} key (give the sandbox a key of its own)",
                    key.kid,
                    environment(key)
                ),
            )),
            _ => Ok(()),
        }
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
                // one per environment: the sandbox's development key is never the production one
                let kept: Vec<SeedRow> = sql_query(
                    "SELECT semente FROM auditoria_chaves WHERE semente IS NOT NULL AND ambiente = $1
ORDER BY criada_em LIMIT 1",
                )
                .bind::<Text, _>(environment(key))
                .load(conn)?;
                if let Some(row) = kept.into_iter().next() {
                    return Ok(row.semente);
                }
                sql_query(
                    "INSERT INTO auditoria_chaves (kid, chave_publica, semente, ambiente)
VALUES ($1, $2, $3, $4)",
                )
                .bind::<Text, _>(&key.kid)
                .bind::<Binary, _>(key.public_key.to_vec())
                .bind::<Binary, _>(generated.to_vec())
                .bind::<Text, _>(environment(key))
                .execute(conn)?;
                Ok(generated.to_vec())
            })
        })?;
        kept.try_into().map_err(|_| {
            RepoError::Unexpected(anyhow::anyhow!("the kept audit seed is not 32 bytes"))
        })
    }
}
