use chrono::{DateTime, Utc};
use diesel::dsl::sql;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::result::Error as DieselError;
use diesel::sql_types::{BigInt, Bool, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::{
    CompanyId, ConsentRequest, ConsentStatus, Cpf, EventType, Motivo, TransitionCause, WebhookEvent,
};
use ports::{
    Confirmation, ConsentFilter, ConsentRequestRecord, ConsentRequestRepository, CreationRecord,
    CreationStart, ListCursor, RepoError, StatusCheckItem, UnfinishedCreation,
};
use uuid::Uuid;

use crate::conn::{count_u32, with_conn};
use crate::fixed_sql::fixed_condition;
use crate::models::{
    NewSolicitacaoConsentimento, NewSolicitacaoHistorico, SolicitacaoConsentimentoRow,
    SolicitacaoHistoricoRow, StatusCheckRow, UnfinishedCreationRow, CRIACAO_CANCELADA,
    CRIACAO_CONFIRMADA, CRIACAO_EM_ANDAMENTO,
};
use crate::outbox;
use crate::schema::{solicitacoes_consentimento as sc, solicitacoes_historico as sh};
use crate::PgPool;

fixed_condition!(
    /// "The row is confirmed", with the state as a literal (not a bind) as in the predicates of
    /// the partial indexes `solicitacoes_consentimento_empresa_criado_em_idx` and
    /// `solicitacoes_consentimento_validas_idx`, so that every plan, generic ones included, can
    /// use them; prepared once per connection.
    Confirmed,
    "solicitacoes_consentimento.criacao = 'confirmada'"
);

fixed_condition!(
    /// The status is `ativo`, a literal as in the predicate of
    /// `solicitacoes_consentimento_validas_idx`.
    StatusAtivo,
    "solicitacoes_consentimento.status = 'ativo'"
);

/// `claim_for_status_check` in one statement: the subquery locks the due rows no other worker
/// holds (`SKIP LOCKED`), the update pushes their next check. The status names are literals, as
/// in the partial index `solicitacoes_consentimento_status_devido_idx`, so every plan can use it.
/// $1 next check, $2 now, $3 limit.
const CLAIM_FOR_STATUS_CHECK: &str = "\
UPDATE solicitacoes_consentimento
SET proximo_status_em = $1
WHERE id IN (
    SELECT id FROM solicitacoes_consentimento
    WHERE status IN ('pendente', 'ativo') AND proximo_status_em <= $2
      AND criacao = 'confirmada'
    ORDER BY proximo_status_em
    LIMIT $3
    FOR UPDATE SKIP LOCKED
)
RETURNING id, empresa_id, pgcc_id, status, status_desconhecido_desde";

/// The change of `expire_due` in one statement: lock up to $2 non-terminal requests whose expiry
/// is at or before $1 (`SKIP LOCKED`: rows another transaction holds are left for the next
/// round), move them to $3 (`expirado`) at $1, append one history entry each from the status
/// they had, with cause $4 (`expiracao`), and return the updated rows (for their events).
const EXPIRE_DUE: &str = "\
WITH vencidas AS (
    SELECT id, status FROM solicitacoes_consentimento
    WHERE status IN ('pendente', 'ativo') AND data_expiracao_consentimento <= $1
      AND criacao = 'confirmada'
    ORDER BY data_expiracao_consentimento
    LIMIT $2
    FOR UPDATE SKIP LOCKED
), expiradas AS (
    UPDATE solicitacoes_consentimento s
    SET status = $3, atualizado_em = $1
    FROM vencidas v
    WHERE s.id = v.id
    RETURNING s.*, v.status AS de
), historico AS (
    INSERT INTO solicitacoes_historico (solicitacao_id, de, para, em, causa)
    SELECT id, de, $3, $1, $4 FROM expiradas
)
SELECT * FROM expiradas";

/// `claim_unfinished_creations` in one statement: the subquery locks the unfinished creations
/// whose last attempt is at or before $2 that no other reconciler holds (`SKIP LOCKED`), the
/// update stamps $1 as their last attempt, and the company's CNPJ comes back with each.
/// $1 now, $2 attempted before, $3 limit.
const CLAIM_UNFINISHED_CREATIONS: &str = "\
UPDATE solicitacoes_consentimento s
SET criacao_tentativa_em = $1
FROM empresas e
WHERE e.id = s.empresa_id AND s.id IN (
    SELECT id FROM solicitacoes_consentimento
    WHERE criacao = 'em_andamento' AND criacao_tentativa_em <= $2
    ORDER BY criacao_tentativa_em
    LIMIT $3
    FOR UPDATE SKIP LOCKED
)
RETURNING s.id, s.empresa_id, e.cnpj, s.criacao_tentativa_em, s.criacao_nao_encontrada_em";

