//! A request's receipt in the console (`auditor` scope): the signed receipt to download, and what
//! the page's script (`/console/recibo.js`) needs to verify it in the browser from the public
//! keys alone: the receipt, the latest checkpoint and the request's entries with their inclusion
//! proofs (the answers of `GET /api/solicitacao-consentimento/{id}/recibo` and `.../provas`).
//! Both are audit reads, recorded in the access log as the API's are.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest, HttpResponse};
use domain::Scope;
use serde::Serialize;
use uuid::Uuid;

use super::html;
use super::signed_in;
use crate::access_log::record_read;
use crate::dto::audit::ProvasSolicitacao;
use crate::error::ApiError;
use crate::routes::audit::audit_log;
use crate::state::ApiState;

/// The verification's material, in one answer.
#[derive(Serialize)]
struct Verification {
    /// The compact JWS.
    recibo: String,
    #[serde(flatten)]
    provas: ProvasSolicitacao,
}

fn parse_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound("Solicitação"))
}

/// `GET /console/solicitacoes/{id}/recibo`: the receipt as a file (`recibo-<id>.jws`).
pub async fn download(
    state: web::Data<ApiState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> HttpResponse {
    let id = parse_id(&path);
    let outcome = signed_in(
        &state,
        &req,
        "/console/solicitacoes/{id}/recibo",
        &[Scope::Auditor],
        None,
        move |s, call| {
            let id = id?;
            let receipt = audit_log(s)?.receipt(call.company(), id)?;
            record_read(s, call, [(id, receipt.hash.as_str())])?;
            Ok((id, receipt.jws))
        },
    )
    .await;
    let (id, jws) = match outcome {
        Ok((_, done)) => done,
        Err(refusal) => return refusal.page(false),
    };
    let mut res = HttpResponse::Ok().body(jws);
    html::secure_headers(&mut res, "application/jose");
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"recibo-{id}.jws\"")) {
        res.headers_mut().insert(header::CONTENT_DISPOSITION, value);
    }
    res
}

/// `GET /console/solicitacoes/{id}/verificacao`: `{"recibo", "checkpoint", "entradas"}` as JSON,
/// for the page's script.
pub async fn material(
    state: web::Data<ApiState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> HttpResponse {
    let id = parse_id(&path);
    let outcome = signed_in(
        &state,
        &req,
        "/console/solicitacoes/{id}/verificacao",
        &[Scope::Auditor],
        None,
        move |s, call| {
            let id = id?;
            let log = audit_log(s)?;
            let receipt = log.receipt(call.company(), id)?;
            let proofs = log.proofs(call.company(), id)?;
            record_read(s, call, [(id, receipt.hash.as_str())])?;
            Ok(Verification {
                recibo: receipt.jws,
                provas: ProvasSolicitacao::from(proofs),
            })
        },
    )
    .await;
    let material = match outcome {
        Ok((_, material)) => material,
        Err(refusal) => return refusal.page(false),
    };
    let mut res = HttpResponse::Ok().json(material);
    html::secure_headers(&mut res, "application/json");
    res
}
