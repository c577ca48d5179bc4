//! [`AuditLogRepository`] on `auditoria_entradas`, `auditoria_checkpoints` and
//! `auditoria_chaves` (migration 2026-11-30-002501_create_auditoria). The entries themselves are
//! appended by the statements that change the requests (consent_request_repository,
//! retention_repository); this reads them and keeps checkpoints and keys. Every query of a
//! company's log is bounded by its `empresa_id` (the tables' keys begin with it). These run once
//! per checkpoint round or per proof asked for, never on a change's path; each is a fixed
//! [`statement!`] all the same, prepared once per connection (crate::fixed_sql).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
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
use crate::fixed_sql::statement;
use crate::outbox;
use crate::per_company::CompanyIdRow;
use crate::settled;
use crate::topology::Topology;
use crate::PgPool;

/// Whether company `$company` (an SQL expression)'s log has something to sign, the entries'
/// watermark being `$settled` (another)
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

statement! {
    /// Every company's [`unsigned_probe`] in one statement, in id order.
    struct CompaniesWithUnsigned {
        limit: i64 as BigInt,
        settled: i64 as BigInt,
    }
    concat!(
        "SELECT e.id FROM empresas e\n",
        unsigned_probe!("e.id", "$settled"),
        "\nORDER BY e.id\nLIMIT $limit"
    )
}

statement! {
    /// One company's [`unsigned_probe`]: a row when it has something to sign. Citus plans
    /// [`CompaniesWithUnsigned`] as a join of the reference table `empresas` with three
    /// distributed tables and refuses it ("complex joins"); with the company a parameter, every
    /// table it reads is on that company's shard (router).
    struct UnsignedOfCompany {
        company: Uuid as SqlUuid,
        settled: i64 as BigInt,
    }
    concat!(
        "SELECT $company::uuid AS id FROM (SELECT 1) um\n",
        unsigned_probe!("$company", "$settled")
    )
}

statement! {
    /// Every company, in id order, from `empresas` (on Citus a reference table: read where it
    /// is).
    struct EveryCompany;
    "SELECT id FROM empresas ORDER BY id"
}

statement! {
    /// The company, when it has an entry or (no entry yet) a confirmed request.
    struct CompanyWithEntries {
        company: Uuid as SqlUuid,
    }
    "SELECT $company::uuid AS id
WHERE EXISTS (SELECT 1 FROM auditoria_entradas WHERE empresa_id = $company)
   OR EXISTS (SELECT 1 FROM solicitacoes_consentimento
              WHERE empresa_id = $company AND criacao = 'confirmada')"
}

statement! {
    /// The company's entries up to `(transacao, posicao)`, in log order.
    struct EntriesUpTo {
        empresa_id: Uuid as SqlUuid,
        transacao: i64 as BigInt,
        posicao: i64 as BigInt,
    }
    "SELECT solicitacao_id, entrada, transacao, posicao FROM auditoria_entradas
WHERE empresa_id = $empresa_id AND (transacao, posicao) <= ($transacao, $posicao)
ORDER BY transacao, posicao"
}

statement! {
    /// The company's settled entries (below the watermark `settled`), in log order.
    struct SettledEntries {
        empresa_id: Uuid as SqlUuid,
        settled: i64 as BigInt,
    }
    "SELECT solicitacao_id, entrada, transacao, posicao FROM auditoria_entradas
WHERE empresa_id = $empresa_id AND transacao < $settled
ORDER BY transacao, posicao"
}

statement! {
    /// Every entry of the company, settled or not, in log order.
    struct AllEntries {
        empresa_id: Uuid as SqlUuid,
    }
    "SELECT solicitacao_id, entrada, transacao, posicao FROM auditoria_entradas
WHERE empresa_id = $empresa_id
ORDER BY transacao, posicao"
}

statement! {
    /// The company's largest checkpoint.
    struct LatestCheckpoint {
        empresa_id: Uuid as SqlUuid,
    }
    "SELECT tamanho, raiz, ate_transacao, ate_posicao, nota, kid, criado_em
FROM auditoria_checkpoints
WHERE empresa_id = $empresa_id ORDER BY tamanho DESC LIMIT 1"
}