/// `begin_creation` in one statement ($n are binds): insert the row `em_andamento` (no PGCC id;
/// `proximo_status_em` takes its default) or, when the id exists, take it over (back to
/// `em_andamento`, stamped with this attempt, any recorded "not found" forgotten: this attempt may
/// create it) unless it is confirmed or another company's. One row is inserted or updated exactly
/// when the creation may go on.
const BEGIN_CREATION: [&str; 18] = [
    "INSERT INTO solicitacoes_consentimento AS s (
    id, empresa_id, caso_de_uso_id, caso_de_uso_id_template, cpf_titular, tipo_titular,
    modalidade_acesso, cnpj_anuente, data_expiracao_consentimento,
    data_titular_respondeu_consentimento, prova_coleta, status, hash, criado_em, atualizado_em,
    criacao, criacao_tentativa_em)
VALUES (",
    ", ",
    ", ",
    ", ",
    ", ",
    ", ",
    ", ",
    ", ",
    ", ",
    ", ",
    ", ",
    ", ",
    ", ",
    ", ",
    ", ",
    ", ",
    ", ",
    ")
ON CONFLICT (id) DO UPDATE
SET criacao = EXCLUDED.criacao, criacao_tentativa_em = EXCLUDED.criacao_tentativa_em,
    criacao_nao_encontrada_em = NULL
WHERE s.empresa_id = EXCLUDED.empresa_id AND s.criacao <> 'confirmada'",
];

/// [`BEGIN_CREATION`] with its binds: a fixed text, so diesel prepares it once per connection
/// (an `Insertable` with optional fields, or an upsert, is prepared again on every call).
struct BeginCreation<'a> {
    row: NewSolicitacaoConsentimento<'a>,
}

impl QueryId for BeginCreation<'_> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl QueryFragment<Pg> for BeginCreation<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        let row = &self.row;
        let sql = &BEGIN_CREATION;
        out.push_sql(sql[0]);
        out.push_bind_param::<SqlUuid, _>(&row.id)?;
        out.push_sql(sql[1]);
        out.push_bind_param::<SqlUuid, _>(&row.empresa_id)?;
        out.push_sql(sql[2]);
        out.push_bind_param::<SqlUuid, _>(&row.caso_de_uso_id)?;
        out.push_sql(sql[3]);
        out.push_bind_param::<Text, _>(&row.caso_de_uso_id_template)?;
        out.push_sql(sql[4]);
        out.push_bind_param::<Text, _>(&row.cpf_titular)?;
        out.push_sql(sql[5]);
        out.push_bind_param::<Text, _>(&row.tipo_titular)?;
        out.push_sql(sql[6]);
        out.push_bind_param::<Text, _>(&row.modalidade_acesso)?;
        out.push_sql(sql[7]);
        out.push_bind_param::<Nullable<Text>, _>(&row.cnpj_anuente)?;
        out.push_sql(sql[8]);
        out.push_bind_param::<Timestamptz, _>(&row.data_expiracao_consentimento)?;
        out.push_sql(sql[9]);
        out.push_bind_param::<Nullable<Timestamptz>, _>(&row.data_titular_respondeu_consentimento)?;
        out.push_sql(sql[10]);
        out.push_bind_param::<Nullable<Text>, _>(&row.prova_coleta)?;
        out.push_sql(sql[11]);
        out.push_bind_param::<Text, _>(&row.status)?;
        out.push_sql(sql[12]);
        out.push_bind_param::<Text, _>(&row.hash)?;
        out.push_sql(sql[13]);
        out.push_bind_param::<Timestamptz, _>(&row.criado_em)?;
        out.push_sql(sql[14]);
        out.push_bind_param::<Timestamptz, _>(&row.atualizado_em)?;
        out.push_sql(sql[15]);
        out.push_bind_param::<Text, _>(&row.criacao)?;
        out.push_sql(sql[16]);
        out.push_bind_param::<Nullable<Timestamptz>, _>(&row.criacao_tentativa_em)?;
        out.push_sql(sql[17]);
        Ok(())
    }
}

impl RunQueryDsl<PgConnection> for BeginCreation<'_> {}

