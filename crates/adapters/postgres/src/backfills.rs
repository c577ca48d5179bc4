//! Backfills: changes to existing rows that a migration registers and the service runs after
//! it, in keyset batches, one short transaction per batch, never in the migration's
//! transaction (issue 21: a live table keeps answering while it is filled).
//!
//! A migration registers a backfill by inserting its name into `preenchimentos_retroativos`
//! (`INSERT INTO preenchimentos_retroativos (nome) VALUES ('my_step');`), and [`BACKFILLS`]
//! holds the step of that name: a function that does one batch of at most `limit` rows after a
//! key and says how far it went. [`run_pending_backfills`] (run by `consent-api migrate`, and by
//! `serve` in the background) runs every registered, unfinished backfill to its end; each batch
//! locks the backfill's row, so processes running them at once take batches in turn, and the
//! cursor is stored with each batch, so a run stopped half-way resumes where it stopped.
//!
//! To add one: write the migration's `INSERT` and an entry in [`BACKFILLS`]: its name, the rows
//! a batch takes (`lote`, from a table keyed by `(empresa_id, id)`) and the idempotent change it
//! makes to them (`feitos`: a row already done is left as it is); every batch is the same keyset
//! page (`WHERE (empresa_id, id) > after ORDER BY empresa_id, id LIMIT limit`). Until it has run,
//! the service must work with rows in both states.

use anyhow::Context;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Nullable, Text};

use crate::PgPool;

/// Rows per batch when the caller has no reason to choose: each batch is one short transaction.
pub const DEFAULT_BATCH_SIZE: i64 = 1_000;

/// What one batch did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Rows changed.
    pub touched: u64,
    /// The last key the batch looked at (the next batch starts after it); `None`: no row was
    /// left after the cursor, the backfill is complete.
    pub last_key: Option<String>,
}

/// A named backfill step: which rows a keyset batch takes and what it does to them (see
/// [`Backfill::run_batch`]).
pub struct Backfill {
    /// The name its migration registered in `preenchimentos_retroativos`.
    pub name: &'static str,
    /// Columns and `FROM` of a table keyed by `(empresa_id, id)`, both selected: the batch's rows.
    pub lote: &'static str,
    /// A data-modifying statement reading `lote`, `RETURNING 1` per row changed; idempotent (a row
    /// already done is left as it is).
    pub feitos: &'static str,
}

impl Backfill {
    /// One keyset batch of at most `limit` rows after `after` (`None`: from the first key), in the
    /// caller's transaction.
    pub fn run_batch(
        &self,
        conn: &mut PgConnection,
        after: Option<&str>,
        limit: i64,
    ) -> QueryResult<Batch> {
        keyset_batch(conn, self.lote, self.feitos, after, limit)
    }
}

