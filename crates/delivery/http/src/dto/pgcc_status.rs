//! `GET /api/status` (the `data` of `pgcc.indisponivel` / `pgcc.restabelecido` is
//! `domain::PgccHealthChange`, documented as `MudancaStatusPgcc`).

use chrono::{DateTime, Utc};
use domain::PgccHealth;
use serde::Serialize;
use utoipa::ToSchema;

use super::enumerations::{CodigoStatusPgcc, OperacaoPgcc};

/// The PGCC's health as the service sees it, in Open Finance Brasil's status fields.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusPgcc {
    /// `OK`: the PGCC answers; `PARTIAL_FAILURE`: some operations found it unavailable for the
    /// whole window and another was answered; `UNAVAILABLE`: every call of the window found it
    /// unavailable.
    #[schema(example = "OK")]
    #[schema(value_type = CodigoStatusPgcc)]
    pub code: String,
    /// A sentence for people (Portuguese); never parse it.
    pub explanation: String,
    /// When the current code began.
    pub detection_time: DateTime<Utc>,
    /// When the status was last computed (about every second while the service runs).
    pub update_time: DateTime<Utc>,
    /// The PGCC operations unavailable: `criacao`, `status`, `revogacao`, `casos-de-uso`.
    #[schema(value_type = Vec<OperacaoPgcc>)]
    pub unavailable_endpoints: Vec<String>,
    /// Whether the calling company's latest checkpoint of its verifiable log carries a witness's
    /// cosignature (docs/auditoria.md, "Witnesses"): `false` when the checkpoint job signed it
    /// without any witness answering; `null` before the company's first checkpoint.
    #[serde(rename = "checkpointCossinado")]
    pub checkpoint_cosigned: Option<bool>,
}

impl From<PgccHealth> for StatusPgcc {
    fn from(h: PgccHealth) -> Self {
        StatusPgcc {
            code: h.code.as_str().to_owned(),
            explanation: h.explanation,
            detection_time: h.detection_time,
            update_time: h.update_time,
            unavailable_endpoints: h
                .unavailable_endpoints
                .into_iter()
                .map(str::to_owned)
                .collect(),
            checkpoint_cosigned: None,
        }
    }
}