/// `confirm_creation` in one statement ($n are binds), so one implicit transaction: the update
/// confirms the row (PGCC id, no attempt, next status check) only if it is unconfirmed and still
/// holds the content the event was built from (hash, status, update time: an unconfirmed row's
/// content never changes, so this only guards against a bug); then, from the updated row only,
/// the `solicitacao.criada` event with its deliveries and the creation's history entry (`de`
/// NULL, dated `criado_em`). Nothing is written when the update changed no row; the count is
/// the number of history entries written (1 or 0). The update's row lock makes a concurrent
/// confirmation wait, then find the row confirmed and write nothing.
const CONFIRM_CREATION: [&str; 13] = [
    "WITH confirmada AS (
    UPDATE solicitacoes_consentimento
    SET criacao = 'confirmada', pgcc_id = ",
    ", criacao_tentativa_em = NULL, criacao_nao_encontrada_em = NULL, proximo_status_em = ",
    "
    WHERE id = ",
    " AND empresa_id = ",
    " AND criacao IN ('em_andamento', 'cancelada')
      AND hash = ",
    " AND status = ",
    " AND atualizado_em = ",
    "
    RETURNING id, empresa_id, status, criado_em
), eventos AS (
    INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em)
    SELECT ",
    ", empresa_id, ",
    ", ",
    ", ",
    " FROM confirmada
    RETURNING id, empresa_id, tipo, criado_em
), entregas AS (
",
    concat!(
        crate::outbox::deliveries_of_eventos!(),
        "
)
INSERT INTO solicitacoes_historico (solicitacao_id, de, para, em, causa)
SELECT id, NULL, status, criado_em, 'empresa' FROM confirmada"
    ),
];

/// [`CONFIRM_CREATION`] with its binds (a fixed text: prepared once per connection).
/// Confirms `request` (as stored, unconfirmed) under `pgcc_id` with its history entry, its
/// `solicitacao.criada` event and deliveries, in one statement guarded by the stored content;
/// `false` when the row is not that unconfirmed request any more.
fn confirm_if_unchanged(
    conn: &mut PgConnection,
    request: &ConsentRequest,
    pgcc_id: &str,
    at: DateTime<Utc>,
) -> QueryResult<bool> {
    let mut confirmed = request.clone();
    confirmed.pgcc_id = pgcc_id.to_owned();
    let event = WebhookEvent::consent(
        EventType::SolicitacaoCriada,
        &confirmed,
        confirmed.criado_em,
    );
    let changed = ConfirmCreation {
        id: request.id,
        empresa_id: request.empresa_id.0,
        pgcc_id,
        next_check_at: at,
        hash: &request.hash,
        status: request.status.as_str(),
        atualizado_em: request.atualizado_em,
        event_id: event.id,
        event_tipo: event.tipo.as_str(),
        event_payload: outbox::payload(&event)?,
        event_at: event.timestamp,
    }
    .execute(conn)?;
    Ok(changed == 1)
}

struct ConfirmCreation<'a> {
    id: Uuid,
    empresa_id: Uuid,
    pgcc_id: &'a str,
    next_check_at: DateTime<Utc>,
    hash: &'a str,
    status: &'static str,
    atualizado_em: DateTime<Utc>,
    event_id: Uuid,
    event_tipo: &'static str,
    event_payload: String,
    event_at: DateTime<Utc>,
}

impl QueryId for ConfirmCreation<'_> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl QueryFragment<Pg> for ConfirmCreation<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        let sql = &CONFIRM_CREATION;
        out.push_sql(sql[0]);
        out.push_bind_param::<Text, _>(&self.pgcc_id)?;
        out.push_sql(sql[1]);
        out.push_bind_param::<Timestamptz, _>(&self.next_check_at)?;
        out.push_sql(sql[2]);
        out.push_bind_param::<SqlUuid, _>(&self.id)?;
        out.push_sql(sql[3]);
        out.push_bind_param::<SqlUuid, _>(&self.empresa_id)?;
        out.push_sql(sql[4]);
        out.push_bind_param::<Text, _>(&self.hash)?;
        out.push_sql(sql[5]);
        out.push_bind_param::<Text, _>(&self.status)?;
        out.push_sql(sql[6]);
        out.push_bind_param::<Timestamptz, _>(&self.atualizado_em)?;
        out.push_sql(sql[7]);
        out.push_bind_param::<SqlUuid, _>(&self.event_id)?;
        out.push_sql(sql[8]);
        out.push_bind_param::<Text, _>(&self.event_tipo)?;
        out.push_sql(sql[9]);
        out.push_bind_param::<Text, _>(&self.event_payload)?;
        out.push_sql(sql[10]);
        out.push_bind_param::<Timestamptz, _>(&self.event_at)?;
        out.push_sql(sql[11]);
        out.push_sql(sql[12]);
        Ok(())
    }
}

impl RunQueryDsl<PgConnection> for ConfirmCreation<'_> {}

