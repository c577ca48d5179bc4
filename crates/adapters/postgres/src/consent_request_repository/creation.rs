//! The two-phase creation (docs/decisions.md, "No consent lost or duplicated"): the row is
//! stored `em_andamento` before the PGCC is asked, then confirmed or cancelled; the reconciler
//! claims the creations left unfinished.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{BigInt, Bool, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::{Cnpj, CompanyId, ConsentRequest, EventType, WebhookEvent};
use ports::{Confirmation, CreationRecord, CreationStart, RepoError, UnfinishedCreation};
use uuid::Uuid;

use super::{sql_limit, CompanyIdRow};
use crate::conn::{count_u32, with_conn};
use crate::fixed_sql::statement;
use crate::models::{
    SolicitacaoConsentimentoRow, UnfinishedCreationRow, CRIACAO_CANCELADA, CRIACAO_CONFIRMADA,
    CRIACAO_EM_ANDAMENTO,
};
use crate::outbox;
use crate::per_company::companies_with;
use crate::schema::solicitacoes_consentimento as sc;
use crate::settled;
use crate::topology::Topology;
use crate::PgPool;

statement! {
    /// `begin_creation` in one call of the owner's `consentimento_iniciar`, the template check included (one round trip where a
    /// separate lookup of the use case made two): `caso` is the company's live use case for the
    /// template; the row is inserted `em_andamento` under it (no PGCC id; `proximo_status_em`
    /// takes its default) or, when the id exists, taken over (back to `em_andamento`, stamped
    /// with this attempt, any recorded "not found" forgotten: this attempt may create it) unless
    /// it is confirmed or another company's. A takeover keeps the use case the row was stored
    /// under, even one removed since (`COALESCE` looks at the stored row only when `caso` is
    /// empty). One row comes back: how many rows were stored (1 exactly when the creation may
    /// go on), whether the template has a live use case, and that use case's PGCC link. The row
    /// records the use case's current version (`versao_caso_de_uso`), read in this statement's
    /// snapshot; a takeover keeps the version stored first.
    struct BeginCreation<'a> {
        id: Uuid as SqlUuid,
        empresa_id: Uuid as SqlUuid,
        caso_de_uso_id_template: &'a str as Text,
        cpf_titular: &'a str as Text,
        tipo_titular: &'static str as Text,
        modalidade_acesso: &'static str as Text,
        cnpj_anuente: Option<&'a str> as Nullable<Text>,
        data_expiracao_consentimento: DateTime<Utc> as Timestamptz,
        data_titular_respondeu_consentimento: Option<DateTime<Utc>> as Nullable<Timestamptz>,
        prova_coleta: Option<&'a str> as Nullable<Text>,
        status: &'static str as Text,
        hash: &'a str as Text,
        sal_hash: &'a str as Text,
        criado_em: DateTime<Utc> as Timestamptz,
        atualizado_em: DateTime<Utc> as Timestamptz,
        attempt_at: DateTime<Utc> as Timestamptz,
    }
    // the statement is the owner's function (migration `write_evidence_through_functions`): the
    // service's role cannot insert a request itself (issue 36)
    "SELECT gravadas, caso_encontrado, vinculo_id FROM consentimento_iniciar(
    $id, $empresa_id, $caso_de_uso_id_template, $cpf_titular, $tipo_titular, $modalidade_acesso,
    $cnpj_anuente, $data_expiracao_consentimento, $data_titular_respondeu_consentimento,
    $prova_coleta, $status, $hash, $sal_hash, $criado_em, $atualizado_em, $attempt_at)"
}

/// What [`BeginCreation`] answers.
#[derive(QueryableByName)]
struct BeginOutcome {
    #[diesel(sql_type = BigInt)]
    gravadas: i64,
    #[diesel(sql_type = Bool)]
    caso_encontrado: bool,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    vinculo_id: Option<Uuid>,
}

