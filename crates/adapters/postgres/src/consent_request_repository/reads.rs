//! What the API reads: one request with its history, the list, the HashConsulta lookups. Only
//! confirmed requests are read.

use chrono::{DateTime, Utc};
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Bool, Text, Timestamptz};
use domain::{CompanyId, ConsentRequest, ConsentStatus, Cpf, ImportProvenance};
use ports::{ConsentFilter, ConsentRequestRecord, ListCursor, RepoError};
use uuid::Uuid;

use super::{into_domain, sql_limit};
use crate::conn::with_conn;
use crate::fixed_sql::{fixed_condition, statement};
use crate::models::{SolicitacaoConsentimentoRow, SolicitacaoHistoricoRow, CRIACAO_CONFIRMADA};
use crate::schema::{
    importacao_linhas as il, solicitacoes_consentimento as sc, solicitacoes_historico as sh,
};
use crate::tenant::Tenant;
use crate::{PgPool, ReadPools};

fixed_condition!(
    /// "The row is confirmed", with the state as a literal (not a bind) as in the predicates of
    /// the partial indexes `solicitacoes_consentimento_empresa_criado_em_idx`,
    /// `solicitacoes_consentimento_validas_idx` and `solicitacoes_consentimento_titular_idx`, so
    /// that every plan, generic ones included, can use them; prepared once per connection.
    Confirmed,
    "solicitacoes_consentimento.criacao = 'confirmada'"
);

fixed_condition!(
    /// The status is `ativo`, a literal as in the predicate of
    /// `solicitacoes_consentimento_validas_idx`.
    StatusAtivo,
    "solicitacoes_consentimento.status = 'ativo'"
);

fixed_condition!(
    /// No integrity incident was recorded for the request (issue 36: a confirmed request the
    /// PGCC does not know is never valid; migration 2026-12-07-003602).
    NoIntegrityIncident,
    "solicitacoes_consentimento.incidente_integridade_em IS NULL"
);

fixed_condition!(
    /// The request's use case has a version newer than the one it was created under
    /// (`versaoDesatualizada=true`): one probe of `casos_de_uso`'s primary key per row read,
    /// evaluated like the other filters on the rows read along the company's index, so a page
    /// costs what the `status` filter's does (docs/decisions.md, "Use-case versions").
    OutdatedVersion,
    "EXISTS (SELECT 1 FROM casos_de_uso cu \
     WHERE cu.empresa_id = solicitacoes_consentimento.empresa_id \
     AND cu.id = solicitacoes_consentimento.caso_de_uso_id \
     AND cu.versao > solicitacoes_consentimento.versao_caso_de_uso)"
);

/// The request and its history read in one read-only `REPEATABLE READ` transaction, so the
/// history always matches the status read (a concurrent transition is seen in both or in
/// neither).
pub(super) fn get(
    pool: &PgPool,
    empresa: CompanyId,
    id: Uuid,
) -> Result<Option<ConsentRequestRecord>, RepoError> {
    const OPERATION: &str = "reading a consent request";
    let found = with_conn(pool, OPERATION, |conn| {
        conn.build_transaction()
            .repeatable_read()
            .read_only()
            .run(|conn| {
                let Some(row) = sc::table::row(empresa, id)
                    .filter(sc::criacao.eq(CRIACAO_CONFIRMADA))
                    .select(SolicitacaoConsentimentoRow::as_select())
                    .first(conn)
                    .optional()?
                else {
                    return Ok(None);
                };
                let history = sh::table::of(empresa)
                    .filter(sh::solicitacao_id.eq(id))
                    .order((sh::em.asc(), sh::id.asc()))
                    .select(SolicitacaoHistoricoRow::as_select())
                    .load(conn)?;
                // an imported request's line: one probe of `importacao_linhas_solicitacao`
                // (only imported rows have an `origem`, so a live one costs nothing more)
                let provenance = match row.origem.is_some() {
                    false => None,
                    true => il::table
                        .filter(il::empresa_id.eq(empresa.0))
                        .filter(il::solicitacao_id.eq(id))
                        .select((il::importacao_id, il::id_externo, il::origem))
                        .first::<(Uuid, String, String)>(conn)
                        .optional()?,
                };
                Ok(Some((row, history, provenance)))
            })
    })?;
    let Some((row, history, provenance)) = found else {
        return Ok(None);
    };
    let historico = history
        .into_iter()
        .map(SolicitacaoHistoricoRow::try_into_domain)
        .collect::<anyhow::Result<_>>()
        .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))?;
    Ok(Some(ConsentRequestRecord {
        request: into_domain(row, OPERATION)?,
        history: historico,
        provenance: provenance.map(|(import_id, external_id, origin)| ImportProvenance {
            import_id,
            external_id,
            origin,
        }),
    }))
}