/// [`ConsentRequestRepository`] on `solicitacoes_consentimento` and `solicitacoes_historico`.
/// Every read filters by `empresa_id`; the worker operations span companies. Only confirmed
/// requests (`criacao = 'confirmada'`) are read, listed, moved or claimed for a status check;
/// the creation operations alone see the others.
#[derive(Clone)]
pub struct PgConsentRequestRepository {
    pool: PgPool,
}

impl PgConsentRequestRepository {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

/// A limit from the port as SQL's `bigint`.
fn sql_limit(limit: u32) -> i64 {
    i64::from(limit)
}

fn into_domain(
    row: SolicitacaoConsentimentoRow,
    operation: &'static str,
) -> Result<ConsentRequest, RepoError> {
    row.try_into_domain()
        .map_err(|e| RepoError::Unexpected(e.context(operation)))
}

/// [`SolicitacaoConsentimentoRow::try_into_domain`] inside a transaction: a row the domain
/// refuses aborts it (and is reported as `Unexpected`).
fn into_domain_in_tx(row: SolicitacaoConsentimentoRow) -> QueryResult<ConsentRequest> {
    row.try_into_domain()
        .map_err(|e| DieselError::DeserializationError(e.into()))
}

fn option_into_domain(
    row: Option<SolicitacaoConsentimentoRow>,
    operation: &'static str,
) -> Result<Option<ConsentRequest>, RepoError> {
    row.map(|row| into_domain(row, operation)).transpose()
}

impl ConsentRequestRepository for PgConsentRequestRepository {
    /// Inserts the request, its creation entry (`de` NULL, `em` = `criado_em`) and its
    /// `solicitacao.criada` event with the deliveries (see `outbox.rs`) in one transaction;
    /// `proximo_status_em` takes its default, `now()`: due for a status check.
    fn insert(&self, request: &ConsentRequest) -> Result<(), RepoError> {
        let first = NewSolicitacaoHistorico::new(
            request.id,
            None,
            request.status,
            request.criado_em,
            TransitionCause::Empresa,
        );
        let event = WebhookEvent::consent(EventType::SolicitacaoCriada, request, request.criado_em);
        with_conn(&self.pool, "inserting a consent request", |conn| {
            conn.transaction(|conn| {
                diesel::insert_into(sc::table)
                    .values(NewSolicitacaoConsentimento::from(request))
                    .execute(conn)?;
                diesel::insert_into(sh::table)
                    .values(&first)
                    .execute(conn)?;
                outbox::write_event(conn, &event)
            })
        })
    }

    /// [`BEGIN_CREATION`]: one statement, one round trip; only when it changed no row (the id is
    /// confirmed, or another company's) a second one reads the confirmed row's PGCC id.
    fn begin_creation(
        &self,
        request: &ConsentRequest,
        attempt_at: DateTime<Utc>,
    ) -> Result<CreationStart, RepoError> {
        const OPERATION: &str = "storing a consent request before the PGCC creates it";
        let found = with_conn(&self.pool, OPERATION, |conn| {
            let started = BeginCreation {
                row: NewSolicitacaoConsentimento::in_creation(request, attempt_at),
            }
            .execute(conn)?;
            if started == 1 {
                return Ok(Some(None));
            }
            // confirmed (Some(Some(pgcc_id))), or another company's id (None); a confirmed row
            // never goes back, so this read cannot miss a row the statement above skipped
            sc::table
                .filter(sc::id.eq(request.id))
                .filter(sc::empresa_id.eq(request.empresa_id.0))
                .select(sc::pgcc_id)
                .first::<Option<String>>(conn)
                .optional()
        })?;
        match found {
            Some(None) => Ok(CreationStart::Started),
            Some(Some(pgcc_id)) => Ok(CreationStart::AlreadyConfirmed { pgcc_id }),
            None => Err(RepoError::Unexpected(
                anyhow::anyhow!("the consent request id is taken by another company")
                    .context(OPERATION),
            )),
        }
    }

    /// Two round trips, no explicit transaction: the row is read (by its primary key) to build
    /// the `solicitacao.criada` event about it, then [`CONFIRM_CREATION`] confirms it and writes
    /// its history entry and that event (see `outbox.rs`), both dated `criado_em`, in one
    /// statement. A row found confirmed answers its PGCC id; a confirmation that changed no row
    /// (a concurrent one won) reads the row again.
    /// The confirming statement straight away, guarded by `stored`'s content; only when it
    /// changes nothing (taken over, already confirmed, gone) the reading path of
    /// `confirm_creation`. Saves a round trip on every creation.
    fn confirm_stored_creation(
        &self,
        stored: &ConsentRequest,
        pgcc_id: &str,
        at: DateTime<Utc>,
    ) -> Result<Confirmation, RepoError> {
        const OPERATION: &str = "confirming the creation of a consent request";
        if with_conn(&self.pool, OPERATION, |conn| {
            confirm_if_unchanged(conn, stored, pgcc_id, at)
        })? {
            return Ok(Confirmation::Confirmed);
        }
        self.confirm_creation(stored.empresa_id, stored.id, pgcc_id, at)
    }

