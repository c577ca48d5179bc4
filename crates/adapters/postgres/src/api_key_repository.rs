use diesel::prelude::*;
use domain::Company;
use ports::{ApiKeyRecord, ApiKeyRepository, RepoError};

use crate::conn::with_conn;
use crate::models::{EmpresaRow, NewApiKey};
use crate::schema::{api_keys, empresas};
use crate::PgPool;

/// [`ApiKeyRepository`] on `api_keys` (joined to `empresas`).
#[derive(Clone)]
pub struct PgApiKeyRepository {
    pool: PgPool,
}

impl PgApiKeyRepository {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

impl ApiKeyRepository for PgApiKeyRepository {
    fn insert(&self, key: &ApiKeyRecord) -> Result<(), RepoError> {
        with_conn(&self.pool, "inserting an API key", |conn| {
            diesel::insert_into(api_keys::table)
                .values(NewApiKey::from(key))
                .execute(conn)
        })?;
        Ok(())
    }

    /// One indexed read (`api_keys.hash` is unique); writes nothing.
    fn find_company_by_hash(&self, hash: &str) -> Result<Option<Company>, RepoError> {
        const OPERATION: &str = "finding the company of an API key";
        let row = with_conn(&self.pool, OPERATION, |conn| {
            api_keys::table
                .inner_join(empresas::table)
                .filter(api_keys::hash.eq(hash))
                .filter(api_keys::revogado_em.is_null())
                .select(EmpresaRow::as_select())
                .first(conn)
                .optional()
        })?;
        row.map(EmpresaRow::try_into_domain)
            .transpose()
            .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))
    }
}
