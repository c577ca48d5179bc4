//! [`PgImportRepository`]: the bulk imports (`importacoes`, `importacao_linhas`,
//! `importacao_erros`; docs/imports.md). Every statement names the company.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::{
    CompanyId, CreationVariant, Import, ImportCompletedData, ImportLineError, ImportStatus,
    WebhookEvent,
};
use ports::{
    ClaimedLine, ImportBacklog, ImportRepository, LineOutcome, RepoError, StagedLine,
    TakenExternalId, TakenKey,
};
use uuid::Uuid;

use crate::conn::with_conn;
use crate::fixed_sql::statement;
use crate::outbox::write_event;
use crate::PgPool;

/// The key of a staged line's `dados` holding its evidence files (`arquivosSha256`).
const EVIDENCE_KEY: &str = "arquivosSha256";

statement! {
    /// A new import, reading its file.
    struct CreateImport {
        empresa: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
        now: DateTime<Utc> as Timestamptz,
    }
    "INSERT INTO importacoes (empresa_id, id, status, criada_em, atualizada_em)
VALUES ($empresa, $id, 'validando', $now, $now)"
}

statement! {
    /// A batch of valid lines; a line whose `idExterno` the company holds already (an earlier
    /// import's, or an earlier line of this file) is not inserted and not returned.
    struct StageLines {
        empresa: Uuid as SqlUuid,
        importacao: Uuid as SqlUuid,
        linhas: Vec<i64> as Array<BigInt>,
        ids_externos: Vec<String> as Array<Text>,
        origens: Vec<String> as Array<Text>,
        solicitacoes: Vec<Uuid> as Array<SqlUuid>,
        variantes: Vec<&'static str> as Array<Text>,
        pgcc_ids: Vec<Option<String>> as Array<Nullable<Text>>,
        dados: Vec<String> as Array<Text>,
    }
    "INSERT INTO importacao_linhas
    (empresa_id, importacao_id, linha, id_externo, origem, solicitacao_id, variante, pgcc_id, dados)
SELECT $empresa, $importacao, t.l, t.e, t.o, t.s, t.v, t.p, t.d::jsonb
FROM unnest($linhas, $ids_externos, $origens, $solicitacoes, $variantes, $pgcc_ids, $dados)
    AS t(l, e, o, s, v, p, d)
ORDER BY t.l
ON CONFLICT (empresa_id, id_externo) DO NOTHING
RETURNING linha"
}

statement! {
    /// Who holds each `idExterno` among `ids_externos`.
    struct Holders {
        empresa: Uuid as SqlUuid,
        ids_externos: Vec<String> as Array<Text>,
    }
    "SELECT l.id_externo, l.importacao_id, l.linha
FROM importacao_linhas l
WHERE l.empresa_id = $empresa AND l.id_externo = ANY($ids_externos)"
}

statement! {
    /// Which of `pgcc_ids` a line of the import holds already (through
    /// `importacao_linhas_pgcc_id`): a `pgccId` is registered once per file.
    struct PgccIdHolders {
        empresa: Uuid as SqlUuid,
        importacao: Uuid as SqlUuid,
        pgcc_ids: Vec<String> as Array<Text>,
    }
    "SELECT l.pgcc_id, l.linha
FROM importacao_linhas l
WHERE l.empresa_id = $empresa AND l.importacao_id = $importacao AND l.pgcc_id = ANY($pgcc_ids)"
}

statement! {
    /// A page of the company's imports, newest first (through `importacoes_empresa_criada`).
    struct ListImports {
        empresa: Uuid as SqlUuid,
        limite: i64 as BigInt,
    }
    "SELECT empresa_id, id, status, linhas, validas, registradas, falhas, criada_em, terminada_em
FROM importacoes WHERE empresa_id = $empresa
ORDER BY criada_em DESC, id DESC
LIMIT $limite"
}

statement! {
    /// The next page of the company's imports: those created before import `antes`.
    struct ListImportsBefore {
        empresa: Uuid as SqlUuid,
        antes: Uuid as SqlUuid,
        limite: i64 as BigInt,
    }
    "SELECT i.empresa_id, i.id, i.status, i.linhas, i.validas, i.registradas, i.falhas,
    i.criada_em, i.terminada_em
FROM importacoes i, importacoes a
WHERE a.empresa_id = $empresa AND a.id = $antes
  AND i.empresa_id = $empresa AND (i.criada_em, i.id) < (a.criada_em, a.id)
ORDER BY i.criada_em DESC, i.id DESC
LIMIT $limite"
}

