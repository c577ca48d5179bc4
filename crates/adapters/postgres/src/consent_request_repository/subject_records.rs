//! `list_of_subject`: every request of one subject for one company, with their histories (the
//! subject export, `POST /api/titulares/consentimentos`).

use std::collections::HashMap;

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Timestamptz, Uuid as SqlUuid};
use domain::{CompanyId, Cpf, StatusChange};
use ports::{ConsentRequestRecord, ListCursor, RepoError};
use uuid::Uuid;

use super::reads::Confirmed;
use crate::conn::with_conn;
use crate::models::{SolicitacaoConsentimentoRow, SolicitacaoHistoricoRow};
use crate::schema::{solicitacoes_consentimento as sc, solicitacoes_historico as sh};
use crate::tenant::Tenant;
use crate::PgPool;

const OPERATION: &str = "listing a subject's consent requests";

/// Two statements in one read-only `REPEATABLE READ` transaction (one snapshot): the page of
/// requests along `solicitacoes_consentimento_titular_idx` (empresa_id, cpf_titular, criado_em,
/// id) WHERE criacao = 'confirmada', then the histories of exactly those requests.
pub(super) fn list_of_subject(
    pool: &PgPool,
    company: CompanyId,
    cpf: &Cpf,
    after: Option<ListCursor>,
    limit: u32,
) -> Result<Vec<ConsentRequestRecord>, RepoError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let (rows, history) = with_conn(pool, OPERATION, |conn| {
        conn.build_transaction()
            .repeatable_read()
            .read_only()
            .run(|conn| {
                let mut query = sc::table
                    .filter(sc::empresa_id.eq(company.0))
                    .filter(sc::cpf_titular.eq(cpf.as_str()))
                    .filter(Confirmed)
                    .select(SolicitacaoConsentimentoRow::as_select())
                    .into_boxed();
                if let Some(cursor) = after {
                    query = query.filter(
                        sql::<Bool>(
                            "(solicitacoes_consentimento.criado_em, solicitacoes_consentimento.id) > (",
                        )
                        .bind::<Timestamptz, _>(cursor.created_at)
                        .sql(", ")
                        .bind::<SqlUuid, _>(cursor.id)
                        .sql(")"),
                    );
                }
                let rows: Vec<SolicitacaoConsentimentoRow> = query
                    .order((sc::criado_em.asc(), sc::id.asc()))
                    .limit(i64::from(limit))
                    .load(conn)?;
                let ids: Vec<Uuid> = rows.iter().map(|row| row.id).collect();
                let history: Vec<SolicitacaoHistoricoRow> = sh::table::of(company)
                    .filter(sh::solicitacao_id.eq_any(&ids))
                    .order((sh::solicitacao_id.asc(), sh::em.asc(), sh::id.asc()))
                    .select(SolicitacaoHistoricoRow::as_select())
                    .load(conn)?;
                Ok((rows, history))
            })
    })?;
    let unexpected = |e: anyhow::Error| RepoError::Unexpected(e.context(OPERATION));
    let mut histories: HashMap<Uuid, Vec<StatusChange>> = HashMap::new();
    for entry in history {
        let request = entry.solicitacao_id;
        let change = entry.try_into_domain().map_err(unexpected)?;
        histories.entry(request).or_default().push(change);
    }
    rows.into_iter()
        .map(|row| {
            let historico = histories.remove(&row.id).unwrap_or_default();
            let request = row.try_into_domain().map_err(unexpected)?;
            Ok(ConsentRequestRecord {
                request,
                history: historico,
                provenance: None,
            })
        })
        .collect()
}
