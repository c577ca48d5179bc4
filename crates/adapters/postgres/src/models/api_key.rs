use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::{CompanyId, Scopes};
use ports::{ApiKeyRecord, ApiKeySummary};
use uuid::Uuid;

use crate::schema::api_keys;

/// A row of `api_keys`: the SHA-256 of a key, never the key.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = api_keys, check_for_backend(diesel::pg::Pg))]
pub struct ApiKeyRow {
    pub id: Uuid,
    pub empresa_id: Uuid,
    pub hash: String,
    pub prefixo: String,
    pub criado_em: DateTime<Utc>,
    pub revogado_em: Option<DateTime<Utc>>,
    pub ultimo_uso_em: Option<DateTime<Utc>>,
    pub escopos: Vec<String>,
}

impl From<ApiKeyRow> for ApiKeyRecord {
    fn from(row: ApiKeyRow) -> Self {
        ApiKeyRecord {
            id: row.id,
            company_id: CompanyId(row.empresa_id),
            hash: row.hash,
            prefixo: row.prefixo,
            created_at: row.criado_em,
            scopes: scopes_of(&row.escopos),
        }
    }
}

/// The scopes of a stored row. The column's check (`api_keys_escopos_check`) admits only known
/// names; a name this build does not know (a newer version's scope) grants nothing here.
pub(crate) fn scopes_of(escopos: &[String]) -> Scopes {
    let known: Vec<domain::Scope> = escopos
        .iter()
        .filter_map(|n| domain::Scope::parse(n))
        .collect();
    Scopes::of(&known)
}

/// The stored form of `scopes`, in the order the CLI writes them.
pub(crate) fn escopos_of(scopes: Scopes) -> Vec<String> {
    scopes.names().into_iter().map(str::to_owned).collect()
}

impl From<ApiKeyRow> for ApiKeySummary {
    /// Everything but the hash.
    fn from(row: ApiKeyRow) -> Self {
        ApiKeySummary {
            id: row.id,
            company_id: CompanyId(row.empresa_id),
            prefixo: row.prefixo,
            created_at: row.criado_em,
            last_used_at: row.ultimo_uso_em,
            revoked_at: row.revogado_em,
            scopes: scopes_of(&row.escopos),
        }
    }
}

/// A new row of `api_keys` (not revoked, never used).
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = api_keys, check_for_backend(diesel::pg::Pg))]
pub struct NewApiKey<'a> {
    pub id: Uuid,
    pub empresa_id: Uuid,
    pub hash: &'a str,
    pub prefixo: &'a str,
    pub criado_em: DateTime<Utc>,
    pub escopos: Vec<String>,
}

impl<'a> From<&'a ApiKeyRecord> for NewApiKey<'a> {
    fn from(key: &'a ApiKeyRecord) -> Self {
        NewApiKey {
            id: key.id,
            empresa_id: key.company_id.0,
            hash: &key.hash,
            prefixo: &key.prefixo,
            criado_em: key.created_at,
            escopos: escopos_of(key.scopes),
        }
    }
}