statement! {
    /// The company's checkpoint of `tamanho` entries.
    struct CheckpointOfSize {
        empresa_id: Uuid as SqlUuid,
        tamanho: i64 as BigInt,
    }
    "SELECT tamanho, raiz, ate_transacao, ate_posicao, nota, kid, criado_em
FROM auditoria_checkpoints
WHERE empresa_id = $empresa_id AND tamanho = $tamanho"
}

statement! {
    /// Every checkpoint of the company, smallest first.
    struct Checkpoints {
        empresa_id: Uuid as SqlUuid,
    }
    "SELECT tamanho, raiz, ate_transacao, ate_posicao, nota, kid, criado_em
FROM auditoria_checkpoints
WHERE empresa_id = $empresa_id ORDER BY tamanho"
}

statement! {
    /// The owner's function keeping a checkpoint: the service's role writes no checkpoint
    /// itself, and none below the largest kept (issue 36).
    struct KeepCheckpoint<'a> {
        empresa_id: Uuid as SqlUuid,
        tamanho: i64 as BigInt,
        raiz: Vec<u8> as Binary,
        ate_transacao: i64 as BigInt,
        ate_posicao: i64 as BigInt,
        nota: &'a str as Text,
        kid: &'a str as Text,
        criado_em: DateTime<Utc> as Timestamptz,
    }
    "SELECT auditoria_guardar_checkpoint($empresa_id, $tamanho, $raiz, $ate_transacao,
    $ate_posicao, $nota, $kid, $criado_em) AS guardado"
}

statement! {
    /// The last leaf of the company's stored tree.
    struct LastStoredLeaf {
        empresa_id: Uuid as SqlUuid,
    }
    "SELECT indice, transacao, posicao FROM auditoria_folhas
WHERE empresa_id = $empresa_id ORDER BY indice DESC LIMIT 1"
}

statement! {
    /// Up to `limit` of the company's settled entries' leaf hashes after
    /// `(transacao, posicao)`, in log order.
    struct LeavesAfter {
        empresa_id: Uuid as SqlUuid,
        transacao: i64 as BigInt,
        posicao: i64 as BigInt,
        settled: i64 as BigInt,
        limit: i64 as BigInt,
    }
    "SELECT transacao, posicao, hash_folha FROM auditoria_entradas
WHERE empresa_id = $empresa_id AND (transacao, posicao) > ($transacao, $posicao)
  AND transacao < $settled
ORDER BY transacao, posicao
LIMIT $limit"
}

statement! {
    /// The stored nodes of the company at the given `(nivel, indice)` keys: one index probe a
    /// key (the keys are O(log n)). A subquery per key rather than a join, for the reason
    /// [`RequestEntries`] gives: no plan can turn it into a scan of the company's nodes.
    struct Nodes {
        empresa_id: Uuid as SqlUuid,
        niveis: Vec<i16> as Array<SmallInt>,
        indices: Vec<i64> as Array<BigInt>,
    }
    "SELECT nivel, indice, hash FROM (
    SELECT k.nivel, k.indice,
        (SELECT n.hash FROM auditoria_nos n
         WHERE n.empresa_id = $empresa_id AND n.nivel = k.nivel AND n.indice = k.indice) AS hash
    FROM unnest($niveis::smallint[], $indices::bigint[]) AS k (nivel, indice)) pedidos
WHERE hash IS NOT NULL"
}

statement! {
    /// Every stored node of one level of the company's tree, in index order.
    struct Level {
        empresa_id: Uuid as SqlUuid,
        nivel: i16 as SmallInt,
    }
    "SELECT nivel, indice, hash FROM auditoria_nos
WHERE empresa_id = $empresa_id AND nivel = $nivel ORDER BY indice"
}