impl<'a> BeginCreation<'a> {
    /// `request` as a row: the CPF as its 11 digits, the enumerations by their wire names.
    fn of(request: &'a ConsentRequest, attempt_at: DateTime<Utc>) -> Self {
        let dados = &request.content;
        BeginCreation {
            id: request.id,
            empresa_id: request.company_id.0,
            caso_de_uso_id_template: &dados.template_id,
            cpf_titular: dados.subject_cpf.as_str(),
            tipo_titular: dados.subject_type.as_str(),
            modalidade_acesso: dados.access_mode.as_str(),
            cnpj_anuente: dados.consenting_cnpj.as_ref().map(Cnpj::as_str),
            data_expiracao_consentimento: dados.consent_expires_at,
            data_titular_respondeu_consentimento: dados
                .answer
                .as_ref()
                .map(|r| r.subject_answered_at),
            prova_coleta: dados
                .answer
                .as_ref()
                .map(|r| r.proof_of_collection.as_str()),
            status: request.status.as_str(),
            hash: &request.hash,
            sal_hash: &request.hash_salt,
            criado_em: request.created_at,
            atualizado_em: request.updated_at,
            attempt_at,
        }
    }
}

statement! {
    /// `confirm_creation` in one call of `consentimento_confirmar_criacao` (migration
    /// `confirm_creations_in_one_call`): the owner's `consentimento_confirmar` confirms the row
    /// (PGCC id, no attempt, next status check) only if it is unconfirmed and still holds the
    /// content the event was built from (hash, status, update time: an unconfirmed row's content
    /// never changes, so this only guards against a bug), with the creation's history entry
    /// (`de` NULL, dated `criado_em`) and its entry in the company's audit log
    /// (docs/auditoria.md); then, as the service's role, the first status check and the
    /// `solicitacao.criada` event with its deliveries. Nothing is written when no row was
    /// confirmed; the answer is the rows confirmed (1 or 0). The update's row lock makes a
    /// concurrent confirmation wait, then find the row confirmed and write nothing. `transacao`:
    /// the log's transaction id, given on Citus only ([`confirm_on_citus`]); on one node the
    /// function takes its own transaction's.
    struct ConfirmCreation<'a> {
        id: Uuid as SqlUuid,
        empresa_id: Uuid as SqlUuid,
        pgcc_id: &'a str as Text,
        next_check_at: DateTime<Utc> as Timestamptz,
        hash: &'a str as Text,
        status: &'static str as Text,
        atualizado_em: DateTime<Utc> as Timestamptz,
        transacao: Option<i64> as Nullable<BigInt>,
        event_id: Uuid as SqlUuid,
        event_tipo: &'static str as Text,
        event_payload: String as Text,
        event_at: DateTime<Utc> as Timestamptz,
        event_traceparent: Option<String> as Nullable<Text>,
    }
    // alone in the SELECT list, arguments all bound: what Citus sends whole to the company's
    // worker (`force_delegation`, scripts/citus/distribute.sql)
    "SELECT consentimento_confirmar_criacao(
    $id, $empresa_id, $pgcc_id, $next_check_at, $hash, $status, $atualizado_em, $transacao,
    $event_id, $event_tipo, $event_payload, $event_at, $event_traceparent) AS confirmadas"
}

/// What [`ConfirmCreation`] answers.
#[derive(QueryableByName)]
struct Confirmed {
    #[diesel(sql_type = diesel::sql_types::Integer)]
    confirmadas: i32,
}

/// [`ConfirmCreation`] on a Citus coordinator: inside a transaction that first takes the
/// coordinator's transaction id, the log's order and the events feed's watermark
/// (`settled.rs`); on the worker `pg_current_xact_id()` counts the worker's transactions. The
/// call itself is one round trip to the company's worker, committed there in one phase.
fn confirm_on_citus(conn: &mut PgConnection, statement: ConfirmCreation<'_>) -> QueryResult<i32> {
    conn.transaction(|conn| {
        let transacao = Some(settled::transaction_id(conn)?);
        ConfirmCreation {
            transacao,
            ..statement
        }
        .get_result::<Confirmed>(conn)
        .map(|c| c.confirmadas)
    })
}