/// Read along the partial index (empresa_id, criado_em, id) WHERE criacao = 'confirmada'
/// (see [`Confirmed`]): the cursor is the row comparison `(criado_em, id) > ($criado_em, $id)`,
/// which PostgreSQL turns into an index bound, and the filters are evaluated on the rows read.
/// The status filter is the effective status at `now` (`ConsentRequest::effective_status`).
/// Read on a replica within the lag bound when there is one (`ReadPools`).
pub(super) fn list(
    reads: &ReadPools,
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
    let rows = reads.read(OPERATION, |conn| {
        let mut query = sc::table::of(empresa)
            .filter(Confirmed)
            .select(SolicitacaoConsentimentoRow::as_select())
            .into_boxed();
        if let Some(status) = filter.status {
            query = match status {
                ConsentStatus::Pending | ConsentStatus::Active => query
                    .filter(sc::status.eq(status.as_str()))
                    .filter(sc::data_expiracao_consentimento.gt(now)),
                ConsentStatus::Expired => query.filter(
                    sc::status.eq(ConsentStatus::Expired.as_str()).or(sc::status
                        .eq_any([
                            ConsentStatus::Pending.as_str(),
                            ConsentStatus::Active.as_str(),
                        ])
                        .and(sc::data_expiracao_consentimento.le(now))),
                ),
                ConsentStatus::Refused | ConsentStatus::Revoked => {
                    query.filter(sc::status.eq(status.as_str()))
                }
            };
        }
        if let Some(template) = &filter.template_id {
            query = query.filter(sc::caso_de_uso_id_template.eq(template.as_str()));
        }
        if let Some(cpf) = &filter.subject_cpf {
            query = query.filter(sc::cpf_titular.eq(cpf.as_str()));
        }
        if let Some(from) = filter.created_from {
            query = query.filter(sc::criado_em.ge(from));
        }
        if let Some(until) = filter.created_until {
            query = query.filter(sc::criado_em.lt(until));
        }
        if let Some(from) = filter.updated_from {
            query = query.filter(sc::atualizado_em.ge(from));
        }
        if let Some(until) = filter.updated_until {
            query = query.filter(sc::atualizado_em.lt(until));
        }
        if filter.outdated_version {
            query = query.filter(OutdatedVersion);
        }
        if let Some(origin) = &filter.origin {
            // read along `solicitacoes_consentimento_empresa_origem_idx` (empresa_id, origem,
            // criado_em, id): the page's rows of that origin in the list's order, from the cursor
            query = query.filter(sc::origem.eq(origin.as_str()));
        }
        if let Some(cursor) = after {
            query = query.filter(
                sql::<Bool>(
                    "(solicitacoes_consentimento.criado_em, solicitacoes_consentimento.id) > (",
                )
                .bind::<Timestamptz, _>(cursor.created_at)
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
/// `solicitacoes_consentimento_validas_idx` (empresa_id, cpf_titular, caso_de_uso_id_template,
/// data_expiracao_consentimento) WHERE status = 'ativo' AND criacao = 'confirmada', which the
/// lookup reads backwards from the newest expiry. Valid = effectively `ativo` at `now`, and no
/// integrity incident.
pub(super) fn find_valid(
    pool: &PgPool,
    empresa: CompanyId,
    cpf: &Cpf,
    caso_de_uso_id_template: &str,
    now: DateTime<Utc>,
) -> Result<Option<ConsentRequest>, RepoError> {
    const OPERATION: &str = "finding a valid consent request";
    let row = with_conn(pool, OPERATION, |conn| {
        sc::table::of(empresa)
            .filter(sc::cpf_titular.eq(cpf.as_str()))
            .filter(sc::caso_de_uso_id_template.eq(caso_de_uso_id_template))
            .filter(StatusAtivo)
            .filter(Confirmed)
            .filter(NoIntegrityIncident)
            .filter(sc::data_expiracao_consentimento.gt(now))
            .order((sc::data_expiracao_consentimento.desc(), sc::id.desc()))
            .select(SolicitacaoConsentimentoRow::as_select())
            .first(conn)
            .optional()
    })?;
    row.map(|row| into_domain(row, OPERATION)).transpose()
}

statement! {
    /// [`find_valid`] for every `(cpf, template)` pair at once: the pairs come in as two
    /// parallel arrays, numbered by `WITH ORDINALITY`, and each takes its valid request (the one
    /// expiring last) through `solicitacoes_consentimento_validas_idx`, as the single check
    /// does. Pairs without one have no row.
    struct FindValidMany<'a> {
        empresa_id: Uuid as diesel::sql_types::Uuid,
        cpfs: Vec<&'a str> as Array<Text>,
        templates: Vec<&'a str> as Array<Text>,
        now: DateTime<Utc> as Timestamptz,
    }
    "SELECT q.ordem, v.*
FROM unnest($cpfs::text[], $templates::text[]) WITH ORDINALITY AS q (cpf, modelo, ordem)
CROSS JOIN LATERAL (
    SELECT s.* FROM solicitacoes_consentimento s
    WHERE s.empresa_id = $empresa_id AND s.cpf_titular = q.cpf
      AND s.caso_de_uso_id_template = q.modelo AND s.status = 'ativo'
      AND s.criacao = 'confirmada' AND s.data_expiracao_consentimento > $now
      AND s.incidente_integridade_em IS NULL
    ORDER BY s.data_expiracao_consentimento DESC, s.id DESC
    LIMIT 1
) v"
}

/// A row of [`FindValidMany`]: the pair's place (from 1) and its request.
#[derive(QueryableByName)]
struct FoundValid {
    #[diesel(sql_type = BigInt)]
    ordem: i64,
    #[diesel(embed)]
    row: SolicitacaoConsentimentoRow,
}

/// See [`FindValidMany`]: one statement, so one round trip and one `statement_timeout` (the
/// batch's overall time budget) for all the pairs.
pub(super) fn find_valid_many(
    pool: &PgPool,
    empresa: CompanyId,
    subjects: &[(Cpf, String)],
    now: DateTime<Utc>,
) -> Result<Vec<Option<ConsentRequest>>, RepoError> {
    const OPERATION: &str = "finding valid consent requests";
    let rows = with_conn(pool, OPERATION, |conn| {
        FindValidMany {
            empresa_id: empresa.0,
            cpfs: subjects.iter().map(|(cpf, _)| cpf.as_str()).collect(),
            templates: subjects.iter().map(|(_, t)| t.as_str()).collect(),
            now,
        }
        .load::<FoundValid>(conn)
    })?;
    let mut found: Vec<Option<ConsentRequest>> = vec![None; subjects.len()];
    for FoundValid { ordem, row } in rows {
        let slot = usize::try_from(ordem - 1)
            .ok()
            .and_then(|i| found.get_mut(i))
            .ok_or_else(|| RepoError::Unexpected(anyhow::anyhow!("{OPERATION}: bad ordinal")))?;
        *slot = Some(into_domain(row, OPERATION)?);
    }
    Ok(found)
}

/// One indexed read of the unique key (empresa_id, hash).
pub(super) fn find_by_hash(
    pool: &PgPool,
    empresa: CompanyId,
    hash: &str,
) -> Result<Option<ConsentRequest>, RepoError> {
    const OPERATION: &str = "finding a consent request by hash";
    let row = with_conn(pool, OPERATION, |conn| {
        sc::table::of(empresa)
            // a hash published before salts were added still names its consent
            .filter(sc::hash.eq(hash).or(sc::hash_anterior.eq(hash)))
            .filter(sc::criacao.eq(CRIACAO_CONFIRMADA))
            .select(SolicitacaoConsentimentoRow::as_select())
            .first(conn)
            .optional()
    })?;
    row.map(|row| into_domain(row, OPERATION)).transpose()
}

statement! {
    /// The company's confirmed requests created in `[from, until)`, counted by UTC day of
    /// creation, template and status: one range of `solicitacoes_consentimento_empresa_criado_em_idx`.
    struct CountsByDay {
        empresa_id: uuid::Uuid as diesel::sql_types::Uuid,
        from: DateTime<Utc> as Timestamptz,
        until: DateTime<Utc> as Timestamptz,
    }
    "SELECT (criado_em AT TIME ZONE 'UTC')::date AS dia, caso_de_uso_id_template AS template,
       status, count(*) AS n
FROM solicitacoes_consentimento
WHERE empresa_id = $empresa_id AND criado_em >= $from AND criado_em < $until
  AND criacao = 'confirmada'
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3"
}

#[derive(QueryableByName)]
struct DailyCountRow {
    #[diesel(sql_type = diesel::sql_types::Date)]
    dia: chrono::NaiveDate,
    #[diesel(sql_type = Text)]
    template: String,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

pub(super) fn counts_by_day(
    reads: &ReadPools,
    empresa: CompanyId,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Vec<ports::DailyCount>, RepoError> {
    const OPERATION: &str = "counting consent requests by day";
    let rows = reads.read(OPERATION, |conn| {
        CountsByDay {
            empresa_id: empresa.0,
            from,
            until,
        }
        .load::<DailyCountRow>(conn)
    })?;
    rows.into_iter()
        .map(|r| {
            let status = ConsentStatus::parse(&r.status).ok_or_else(|| {
                RepoError::Unexpected(anyhow::anyhow!(
                    "a stored consent request has an unknown status"
                ))
            })?;
            Ok(ports::DailyCount {
                day: r.dia,
                template_id: r.template,
                status,
                count: u64::try_from(r.n).unwrap_or(0),
            })
        })
        .collect()
}

statement! {
    /// The company's home counts (issue 38, part 6), each capped at `$cap` rows: the statuses and
    /// the expiring consents over ranges of `solicitacoes_consentimento_empresa_status_expiracao_idx`
    /// (index-only), the revocations over `solicitacoes_historico_empresa_revogacoes_idx`, the
    /// incidents over `solicitacoes_consentimento_empresa_incidentes_idx`. Statuses and states are
    /// literals, as in those indexes' predicates, so every plan (generic ones included) can use
    /// them; a `LIMIT` under each count stops the scan at the cap, and each range is read in its
    /// index's order (`ORDER BY` the index's next column): a bitmap scan, which reads every
    /// matching entry before any limit applies, would have to sort them all, so the planner
    /// takes the ordered index scan that stops at the cap. A status is the effective one at
    /// `$now`: a pending or active request whose expiry passed is expired (three capped ranges
    /// appended, capped again).
    struct Summary {
        empresa_id: uuid::Uuid as diesel::sql_types::Uuid,
        now: DateTime<Utc> as Timestamptz,
        in_30_days: DateTime<Utc> as Timestamptz,
        since_7_days: DateTime<Utc> as Timestamptz,
        cap: i64 as BigInt,
    }
    "SELECT
  (SELECT count(*) FROM (SELECT 1 FROM solicitacoes_consentimento
     WHERE empresa_id = $empresa_id AND criacao = 'confirmada' AND status = 'pendente'
       AND data_expiracao_consentimento >= $now
     ORDER BY data_expiracao_consentimento LIMIT $cap) c) AS pendente,
  (SELECT count(*) FROM (SELECT 1 FROM solicitacoes_consentimento
     WHERE empresa_id = $empresa_id AND criacao = 'confirmada' AND status = 'ativo'
       AND data_expiracao_consentimento >= $now
     ORDER BY data_expiracao_consentimento LIMIT $cap) c) AS ativo,
  (SELECT count(*) FROM (SELECT 1 FROM solicitacoes_consentimento
     WHERE empresa_id = $empresa_id AND criacao = 'confirmada' AND status = 'recusado'
     ORDER BY data_expiracao_consentimento LIMIT $cap) c) AS recusado,
  (SELECT count(*) FROM (
     (SELECT 1 FROM solicitacoes_consentimento
       WHERE empresa_id = $empresa_id AND criacao = 'confirmada' AND status = 'expirado'
       ORDER BY data_expiracao_consentimento LIMIT $cap)
     UNION ALL
     (SELECT 1 FROM solicitacoes_consentimento
       WHERE empresa_id = $empresa_id AND criacao = 'confirmada' AND status = 'pendente'
         AND data_expiracao_consentimento < $now
       ORDER BY data_expiracao_consentimento LIMIT $cap)
     UNION ALL
     (SELECT 1 FROM solicitacoes_consentimento
       WHERE empresa_id = $empresa_id AND criacao = 'confirmada' AND status = 'ativo'
         AND data_expiracao_consentimento < $now
       ORDER BY data_expiracao_consentimento LIMIT $cap)
     LIMIT $cap) c) AS expirado,
  (SELECT count(*) FROM (SELECT 1 FROM solicitacoes_consentimento
     WHERE empresa_id = $empresa_id AND criacao = 'confirmada' AND status = 'revogado'
     ORDER BY data_expiracao_consentimento LIMIT $cap) c) AS revogado,
  (SELECT count(*) FROM (SELECT 1 FROM solicitacoes_consentimento
     WHERE empresa_id = $empresa_id AND criacao = 'confirmada' AND status = 'ativo'
       AND data_expiracao_consentimento >= $now AND data_expiracao_consentimento < $in_30_days
     ORDER BY data_expiracao_consentimento LIMIT $cap) c) AS expirando,
  (SELECT count(*) FROM (SELECT 1 FROM solicitacoes_historico
     WHERE empresa_id = $empresa_id AND para = 'revogado' AND em >= $since_7_days
     ORDER BY em LIMIT $cap) c) AS revogacoes,
  (SELECT count(*) FROM (SELECT 1 FROM solicitacoes_consentimento
     WHERE empresa_id = $empresa_id AND incidente_integridade_em IS NOT NULL
     ORDER BY incidente_integridade_em LIMIT $cap) c) AS incidentes"
}

#[derive(QueryableByName)]
struct SummaryRow {
    #[diesel(sql_type = BigInt)]
    pendente: i64,
    #[diesel(sql_type = BigInt)]
    ativo: i64,
    #[diesel(sql_type = BigInt)]
    recusado: i64,
    #[diesel(sql_type = BigInt)]
    expirado: i64,
    #[diesel(sql_type = BigInt)]
    revogado: i64,
    #[diesel(sql_type = BigInt)]
    expirando: i64,
    #[diesel(sql_type = BigInt)]
    revogacoes: i64,
    #[diesel(sql_type = BigInt)]
    incidentes: i64,
}

pub(super) fn summary(
    reads: &ReadPools,
    empresa: CompanyId,
    now: DateTime<Utc>,
    cap: u32,
) -> Result<ports::RequestSummary, RepoError> {
    const OPERATION: &str = "counting a company's consent requests for the console's home";
    let row = reads.read(OPERATION, |conn| {
        Summary {
            empresa_id: empresa.0,
            now,
            in_30_days: now + chrono::Duration::days(30),
            since_7_days: now - chrono::Duration::days(7),
            // the cap and one more: a figure past the cap says "more than"
            cap: i64::from(cap) + 1,
        }
        .get_result::<SummaryRow>(conn)
    })?;
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    let by_status = vec![
        (ConsentStatus::Pending, n(row.pendente)),
        (ConsentStatus::Active, n(row.ativo)),
        (ConsentStatus::Refused, n(row.recusado)),
        (ConsentStatus::Expired, n(row.expirado)),
        (ConsentStatus::Revoked, n(row.revogado)),
    ];
    let expiring_in_30_days = n(row.expirando);
    let revoked_in_7_days = n(row.revogacoes);
    let integrity_incidents = n(row.incidentes);
    // the expired figure appends three ranges: up to three caps of entries read
    let rows_read = by_status.iter().map(|(_, c)| c).sum::<u64>()
        + expiring_in_30_days
        + revoked_in_7_days
        + integrity_incidents;
    Ok(ports::RequestSummary {
        by_status,
        expiring_in_30_days,
        revoked_in_7_days,
        integrity_incidents,
        rows_read,
    })
}