statement! {
    /// The lines left of every import registering (through the partial index
    /// `importacoes_registrando`: a few rows), for `fimEstimado`.
    struct RegisteringBacklog;
    "SELECT empresa_id, id, criada_em, greatest(linhas - registradas - falhas, 0) AS restantes
FROM importacoes WHERE status = 'registrando'"
}

statement! {
    /// Broken rules by line and field; a line's rules are numbered in order (`ordem`).
    struct RecordErrors {
        empresa: Uuid as SqlUuid,
        importacao: Uuid as SqlUuid,
        linhas: Vec<i64> as Array<BigInt>,
        ordens: Vec<i64> as Array<BigInt>,
        campos: Vec<String> as Array<Text>,
        mensagens: Vec<String> as Array<Text>,
    }
    "INSERT INTO importacao_erros (empresa_id, importacao_id, linha, ordem, campo, mensagem)
SELECT $empresa, $importacao, t.l, t.o, t.c, t.m
FROM unnest($linhas, $ordens, $campos, $mensagens) AS t(l, o, c, m)
ON CONFLICT DO NOTHING"
}

statement! {
    /// The file was read: its counts, and `registrando` (or `concluida` with no valid line).
    struct FinishValidation {
        empresa: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
        linhas: i64 as BigInt,
        falhas: i64 as BigInt,
        now: DateTime<Utc> as Timestamptz,
    }
    "UPDATE importacoes SET
    linhas = $linhas,
    validas = $linhas - $falhas,
    falhas = $falhas,
    status = CASE WHEN $linhas > $falhas THEN 'registrando' ELSE 'concluida' END,
    terminada_em = CASE WHEN $linhas > $falhas THEN NULL ELSE $now END,
    atualizada_em = $now
WHERE empresa_id = $empresa AND id = $id AND status = 'validando'
RETURNING empresa_id, id, status, linhas, validas, registradas, falhas, criada_em, terminada_em"
}

/// The refused file's delete: its staged lines, at most `max_linhas` (10^7), in one statement.
const DISCARD_TIMEOUT: &str = "SET LOCAL statement_timeout = '10min'";

statement! {
    /// A discarded import's staged lines: no foreign key joins them to the import (migration
    /// `2026-12-07-004300`), so they go first, in the import's delete's transaction.
    struct DiscardLines {
        empresa: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
    }
    "DELETE FROM importacao_linhas WHERE empresa_id = $empresa AND importacao_id = $id"
}

statement! {
    /// The import (its errors go by their foreign key's cascade).
    struct Discard {
        empresa: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
    }
    "DELETE FROM importacoes WHERE empresa_id = $empresa AND id = $id"
}

statement! {
    struct GetImport {
        empresa: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
    }
    "SELECT empresa_id, id, status, linhas, validas, registradas, falhas, criada_em, terminada_em
FROM importacoes WHERE empresa_id = $empresa AND id = $id"
}

statement! {
    /// A page of errors in line order.
    struct ErrorsPage {
        empresa: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
        after_linha: i64 as BigInt,
        after_ordem: i64 as BigInt,
        limite: i64 as BigInt,
    }
    "SELECT linha, ordem, campo, mensagem FROM importacao_erros
WHERE empresa_id = $empresa AND importacao_id = $id AND (linha, ordem) > ($after_linha, $after_ordem)
ORDER BY linha, ordem
LIMIT $limite"
}

statement! {
    struct CancelImport {
        empresa: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
        now: DateTime<Utc> as Timestamptz,
    }
    "UPDATE importacoes SET status = 'cancelada', terminada_em = $now, atualizada_em = $now,
    linhas_a_limpar = true
WHERE empresa_id = $empresa AND id = $id AND status IN ('validando', 'registrando')"
}

statement! {
    /// A cancelled import's lines staged after its cancellation: to be cleared as well.
    struct MarkToClear {
        empresa: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
    }
    "UPDATE importacoes SET linhas_a_limpar = true
WHERE empresa_id = $empresa AND id = $id AND status = 'cancelada'"
}

statement! {
    /// A cancelled import whose lines are still to be cleared (through its partial index).
    struct ImportToClear;
    "SELECT empresa_id, id FROM importacoes WHERE linhas_a_limpar ORDER BY empresa_id, id LIMIT 1"
}