    fn confirm_creation(
        &self,
        empresa: CompanyId,
        id: Uuid,
        pgcc_id: &str,
        at: DateTime<Utc>,
    ) -> Result<Confirmation, RepoError> {
        const OPERATION: &str = "confirming the creation of a consent request";
        with_conn(&self.pool, OPERATION, |conn| {
            // the second round only ever finds the row confirmed or gone, unless its content
            // changed under an unconfirmed id (a bug): then the third reports it
            for _ in 0..3 {
                let Some((criacao, row)) = sc::table
                    .filter(sc::id.eq(id))
                    .filter(sc::empresa_id.eq(empresa.0))
                    .select((sc::criacao, SolicitacaoConsentimentoRow::as_select()))
                    .first::<(String, SolicitacaoConsentimentoRow)>(conn)
                    .optional()?
                else {
                    return Ok(Confirmation::Missing);
                };
                if criacao == CRIACAO_CONFIRMADA {
                    return Ok(match row.pgcc_id {
                        Some(pgcc_id) => Confirmation::AlreadyConfirmed { pgcc_id },
                        // excluded by a check constraint
                        None => Confirmation::Missing,
                    });
                }
                let request = row
                    .try_into_domain_any_creation()
                    .map_err(|e| DieselError::DeserializationError(e.into()))?;
                if confirm_if_unchanged(conn, &request, pgcc_id, at)? {
                    return Ok(Confirmation::Confirmed);
                }
            }
            Err(DieselError::QueryBuilderError(
                "an unconfirmed consent request changed while being confirmed".into(),
            ))
        })
    }

    fn cancel_creation(
        &self,
        empresa: CompanyId,
        id: Uuid,
        attempt_at: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        let changed = with_conn(
            &self.pool,
            "cancelling the creation of a consent request",
            |conn| {
                diesel::update(sc::table.filter(unfinished_attempt(empresa.0, id, attempt_at)))
                    .set(sc::criacao.eq(CRIACAO_CANCELADA))
                    .execute(conn)
            },
        )?;
        Ok(changed == 1)
    }

    fn record_creation_not_found(
        &self,
        empresa: CompanyId,
        id: Uuid,
        attempt_at: DateTime<Utc>,
        at: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        let changed = with_conn(
            &self.pool,
            "recording that the PGCC does not hold a creation",
            |conn| {
                diesel::update(
                    sc::table
                        .filter(unfinished_attempt(empresa.0, id, attempt_at))
                        // the first "not found" is the one the window runs from
                        .filter(sc::criacao_nao_encontrada_em.is_null()),
                )
                .set(sc::criacao_nao_encontrada_em.eq(Some(at)))
                .execute(conn)
            },
        )?;
        Ok(changed == 1)
    }

