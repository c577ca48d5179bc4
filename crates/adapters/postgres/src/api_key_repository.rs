use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::CompanyId;
use ports::{
    ApiKeyRecord, ApiKeyRepository, ApiKeySummary, RepoError, ResolvedApiKey, RevokeApiKeyOutcome,
};
use uuid::Uuid;

use crate::change_feed::announce_change;
use crate::conn::with_conn;
use crate::models::api_key::scopes_of;
use crate::models::{ApiKeyRow, EmpresaRow, NewApiKey};
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
            conn.transaction(|conn| {
                diesel::insert_into(api_keys::table)
                    .values(NewApiKey::from(key))
                    .execute(conn)?;
                // no process keeps refusing it from its memory of unknown keys
                announce_change(conn, key.company_id)
            })
        })?;
        Ok(())
    }

    /// One indexed read (`api_keys.hash` is unique); writes nothing.
    fn find_by_hash(&self, hash: &str) -> Result<Option<ResolvedApiKey>, RepoError> {
        const OPERATION: &str = "finding an API key by its hash";
        let row = with_conn(&self.pool, OPERATION, |conn| {
            api_keys::table
                .inner_join(empresas::table)
                .filter(api_keys::hash.eq(hash))
                .filter(api_keys::revogado_em.is_null())
                .select((
                    api_keys::id,
                    api_keys::ultimo_uso_em,
                    api_keys::escopos,
                    EmpresaRow::as_select(),
                    empresas::sandbox_de,
                ))
                .first::<(
                    Uuid,
                    Option<DateTime<Utc>>,
                    Vec<String>,
                    EmpresaRow,
                    Option<Uuid>,
                )>(conn)
                .optional()
        })?;
        let Some((id, ultimo_uso_em, escopos, empresa, sandbox_de)) = row else {
            return Ok(None);
        };
        let company = empresa
            .try_into_domain()
            .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))?;
        Ok(Some(ResolvedApiKey {
            id,
            last_used_at: ultimo_uso_em,
            scopes: scopes_of(&escopos),
            quota_of: CompanyId(sandbox_de.unwrap_or(company.id.0)),
            company,
        }))
    }

    /// One conditional UPDATE by primary key: a no-op when another request (of any instance)
    /// already recorded a use since `unless_since`.
    fn record_use(
        &self,
        id: Uuid,
        at: DateTime<Utc>,
        unless_since: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        let updated = with_conn(&self.pool, "recording the use of an API key", |conn| {
            diesel::update(
                api_keys::table.filter(api_keys::id.eq(id)).filter(
                    api_keys::ultimo_uso_em
                        .is_null()
                        .or(api_keys::ultimo_uso_em.lt(unless_since)),
                ),
            )
            .set(api_keys::ultimo_uso_em.eq(at))
            .execute(conn)
        })?;
        Ok(updated > 0)
    }

    fn list_by_company(&self, empresa: CompanyId) -> Result<Vec<ApiKeySummary>, RepoError> {
        let rows = with_conn(&self.pool, "listing a company's API keys", |conn| {
            api_keys::table
                .filter(api_keys::empresa_id.eq(empresa.0))
                .order((api_keys::criado_em.asc(), api_keys::id.asc()))
                .select(ApiKeyRow::as_select())
                .load(conn)
        })?;
        Ok(rows.into_iter().map(ApiKeySummary::from).collect())
    }

    /// One statement decides: an UPDATE of the non-revoked row; when it touches nothing, a read
    /// tells an already revoked key from an unknown id.
    fn revoke(&self, id: Uuid, at: DateTime<Utc>) -> Result<RevokeApiKeyOutcome, RepoError> {
        with_conn(&self.pool, "revoking an API key", |conn| {
            let revoked = conn.transaction(|conn| {
                let revoked = diesel::update(
                    api_keys::table
                        .filter(api_keys::id.eq(id))
                        .filter(api_keys::revogado_em.is_null()),
                )
                .set(api_keys::revogado_em.eq(Some(at)))
                .returning(ApiKeyRow::as_returning())
                .get_result(conn)
                .optional()?;
                if let Some(row) = &revoked {
                    // every process drops the key it cached
                    announce_change(conn, CompanyId(row.empresa_id))?;
                }
                diesel::QueryResult::Ok(revoked)
            })?;
            if let Some(row) = revoked {
                return Ok(RevokeApiKeyOutcome::Revoked(row.into()));
            }
            let existing = api_keys::table
                .find(id)
                .select(ApiKeyRow::as_select())
                .first(conn)
                .optional()?;
            Ok(match existing {
                Some(row) => RevokeApiKeyOutcome::AlreadyRevoked(row.into()),
                None => RevokeApiKeyOutcome::NotFound,
            })
        })
    }
}