statement! {
    /// Up to `limite` of a cancelled import's lines not registered, and not under a live lease
    /// (a line being registered now ends as it does): never claimed again, their data dropped.
    struct ClearLines {
        empresa: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
        now: DateTime<Utc> as Timestamptz,
        limite: i64 as BigInt,
    }
    "UPDATE importacao_linhas AS l SET estado = 'cancelada', dados = NULL, reservada_ate = NULL
FROM (
    SELECT p.empresa_id, p.importacao_id, p.linha
    FROM importacao_linhas p
    WHERE p.empresa_id = $empresa AND p.importacao_id = $id AND p.estado = 'pendente'
      AND (p.reservada_ate IS NULL OR p.reservada_ate < $now)
    ORDER BY p.linha
    LIMIT $limite
    FOR UPDATE OF p SKIP LOCKED
) AS c
WHERE l.empresa_id = c.empresa_id AND l.importacao_id = c.importacao_id AND l.linha = c.linha"
}

statement! {
    /// The cancelled import has no pending line left: off the cleaner's list.
    struct ImportCleared {
        empresa: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
    }
    "UPDATE importacoes SET linhas_a_limpar = false
WHERE empresa_id = $empresa AND id = $id AND NOT EXISTS (
    SELECT 1 FROM importacao_linhas p
    WHERE p.empresa_id = $empresa AND p.importacao_id = $id AND p.estado = 'pendente')"
}

statement! {
    /// The companies with an import registering (through the partial index).
    struct CompaniesRegistering;
    "SELECT DISTINCT empresa_id FROM importacoes WHERE status = 'registrando'"
}

statement! {
    /// The company's next pending line not under a live lease, oldest import first. The
    /// company's imports registering are few: each is probed in order for its first pending
    /// line through `importacao_linhas_pendentes`, in file order, so a claim reads a line or
    /// two whatever the import's size (a sort of every pending line, which a join of all of
    /// them with the imports invited, took about a second a claim at 10^6 lines: `make
    /// bench-import`).
    struct ClaimLine {
        empresa: Uuid as SqlUuid,
        now: DateTime<Utc> as Timestamptz,
        ate: DateTime<Utc> as Timestamptz,
    }
    "UPDATE importacao_linhas AS l SET reservada_ate = $ate
FROM (
    SELECT p.empresa_id, p.importacao_id, p.linha
    FROM (
        SELECT i.id FROM importacoes i
        WHERE i.empresa_id = $empresa AND i.status = 'registrando'
        ORDER BY i.criada_em, i.id
    ) AS i
    CROSS JOIN LATERAL (
        SELECT p.empresa_id, p.importacao_id, p.linha
        FROM importacao_linhas p
        WHERE p.empresa_id = $empresa AND p.importacao_id = i.id AND p.estado = 'pendente'
          AND (p.reservada_ate IS NULL OR p.reservada_ate < $now)
        ORDER BY p.linha
        LIMIT 1
        FOR UPDATE OF p SKIP LOCKED
    ) AS p
    LIMIT 1
) AS c
WHERE l.empresa_id = c.empresa_id AND l.importacao_id = c.importacao_id AND l.linha = c.linha
RETURNING l.importacao_id, l.linha, l.solicitacao_id, l.variante, l.pgcc_id, l.dados::text AS dados"
}

statement! {
    /// Settles a claimed line (once: a second settle changes nothing). A line the import's
    /// cancellation marked while it was being registered is settled too: it was created.
    struct SettleLine {
        empresa: Uuid as SqlUuid,
        importacao: Uuid as SqlUuid,
        linha: i64 as BigInt,
        estado: &'static str as Text,
    }
    "UPDATE importacao_linhas SET estado = $estado, dados = NULL, reservada_ate = NULL
WHERE empresa_id = $empresa AND importacao_id = $importacao AND linha = $linha
  AND estado IN ('pendente', 'cancelada')
RETURNING linha"
}

statement! {
    /// Counts a settled line (and locks the import's row: settles of one import take turns, so
    /// the last one sees every other committed).
    struct CountSettled {
        empresa: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
        registradas: i64 as BigInt,
        falhas: i64 as BigInt,
        now: DateTime<Utc> as Timestamptz,
    }
    "UPDATE importacoes SET registradas = registradas + $registradas, falhas = falhas + $falhas,
    atualizada_em = $now
WHERE empresa_id = $empresa AND id = $id"
}