statement! {
    /// Every leaf of the company's stored tree, in index order.
    struct LeafPositions {
        empresa_id: Uuid as SqlUuid,
    }
    "SELECT indice, transacao, posicao FROM auditoria_folhas
WHERE empresa_id = $empresa_id ORDER BY indice"
}

statement! {
    /// The leaf `indice` of the company's stored tree.
    struct LeafPosition {
        empresa_id: Uuid as SqlUuid,
        indice: i64 as BigInt,
    }
    "SELECT indice, transacao, posicao FROM auditoria_folhas
WHERE empresa_id = $empresa_id AND indice = $indice"
}

statement! {
    /// The owner's function extending a company's tree: one writer of a company's tree at a
    /// time, the size checked under its lock; the service's role writes no leaf or node itself
    /// (issue 36).
    struct KeepTree {
        empresa_id: Uuid as SqlUuid,
        primeiro: i64 as BigInt,
        folhas: Vec<i64> as Array<BigInt>,
        transacoes: Vec<i64> as Array<BigInt>,
        posicoes: Vec<i64> as Array<BigInt>,
        niveis: Vec<i16> as Array<SmallInt>,
        indices: Vec<i64> as Array<BigInt>,
        hashes: Vec<Vec<u8>> as Array<Binary>,
    }
    "SELECT auditoria_guardar_arvore($empresa_id, $primeiro, $folhas, $transacoes, $posicoes,
    $niveis, $indices, $hashes) AS guardado"
}

statement! {
    /// The request's entries up to `(transacao, posicao)` by the
    /// `(empresa_id, solicitacao_id, ...)` key, each with its leaf's index by the leaves'
    /// `(empresa_id, transacao, posicao)` key. The leaf is a subquery per entry, not a join:
    /// once PostgreSQL plans the prepared statement generically (after five calls on a
    /// connection, when it judges that no dearer), a join may become a merge join that reads
    /// every leaf of the company through that key: a whole 10^6-leaf tree per proof, as a CI
    /// run of the scale test saw. A subquery in the select list is always one probe per entry.
    struct RequestEntries {
        empresa_id: Uuid as SqlUuid,
        solicitacao_id: Uuid as SqlUuid,
        transacao: i64 as BigInt,
        posicao: i64 as BigInt,
    }
    "SELECT a.solicitacao_id, a.entrada, a.transacao, a.posicao,
    (SELECT f.indice FROM auditoria_folhas f
     WHERE f.empresa_id = a.empresa_id AND f.transacao = a.transacao
       AND f.posicao = a.posicao) AS indice
FROM auditoria_entradas a
WHERE a.empresa_id = $empresa_id AND a.solicitacao_id = $solicitacao_id
  AND (a.transacao, a.posicao) <= ($transacao, $posicao)
ORDER BY a.transacao, a.posicao"
}

statement! {
    /// Every published key, oldest first.
    struct PublishedKeys;
    "SELECT kid, chave_publica, ambiente FROM auditoria_chaves ORDER BY criada_em, kid"
}

statement! {
    /// The published key `kid`.
    struct KeyOfKid<'a> {
        kid: &'a str as Text,
    }
    "SELECT kid, chave_publica, ambiente FROM auditoria_chaves WHERE kid = $kid"
}

statement! {
    /// Publishes a key for its environment (`producao` or `sandbox`), unless its kid is
    /// published already.
    struct AddKey<'a> {
        kid: &'a str as Text,
        chave_publica: Vec<u8> as Binary,
        ambiente: &'static str as Text,
    }
    "INSERT INTO auditoria_chaves (kid, chave_publica, ambiente)
VALUES ($kid, $chave_publica, $ambiente)
ON CONFLICT DO NOTHING"
}

statement! {
    /// Serializes the processes choosing the development key (until the transaction ends).
    struct LockDevelopmentKey;
    "SELECT pg_advisory_xact_lock(hashtext('auditoria_chaves'))"
}