/// Every backfill the service knows, by name.
pub const BACKFILLS: &[Backfill] = &[
    // `sal_hash` (migration 2026-11-27-001471): each request stored before the salt gets one of
    // its own (32 random hex digits) and, when its hash is a real SHA-256 (not a placeholder of
    // older migrations nor a blanked `apagado:` one), the salted hash, its unsalted hash kept in
    // `hash_anterior`. The canonical content is written byte for byte as
    // crates/application/src/consent_requests/hash.rs writes it (a test holds the two together).
    // Keyset by primary key; rows that already have a salt (every row the service wrote since) are
    // left as they are.
    Backfill {
        name: "sal_hash",
        lote: "empresa_id, id, replace(gen_random_uuid()::text, '-', '') AS sal FROM solicitacoes_consentimento",
        feitos: "UPDATE solicitacoes_consentimento s \
             SET sal_hash = lote.sal, \
                 hash_anterior = CASE WHEN s.hash ~ '^[0-9a-f]{64}$' THEN s.hash ELSE s.hash_anterior END, \
                 hash = CASE WHEN s.hash !~ '^[0-9a-f]{64}$' THEN s.hash ELSE encode(sha256(convert_to( \
                     '{\"casoDeUsoIdTemplate\":' || to_json(s.caso_de_uso_id_template)::text \
                     || ',\"cnpjAnuente\":' || coalesce(to_json(s.cnpj_anuente)::text, 'null') \
                     || ',\"cpfTitular\":' || to_json(s.cpf_titular)::text \
                     || ',\"criadoEm\":\"' || to_char(s.criado_em AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') || '\"' \
                     || ',\"dataExpiracaoConsentimento\":\"' \
                         || to_char(s.data_expiracao_consentimento AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') || '\"' \
                     || ',\"dataTitularRespondeuConsentimento\":' || coalesce('\"' \
                         || to_char(s.data_titular_respondeu_consentimento AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') \
                         || '\"', 'null') \
                     || ',\"empresaId\":\"' || s.empresa_id::text || '\"' \
                     || ',\"id\":\"' || s.id::text || '\"' \
                     || ',\"modalidadeAcesso\":' || to_json(s.modalidade_acesso)::text \
                     || ',\"provaColeta\":' || coalesce(to_json(s.prova_coleta)::text, 'null') \
                     || ',\"sal\":\"' || lote.sal || '\"' \
                     || ',\"tipoTitular\":' || to_json(s.tipo_titular)::text \
                     || '}', 'UTF8')), 'hex') END \
             FROM lote \
             WHERE s.empresa_id = lote.empresa_id AND s.id = lote.id AND s.sal_hash = '' \
             RETURNING 1",
    },
    // `verificacoes_status` (migration 2026-11-28-002201): each confirmed `pendente` or `ativo`
    // request stored before the schedule existed gets its row: a pending one due now, an active one
    // due within the next 15 minutes (spread by its id, so that a large table does not fall due in
    // one instant). Keyset by primary key; a request already scheduled (by its creation since) is
    // left as it is.
    Backfill {
        name: "verificacoes_status",
        lote: "id, empresa_id, status, criacao, pgcc_id FROM solicitacoes_consentimento",
        feitos: "INSERT INTO verificacoes_status (empresa_id, solicitacao_id, pgcc_id, proxima_em) \
             SELECT empresa_id, id, pgcc_id, now() + CASE WHEN status = 'ativo' \
                 THEN (abs(hashtext(id::text)) % 900) * interval '1 second' \
                 ELSE interval '0' END \
             FROM lote \
             WHERE status IN ('pendente', 'ativo') AND criacao = 'confirmada' \
             ON CONFLICT DO NOTHING \
             RETURNING 1",
    },
    // `eventos_sem_entregas` (migration `mark_webhook_eventos_without_deliveries`): marks the
    // events written before it that have no delivery, so the per-company event purge (which reads
    // only marked events) finds them. Keyset by its key; a marked event is left as it is. An event with
    // deliveries needs no mark: it goes with its last delivery. Until this has run, unmarked old
    // events are only kept longer, never lost or sent twice.
    Backfill {
        name: "eventos_sem_entregas",
        lote: "id, empresa_id FROM webhook_eventos",
        feitos: "UPDATE webhook_eventos ev SET sem_entregas = true \
             FROM lote \
             WHERE ev.empresa_id = lote.empresa_id AND ev.id = lote.id AND NOT ev.sem_entregas \
               AND NOT EXISTS (SELECT 1 FROM webhook_entregas d \
                               WHERE d.empresa_id = ev.empresa_id AND d.evento_id = ev.id) \
             RETURNING 1",
    },
    // `verificacoes_status_pgcc_id` (migration 2026-12-01-002901): each schedule row written before
    // its PGCC id was kept there gets it from its consent row, so that its sweep reads the lane alone.
    // A swept row whose request is in an unknown-status backoff leaves its lane, due now (the sweep
    // hands out no such record: the backoff is the request's own row from then on). Keyset by the
    // consent's primary key; a row that has its id is left as it is.
    Backfill {
        name: "verificacoes_status_pgcc_id",
        lote: "id, empresa_id, pgcc_id, status_desconhecido_desde FROM solicitacoes_consentimento",
        feitos: "UPDATE verificacoes_status v SET pgcc_id = lote.pgcc_id, \
             varredura = CASE WHEN lote.status_desconhecido_desde IS NULL THEN v.varredura END, \
             proxima_em = CASE WHEN lote.status_desconhecido_desde IS NULL \
                 OR v.varredura IS NULL THEN v.proxima_em ELSE now() END \
             FROM lote \
             WHERE v.empresa_id = lote.empresa_id AND v.solicitacao_id = lote.id \
               AND v.pgcc_id IS NULL AND lote.pgcc_id IS NOT NULL \
             RETURNING 1",
    },
    // `webhook_entregas_tipo_evento` (migration 2026-12-07-004220): each delivery written before
    // the column existed gets its event's type, so the console's event-type filter (which reads
    // `webhook_entregas_url_tipo_status_idx`, rows with a type only) finds it. Keyset by the
    // delivery's key; a delivery that has its type (every one written since) is left as it is.
    Backfill {
        name: "webhook_entregas_tipo_evento",
        lote: "empresa_id, id, evento_id FROM webhook_entregas",
        feitos: "UPDATE webhook_entregas d SET tipo_evento = ev.tipo \
             FROM lote JOIN webhook_eventos ev \
                 ON ev.empresa_id = lote.empresa_id AND ev.id = lote.evento_id \
             WHERE d.empresa_id = lote.empresa_id AND d.id = lote.id AND d.tipo_evento IS NULL \
             RETURNING 1",
    },
    // `solicitacoes_historico_empresa_id` and `webhook_tentativas_empresa_id` (registered by
    // 2026-12-02-003001) were done by 2026-12-03-003101 itself, which made the column NOT NULL.
];