statement! {
    /// Ends the import when no line is pending any more.
    struct ConcludeIfDone {
        empresa: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
        now: DateTime<Utc> as Timestamptz,
    }
    "UPDATE importacoes SET status = 'concluida', terminada_em = $now, atualizada_em = $now
WHERE empresa_id = $empresa AND id = $id AND status = 'registrando'
  AND NOT EXISTS (
    SELECT 1 FROM importacao_linhas l
    WHERE l.empresa_id = $empresa AND l.importacao_id = $id AND l.estado = 'pendente')
RETURNING empresa_id, id, status, linhas, validas, registradas, falhas, criada_em, terminada_em"
}

#[derive(QueryableByName)]
struct ImportRow {
    #[diesel(sql_type = SqlUuid)]
    empresa_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = BigInt)]
    linhas: i64,
    #[diesel(sql_type = BigInt)]
    validas: i64,
    #[diesel(sql_type = BigInt)]
    registradas: i64,
    #[diesel(sql_type = BigInt)]
    falhas: i64,
    #[diesel(sql_type = Timestamptz)]
    criada_em: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    terminada_em: Option<DateTime<Utc>>,
}

impl ImportRow {
    fn into_domain(self) -> Result<Import, RepoError> {
        let status = ImportStatus::parse(&self.status).ok_or_else(|| {
            RepoError::Unexpected(anyhow::anyhow!("unknown import status {:?}", self.status))
        })?;
        Ok(Import {
            id: self.id,
            company_id: CompanyId(self.empresa_id),
            status,
            lines: count(self.linhas),
            valid: count(self.validas),
            registered: count(self.registradas),
            failed: count(self.falhas),
            created_at: self.criada_em,
            finished_at: self.terminada_em,
        })
    }
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

fn bigint(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[derive(QueryableByName)]
struct LineNumber {
    #[diesel(sql_type = BigInt)]
    linha: i64,
}

#[derive(QueryableByName)]
struct HolderRow {
    #[diesel(sql_type = Text)]
    id_externo: String,
    #[diesel(sql_type = SqlUuid)]
    importacao_id: Uuid,
    #[diesel(sql_type = BigInt)]
    linha: i64,
}

#[derive(QueryableByName)]
struct PgccHolderRow {
    #[diesel(sql_type = Text)]
    pgcc_id: String,
    #[diesel(sql_type = BigInt)]
    linha: i64,
}

#[derive(QueryableByName)]
struct BacklogRow {
    #[diesel(sql_type = SqlUuid)]
    empresa_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Timestamptz)]
    criada_em: DateTime<Utc>,
    #[diesel(sql_type = BigInt)]
    restantes: i64,
}

/// What stands between `import` and its end, from every import registering: its lines left,
/// the company's imports before it (in the claim's order, `criada_em` then id) and each other
/// company's.
fn backlog_of(rows: &[BacklogRow], company: CompanyId, import: Uuid) -> ImportBacklog {
    let Some(mine) = rows
        .iter()
        .find(|r| r.empresa_id == company.0 && r.id == import)
    else {
        return ImportBacklog::default();
    };
    let mut others: std::collections::BTreeMap<Uuid, u64> = std::collections::BTreeMap::new();
    let mut ahead = 0;
    for r in rows {
        if r.empresa_id != company.0 {
            *others.entry(r.empresa_id).or_default() += count(r.restantes);
        } else if (r.criada_em, r.id) < (mine.criada_em, mine.id) {
            ahead += count(r.restantes);
        }
    }
    ImportBacklog {
        left: count(mine.restantes),
        ahead,
        others: others.into_values().collect(),
    }
}

/// The lines of a batch whose `pgccId` an earlier line of the batch names: refused as the
/// database refuses one an earlier batch's line holds. `(index in the batch, holder's line)`.
fn repeated_in_batch(lines: &[StagedLine]) -> Vec<(usize, u64)> {
    let mut first: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    let mut repeated = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(pgcc_id) = l.valid.pgcc_id.as_deref() {
            match first.get(pgcc_id) {
                Some(holder) => repeated.push((i, *holder)),
                None => {
                    first.insert(pgcc_id, l.line);
                }
            }
        }
    }
    repeated
}

