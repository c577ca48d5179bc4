use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::Timestamptz;
use domain::{Company, CompanyId};
use ports::{CompanyRepository, CreateCompanyError, RepoError};

use crate::conn::{checkout, query_error, with_conn};
use crate::models::{EmpresaRow, NewEmpresa};
use crate::schema::empresas;
use crate::PgPool;

/// The unique constraint on `empresas.cnpj` (migration `create_empresas`).
const CNPJ_UNIQUE: &str = "empresas_cnpj_key";

/// [`CompanyRepository`] on the `empresas` table.
#[derive(Clone)]
pub struct PgCompanyRepository {
    pool: PgPool,
}

impl PgCompanyRepository {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

impl CompanyRepository for PgCompanyRepository {
    fn create(&self, company: &Company) -> Result<(), CreateCompanyError> {
        const OPERATION: &str = "inserting a company";
        let mut conn = checkout(&self.pool, OPERATION)?;
        match diesel::insert_into(empresas::table)
            .values(NewEmpresa::from(company))
            .execute(&mut conn)
        {
            Ok(_) => Ok(()),
            Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info))
                if info.constraint_name() == Some(CNPJ_UNIQUE) =>
            {
                Err(CreateCompanyError::DuplicateCnpj)
            }
            Err(e) => Err(query_error(e, OPERATION).into()),
        }
    }

    fn get(&self, id: CompanyId) -> Result<Option<Company>, RepoError> {
        const OPERATION: &str = "reading a company";
        let row = with_conn(&self.pool, OPERATION, |conn| {
            empresas::table
                .find(id.0)
                .select(EmpresaRow::as_select())
                .first(conn)
                .optional()
        })?;
        row.map(EmpresaRow::try_into_domain)
            .transpose()
            .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))
    }

    fn claim_due_sync(
        &self,
        now: DateTime<Utc>,
        next: DateTime<Utc>,
    ) -> Result<Option<Company>, RepoError> {
        const OPERATION: &str = "claiming a company's scheduled synchronization";
        let row = with_conn(&self.pool, OPERATION, |conn| {
            // The row lock of the inner SELECT (skipping rows another process holds) and the
            // re-check of `proxima_em` on the committed version make the claim exclusive.
            diesel::sql_query(
                "WITH reivindicada AS ( \
                     UPDATE agenda_sincronizacao SET proxima_em = $2 \
                     WHERE empresa_id = ( \
                         SELECT empresa_id FROM agenda_sincronizacao \
                         WHERE proxima_em <= $1 \
                         ORDER BY proxima_em, empresa_id \
                         LIMIT 1 FOR UPDATE SKIP LOCKED) \
                       AND proxima_em <= $1 \
                     RETURNING empresa_id) \
                 SELECT e.id, e.nome, e.cnpj, e.criado_em \
                 FROM empresas e JOIN reivindicada r ON r.empresa_id = e.id",
            )
            .bind::<Timestamptz, _>(now)
            .bind::<Timestamptz, _>(next)
            .get_result::<EmpresaRow>(conn)
            .optional()
        })?;
        row.map(EmpresaRow::try_into_domain)
            .transpose()
            .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))
    }

    fn list(&self) -> Result<Vec<Company>, RepoError> {
        const OPERATION: &str = "listing companies";
        let rows = with_conn(&self.pool, OPERATION, |conn| {
            empresas::table
                .select(EmpresaRow::as_select())
                .order((empresas::criado_em.asc(), empresas::id.asc()))
                .load(conn)
        })?;
        rows.into_iter()
            .map(EmpresaRow::try_into_domain)
            .collect::<anyhow::Result<_>>()
            .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))
    }
}
