//! The record of reads of personal data, as `GET /api/auditoria/acessos` answers it.

use chrono::{DateTime, Utc};
use ports::AccessRecord;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::text_rules::Cursor;

/// One read of personal data: which key read which requests' full CPF or proof, through which
/// route, when. Never a CPF.
#[derive(Debug, Serialize, ToSchema)]
pub struct Acesso {
    pub id: Uuid,
    /// The API key that read (its id, as `api-key list` shows it; never the key).
    #[serde(rename = "apiKeyId")]
    pub api_key_id: Uuid,
    /// The route's template, e.g. `/api/solicitacao-consentimento/{id}`.
    #[serde(rename = "rota")]
    pub route: String,
    /// The consent requests whose data the answer carried (empty for an audit route, or an
    /// export that found nothing).
    #[serde(rename = "solicitacaoIds")]
    pub request_ids: Vec<Uuid>,
    /// Their salted consent hashes (`hash`), in the same order.
    pub hashes: Vec<String>,
    /// When the read was answered.
    #[serde(rename = "em")]
    pub at: DateTime<Utc>,
    /// The person who read, through a console session opened at the company's identity provider
    /// (issue 38): the provider's `sub` (`apiKeyId` is then the session's id); `null` for an API
    /// key or a key's session.
    #[serde(rename = "pessoaSub")]
    #[schema(max_length = 255, example = "00u1a2b3c4d5e6f7g8h9")]
    pub person_sub: Option<String>,
    /// That person's e-mail, when the provider sent one; `null` otherwise.
    #[serde(rename = "pessoaEmail")]
    #[schema(max_length = 320, example = "dpo@empresa.example")]
    pub person_email: Option<String>,
}

impl From<AccessRecord> for Acesso {
    fn from(record: AccessRecord) -> Self {
        Acesso {
            id: record.id,
            api_key_id: record.api_key_id,
            route: record.route,
            request_ids: record.request_ids,
            hashes: record.hashes,
            at: record.at,
            person_sub: record.person.as_ref().map(|p| p.sub.clone()),
            person_email: record.person.and_then(|p| p.email),
        }
    }
}

/// A page of the record, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct PaginaAcessos {
    #[serde(rename = "itens")]
    pub items: Vec<Acesso>,
    /// Pass as `cursor` for the next page; `null` on the last page.
    #[serde(rename = "proximoCursor")]
    pub next_cursor: Option<String>,
}

/// Filters and paging of `GET /api/auditoria/acessos`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct FiltroAcessos {
    /// Only this key's reads (its id, from `api-key list`).
    #[param(value_type = Option<Uuid>)]
    #[serde(rename = "apiKeyId")]
    pub api_key_id: Option<String>,
    /// Recorded at or after (ISO 8601).
    #[serde(rename = "de")]
    pub from: Option<DateTime<Utc>>,
    /// Recorded before (ISO 8601).
    #[serde(rename = "ate")]
    pub until: Option<DateTime<Utc>>,
    /// `proximoCursor` of the previous page.
    #[param(value_type = Option<Cursor>, inline)]
    pub cursor: Option<String>,
    /// Page size, 1 to 500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    #[serde(rename = "limite")]
    pub limit: Option<u32>,
}