#[derive(QueryableByName)]
struct ErrorRow {
    #[diesel(sql_type = BigInt)]
    linha: i64,
    #[diesel(sql_type = BigInt)]
    ordem: i64,
    #[diesel(sql_type = Text)]
    campo: String,
    #[diesel(sql_type = Text)]
    mensagem: String,
}

#[derive(QueryableByName)]
struct ImportKeyRow {
    #[diesel(sql_type = SqlUuid)]
    empresa_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
}

#[derive(QueryableByName)]
struct CompanyRow {
    #[diesel(sql_type = SqlUuid)]
    empresa_id: Uuid,
}

#[derive(QueryableByName)]
struct ClaimedRow {
    #[diesel(sql_type = SqlUuid)]
    importacao_id: Uuid,
    #[diesel(sql_type = BigInt)]
    linha: i64,
    #[diesel(sql_type = SqlUuid)]
    solicitacao_id: Uuid,
    #[diesel(sql_type = Text)]
    variante: String,
    #[diesel(sql_type = Nullable<Text>)]
    pgcc_id: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    dados: Option<String>,
}

fn variant_name(v: CreationVariant) -> &'static str {
    match v {
        CreationVariant::Active => "ativo",
        CreationVariant::Pending => "pendente",
    }
}

fn unexpected(e: impl std::error::Error + Send + Sync + 'static) -> RepoError {
    RepoError::Unexpected(anyhow::Error::new(e))
}

fn completed_event(import: &Import, now: DateTime<Utc>) -> WebhookEvent {
    WebhookEvent::import_completed(
        import.company_id,
        ImportCompletedData {
            import_id: import.id,
            linhas: import.lines,
            validas: import.valid,
            registradas: import.registered,
            falhas: import.failed,
        },
        now,
    )
}

/// The statement staging `lines`: each line's fields as JSON in `dados`, the evidence files
/// beside the draft's fields under their wire name.
fn stage_lines(
    company: CompanyId,
    import: Uuid,
    lines: &[&StagedLine],
) -> Result<StageLines, serde_json::Error> {
    let mut dados = Vec::with_capacity(lines.len());
    for l in lines {
        let mut value = serde_json::to_value(&l.valid.consent)?;
        if let (Some(object), false) = (value.as_object_mut(), l.valid.evidence_sha256.is_empty()) {
            object.insert(
                EVIDENCE_KEY.to_owned(),
                serde_json::json!(l.valid.evidence_sha256),
            );
        }
        dados.push(value.to_string());
    }
    Ok(StageLines {
        empresa: company.0,
        importacao: import,
        linhas: lines.iter().map(|l| bigint(l.line)).collect(),
        ids_externos: lines.iter().map(|l| l.valid.external_id.clone()).collect(),
        origens: lines.iter().map(|l| l.valid.origin.clone()).collect(),
        solicitacoes: lines.iter().map(|l| l.request_id).collect(),
        variantes: lines
            .iter()
            .map(|l| variant_name(l.valid.variant))
            .collect(),
        pgcc_ids: lines.iter().map(|l| l.valid.pgcc_id.clone()).collect(),
        dados,
    })
}

#[derive(Clone)]
pub struct PgImportRepository {
    pool: PgPool,
}

impl PgImportRepository {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

impl ImportRepository for PgImportRepository {
    fn create(&self, company: CompanyId, id: Uuid, now: DateTime<Utc>) -> Result<(), RepoError> {
        with_conn(&self.pool, "creating an import", |conn| {
            CreateImport {
                empresa: company.0,
                id,
                now,
            }
            .execute(conn)
        })?;
        Ok(())
    }

