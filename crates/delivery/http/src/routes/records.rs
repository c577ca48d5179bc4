//! Records in the ISO/IEC TS 27560 form (issue 37, part 6; docs/records.md): the annotations
//! of a use case (`/api/casos-de-uso/{id}/anotacoes`), a request's consent record in DPV's
//! JSON-LD (`/api/solicitacao-consentimento/{id}/registro`) and the JSON-LD context it points
//! to, served here so that reading a record never needs another site. Registered in `mod.rs`.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use application::{ConsentRecordError, UseCaseAnnotationError};
use domain::Envelope;
use uuid::Uuid;

use crate::access_log::record_read;
use crate::api_key::ApiKeyHeader;
use crate::blocking::{as_caller, as_company};
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro};
use crate::dto::record::{
    consent_record, context_url, AnotacoesCasoDeUso, AnotacoesCasoDeUsoSalvas, CONTEXT_DOCUMENT,
};
use crate::error::{ApiError, Resource};
use crate::state::ApiState;

/// The media type of a record and of its context (JSON-LD, W3C JSON-LD 1.1 §C).
pub const JSON_LD: &str = "application/ld+json";

impl From<UseCaseAnnotationError> for ApiError {
    fn from(e: UseCaseAnnotationError) -> Self {
        match e {
            UseCaseAnnotationError::NotFound => ApiError::NotFound(Resource::UseCase),
            UseCaseAnnotationError::Invalid(errors) => ApiError::Validation(errors),
            UseCaseAnnotationError::Repo(e) => e.into(),
        }
    }
}

impl From<ConsentRecordError> for ApiError {
    fn from(e: ConsentRecordError) -> Self {
        match e {
            ConsentRecordError::NotFound => ApiError::NotFound(Resource::ConsentRequest),
            // 422 with every missing field in `data.erros` (docs/records.md, "Missing fields")
            ConsentRecordError::Missing(missing) => ApiError::Validation(missing),
            ConsentRecordError::Repo(e) => e.into(),
        }
    }
}

fn use_case_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound(Resource::UseCase))
}

/// Annotates one of the company's use cases for its consent records: its LGPD legal basis,
/// the personal-data categories it processes, its notice's URL and language. Replaces any
/// earlier annotation; invalid input changes nothing.
#[utoipa::path(
    put,
    path = "/api/casos-de-uso/{id}/anotacoes",
    operation_id = "anotarCasoDeUso",
    tag = "CasosDeUso",
    params(("id" = Uuid, Path, description = "Our id of the use case (`id` in `GET /api/casos-de-uso`).")),
    request_body = AnotacoesCasoDeUso,
    responses(
        (status = 200, description = "Stored; the annotations as the records will state them.", body = EnvelopeDoc<AnotacoesCasoDeUsoSalvas>),
        (status = 400, description = "The body is not JSON of this shape (an unknown field, a wrong type).", body = EnvelopeDoc<Erro>),
        (status = 404, description = "No such use case for the company.", body = EnvelopeDoc<Erro>),
        (status = 422, description = "A field breaks a rule (missing, unknown article or hypothesis, a hypothesis not in its article, an unsupported `pd:` category, not an http(s) URL, not a BCP 47 tag); every broken rule in `data.erros`. Nothing was stored.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn annotate(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
    body: web::Json<AnotacoesCasoDeUso>,
) -> Result<HttpResponse, ApiError> {
    let id = use_case_id(&path)?;
    let draft = body.into_inner().into();
    let annotation = as_company(&state, key, move |s, company| {
        Ok(s.use_case_annotations.set(company, id, draft)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(AnotacoesCasoDeUsoSalvas::new(id, annotation))))
}

/// The annotations of one of the company's use cases.
#[utoipa::path(
    get,
    path = "/api/casos-de-uso/{id}/anotacoes",
    operation_id = "obterAnotacoesCasoDeUso",
    tag = "CasosDeUso",
    params(("id" = Uuid, Path, description = "Our id of the use case.")),
    responses(
        (status = 200, description = "The use case's annotations.", body = EnvelopeDoc<AnotacoesCasoDeUsoSalvas>),
        (status = 404, description = "No such use case for the company, or it has no annotations yet.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn annotations(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = use_case_id(&path)?;
    let annotation = as_company(&state, key, move |s, company| {
        Ok(s.use_case_annotations.get(company, id)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(AnotacoesCasoDeUsoSalvas::new(id, annotation))))
}

/// The request as an ISO/IEC TS 27560 consent record in DPV's JSON-LD (`application/ld+json`,
/// not in the envelope: a JSON-LD document), every mandatory field filled. Recorded in the
/// access log like the receipt.
#[utoipa::path(
    get,
    path = "/api/solicitacao-consentimento/{id}/registro",
    operation_id = "obterRegistroSolicitacao",
    tag = "Auditoria",
    params(("id" = Uuid, Path, description = "Our id of the request.")),
    responses(
        (status = 200, description = "The consent record (DPV-27560 `record` profile; its `@context` is served at `/contexts/consent-record-v1.jsonld`). docs/records.md maps each field.", content_type = "application/ld+json", body = Object),
        (status = 404, description = "No such request for the company.", body = EnvelopeDoc<Erro>),
        (status = 422, description = "A mandatory field cannot be filled (the use case not annotated, the company's controller profile not set, the use case gone): each missing field named in `data.erros`.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn record(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let id = Uuid::parse_str(&path).map_err(|_| ApiError::NotFound(Resource::ConsentRequest))?;
    let source = as_caller(&state, key, move |s, call| {
        let source = s.consent_records.execute(call.company(), id)?;
        record_read(s, call, [(id, source.request.hash.as_str())])?;
        Ok(source)
    })
    .await?;
    let context = context_url(&req);
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, JSON_LD))
        .json(consent_record(&source, &context)))
}

/// The JSON-LD context of the records: no API key, no database (like the JWKS); outside `/api`
/// and outside the OpenAPI document.
pub async fn context() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, JSON_LD))
        .insert_header((header::CACHE_CONTROL, "public, max-age=86400"))
        .body(CONTEXT_DOCUMENT)
}
