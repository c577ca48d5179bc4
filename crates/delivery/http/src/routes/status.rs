//! `GET /api/status` (tag SolicitacaoConsentimento: the spec names four tags, and the PGCC
//! operations it reports on are mostly those of consent requests): the PGCC's health as the
//! service sees it, from the outcomes of its PGCC calls of the last window (docs/api.md, "The
//! PGCC's health"), and whether the company's latest checkpoint was cosigned by a witness
//! (docs/auditoria.md, "Witnesses").

use actix_web::{web, HttpResponse};
use domain::Envelope;

use crate::api_key::ApiKeyHeader;
use crate::blocking::as_company;
use crate::dto::envelope::Envelope as EnvelopeDoc;
use crate::dto::pgcc_status::StatusPgcc;
use crate::error::ApiError;
use crate::state::ApiState;

/// The PGCC's health: `OK`, `PARTIAL_FAILURE` or `UNAVAILABLE`, per PGCC operation, from the
/// outcomes of every PGCC call the service made in the last window (every process together).
#[utoipa::path(
    get,
    path = "/api/status",
    operation_id = "obterStatusPgcc",
    tag = "SolicitacaoConsentimento",
    responses(
        (status = 200, description = "The status the service last computed (about every second).", body = EnvelopeDoc<StatusPgcc>),
    )
)]
pub async fn get(state: web::Data<ApiState>, key: ApiKeyHeader) -> Result<HttpResponse, ApiError> {
    let (health, cosigned) = as_company(&state, key, |s, company| {
        let cosigned = application::audit::witness::latest_cosigned(s.audit_log.as_ref(), company);
        Ok((s.pgcc_status.execute()?, cosigned))
    })
    .await?;
    let mut status = StatusPgcc::from(health);
    status.checkpoint_cosigned = cosigned;
    Ok(HttpResponse::Ok().json(Envelope::ok(status)))
}
