//! `/api/hash-consulta` (tag HashConsulta): "may I use this subject's data for this use case right
//! now?", without a CPF in any URL; and the consent a hash names.

use actix_web::{web, HttpResponse};
use application::Services;
use domain::Envelope;

use crate::api_key::ApiKeyHeader;
use crate::blocking::as_company;
use crate::dto::consent_read::{ConsultarConsentimento, ResultadoConsulta};
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro};
use crate::error::ApiError;

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
    services: web::Data<Services>,
    key: ApiKeyHeader,
    body: web::Json<ConsultarConsentimento>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let result = as_company(&services, key, move |s, company| {
        Ok(s.check_consent.check(
            company,
            body.cpf_titular.as_deref(),
            body.caso_de_uso_id_template.as_deref(),
        )?)
    })
    .await?;
    let data = match result.request {
        Some(request) if result.valido => ResultadoConsulta::of(&request),
        _ => ResultadoConsulta::none(),
    };
    Ok(HttpResponse::Ok().json(Envelope::ok(data)))
}

/// The company's consent with this hash, and whether it is valid now.
#[utoipa::path(
    get,
    path = "/api/hash-consulta/{hash}",
    operation_id = "obterPorHash",
    tag = "HashConsulta",
    params(("hash" = String, Path, description = "The consent's hash (64 hex characters).")),
    responses(
        (status = 200, description = "The consent it names, with its effective status.", body = EnvelopeDoc<ResultadoConsulta>),
        (status = 404, description = "No consent of the company has this hash.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn by_hash(
    services: web::Data<Services>,
    key: ApiKeyHeader,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let hash = path.into_inner();
    let request = as_company(&services, key, move |s, company| {
        Ok(s.check_consent.by_hash(company, &hash)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(ResultadoConsulta::of(&request))))
}