/// What one backfill did in a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackfillReport {
    pub name: &'static str,
    pub batches: u64,
    pub touched: u64,
}

/// The outcome of [`run_backfill_batch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// A batch ran and more may be left.
    Batch { touched: u64 },
    /// Nothing left: complete (now or before), or not registered by any migration.
    Done,
}

/// Runs every registered, unfinished backfill to its end, `batch_size` rows per transaction,
/// and reports what each did (only those that ran).
pub fn run_pending_backfills(
    pool: &PgPool,
    batch_size: i64,
) -> anyhow::Result<Vec<BackfillReport>> {
    let mut reports = Vec::new();
    for backfill in BACKFILLS {
        let mut report = BackfillReport {
            name: backfill.name,
            batches: 0,
            touched: 0,
        };
        while let Progress::Batch { touched } = run_backfill_batch(pool, backfill, batch_size)? {
            report.batches += 1;
            report.touched += touched;
            if report.batches.is_multiple_of(100) {
                tracing::info!(
                    backfill = backfill.name,
                    rows = report.touched,
                    "backfill running"
                );
            }
        }
        if report.batches > 0 {
            tracing::info!(
                backfill = backfill.name,
                rows = report.touched,
                "backfill complete"
            );
            reports.push(report);
        }
    }
    Ok(reports)
}

