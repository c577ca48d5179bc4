//! The audit routes (issue 24; docs/auditoria.md and docs/security.md): the latest checkpoint and
//! consistency proofs of the company's log, a request's inclusion proofs and signed receipt, the
//! public keys, and the record of who read personal data. Their scopes are in `grants.rs`; every
//! one of them but the public keys records its own read in the access log
//! ([`crate::access_log::record_read`]).

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use application::{AccessListQuery, AuditError, AuditLog, Services};
use domain::Envelope;
use uuid::Uuid;

use super::not_allowed;
use crate::access_log::record_read;
use crate::api_key::ApiKeyHeader;
use crate::blocking::as_caller;
use crate::dto::access_log::{Acesso, FiltroAcessos, PaginaAcessos};
use crate::dto::audit::{
    hashes, IntervaloConsistencia, Jwk, Jwks, ProvaConsistencia, ProvasSolicitacao, Recibo,
};
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro};
use crate::error::ApiError;
use crate::state::ApiState;

/// The audit routes.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/api/auditoria/checkpoint")
            .route(web::get().to(checkpoint))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/api/auditoria/consistencia")
            .route(web::get().to(consistency))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/api/solicitacao-consentimento/{id}/provas")
            .route(web::get().to(proofs))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/api/solicitacao-consentimento/{id}/recibo")
            .route(web::get().to(receipt))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/.well-known/jwks.json")
            .route(web::get().to(jwks))
            .default_service(not_allowed("GET")),
    );
}

pub fn audit_log(services: &Services) -> Result<&AuditLog, ApiError> {
    services
        .audit_log
        .as_ref()
        .ok_or(ApiError::NotFound(crate::error::Resource::Route))
}

impl From<AuditError> for ApiError {
    fn from(e: AuditError) -> Self {
        match e {
            AuditError::NotFound => ApiError::NotFound(crate::error::Resource::ConsentRequest),
            AuditError::NoCheckpoint => ApiError::NotFound(crate::error::Resource::Checkpoint),
            AuditError::UnknownSize(which) => ApiError::BadRequest(format!(
                "o parâmetro {which} não é o tamanho de um checkpoint do log da empresa"
            )),
            AuditError::Unlogged => ApiError::Conflict(
                "A solicitação não tem registro no log de auditoria: nenhum recibo é emitido."
                    .to_owned(),
            ),
            AuditError::RowDiffers => ApiError::Conflict(
                "A solicitação não corresponde ao seu último registro no log de auditoria (alterada fora do log): nenhum recibo é emitido."
                    .to_owned(),
            ),
            AuditError::Reversed => {
                ApiError::BadRequest("o parâmetro de não pode ser maior que para".to_owned())
            }
            AuditError::Repo(e) => e.into(),
        }
    }
}

fn parse_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound(crate::error::Resource::ConsentRequest))
}

/// The company's latest checkpoint: a C2SP signed note (`text/plain`).
#[utoipa::path(
    get,
    path = "/api/auditoria/checkpoint",
    operation_id = "obterCheckpoint",
    tag = "Auditoria",
    responses(
        (status = 200, description = "The latest signed checkpoint of the company's log (C2SP tlog-checkpoint, a signed note).", content_type = "text/plain", body = String),
        (status = 404, description = "No checkpoint signed yet.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn checkpoint(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
) -> Result<HttpResponse, ApiError> {
    let note = as_caller(&state, key, |s, call| {
        let note = audit_log(s)?.checkpoint(call.company())?;
        record_read(s, call, [])?;
        Ok(note)
    })
    .await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/plain; charset=utf-8"))
        .body(note))
}

/// The RFC 9162 consistency proof between two checkpoints of the company's log.
#[utoipa::path(
    get,
    path = "/api/auditoria/consistencia",
    operation_id = "obterProvaConsistencia",
    tag = "Auditoria",
    params(IntervaloConsistencia),
    responses(
        (status = 200, description = "The proof that the tree of size `para` extends the tree of size `de`.", body = EnvelopeDoc<ProvaConsistencia>),
        (status = 400, description = "`de` or `para` missing, not a number, not a checkpoint's size, or `de` > `para`.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn consistency(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    query: crate::query::Query<IntervaloConsistencia>,
) -> Result<HttpResponse, ApiError> {
    let q = query.into_inner();
    let size = |value: Option<String>, name: &str| -> Result<u64, ApiError> {
        let value = value.ok_or_else(|| {
            ApiError::BadRequest(format!(
                "informe o parâmetro {name} (tamanho de um checkpoint)"
            ))
        })?;
        value.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
            ApiError::BadRequest(format!(
                "o parâmetro {name} deve ser um número inteiro positivo"
            ))
        })
    };
    let from = size(q.from, "de")?;
    let to = size(q.to, "para")?;
    let proof = as_caller(&state, key, move |s, call| {
        let proof = audit_log(s)?.consistency(call.company(), from, to)?;
        record_read(s, call, [])?;
        Ok(proof)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(ProvaConsistencia {
        from,
        to,
        proof: hashes(&proof),
    })))
}

