//! `POST /api/solicitacao-consentimento/criar/ativo|pendente` (tag SolicitacaoConsentimento).

use actix_web::{web, HttpResponse};
use application::{CreatedConsentRequest, Services};
use domain::{ConsentRequestDraft, CreationVariant, Envelope};

use crate::api_key::ApiKeyHeader;
use crate::blocking::as_company;
use crate::dto::consent_request::{
    CriarSolicitacaoAtiva, CriarSolicitacaoPendente, SolicitacaoCriada,
};
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro};
use crate::error::ApiError;

/// Registers a consent request the subject has already answered (status `ativo`).
#[utoipa::path(
    post,
    path = "/api/solicitacao-consentimento/criar/ativo",
    tag = "SolicitacaoConsentimento",
    request_body(content(
        (CriarSolicitacaoAtiva = "application/json"),
        (CriarSolicitacaoAtiva = "text/json"),
        (CriarSolicitacaoAtiva = "application/*+json"),
    )),
    responses(
        (status = 200, description = "Created on the PGCC and stored.", body = EnvelopeDoc<SolicitacaoCriada>),
        (status = 400, description = "Malformed JSON, a value of the wrong type, or an unknown field.", body = EnvelopeDoc<Erro>),
        (status = 413, description = "Body over the configured limit.", body = EnvelopeDoc<Erro>),
        (status = 415, description = "Content-Type is not JSON.", body = EnvelopeDoc<Erro>),
        (status = 422, description = "A field rule is broken (`data.erros` names each field), or the PGCC refused the request (`isPgccErro: true`).", body = EnvelopeDoc<Erro>),
        (status = 502, description = "The PGCC failed or is unreachable (`isPgccErro: true`); nothing stored.", body = EnvelopeDoc<Erro>),
        (status = 504, description = "The PGCC timed out (`isPgccErro: true`); nothing stored.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn create_active(
    services: web::Data<Services>,
    key: ApiKeyHeader,
    body: web::Json<CriarSolicitacaoAtiva>,
) -> Result<HttpResponse, ApiError> {
    create(
        services,
        key,
        body.into_inner().into(),
        CreationVariant::Active,
    )
    .await
}

/// Registers a consent request waiting for the subject's answer (status `pendente`).
#[utoipa::path(
    post,
    path = "/api/solicitacao-consentimento/criar/pendente",
    tag = "SolicitacaoConsentimento",
    request_body(content(
        (CriarSolicitacaoPendente = "application/json"),
        (CriarSolicitacaoPendente = "text/json"),
        (CriarSolicitacaoPendente = "application/*+json"),
    )),
    responses(
        (status = 200, description = "Created on the PGCC and stored.", body = EnvelopeDoc<SolicitacaoCriada>),
        (status = 400, description = "Malformed JSON, a value of the wrong type, or an unknown field.", body = EnvelopeDoc<Erro>),
        (status = 413, description = "Body over the configured limit.", body = EnvelopeDoc<Erro>),
        (status = 415, description = "Content-Type is not JSON.", body = EnvelopeDoc<Erro>),
        (status = 422, description = "A field rule is broken (`data.erros` names each field), or the PGCC refused the request (`isPgccErro: true`).", body = EnvelopeDoc<Erro>),
        (status = 502, description = "The PGCC failed or is unreachable (`isPgccErro: true`); nothing stored.", body = EnvelopeDoc<Erro>),
        (status = 504, description = "The PGCC timed out (`isPgccErro: true`); nothing stored.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn create_pending(
    services: web::Data<Services>,
    key: ApiKeyHeader,
    body: web::Json<CriarSolicitacaoPendente>,
) -> Result<HttpResponse, ApiError> {
    create(
        services,
        key,
        body.into_inner().into(),
        CreationVariant::Pending,
    )
    .await
}

async fn create(
    services: web::Data<Services>,
    key: ApiKeyHeader,
    draft: ConsentRequestDraft,
    variant: CreationVariant,
) -> Result<HttpResponse, ApiError> {
    let CreatedConsentRequest { id, pgcc_id } = as_company(&services, key, move |s, company| {
        Ok(s.create_consent_request.execute(company, draft, variant)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(SolicitacaoCriada { id, pgcc_id })))
}
