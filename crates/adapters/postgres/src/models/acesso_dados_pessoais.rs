use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::CompanyId;
use ports::AccessRecord;
use uuid::Uuid;

use crate::schema::acessos_dados_pessoais;

/// A row of `acessos_dados_pessoais`: who read which requests' personal data, when. Never a CPF.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = acessos_dados_pessoais, check_for_backend(diesel::pg::Pg))]
pub struct AcessoDadosPessoaisRow {
    pub empresa_id: Uuid,
    pub id: Uuid,
    pub api_key_id: Uuid,
    pub rota: String,
    pub solicitacao_ids: Vec<Uuid>,
    pub hashes: Vec<String>,
    pub em: DateTime<Utc>,
    /// The person who read through a console session opened at the company's IdP (issue 38).
    pub pessoa_sub: Option<String>,
    pub pessoa_email: Option<String>,
}

impl From<&AccessRecord> for AcessoDadosPessoaisRow {
    fn from(record: &AccessRecord) -> Self {
        AcessoDadosPessoaisRow {
            empresa_id: record.company_id.0,
            id: record.id,
            api_key_id: record.api_key_id,
            rota: record.route.clone(),
            solicitacao_ids: record.request_ids.clone(),
            hashes: record.hashes.clone(),
            em: record.at,
            pessoa_sub: record.person.as_ref().map(|p| p.sub.clone()),
            pessoa_email: record.person.as_ref().and_then(|p| p.email.clone()),
        }
    }
}

impl From<AcessoDadosPessoaisRow> for AccessRecord {
    fn from(row: AcessoDadosPessoaisRow) -> Self {
        AccessRecord {
            id: row.id,
            company_id: CompanyId(row.empresa_id),
            api_key_id: row.api_key_id,
            person: row.pessoa_sub.map(|sub| domain::Person {
                sub,
                email: row.pessoa_email,
            }),
            route: row.rota,
            request_ids: row.solicitacao_ids,
            hashes: row.hashes,
            at: row.em,
        }
    }
}
