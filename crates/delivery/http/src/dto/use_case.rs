use chrono::{DateTime, Utc};
use domain::UseCase;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// A use case of the calling company (spec 2.1): exactly these six fields.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CasoDeUso {
    pub id: Uuid,
    /// The PGCC link (vínculo) the use case belongs to.
    pub vinculo_id: Option<Uuid>,
    pub titulo: String,
    /// The use case template's id on the PGCC: the `casoDeUsoIdTemplate` of consent requests.
    pub pgcc_provider_template_id: Option<String>,
    pub data_inclusao: DateTime<Utc>,
    pub data_ultima_sincronizacao_pgcc: Option<DateTime<Utc>>,
}

impl From<UseCase> for CasoDeUso {
    fn from(u: UseCase) -> Self {
        CasoDeUso {
            id: u.id,
            vinculo_id: u.link_id,
            titulo: u.title,
            pgcc_provider_template_id: u.pgcc_provider_template_id,
            data_inclusao: u.added_at,
            data_ultima_sincronizacao_pgcc: u.last_synced_at,
        }
    }
}