    fn stage(
        &self,
        company: CompanyId,
        import: Uuid,
        lines: &[StagedLine],
    ) -> Result<Vec<TakenExternalId>, RepoError> {
        if lines.is_empty() {
            return Ok(Vec::new());
        }
        let pgcc_ids: Vec<String> = lines
            .iter()
            .filter_map(|l| l.valid.pgcc_id.clone())
            .collect();
        with_conn(&self.pool, "staging an import's lines", |conn| {
            conn.transaction(|conn| {
                // a `pgccId` once per file: an earlier line of this batch, or of an earlier
                // batch (the file's batches are staged in order, by one thread), holds it
                let mut pgcc_taken = repeated_in_batch(lines);
                if !pgcc_ids.is_empty() {
                    let held = PgccIdHolders {
                        empresa: company.0,
                        importacao: import,
                        pgcc_ids,
                    }
                    .load::<PgccHolderRow>(conn)?;
                    for (i, l) in lines.iter().enumerate() {
                        let holder = l
                            .valid
                            .pgcc_id
                            .as_deref()
                            .and_then(|p| held.iter().find(|h| h.pgcc_id == p));
                        if let Some(holder) = holder {
                            pgcc_taken.retain(|(j, _)| *j != i);
                            pgcc_taken.push((i, count(holder.linha)));
                        }
                    }
                }
                let to_stage: Vec<&StagedLine> = lines
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !pgcc_taken.iter().any(|(j, _)| j == i))
                    .map(|(_, l)| l)
                    .collect();
                let mut taken: Vec<TakenExternalId> = pgcc_taken
                    .iter()
                    .map(|(i, holder_line)| TakenExternalId {
                        line: lines[*i].line,
                        key: TakenKey::PgccId,
                        holder_import: import,
                        holder_line: *holder_line,
                    })
                    .collect();
                if to_stage.is_empty() {
                    return Ok(taken);
                }
                let batch = stage_lines(company, import, &to_stage)
                    .map_err(|e| diesel::result::Error::SerializationError(Box::new(e)))?;
                let staged: std::collections::HashSet<i64> = batch
                    .load::<LineNumber>(conn)?
                    .into_iter()
                    .map(|r| r.linha)
                    .collect();
                let refused: Vec<&StagedLine> = to_stage
                    .into_iter()
                    .filter(|l| !staged.contains(&bigint(l.line)))
                    .collect();
                if refused.is_empty() {
                    return Ok(taken);
                }
                let holders = Holders {
                    empresa: company.0,
                    ids_externos: refused
                        .iter()
                        .map(|l| l.valid.external_id.clone())
                        .collect(),
                }
                .load::<HolderRow>(conn)?;
                taken.extend(refused.into_iter().map(|l| {
                    let holder = holders.iter().find(|h| h.id_externo == l.valid.external_id);
                    TakenExternalId {
                        line: l.line,
                        key: TakenKey::ExternalId,
                        holder_import: holder.map_or(import, |h| h.importacao_id),
                        holder_line: holder.map_or(0, |h| count(h.linha)),
                    }
                }));
                Ok(taken)
            })
        })
    }

    fn record_errors(
        &self,
        company: CompanyId,
        import: Uuid,
        errors: &[ImportLineError],
    ) -> Result<(), RepoError> {
        if errors.is_empty() {
            return Ok(());
        }
        // numbered within each line, in the order found
        let mut ordens = Vec::with_capacity(errors.len());
        let mut previous: Option<(u64, i64)> = None;
        for e in errors {
            let ordem = match previous {
                Some((line, n)) if line == e.line => n + 1,
                _ => 0,
            };
            previous = Some((e.line, ordem));
            ordens.push(ordem);
        }
        with_conn(&self.pool, "recording an import's errors", |conn| {
            RecordErrors {
                empresa: company.0,
                importacao: import,
                linhas: errors.iter().map(|e| bigint(e.line)).collect(),
                ordens,
                campos: errors.iter().map(|e| e.field.clone()).collect(),
                mensagens: errors.iter().map(|e| e.message.clone()).collect(),
            }
            .execute(conn)
        })?;
        Ok(())
    }

    fn finish_validation(
        &self,
        company: CompanyId,
        import: Uuid,
        lines: u64,
        failed: u64,
        now: DateTime<Utc>,
    ) -> Result<Import, RepoError> {
        with_conn(&self.pool, "ending an import's validation", |conn| {
            conn.transaction(|conn| {
                let row = FinishValidation {
                    empresa: company.0,
                    id: import,
                    linhas: bigint(lines),
                    falhas: bigint(failed),
                    now,
                }
                .load::<ImportRow>(conn)?
                .pop();
                let row = match row {
                    Some(row) => row,
                    // cancelled while its file was read: as it stands, and the lines staged
                    // since the cancellation are cleared too
                    None => {
                        MarkToClear {
                            empresa: company.0,
                            id: import,
                        }
                        .execute(conn)?;
                        GetImport {
                            empresa: company.0,
                            id: import,
                        }
                        .get_result::<ImportRow>(conn)?
                    }
                };
                let import = row.into_domain().map_err(|_| {
                    diesel::result::Error::DeserializationError("import status".into())
                })?;
                // ended now, with no valid line: its event in the same transaction
                if import.status == ImportStatus::Concluida && import.finished_at == Some(now) {
                    write_event(conn, &completed_event(&import, now))?;
                }
                Ok(import)
            })
        })
    }