/// The request's log entries, each with its inclusion proof against the latest checkpoint.
#[utoipa::path(
    get,
    path = "/api/solicitacao-consentimento/{id}/provas",
    operation_id = "obterProvasSolicitacao",
    tag = "Auditoria",
    params(("id" = Uuid, Path, description = "Our id of the request.")),
    responses(
        (status = 200, description = "The latest checkpoint and the request's entries it covers, with their RFC 9162 inclusion proofs.", body = EnvelopeDoc<ProvasSolicitacao>),
        (status = 404, description = "No such request for the company.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn proofs(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = parse_id(&path)?;
    let proofs = as_caller(&state, key, move |s, call| {
        let proofs = audit_log(s)?.proofs(call.company(), id)?;
        record_read(s, call, [(id, proofs.hash.as_str())])?;
        Ok(proofs)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(ProvasSolicitacao::from(proofs))))
}

/// The request's signed receipt (compact JWS, EdDSA), verifiable offline with the JWKS.
#[utoipa::path(
    get,
    path = "/api/solicitacao-consentimento/{id}/recibo",
    operation_id = "obterReciboSolicitacao",
    tag = "Auditoria",
    params(("id" = Uuid, Path, description = "Our id of the request.")),
    responses(
        (status = 200, description = "The receipt: a compact JWS whose payload states the request (never the CPF).", body = EnvelopeDoc<Recibo>),
        (status = 404, description = "No such request for the company.", body = EnvelopeDoc<Erro>),
        (status = 409, description = "The request has no entry in the audit log, or its row does not match its last entry (changed outside the log): no receipt.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn receipt(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = parse_id(&path)?;
    let receipt = as_caller(&state, key, move |s, call| {
        let receipt = audit_log(s)?.receipt(call.company(), id)?;
        record_read(s, call, [(id, receipt.hash.as_str())])?;
        Ok(receipt)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(Recibo {
        receipt: receipt.jws,
    })))
}

/// The public keys that sign (and signed) checkpoints and receipts; no API key, no database.
/// Outside `/api` and outside the OpenAPI document, like `/health` (a standard JWKS, RFC 7517;
/// docs/auditoria.md, "Keys").
pub async fn jwks(state: web::Data<ApiState>) -> Result<HttpResponse, ApiError> {
    let keys = audit_log(&state.services)?.published_keys();
    Ok(HttpResponse::Ok().json(Jwks {
        keys: keys.iter().cloned().map(Jwk::from).collect(),
    }))
}

/// The record of who read the company's personal data (a full CPF or a proof of collection),
/// oldest first, a page at a time: which key, which route, which requests (ids and salted
/// hashes, never a CPF), when. Kept `retention.access_log_days` (365 by default). Reading it is
/// recorded too.
#[utoipa::path(
    get,
    path = "/api/auditoria/acessos",
    operation_id = "listarAcessos",
    tag = "Auditoria",
    params(FiltroAcessos),
    responses(
        (status = 200, description = "A page, oldest first; follow `proximoCursor` until it is null.", body = EnvelopeDoc<PaginaAcessos>),
        (status = 422, description = "A filter breaks a rule (`apiKeyId` not a UUID, `ate` before `de`, limit outside 1..500, bad cursor).", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn accesses(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    query: crate::query::Query<FiltroAcessos>,
) -> Result<HttpResponse, ApiError> {
    let q = query.into_inner();
    let list_query = AccessListQuery {
        api_key_id: q.api_key_id,
        from: q.from,
        until: q.until,
        cursor: q.cursor,
        limit: q.limit,
    };
    let page = as_caller(&state, key, move |s, call| {
        let page = s.personal_data_accesses.list(call.company(), list_query)?;
        // an audit route: its own read is recorded (after the page was read, so a page never
        // shows the read that fetched it)
        record_read(s, call, [])?;
        Ok(page)
    })
    .await?;
    let data = PaginaAcessos {
        items: page.items.into_iter().map(Acesso::from).collect(),
        next_cursor: page.next_cursor,
    };
    Ok(HttpResponse::Ok().json(Envelope::ok(data)))
}
