//! `GET /api/casos-de-uso` and `POST /api/casos-de-uso/sincronizar` (tag CasosDeUso).

use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{mime, web, HttpRequest, HttpResponse};
use domain::{Envelope, UseCase};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use crate::api_key::ApiKeyHeader;
use crate::blocking::{as_company, as_company_or_cached};
use crate::conditional::if_none_match;
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro};
use crate::dto::sync::Sincronizacao;
use crate::dto::use_case::{CasoDeUso, VersaoCasoDeUso};
use crate::error::ApiError;
use crate::state::ApiState;
use crate::use_case_lists::RenderedUseCases;

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct FiltroCasosDeUso {
    /// Only the use cases of this PGCC link (vínculo).
    #[serde(rename = "empresaVinculoPgccId")]
    pub link_id: Option<Uuid>,
}

/// Lists the calling company's use cases, from the stored copy (never calls the PGCC).
#[utoipa::path(
    get,
    path = "/api/casos-de-uso",
    operation_id = "listarCasosDeUso",
    tag = "CasosDeUso",
    params(
        FiltroCasosDeUso,
        ("If-None-Match" = Option<String>, Header, description = "An `ETag` this list answered before (or several, comma-separated, or `*`): unchanged, the answer is 304 without a body."),
    ),
    responses(
        (status = 200, description = "The company's use cases, ordered by title.", content(
            (EnvelopeDoc<Vec<CasoDeUso>> = "application/json"),
            (EnvelopeDoc<Vec<CasoDeUso>> = "text/json"),
            (EnvelopeDoc<Vec<CasoDeUso>> = "text/plain"),
        ), headers(
            ("ETag" = String, description = "Tag of this list's bytes (the same on every instance); send it back in `If-None-Match`."),
        )),
        (status = 304, description = "Unchanged since the `If-None-Match` tag: no body.", headers(
            ("ETag" = String, description = "The list's current tag."),
        )),
        (status = 400, description = "`empresaVinculoPgccId` is not a UUID.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn list(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    filter: crate::query::Query<FiltroCasosDeUso>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let link = filter.into_inner().link_id;
    let lists = state.use_case_lists.clone();
    let rendered = as_company_or_cached(
        &state,
        key,
        |_, company| state.use_case_lists.cached(company.id, link),
        move |s, company| {
            lists.rendered(company.id, link, || {
                render(s.list_use_cases.execute(company, link)?)
            })
        },
    )
    .await?;
    Ok(conditional_response(&req, rendered))
}

/// The envelope's bytes, rendered once per change of the list (then cached).
fn render(use_cases: Vec<UseCase>) -> Result<Vec<u8>, ApiError> {
    let data: Vec<CasoDeUso> = use_cases.into_iter().map(CasoDeUso::from).collect();
    serde_json::to_vec(&Envelope::ok(data))
        .map_err(|e| ApiError::Internal(anyhow::Error::new(e).context("rendering use cases")))
}

/// 304 without a body when `If-None-Match` names the list's current tag, else 200 with it;
/// both carry the `ETag`.
fn conditional_response(req: &HttpRequest, rendered: RenderedUseCases) -> HttpResponse {
    let etag = (header::ETAG, &*rendered.etag);
    if if_none_match(req.headers().get(header::IF_NONE_MATCH), &rendered.etag) {
        return HttpResponse::NotModified().insert_header(etag).finish();
    }
    HttpResponse::Ok()
        .content_type(mime::APPLICATION_JSON)
        .insert_header(etag)
        .body(Bytes::from_owner(rendered.body))
}

/// Synchronizes the calling company's use cases with the PGCC now, and answers what changed.
#[utoipa::path(
    post,
    path = "/api/casos-de-uso/sincronizar",
    operation_id = "sincronizarCasosDeUso",
    tag = "CasosDeUso",
    responses(
        (status = 200, description = "Synchronized; counts of what changed.", body = EnvelopeDoc<Sincronizacao>),
        (status = 422, description = "The PGCC refused the synchronization (`isPgccErro: true`).", body = EnvelopeDoc<Erro>),
        (status = 502, description = "The PGCC failed (its 5xx, 401, 403) or is unreachable (`isPgccErro: true`); nothing changed.", body = EnvelopeDoc<Erro>),
        (status = 504, description = "The PGCC timed out (`isPgccErro: true`); nothing changed.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn sync(state: web::Data<ApiState>, key: ApiKeyHeader) -> Result<HttpResponse, ApiError> {
    let counts = as_company(&state, key, |s, company| {
        Ok(s.sync_use_cases.execute(company)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(Sincronizacao::from(counts))))
}

/// The versions of one of the calling company's use cases, oldest first: what its title, link
/// and other purpose fields were, and when. A consent request's `versaoCasoDeUso` names one.
#[utoipa::path(
    get,
    path = "/api/casos-de-uso/{id}/versoes",
    operation_id = "listarVersoesCasoDeUso",
    tag = "CasosDeUso",
    params(("id" = Uuid, Path, description = "Our id of the use case (`id` in `GET /api/casos-de-uso`).")),
    responses(
        (status = 200, description = "Every version of the use case, oldest first (a removed use case keeps its versions).", body = EnvelopeDoc<Vec<VersaoCasoDeUso>>),
        (status = 404, description = "No such use case for the company.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn versions(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id =
        Uuid::parse_str(&path).map_err(|_| ApiError::NotFound(crate::error::Resource::UseCase))?;
    let versions = as_company(&state, key, move |s, company| {
        Ok(s.list_use_case_versions.execute(company, id)?)
    })
    .await?;
    let data: Vec<VersaoCasoDeUso> = versions.into_iter().map(VersaoCasoDeUso::from).collect();
    Ok(HttpResponse::Ok().json(Envelope::ok(data)))
}
