//! `GET /api/casos-de-uso` and `POST /api/casos-de-uso/sincronizar` (tag CasosDeUso).

use actix_web::{web, HttpResponse};
use application::Services;
use domain::Envelope;
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use crate::api_key::ApiKeyHeader;
use crate::blocking::as_company;
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro};
use crate::dto::sync::Sincronizacao;
use crate::dto::use_case::CasoDeUso;
use crate::error::ApiError;

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct FiltroCasosDeUso {
    /// Only the use cases of this PGCC link (vínculo).
    pub empresa_vinculo_pgcc_id: Option<Uuid>,
}

/// Lists the calling company's use cases, from the stored copy (never calls the PGCC).
#[utoipa::path(
    get,
    path = "/api/casos-de-uso",
    tag = "CasosDeUso",
    params(FiltroCasosDeUso),
    responses(
        (status = 200, description = "The company's use cases, ordered by title.", content(
            (EnvelopeDoc<Vec<CasoDeUso>> = "application/json"),
            (EnvelopeDoc<Vec<CasoDeUso>> = "text/json"),
            (EnvelopeDoc<Vec<CasoDeUso>> = "text/plain"),
        )),
        (status = 400, description = "`empresaVinculoPgccId` is not a UUID.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn list(
    services: web::Data<Services>,
    key: ApiKeyHeader,
    filtro: web::Query<FiltroCasosDeUso>,
) -> Result<HttpResponse, ApiError> {
    let vinculo = filtro.into_inner().empresa_vinculo_pgcc_id;
    let use_cases = as_company(&services, key, move |s, company| {
        Ok(s.list_use_cases.execute(company, vinculo)?)
    })
    .await?;
    let data: Vec<CasoDeUso> = use_cases.into_iter().map(CasoDeUso::from).collect();
    Ok(HttpResponse::Ok().json(Envelope::ok(data)))
}

/// Synchronizes the calling company's use cases with the PGCC now, and answers what changed.
#[utoipa::path(
    post,
    path = "/api/casos-de-uso/sincronizar",
    tag = "CasosDeUso",
    responses(
        (status = 200, description = "Synchronized; counts of what changed.", body = EnvelopeDoc<Sincronizacao>),
        (status = 422, description = "The PGCC refused the synchronization (`isPgccErro: true`).", body = EnvelopeDoc<Erro>),
        (status = 502, description = "The PGCC failed or is unreachable (`isPgccErro: true`); nothing changed.", body = EnvelopeDoc<Erro>),
        (status = 504, description = "The PGCC timed out (`isPgccErro: true`); nothing changed.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn sync(
    services: web::Data<Services>,
    key: ApiKeyHeader,
) -> Result<HttpResponse, ApiError> {
    let counts = as_company(&services, key, |s, company| {
        Ok(s.sync_use_cases.execute(company)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(Sincronizacao::from(counts))))
}
