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
    #[serde(rename = "vinculoId")]
    pub link_id: Option<Uuid>,
    #[serde(rename = "titulo")]
    pub title: String,
    /// The use case template's id on the PGCC: the `casoDeUsoIdTemplate` of consent requests.
    pub pgcc_provider_template_id: Option<String>,
    #[serde(rename = "dataInclusao")]
    pub added_at: DateTime<Utc>,
    #[serde(rename = "dataUltimaSincronizacaoPgcc")]
    pub last_synced_at: Option<DateTime<Utc>>,
}

impl From<UseCase> for CasoDeUso {
    fn from(u: UseCase) -> Self {
        CasoDeUso {
            id: u.id,
            link_id: u.link_id,
            title: u.title,
            pgcc_provider_template_id: u.pgcc_provider_template_id,
            added_at: u.added_at,
            last_synced_at: u.last_synced_at,
        }
    }
}
