//! A request's receipt in the console (`auditor` scope): the signed receipt to download, and what
//! the page's script (`/console/recibo.js`) needs to verify it in the browser from the public
//! keys alone: the receipt, the latest checkpoint and the request's entries with their inclusion
//! proofs (the answers of `GET /api/solicitacao-consentimento/{id}/recibo` and `.../provas`).
//! Both are audit reads, recorded in the access log as the API's are.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpResponse};
use application::AuditLog;
use delivery_http::access_log::record_read;
use delivery_http::dto::audit::ProvasSolicitacao;
use delivery_http::error::Resource;
use delivery_http::routes::audit::audit_log;
use delivery_http::ApiError;
use domain::{Company, Scope};
use serde::Serialize;
use uuid::Uuid;

use crate::layout;
use crate::visit::Visit;

/// The verification's material, in one answer.
#[derive(Serialize)]
struct Verification {
    /// The compact JWS.
    recibo: String,
    #[serde(flatten)]
    provas: ProvasSolicitacao,
}

fn parse_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound(Resource::ConsentRequest))
}

/// The signed-in auditor's receipt of the request named by `path` (its compact JWS), with what
/// `more` reads of it beside, in one blocking hop: one audit read, recorded in the access log
/// under the receipt's hash. A refusal (no session, scope, unknown request) is its page.
async fn auditor_receipt<T, F>(
    visit: &Visit,
    route: &'static str,
    path: &str,
    more: F,
) -> Result<(String, T), HttpResponse>
where
    F: FnOnce(&AuditLog, &Company, Uuid) -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    let id = parse_id(path);
    visit
        .signed_in(route, &[Scope::Auditor], None, move |s, call| {
            let id = id?;
            let log = audit_log(s)?;
            let receipt = log.receipt(call.company(), id)?;
            let more = more(log, call.company(), id)?;
            record_read(s, call, [(id, receipt.hash.as_str())])?;
            Ok((receipt.jws, more))
        })
        .await
        .map(|(_, done)| done)
        .map_err(|refusal| refusal.page(false))
}

/// `GET /console/solicitacoes/{id}/recibo`: the receipt as a file (`recibo-<id>.jws`).
pub async fn download(visit: Visit, path: web::Path<String>) -> HttpResponse {
    let route = "/console/solicitacoes/{id}/recibo";
    let (jws, id) = match auditor_receipt(&visit, route, &path, |_, _, id| Ok(id)).await {
        Ok(done) => done,
        Err(page) => return page,
    };
    let mut res = HttpResponse::Ok().body(jws);
    layout::secure_headers(&mut res, "application/jose");
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"recibo-{id}.jws\"")) {
        res.headers_mut().insert(header::CONTENT_DISPOSITION, value);
    }
    res
}

/// `GET /console/solicitacoes/{id}/verificacao`: `{"recibo", "checkpoint", "entradas"}` as JSON,
/// for the page's script.
pub async fn material(visit: Visit, path: web::Path<String>) -> HttpResponse {
    let route = "/console/solicitacoes/{id}/verificacao";
    let (recibo, provas) = match auditor_receipt(&visit, route, &path, proofs_of).await {
        Ok(done) => done,
        Err(page) => return page,
    };
    let mut res = HttpResponse::Ok().json(Verification { recibo, provas });
    layout::secure_headers(&mut res, "application/json");
    res
}

/// The request's entries with their inclusion proofs against the latest checkpoint.
fn proofs_of(log: &AuditLog, company: &Company, id: Uuid) -> Result<ProvasSolicitacao, ApiError> {
    Ok(ProvasSolicitacao::from(log.proofs(company, id)?))
}