statement! {
    /// The development key's seed of environment `$ambiente`, when one is kept: one per
    /// environment, so the sandbox's development key is never the production one.
    struct DevelopmentSeed {
        ambiente: &'static str as Text,
    }
    "SELECT semente FROM auditoria_chaves WHERE semente IS NOT NULL AND ambiente = $ambiente
ORDER BY criada_em LIMIT 1"
}

statement! {
    /// Keeps the development key of its environment with its seed.
    struct AddDevelopmentKey<'a> {
        kid: &'a str as Text,
        chave_publica: Vec<u8> as Binary,
        semente: Vec<u8> as Binary,
        ambiente: &'static str as Text,
    }
    "INSERT INTO auditoria_chaves (kid, chave_publica, semente, ambiente)
VALUES ($kid, $chave_publica, $semente, $ambiente)"
}

statement! {
    /// Whether a live URL of the company names `auditoria.checkpoint` (only those take it).
    struct CheckpointWanted {
        empresa_id: Uuid as SqlUuid,
    }
    "SELECT EXISTS (SELECT 1 FROM webhook_urls
WHERE empresa_id = $empresa_id AND removido_em IS NULL AND desativado_em IS NULL
  AND 'auditoria.checkpoint' = ANY (eventos)) AS guardado"
}

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
    let wanted = CheckpointWanted {
        empresa_id: company.0,
    }
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

fn into_checkpoints(rows: Vec<CheckpointRow>) -> QueryResult<Vec<StoredCheckpoint>> {
    rows.into_iter().map(CheckpointRow::into_port).collect()
}

