use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::CompanyId;
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
}

impl From<ApiKeyRow> for ApiKeyRecord {
    fn from(row: ApiKeyRow) -> Self {
        ApiKeyRecord {
            id: row.id,
            company_id: CompanyId(row.empresa_id),
            hash: row.hash,
            prefixo: row.prefixo,
            created_at: row.criado_em,
        }
    }
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
}

impl<'a> From<&'a ApiKeyRecord> for NewApiKey<'a> {
    fn from(key: &'a ApiKeyRecord) -> Self {
        NewApiKey {
            id: key.id,
            empresa_id: key.company_id.0,
            hash: &key.hash,
            prefixo: &key.prefixo,
            criado_em: key.created_at,
        }
    }
}