    fn discard(&self, company: CompanyId, import: Uuid) -> Result<(), RepoError> {
        with_conn(&self.pool, "discarding an import", |conn| {
            conn.transaction(|conn| {
                // A file refused at its end (over `max_bytes` or `max_linhas`) has up to 10^7
                // lines staged, and they go with their import in this one statement: about a
                // second per 10^6 lines, past the pool's statement timeout. Held to its own
                // bound instead; the refused file's sender is the one who waits.
                diesel::sql_query(DISCARD_TIMEOUT).execute(conn)?;
                DiscardLines {
                    empresa: company.0,
                    id: import,
                }
                .execute(conn)?;
                Discard {
                    empresa: company.0,
                    id: import,
                }
                .execute(conn)
            })
        })?;
        Ok(())
    }

    fn get(&self, company: CompanyId, import: Uuid) -> Result<Option<Import>, RepoError> {
        with_conn(&self.pool, "reading an import", |conn| {
            GetImport {
                empresa: company.0,
                id: import,
            }
            .load::<ImportRow>(conn)
        })?
        .pop()
        .map(ImportRow::into_domain)
        .transpose()
    }

    fn list(
        &self,
        company: CompanyId,
        before: Option<Uuid>,
        limit: u32,
    ) -> Result<Vec<Import>, RepoError> {
        let limite = i64::from(limit);
        with_conn(
            &self.pool,
            "listing a company's imports",
            |conn| match before {
                None => ListImports {
                    empresa: company.0,
                    limite,
                }
                .load::<ImportRow>(conn),
                Some(antes) => ListImportsBefore {
                    empresa: company.0,
                    antes,
                    limite,
                }
                .load::<ImportRow>(conn),
            },
        )?
        .into_iter()
        .map(ImportRow::into_domain)
        .collect()
    }

    fn backlog(&self, company: CompanyId, import: Uuid) -> Result<ImportBacklog, RepoError> {
        let rows = with_conn(&self.pool, "reading the imports' backlog", |conn| {
            RegisteringBacklog.load::<BacklogRow>(conn)
        })?;
        Ok(backlog_of(&rows, company, import))
    }

    fn request_holding(
        &self,
        company: CompanyId,
        pgcc_id: &str,
    ) -> Result<Option<Uuid>, RepoError> {
        use crate::schema::solicitacoes_consentimento as sc;
        // one probe of the unique index (empresa_id, pgcc_id)
        with_conn(&self.pool, "finding the request of a PGCC id", |conn| {
            sc::table
                .filter(sc::empresa_id.eq(company.0))
                .filter(sc::pgcc_id.eq(pgcc_id))
                .select(sc::id)
                .first::<Uuid>(conn)
                .optional()
        })
    }

    fn errors(
        &self,
        company: CompanyId,
        import: Uuid,
        after: Option<(u64, u64)>,
        limit: u32,
    ) -> Result<Vec<(u64, ImportLineError)>, RepoError> {
        let (after_linha, after_ordem) = after.map_or((-1, -1), |(l, o)| (bigint(l), bigint(o)));
        let rows = with_conn(&self.pool, "reading an import's errors", |conn| {
            ErrorsPage {
                empresa: company.0,
                id: import,
                after_linha,
                after_ordem,
                limite: i64::from(limit),
            }
            .load::<ErrorRow>(conn)
        })?;
        Ok(rows
            .into_iter()
            .map(|r| {
                (
                    count(r.ordem),
                    ImportLineError {
                        line: count(r.linha),
                        field: r.campo,
                        message: r.mensagem,
                    },
                )
            })
            .collect())
    }

    fn cancel(
        &self,
        company: CompanyId,
        import: Uuid,
        now: DateTime<Utc>,
    ) -> Result<Option<Import>, RepoError> {
        with_conn(&self.pool, "cancelling an import", |conn| {
            conn.transaction(|conn| {
                // the lines are cleared in the background (`clear_cancelled_lines`): a file of
                // 10^6 lines in this statement outlasted the statement timeout
                CancelImport {
                    empresa: company.0,
                    id: import,
                    now,
                }
                .execute(conn)?;
                GetImport {
                    empresa: company.0,
                    id: import,
                }
                .load::<ImportRow>(conn)
            })
        })?
        .pop()
        .map(ImportRow::into_domain)
        .transpose()
    }