impl AuditLogRepository for PgAuditLogRepository {
    /// On one node, one statement over `empresas` (`CompaniesWithUnsigned`). On a Citus
    /// coordinator, the companies from `empresas` (a reference table, read where it is) and one
    /// routed probe each (`UnsignedOfCompany`) until `limit` are found: the same O(companies)
    /// index probes as the single statement, with a round trip each.
    fn companies_with_unsigned_entries(&self, limit: u32) -> Result<Vec<CompanyId>, RepoError> {
        let distributed = self.topology.distributed(&self.pool)?;
        let rows = with_conn(&self.pool, "finding audit logs to sign", |conn| {
            let settled = settled::watermark(conn, distributed)?;
            if !distributed {
                return CompaniesWithUnsigned {
                    limit: i64::from(limit),
                    settled,
                }
                .load::<CompanyIdRow>(conn);
            }
            let companies = EveryCompany.load::<CompanyIdRow>(conn)?;
            let mut due = Vec::new();
            for company in companies {
                if due.len() >= limit as usize {
                    break;
                }
                due.extend(
                    UnsignedOfCompany {
                        company: company.id,
                        settled,
                    }
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
            let companies = EveryCompany.load::<CompanyIdRow>(conn)?;
            let mut with_entries = Vec::new();
            for company in companies {
                with_entries.extend(
                    CompanyWithEntries {
                        company: company.id,
                    }
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
            Some(last) => EntriesUpTo {
                empresa_id: company.0,
                transacao: last.transaction,
                posicao: last.sequence,
            }
            .load::<EntryRow>(conn),
            None => {
                let settled = settled::watermark(conn, distributed)?;
                SettledEntries {
                    empresa_id: company.0,
                    settled,
                }
                .load::<EntryRow>(conn)
            }
        })?;
        Ok(rows.into_iter().map(AuditEntry::from).collect())
    }

    fn all_entries(&self, company: CompanyId) -> Result<Vec<AuditEntry>, RepoError> {
        let rows = with_conn(&self.pool, "reading an audit log", |conn| {
            AllEntries {
                empresa_id: company.0,
            }
            .load::<EntryRow>(conn)
        })?;
        Ok(rows.into_iter().map(AuditEntry::from).collect())
    }

    fn latest_checkpoint(&self, company: CompanyId) -> Result<Option<StoredCheckpoint>, RepoError> {
        let found = with_conn(&self.pool, "reading an audit checkpoint", |conn| {
            into_checkpoints(
                LatestCheckpoint {
                    empresa_id: company.0,
                }
                .load(conn)?,
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
            into_checkpoints(
                CheckpointOfSize {
                    empresa_id: company.0,
                    tamanho: size,
                }
                .load(conn)?,
            )
        })?;
        Ok(found.into_iter().next())
    }

    fn checkpoints(&self, company: CompanyId) -> Result<Vec<StoredCheckpoint>, RepoError> {
        with_conn(&self.pool, "reading audit checkpoints", |conn| {
            into_checkpoints(
                Checkpoints {
                    empresa_id: company.0,
                }
                .load(conn)?,
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
                let kept = KeepCheckpoint {
                    empresa_id: company.0,
                    tamanho: size,
                    raiz: checkpoint.root.to_vec(),
                    ate_transacao: checkpoint.last.transaction,
                    ate_posicao: checkpoint.last.sequence,
                    nota: &checkpoint.note,
                    kid: &checkpoint.kid,
                    criado_em: checkpoint.created_at,
                }
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
            LastStoredLeaf {
                empresa_id: company.0,
            }
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
            LeavesAfter {
                empresa_id: company.0,
                transacao: after.transaction,
                posicao: after.sequence,
                settled,
                limit: i64::from(limit),
            }
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
        let rows = with_conn(&self.pool, "reading stored audit nodes", |conn| {
            Nodes {
                empresa_id: company.0,
                niveis: levels,
                indices,
            }
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
            Level {
                empresa_id: company.0,
                nivel: i16::from(level),
            }
            .load::<NodeRow>(conn)
        })?;
        rows.into_iter()
            .map(|row| Ok((index(row.indice)?, hash32(row.hash)?)))
            .collect::<QueryResult<_>>()
            .map_err(|e| RepoError::Unexpected(e.into()))
    }

    fn leaf_positions(&self, company: CompanyId) -> Result<Vec<(u64, LogPosition)>, RepoError> {
        let rows = with_conn(&self.pool, "reading stored audit leaves", |conn| {
            LeafPositions {
                empresa_id: company.0,
            }
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
            LeafPosition {
                empresa_id: company.0,
                indice: at,
            }
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
        let keep = KeepTree {
            empresa_id: company.0,
            primeiro: first,
            folhas: leaf_indices,
            transacoes: transactions,
            posicoes: sequences,
            niveis: levels,
            indices: node_indices,
            hashes,
        };
        with_conn(&self.pool, "storing audit tree nodes", |conn| {
            keep.get_result::<Kept>(conn).map(|kept| kept.guardado)
        })
    }

    fn request_entries(
        &self,
        company: CompanyId,
        request: Uuid,
        up_to: LogPosition,
    ) -> Result<Vec<IndexedEntry>, RepoError> {
        let rows = with_conn(&self.pool, "reading a request's audit entries", |conn| {
            RequestEntries {
                empresa_id: company.0,
                solicitacao_id: request,
                transacao: up_to.transaction,
                posicao: up_to.sequence,
            }
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
            PublishedKeys.load::<KeyRow>(conn)
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
            let known: Vec<KeyRow> = KeyOfKid { kid: &key.kid }.load(conn)?;
            if let Some(row) = known.first() {
                return Ok(Some(row.ambiente.clone()));
            }
            AddKey {
                kid: &key.kid,
                chave_publica: key.public_key.to_vec(),
                ambiente: environment(key),
            }
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
                LockDevelopmentKey.execute(conn)?;
                let kept: Vec<SeedRow> = DevelopmentSeed {
                    ambiente: environment(key),
                }
                .load(conn)?;
                if let Some(row) = kept.into_iter().next() {
                    return Ok(row.semente);
                }
                AddDevelopmentKey {
                    kid: &key.kid,
                    chave_publica: key.public_key.to_vec(),
                    semente: generated.to_vec(),
                    ambiente: environment(key),
                }
                .execute(conn)?;
                Ok(generated.to_vec())
            })
        })?;
        kept.try_into().map_err(|_| {
            RepoError::Unexpected(anyhow::anyhow!("the kept audit seed is not 32 bytes"))
        })
    }
}
