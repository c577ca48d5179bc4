//! `/api/hash-consulta` (tag HashConsulta): "may I use this subject's data for this use case right
//! now?", without a CPF in any URL; and the consent a hash names.

use actix_web::{web, HttpResponse};

use domain::Envelope;

use crate::api_key::ApiKeyHeader;
use crate::blocking::{as_company, as_company_weighing};
use crate::dto::consent_check::{
    ConsultarConsentimento, ConsultarLote, HashNoCaminho, ResultadoConsulta, ResultadoLote,
};
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro};
use crate::error::ApiError;
use crate::state::ApiState;

/// Whether a valid (active, unexpired) consent exists now for this subject and use case.
#[utoipa::path(
    post,
    path = "/api/hash-consulta",
    operation_id = "consultarHash",
    tag = "HashConsulta",
    request_body(content(
        (ConsultarConsentimento = "application/json"),
        (ConsultarConsentimento = "text/json"),
        (ConsultarConsentimento = "application/*+json"),
    )),
    responses(
        (status = 200, description = "`valido`, and when true the consent's id, status, expiry and hash.", body = EnvelopeDoc<ResultadoConsulta>),
        (status = 400, description = "Malformed JSON or unknown field.", body = EnvelopeDoc<Erro>),
        (status = 413, description = "Body over the configured limit.", body = EnvelopeDoc<Erro>),
        (status = 415, description = "Content-Type is not JSON.", body = EnvelopeDoc<Erro>),
        (status = 422, description = "Invalid CPF or missing template.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn check(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    body: web::Json<ConsultarConsentimento>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let result = as_company(&state, key, move |s, company| {
        Ok(s.check_consent.check(
            company,
            body.subject_cpf.as_deref(),
            body.template_id.as_deref(),
        )?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(ResultadoConsulta::of_check(&result))))
}

/// How many items of a batch count as one request against the company's rate limit: a batch
/// of 500 costs 50 requests, so a company at the default 50 requests per second checks 500
/// subjects a second (a million in about 35 minutes instead of five and a half hours), while
/// the limit still bounds the database work it may ask for.
pub const ITEMS_PER_REQUEST: usize = 10;

/// Up to 500 checks at once: one result per item, in the order sent.
#[utoipa::path(
    post,
    path = "/api/hash-consulta/lote",
    operation_id = "consultarHashEmLote",
    tag = "HashConsulta",
    request_body(content(
        (ConsultarLote = "application/json"),
        (ConsultarLote = "text/json"),
        (ConsultarLote = "application/*+json"),
    )),
    responses(
        (status = 200, description = "`data.itens`: one result per item, in the order sent, each as `POST /api/hash-consulta` answers it. Counts as one request per 10 items (rounded up) against the rate limit.", body = EnvelopeDoc<ResultadoLote>),
        (status = 400, description = "Malformed JSON or unknown field.", body = EnvelopeDoc<Erro>),
        (status = 413, description = "Body over the configured limit.", body = EnvelopeDoc<Erro>),
        (status = 415, description = "Content-Type is not JSON.", body = EnvelopeDoc<Erro>),
        (status = 422, description = "No item or more than 500 (`itens`), or a broken item, named by its index (`itens[3].cpfTitular`); nothing is checked.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn check_batch(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    body: web::Json<ConsultarLote>,
) -> Result<HttpResponse, ApiError> {
    let items = body.into_inner().items;
    let weight = u32::try_from(items.len().div_ceil(ITEMS_PER_REQUEST).max(1)).unwrap_or(u32::MAX);
    let results = as_company_weighing(&state, key, weight, move |s, company| {
        let items: Vec<_> = items
            .iter()
            .map(|i| (i.subject_cpf.as_deref(), i.template_id.as_deref()))
            .collect();
        Ok(s.check_consent.check_batch(company, &items)?)
    })
    .await?;
    let items = results.iter().map(ResultadoConsulta::of_check).collect();
    Ok(HttpResponse::Ok().json(Envelope::ok(ResultadoLote { items })))
}

/// The company's consent with this hash, and whether it is valid now.
#[utoipa::path(
    get,
    path = "/api/hash-consulta/{hash}",
    operation_id = "obterPorHash",
    tag = "HashConsulta",
    params(HashNoCaminho),
    responses(
        (status = 200, description = "The consent it names, with its effective status.", body = EnvelopeDoc<ResultadoConsulta>),
        (status = 404, description = "No consent of the company has this hash.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn by_hash(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<HashNoCaminho>,
) -> Result<HttpResponse, ApiError> {
    let hash = path.into_inner().hash;
    let found = as_company(&state, key, move |s, company| {
        Ok(s.check_consent.by_hash(company, &hash)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(ResultadoConsulta::of_found(&found))))
}