statement! {
    /// Companies (in id order) with a creation left unfinished since before `attempted_before`:
    /// one probe of `solicitacoes_consentimento_empresa_criacao_pendente_idx` per company.
    struct CompaniesWithUnfinishedCreations {
        attempted_before: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    companies_with!(
        "SELECT 1 FROM solicitacoes_consentimento s
    WHERE s.empresa_id = e.empresa_id AND s.criacao = 'em_andamento'
      AND s.criacao_tentativa_em <= $attempted_before"
    )
}

statement! {
    /// `claim_unfinished_creations` for one company, in one statement: the subquery locks its
    /// unfinished creations whose last attempt is at or before `attempted_before` that no other
    /// reconciler holds (`SKIP LOCKED`), the update stamps `now` as their last attempt, and each
    /// comes back whole (to be confirmed from its content) with its company's CNPJ.
    struct ClaimUnfinishedCreations {
        empresa_id: Uuid as SqlUuid,
        now: DateTime<Utc> as Timestamptz,
        attempted_before: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    "UPDATE solicitacoes_consentimento s
SET criacao_tentativa_em = $now
FROM empresas e
WHERE e.id = s.empresa_id AND s.empresa_id = $empresa_id AND s.id IN (
    SELECT id FROM solicitacoes_consentimento
    WHERE empresa_id = $empresa_id AND criacao = 'em_andamento'
      AND criacao_tentativa_em <= $attempted_before
    ORDER BY criacao_tentativa_em
    LIMIT $limit
    FOR UPDATE SKIP LOCKED
)
RETURNING s.*, e.cnpj"
}

/// [`BeginCreation`]: one statement, one round trip; only when it stored nothing for a
/// template that exists (the id is confirmed, or another company's) a second one reads the
/// confirmed row's PGCC id.
pub(super) fn begin(
    pool: &PgPool,
    request: &ConsentRequest,
    attempt_at: DateTime<Utc>,
) -> Result<CreationStart, RepoError> {
    const OPERATION: &str = "storing a consent request before the PGCC creates it";
    let found = with_conn(pool, OPERATION, |conn| {
        let outcome = BeginCreation::of(request, attempt_at).get_result::<BeginOutcome>(conn)?;
        if outcome.gravadas == 1 {
            return Ok(Ok(CreationStart::Started {
                link: outcome.vinculo_id,
            }));
        }
        // confirmed (Some(Some(pgcc_id))); a confirmed row never goes back, so this read cannot
        // miss a row the statement above skipped. The key is (empresa_id, id) (issue 23): an id
        // another company holds is no conflict, and ids are the service's random UUIDs
        let stored = sc::table
            .filter(sc::id.eq(request.id))
            .filter(sc::empresa_id.eq(request.company_id.0))
            .select(sc::pgcc_id)
            .first::<Option<String>>(conn)
            .optional()?;
        Ok(match stored {
            Some(Some(pgcc_id)) => Ok(CreationStart::AlreadyConfirmed { pgcc_id }),
            // nothing stored under this id and no live use case for the template
            None if !outcome.caso_encontrado => Ok(CreationStart::UnknownTemplate),
            None => Err("the consent request id is taken by another company"),
            // an unconfirmed row of the company is always taken over: a bug if not
            Some(None) => Err("an unconfirmed consent request was not taken over"),
        })
    })?;
    found.map_err(|reason| RepoError::Unexpected(anyhow::anyhow!(reason).context(OPERATION)))
}

/// [`ConfirmCreation`] of `stored` straight away (one round trip on every creation); only when
/// it changed nothing (taken over since, already confirmed, gone) the row is read: confirmed,
/// its PGCC id is answered; still unconfirmed, it is confirmed from its content as read.
pub(super) fn confirm(
    pool: &PgPool,
    topology: &Topology,
    stored: &ConsentRequest,
    pgcc_id: &str,
    at: DateTime<Utc>,
) -> Result<Confirmation, RepoError> {
    let distributed = topology.distributed(pool)?;
    with_conn(
        pool,
        "confirming the creation of a consent request",
        |conn| {
            if confirm_if_unchanged(conn, stored, pgcc_id, at, distributed)? {
                return Ok(Confirmation::Confirmed);
            }
            // the read only ever finds the row confirmed or gone, unless its content changed
            // under an unconfirmed id (a bug): the second round reports it
            for _ in 0..2 {
                let Some((criacao, row)) = sc::table
                    .filter(sc::id.eq(stored.id))
                    .filter(sc::empresa_id.eq(stored.company_id.0))
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
                if confirm_if_unchanged(conn, &request, pgcc_id, at, distributed)? {
                    return Ok(Confirmation::Confirmed);
                }
            }
            Err(DieselError::QueryBuilderError(
                "an unconfirmed consent request changed while being confirmed".into(),
            ))
        },
    )
}

/// Confirms `request` (as stored, unconfirmed) under `pgcc_id` with its history entry, its
/// `solicitacao.criada` event and deliveries, in one call guarded by the stored content;
/// `false` when the row is not that unconfirmed request any more. On Citus (`distributed`) the
/// call runs in a transaction that names the coordinator's transaction id.
fn confirm_if_unchanged(
    conn: &mut PgConnection,
    request: &ConsentRequest,
    pgcc_id: &str,
    at: DateTime<Utc>,
    distributed: bool,
) -> QueryResult<bool> {
    let mut confirmed = request.clone();
    confirmed.pgcc_id = pgcc_id.to_owned();
    let event = WebhookEvent::consent(EventType::RequestCreated, &confirmed, confirmed.created_at);
    let statement = ConfirmCreation {
        id: request.id,
        empresa_id: request.company_id.0,
        pgcc_id,
        next_check_at: at,
        hash: &request.hash,
        status: request.status.as_str(),
        atualizado_em: request.updated_at,
        transacao: None,
        event_id: event.id,
        event_tipo: event.event_type.as_str(),
        event_payload: outbox::payload(&event)?,
        event_at: event.timestamp,
        // the creation's trace (telemetry on): its deliveries join it (see outbox::write_event)
        event_traceparent: telemetry::current_traceparent(),
    };
    let changed = if distributed {
        confirm_on_citus(conn, statement)?
    } else {
        statement.get_result::<Confirmed>(conn)?.confirmadas
    };
    Ok(changed == 1)
}

statement! {
    /// `cancel`: the owner's `consentimento_cancelar` (the service's role cannot change a
    /// request's creation state itself, issue 36), only for the attempt that stamped the row.
    struct CancelCreation {
        empresa_id: Uuid as SqlUuid,
        id: Uuid as SqlUuid,
        attempt_at: DateTime<Utc> as Timestamptz,
    }
    "SELECT consentimento_cancelar($empresa_id, $id, $attempt_at) AS canceladas"
}

/// What [`CancelCreation`] answers.
#[derive(QueryableByName)]
struct Cancelled {
    #[diesel(sql_type = BigInt)]
    canceladas: i64,
}

pub(super) fn cancel(
    pool: &PgPool,
    empresa: CompanyId,
    id: Uuid,
    attempt_at: DateTime<Utc>,
) -> Result<bool, RepoError> {
    let changed = with_conn(
        pool,
        "cancelling the creation of a consent request",
        |conn| {
            CancelCreation {
                empresa_id: empresa.0,
                id,
                attempt_at,
            }
            .get_result::<Cancelled>(conn)
            .map(|c| c.canceladas as usize)
        },
    )?;
    Ok(changed == 1)
}

pub(super) fn record_not_found(
    pool: &PgPool,
    empresa: CompanyId,
    id: Uuid,
    attempt_at: DateTime<Utc>,
    at: DateTime<Utc>,
) -> Result<bool, RepoError> {
    let changed = with_conn(
        pool,
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

pub(super) fn find(
    pool: &PgPool,
    empresa: CompanyId,
    id: Uuid,
) -> Result<Option<CreationRecord>, RepoError> {
    const OPERATION: &str = "reading the creation of a consent request";
    let found = with_conn(pool, OPERATION, |conn| {
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

/// See [`ClaimUnfinishedCreations`]. The claimed rows come back in no particular order.
pub(super) fn claim_unfinished(
    pool: &PgPool,
    limit: u32,
    attempted_before: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Vec<UnfinishedCreation>, RepoError> {
    const OPERATION: &str = "claiming unfinished consent request creations";
    if limit == 0 {
        return Ok(Vec::new());
    }
    // Each claim is scoped to one company (issue 21, part 3), at most what is left of `limit`.
    let companies = with_conn(pool, OPERATION, |conn| {
        CompaniesWithUnfinishedCreations {
            attempted_before,
            limit: sql_limit(limit),
        }
        .load::<CompanyIdRow>(conn)
    })?;
    let mut rows = Vec::new();
    for company in companies {
        let room = limit.saturating_sub(count_u32(rows.len()));
        if room == 0 {
            break;
        }
        rows.extend(with_conn(pool, OPERATION, |conn| {
            ClaimUnfinishedCreations {
                empresa_id: company.id,
                now,
                attempted_before,
                limit: sql_limit(room),
            }
            .load::<UnfinishedCreationRow>(conn)
        })?);
    }
    rows.into_iter()
        .map(UnfinishedCreationRow::try_into_domain)
        .collect::<anyhow::Result<_>>()
        .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))
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