    fn clear_cancelled_lines(&self, now: DateTime<Utc>, limit: u32) -> Result<u64, RepoError> {
        with_conn(&self.pool, "clearing a cancelled import's lines", |conn| {
            let Some(import) = ImportToClear.load::<ImportKeyRow>(conn)?.pop() else {
                return Ok(0);
            };
            let cleared = ClearLines {
                empresa: import.empresa_id,
                id: import.id,
                now,
                limite: i64::from(limit),
            }
            .execute(conn)?;
            if cleared < limit as usize {
                ImportCleared {
                    empresa: import.empresa_id,
                    id: import.id,
                }
                .execute(conn)?;
            }
            Ok(cleared as u64)
        })
    }

    fn companies_registering(&self) -> Result<Vec<CompanyId>, RepoError> {
        Ok(
            with_conn(&self.pool, "listing the companies importing", |conn| {
                CompaniesRegistering.load::<CompanyRow>(conn)
            })?
            .into_iter()
            .map(|r| CompanyId(r.empresa_id))
            .collect(),
        )
    }

    fn claim_line(
        &self,
        company: CompanyId,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
    ) -> Result<Option<ClaimedLine>, RepoError> {
        let row = with_conn(&self.pool, "claiming an import's line", |conn| {
            ClaimLine {
                empresa: company.0,
                now,
                ate: lease_until,
            }
            .load::<ClaimedRow>(conn)
        })?
        .pop();
        let Some(row) = row else { return Ok(None) };
        let variant = match row.variante.as_str() {
            "ativo" => CreationVariant::Active,
            _ => CreationVariant::Pending,
        };
        let mut value: serde_json::Value =
            serde_json::from_str(row.dados.as_deref().unwrap_or("{}")).map_err(unexpected)?;
        let evidence_sha256 = match value.as_object_mut().and_then(|o| o.remove(EVIDENCE_KEY)) {
            Some(list) => serde_json::from_value(list).map_err(unexpected)?,
            None => Vec::new(),
        };
        let draft = serde_json::from_value(value).map_err(unexpected)?;
        Ok(Some(ClaimedLine {
            evidence_sha256,
            company_id: company,
            import_id: row.importacao_id,
            line: count(row.linha),
            request_id: row.solicitacao_id,
            variant,
            pgcc_id: row.pgcc_id,
            draft,
        }))
    }

    fn settle_line(
        &self,
        line: &ClaimedLine,
        outcome: &LineOutcome,
        now: DateTime<Utc>,
    ) -> Result<(), RepoError> {
        let company = line.company_id;
        let (estado, registradas, falhas) = match outcome {
            LineOutcome::Registered => ("registrada", 1, 0),
            LineOutcome::Failed { .. } => ("falhou", 0, 1),
        };
        with_conn(&self.pool, "settling an import's line", |conn| {
            conn.transaction(|conn| {
                let settled = SettleLine {
                    empresa: company.0,
                    importacao: line.import_id,
                    linha: bigint(line.line),
                    estado,
                }
                .load::<LineNumber>(conn)?;
                if settled.is_empty() {
                    return Ok(());
                }
                if let LineOutcome::Failed { field, message } = outcome {
                    RecordErrors {
                        empresa: company.0,
                        importacao: line.import_id,
                        linhas: vec![bigint(line.line)],
                        ordens: vec![0],
                        campos: vec![field.clone()],
                        mensagens: vec![message.clone()],
                    }
                    .execute(conn)?;
                }
                CountSettled {
                    empresa: company.0,
                    id: line.import_id,
                    registradas,
                    falhas,
                    now,
                }
                .execute(conn)?;
                let done = ConcludeIfDone {
                    empresa: company.0,
                    id: line.import_id,
                    now,
                }
                .load::<ImportRow>(conn)?
                .pop();
                if let Some(done) = done {
                    let import = done.into_domain().map_err(|_| {
                        diesel::result::Error::DeserializationError("import status".into())
                    })?;
                    write_event(conn, &completed_event(&import, now))?;
                }
                Ok(())
            })
        })
    }
}
