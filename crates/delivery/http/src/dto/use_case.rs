use chrono::{DateTime, Utc};
use domain::{UseCase, UseCaseVersion};
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

/// One version of a use case: its purpose-stating fields from `inicio` until `fim`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersaoCasoDeUso {
    /// 1, 2, ...: the `versaoCasoDeUso` of the consent requests created under it.
    #[schema(format = Int64, minimum = 1, maximum = 9223372036854775807_i64)]
    pub versao: i64,
    /// The title in this version.
    pub titulo: String,
    /// The PGCC link (vínculo) in this version.
    pub vinculo_id: Option<Uuid>,
    /// Any other field of the PGCC's use case that states its purpose (none today: `{}`).
    #[schema(value_type = Object)]
    pub outros_campos: Box<serde_json::value::RawValue>,
    /// Lower-case hex SHA-256 of the version's purpose fields; `null` for a version 1 stored
    /// before versions were recorded and not synchronized since.
    pub impressao: Option<String>,
    /// When this version began (the synchronization that found it).
    pub inicio: DateTime<Utc>,
    /// When the next version began; `null` for the current one.
    pub fim: Option<DateTime<Utc>>,
}

impl From<UseCaseVersion> for VersaoCasoDeUso {
    fn from(v: UseCaseVersion) -> Self {
        // stored as canonical JSON by the synchronization; `{}` should it ever not parse
        let outros_campos = serde_json::value::RawValue::from_string(v.other_fields)
            .ok()
            .filter(|raw| raw.get().starts_with('{'))
            .unwrap_or_else(|| {
                serde_json::value::RawValue::from_string("{}".to_owned()).expect("valid JSON")
            });
        VersaoCasoDeUso {
            versao: v.version,
            titulo: v.title,
            vinculo_id: v.link_id,
            outros_campos,
            impressao: v.fingerprint,
            inicio: v.started_at,
            fim: v.ended_at,
        }
    }
}