    fn find_creation(
        &self,
        empresa: CompanyId,
        id: Uuid,
    ) -> Result<Option<CreationRecord>, RepoError> {
        const OPERATION: &str = "reading the creation of a consent request";
        let found = with_conn(&self.pool, OPERATION, |conn| {
            sc::table
                .filter(sc::id.eq(id))
                .filter(sc::empresa_id.eq(empresa.0))
                .select((sc::criacao, SolicitacaoConsentimentoRow::as_select()))
                .first::<(String, SolicitacaoConsentimentoRow)>(conn)
                .optional()
        })?;
        let Some((criacao, row)) = found else {
            return Ok(None);
        };
        let record = match criacao.as_str() {
            CRIACAO_CONFIRMADA => CreationRecord::Confirmed {
                pgcc_id: row.pgcc_id.ok_or_else(|| {
                    RepoError::Unexpected(
                        anyhow::anyhow!("a confirmed consent request has no pgcc_id")
                            .context(OPERATION),
                    )
                })?,
            },
            CRIACAO_CANCELADA => CreationRecord::Cancelled,
            CRIACAO_EM_ANDAMENTO => CreationRecord::InProgress(Box::new(
                row.try_into_domain_any_creation()
                    .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))?,
            )),
            _ => {
                return Err(RepoError::Unexpected(
                    anyhow::anyhow!("a consent request has an unknown creation state")
                        .context(OPERATION),
                ))
            }
        };
        Ok(Some(record))
    }

    /// See [`CLAIM_UNFINISHED_CREATIONS`]. The claimed rows come back in no particular order.
    fn claim_unfinished_creations(
        &self,
        limit: u32,
        attempted_before: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Vec<UnfinishedCreation>, RepoError> {
        const OPERATION: &str = "claiming unfinished consent request creations";
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows = with_conn(&self.pool, OPERATION, |conn| {
            diesel::sql_query(CLAIM_UNFINISHED_CREATIONS)
                .bind::<Timestamptz, _>(now)
                .bind::<Timestamptz, _>(attempted_before)
                .bind::<BigInt, _>(sql_limit(limit))
                .load::<UnfinishedCreationRow>(conn)
        })?;
        rows.into_iter()
            .map(UnfinishedCreationRow::try_into_domain)
            .collect::<anyhow::Result<_>>()
            .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))
    }

    /// The request and its history read in one read-only `REPEATABLE READ` transaction, so the
    /// history always matches the status read (a concurrent transition is seen in both or in
    /// neither).
    fn get(&self, empresa: CompanyId, id: Uuid) -> Result<Option<ConsentRequestRecord>, RepoError> {
        const OPERATION: &str = "reading a consent request";
        let found = with_conn(&self.pool, OPERATION, |conn| {
            conn.build_transaction()
                .repeatable_read()
                .read_only()
                .run(|conn| {
                    let Some(row) = sc::table
                        .filter(sc::id.eq(id))
                        .filter(sc::empresa_id.eq(empresa.0))
                        .filter(sc::criacao.eq(CRIACAO_CONFIRMADA))
                        .select(SolicitacaoConsentimentoRow::as_select())
                        .first(conn)
                        .optional()?
                    else {
                        return Ok(None);
                    };
                    let history = sh::table
                        .filter(sh::solicitacao_id.eq(id))
                        .order((sh::em.asc(), sh::id.asc()))
                        .select(SolicitacaoHistoricoRow::as_select())
                        .load(conn)?;
                    Ok(Some((row, history)))
                })
        })?;
        let Some((row, history)) = found else {
            return Ok(None);
        };
        let historico = history
            .into_iter()
            .map(SolicitacaoHistoricoRow::try_into_domain)
            .collect::<anyhow::Result<_>>()
            .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))?;
        Ok(Some(ConsentRequestRecord {
            request: into_domain(row, OPERATION)?,
            historico,
        }))
    }

    /// Read along the partial index (empresa_id, criado_em, id) WHERE criacao = 'confirmada'
    /// (see [`Confirmed`]): the cursor is the row comparison
    /// `(criado_em, id) > ($criado_em, $id)`, which PostgreSQL turns into an index bound, and the
    /// filters are evaluated on the rows read. The status filter is the effective status at
    /// `now`.
    fn list(
        &self,
        empresa: CompanyId,
        filter: &ConsentFilter,
        after: Option<ListCursor>,
        limit: u32,
        now: DateTime<Utc>,
    ) -> Result<Vec<ConsentRequest>, RepoError> {
        const OPERATION: &str = "listing consent requests";
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows = with_conn(&self.pool, OPERATION, |conn| {
            let mut query = sc::table
                .filter(sc::empresa_id.eq(empresa.0))
                .filter(Confirmed)
                .select(SolicitacaoConsentimentoRow::as_select())
                .into_boxed();
            if let Some(status) = filter.status {
                query = match status {
                    ConsentStatus::Pendente | ConsentStatus::Ativo => query
                        .filter(sc::status.eq(status.as_str()))
                        .filter(sc::data_expiracao_consentimento.gt(now)),
                    ConsentStatus::Expirado => query.filter(
                        sc::status
                            .eq(ConsentStatus::Expirado.as_str())
                            .or(sc::status
                                .eq_any([
                                    ConsentStatus::Pendente.as_str(),
                                    ConsentStatus::Ativo.as_str(),
                                ])
                                .and(sc::data_expiracao_consentimento.le(now))),
                    ),
                    ConsentStatus::Recusado | ConsentStatus::Revogado => {
                        query.filter(sc::status.eq(status.as_str()))
                    }
                };
            }
            if let Some(template) = &filter.caso_de_uso_id_template {
                query = query.filter(sc::caso_de_uso_id_template.eq(template.as_str()));
            }
            if let Some(cpf) = &filter.cpf_titular {
                query = query.filter(sc::cpf_titular.eq(cpf.as_str()));
            }
            if let Some(from) = filter.criado_de {
                query = query.filter(sc::criado_em.ge(from));
            }
            if let Some(until) = filter.criado_ate {
                query = query.filter(sc::criado_em.lt(until));
            }
            if let Some(from) = filter.atualizado_de {
                query = query.filter(sc::atualizado_em.ge(from));
            }
            if let Some(until) = filter.atualizado_ate {
                query = query.filter(sc::atualizado_em.lt(until));
            }
            if let Some(cursor) = after {
                query = query.filter(
                    sql::<Bool>(
                        "(solicitacoes_consentimento.criado_em, solicitacoes_consentimento.id) > (",
                    )
                    .bind::<Timestamptz, _>(cursor.criado_em)
                    .sql(", ")
                    .bind::<diesel::sql_types::Uuid, _>(cursor.id)
                    .sql(")"),
                );
            }
            query
                .order((sc::criado_em.asc(), sc::id.asc()))
                .limit(sql_limit(limit))
                .load(conn)
        })?;
        rows.into_iter()
            .map(|row| into_domain(row, OPERATION))
            .collect()
    }

    /// The status and the creation state are compared with literals, as in the partial index
    /// `solicitacoes_consentimento_validas_idx` (empresa_id, cpf_titular,
    /// caso_de_uso_id_template, data_expiracao_consentimento) WHERE status = 'ativo' AND
    /// criacao = 'confirmada', which the lookup reads backwards from the newest expiry.
    fn find_valid(
        &self,
        empresa: CompanyId,
        cpf: &Cpf,
        caso_de_uso_id_template: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<ConsentRequest>, RepoError> {
        const OPERATION: &str = "finding a valid consent request";
        let row = with_conn(&self.pool, OPERATION, |conn| {
            sc::table
                .filter(sc::empresa_id.eq(empresa.0))
                .filter(sc::cpf_titular.eq(cpf.as_str()))
                .filter(sc::caso_de_uso_id_template.eq(caso_de_uso_id_template))
                .filter(StatusAtivo)
                .filter(Confirmed)
                .filter(sc::data_expiracao_consentimento.gt(now))
                .order((sc::data_expiracao_consentimento.desc(), sc::id.desc()))
                .select(SolicitacaoConsentimentoRow::as_select())
                .first(conn)
                .optional()
        })?;
        option_into_domain(row, OPERATION)
    }

    /// One indexed read of the unique key (empresa_id, hash).
    fn find_by_hash(
        &self,
        empresa: CompanyId,
        hash: &str,
    ) -> Result<Option<ConsentRequest>, RepoError> {
        const OPERATION: &str = "finding a consent request by hash";
        let row = with_conn(&self.pool, OPERATION, |conn| {
            sc::table
                .filter(sc::empresa_id.eq(empresa.0))
                .filter(sc::hash.eq(hash))
                .filter(sc::criacao.eq(CRIACAO_CONFIRMADA))
                .select(SolicitacaoConsentimentoRow::as_select())
                .first(conn)
                .optional()
        })?;
        option_into_domain(row, OPERATION)
    }

    /// In one transaction: `UPDATE ... SET status = $to, atualizado_em = $at WHERE id = $id AND
    /// empresa_id = $empresa AND status = $from RETURNING *` and, only when it changed the row,
    /// the history entry and the event of `to` (if it has one) about the returned row, with its
    /// deliveries. The row lock the update takes makes a concurrent identical transition wait,
    /// then find the status changed and answer `false` (writing nothing).
    #[allow(clippy::too_many_arguments)]
    fn transition(
        &self,
        empresa: CompanyId,
        id: Uuid,
        from: ConsentStatus,
        to: ConsentStatus,
        cause: TransitionCause,
        motivo: Option<Motivo>,
        at: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        let entry = NewSolicitacaoHistorico::new(id, Some(from), to, at, cause)
            .with_motivo(motivo.as_ref());
        let tipo = EventType::for_transition(to);
        with_conn(
            &self.pool,
            "changing the status of a consent request",
            |conn| {
                conn.transaction(|conn| {
                    let Some(updated) = diesel::update(
                        sc::table
                            .filter(sc::id.eq(id))
                            .filter(sc::empresa_id.eq(empresa.0))
                            .filter(sc::criacao.eq(CRIACAO_CONFIRMADA))
                            .filter(sc::status.eq(from.as_str())),
                    )
                    .set((sc::status.eq(to.as_str()), sc::atualizado_em.eq(at)))
                    .returning(SolicitacaoConsentimentoRow::as_returning())
                    .get_result(conn)
                    .optional()?
                    else {
                        return Ok(false);
                    };
                    diesel::insert_into(sh::table)
                        .values(&entry)
                        .execute(conn)?;
                    if let Some(tipo) = tipo {
                        let request = into_domain_in_tx(updated)?;
                        let event =
                            WebhookEvent::consent(tipo, &request, at).with_motivo(motivo.clone());
                        outbox::write_event(conn, &event)?;
                    }
                    Ok(true)
                })
            },
        )
    }

    /// See [`CLAIM_FOR_STATUS_CHECK`]. The claimed rows come back in no particular order.
    fn claim_for_status_check(
        &self,
        limit: u32,
        now: DateTime<Utc>,
        next_check_at: DateTime<Utc>,
    ) -> Result<Vec<StatusCheckItem>, RepoError> {
        const OPERATION: &str = "claiming consent requests for a status check";
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows = with_conn(&self.pool, OPERATION, |conn| {
            diesel::sql_query(CLAIM_FOR_STATUS_CHECK)
                .bind::<Timestamptz, _>(next_check_at)
                .bind::<Timestamptz, _>(now)
                .bind::<BigInt, _>(sql_limit(limit))
                .load::<StatusCheckRow>(conn)
        })?;
        rows.into_iter()
            .map(StatusCheckRow::try_into_domain)
            .collect::<anyhow::Result<_>>()
            .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))
    }

    fn defer_status_check(
        &self,
        empresa: CompanyId,
        id: Uuid,
        unknown_since: DateTime<Utc>,
        next_check_at: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        let changed = with_conn(
            &self.pool,
            "backing off the status check of a consent request",
            |conn| {
                diesel::update(
                    sc::table
                        .filter(sc::id.eq(id))
                        .filter(sc::empresa_id.eq(empresa.0)),
                )
                .set((
                    sc::status_desconhecido_desde.eq(Some(unknown_since)),
                    sc::proximo_status_em.eq(next_check_at),
                ))
                .execute(conn)
            },
        )?;
        Ok(changed == 1)
    }

    fn clear_unknown_status(&self, empresa: CompanyId, id: Uuid) -> Result<(), RepoError> {
        with_conn(
            &self.pool,
            "forgetting an unknown status of a consent request",
            |conn| {
                diesel::update(
                    sc::table
                        .filter(sc::id.eq(id))
                        .filter(sc::empresa_id.eq(empresa.0))
                        .filter(sc::status_desconhecido_desde.is_not_null()),
                )
                .set(sc::status_desconhecido_desde.eq(None::<DateTime<Utc>>))
                .execute(conn)
            },
        )?;
        Ok(())
    }

    /// In one transaction, two statements whatever the batch size: [`EXPIRE_DUE`] (lock, move,
    /// history, returning the moved rows), then one `solicitacao.expirada` event per moved
    /// request, with its deliveries (one batch of the outbox). The count is the number of rows
    /// moved.
    fn expire_due(&self, now: DateTime<Utc>, limit: u32) -> Result<u32, RepoError> {
        if limit == 0 {
            return Ok(0);
        }
        let moved = with_conn(&self.pool, "expiring consent requests", |conn| {
            conn.transaction(|conn| {
                let expired = diesel::sql_query(EXPIRE_DUE)
                    .bind::<Timestamptz, _>(now)
                    .bind::<BigInt, _>(sql_limit(limit))
                    .bind::<Text, _>(ConsentStatus::Expirado.as_str())
                    .bind::<Text, _>(TransitionCause::Expiracao.as_str())
                    .load::<SolicitacaoConsentimentoRow>(conn)?;
                let events = expired
                    .into_iter()
                    .map(|row| {
                        let request = into_domain_in_tx(row)?;
                        Ok(WebhookEvent::consent(
                            EventType::SolicitacaoExpirada,
                            &request,
                            now,
                        ))
                    })
                    .collect::<QueryResult<Vec<_>>>()?;
                outbox::write_events(conn, &events)?;
                Ok(events.len())
            })
        })?;
        Ok(count_u32(moved))
    }
}

/// The company's request `id` while its creation is still the attempt made at `attempt_at`
/// (unfinished, and not attempted again since): what the reconciler may settle.
#[diesel::dsl::auto_type]
fn unfinished_attempt(empresa: Uuid, id: Uuid, attempt_at: DateTime<Utc>) -> _ {
    let em_andamento: &'static str = CRIACAO_EM_ANDAMENTO;
    let attempt: Option<DateTime<Utc>> = Some(attempt_at);
    sc::id
        .eq(id)
        .and(sc::empresa_id.eq(empresa))
        .and(sc::criacao.eq(em_andamento))
        .and(sc::criacao_tentativa_em.eq(attempt))
}
