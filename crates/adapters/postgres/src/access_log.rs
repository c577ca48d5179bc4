//! [`AccessLog`] on `acessos_dados_pessoais`: the record of who read personal data.

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Timestamptz};
use domain::CompanyId;
use ports::{AccessFilter, AccessLog, AccessRecord, ListCursor, RepoError};

use crate::conn::with_conn;
use crate::models::AcessoDadosPessoaisRow;
use crate::schema::acessos_dados_pessoais as ac;
use crate::PgPool;

/// Written and read on the primary: a record must be there before the answer it records goes
/// out, and an auditor reading it must see the reads that were just answered.
#[derive(Clone)]
pub struct PgAccessLog {
    pool: PgPool,
}

impl PgAccessLog {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

impl AccessLog for PgAccessLog {
    /// One INSERT, in the request's connection (the request's scope).
    fn record(&self, record: &AccessRecord) -> Result<(), RepoError> {
        with_conn(&self.pool, "recording a read of personal data", |conn| {
            diesel::insert_into(ac::table)
                .values(AcessoDadosPessoaisRow::from(record))
                .execute(conn)
        })?;
        Ok(())
    }

    /// Read along `acessos_dados_pessoais_empresa_em_idx` (empresa_id, em, id): the cursor is
    /// the row comparison `(em, id) > (...)`, an index bound, as in the consent list; the key
    /// filter is evaluated on the rows read.
    fn list(
        &self,
        empresa: CompanyId,
        filter: &AccessFilter,
        after: Option<ListCursor>,
        limit: u32,
    ) -> Result<Vec<AccessRecord>, RepoError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows = with_conn(&self.pool, "listing reads of personal data", |conn| {
            let mut query = ac::table
                .filter(ac::empresa_id.eq(empresa.0))
                .select(AcessoDadosPessoaisRow::as_select())
                .into_boxed();
            if let Some(key) = filter.api_key_id {
                query = query.filter(ac::api_key_id.eq(key));
            }
            if let Some(from) = filter.from {
                query = query.filter(ac::em.ge(from));
            }
            if let Some(until) = filter.until {
                query = query.filter(ac::em.lt(until));
            }
            if let Some(cursor) = after {
                query = query.filter(
                    sql::<Bool>("(acessos_dados_pessoais.em, acessos_dados_pessoais.id) > (")
                        .bind::<Timestamptz, _>(cursor.created_at)
                        .sql(", ")
                        .bind::<diesel::sql_types::Uuid, _>(cursor.id)
                        .sql(")"),
                );
            }
            query
                .order((ac::em.asc(), ac::id.asc()))
                .limit(i64::from(limit))
                .load(conn)
        })?;
        Ok(rows.into_iter().map(AccessRecord::from).collect())
    }

    /// Read along `acessos_dados_pessoais_solicitacoes_idx` (GIN on `solicitacao_ids`, migration
    /// 2026-12-07-004160): `solicitacao_ids && $ids` finds the records naming the subject's
    /// requests, whatever the company's other reads; the company and the cursor are checked on
    /// the rows found, newest first.
    fn of_requests(
        &self,
        empresa: CompanyId,
        request_ids: &[uuid::Uuid],
        before: Option<ListCursor>,
        limit: u32,
    ) -> Result<Vec<AccessRecord>, RepoError> {
        if limit == 0 || request_ids.is_empty() {
            return Ok(Vec::new());
        }
        let ids = request_ids.to_vec();
        let rows = with_conn(&self.pool, "listing reads of a subject's data", |conn| {
            let mut query = ac::table
                .filter(ac::empresa_id.eq(empresa.0))
                .filter(ac::solicitacao_ids.overlaps_with(ids))
                .select(AcessoDadosPessoaisRow::as_select())
                .into_boxed();
            if let Some(cursor) = before {
                query = query.filter(
                    sql::<Bool>("(acessos_dados_pessoais.em, acessos_dados_pessoais.id) < (")
                        .bind::<Timestamptz, _>(cursor.created_at)
                        .sql(", ")
                        .bind::<diesel::sql_types::Uuid, _>(cursor.id)
                        .sql(")"),
                );
            }
            query
                .order((ac::em.desc(), ac::id.desc()))
                .limit(i64::from(limit))
                .load(conn)
        })?;
        Ok(rows.into_iter().map(AccessRecord::from).collect())
    }
}