/// One batch of `backfill`, in a transaction of its own that holds the backfill's row (so
/// batches of several processes never overlap) and stores its cursor.
pub fn run_backfill_batch(
    pool: &PgPool,
    backfill: &Backfill,
    batch_size: i64,
) -> anyhow::Result<Progress> {
    #[derive(QueryableByName)]
    struct State {
        #[diesel(sql_type = Nullable<Text>)]
        cursor: Option<String>,
        #[diesel(sql_type = Integer)]
        concluido: i32,
    }
    let mut conn = pool
        .get()
        .context("could not connect to the database to run a backfill")?;
    conn.transaction(|conn| {
        let state = diesel::sql_query(
            "SELECT cursor, (concluido_em IS NOT NULL)::int AS concluido \
             FROM preenchimentos_retroativos WHERE nome = $1 FOR UPDATE",
        )
        .bind::<Text, _>(backfill.name)
        .get_result::<State>(conn)
        .optional()
        .context("reading the backfill's state")?;
        let Some(state) = state.filter(|s| s.concluido == 0) else {
            return Ok(Progress::Done);
        };
        let batch = backfill
            .run_batch(conn, state.cursor.as_deref(), batch_size)
            .with_context(|| format!("backfill {}", backfill.name))?;
        diesel::sql_query(
            "UPDATE preenchimentos_retroativos \
             SET cursor = coalesce($2, cursor), linhas = linhas + $3, \
                 concluido_em = CASE WHEN $2 IS NULL THEN now() END \
             WHERE nome = $1",
        )
        .bind::<Text, _>(backfill.name)
        .bind::<Nullable<Text>, _>(batch.last_key.as_deref())
        .bind::<BigInt, _>(batch.touched as i64)
        .execute(conn)
        .context("storing the backfill's cursor")?;
        Ok(match batch.last_key {
            Some(_) => Progress::Batch {
                touched: batch.touched,
            },
            None => Progress::Done,
        })
    })
}

/// The keyset page's condition: the rows after the cursor `$1` (`empresa_id/id`; NULL or a cursor
/// without `/`, from the first).
const AFTER: &str = "WHERE $1::text IS NULL OR strpos($1, '/') = 0 \
    OR (empresa_id, id) > (split_part($1, '/', 1)::uuid, split_part($1, '/', 2)::uuid)";

/// Runs one keyset batch of a step: `lote` (columns and `FROM` of a table keyed by `(empresa_id,
/// id)`, both selected) chooses the rows after `after` (NULL: from the first), at most `limit` of
/// them in key order; `feitos` (a data-modifying statement reading `lote`, `RETURNING 1`) changes
/// them. Answers the batch's last key looked at (`empresa_id/id`; `None` when none was left) and
/// the rows changed: the shape of every step.
///
/// The tenant tables are keyed by company first (issue 23, migration
/// 2026-12-02-003008_key_tenant_tables_by_company): a cursor stored before that (an `id` alone,
/// no `/`) starts the backfill over, which every step allows (a row already done is left alone).
///
/// A page with no row left is the end, found by a probe before `feitos` is sent: a database with
/// nothing to change never plans it. On Citus the salt's `feitos` is refused (STABLE functions in
/// `CASE`), and every database made since the salt has nothing for it to change.
fn keyset_batch(
    conn: &mut PgConnection,
    lote: &str,
    feitos: &str,
    after: Option<&str>,
    limit: i64,
) -> QueryResult<Batch> {
    let left = diesel::sql_query(format!(
        "SELECT NULL::text AS last_key, count(*) AS touched \
         FROM (SELECT {lote} {AFTER} LIMIT 1) lote"
    ))
    .bind::<Nullable<Text>, _>(after)
    .get_result::<BatchRow>(conn)?;
    if left.touched == 0 {
        return Ok(Batch {
            touched: 0,
            last_key: None,
        });
    }
    let sql = format!(
        "WITH lote AS (SELECT {lote} {AFTER} \
             ORDER BY empresa_id, id LIMIT $2), \
         feitos AS ({feitos}) \
         SELECT (SELECT empresa_id::text || '/' || id::text FROM lote \
                 ORDER BY empresa_id DESC, id DESC LIMIT 1) AS last_key, \
                (SELECT count(*) FROM feitos) AS touched"
    );
    let row = diesel::sql_query(sql)
        .bind::<Nullable<Text>, _>(after)
        .bind::<BigInt, _>(limit)
        .get_result::<BatchRow>(conn)?;
    Ok(Batch {
        touched: u64::try_from(row.touched).unwrap_or(0),
        last_key: row.last_key,
    })
}

#[derive(QueryableByName)]
struct BatchRow {
    #[diesel(sql_type = Nullable<Text>)]
    last_key: Option<String>,
    #[diesel(sql_type = BigInt)]
    touched: i64,
}
