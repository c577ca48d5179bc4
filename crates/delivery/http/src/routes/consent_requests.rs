//! `/api/solicitacao-consentimento` (tag SolicitacaoConsentimento): create (active or pending,
//! idempotent with an `Idempotency-Key`), read one, list, revoke.

mod creation_docs;

use actix_web::{web, HttpResponse};
use application::{ConsentListQuery, CreatedConsentRequest, Services};
use domain::{ConsentRequestDraft, CreationVariant, Envelope};
use uuid::Uuid;

use creation_docs::{CreationResponses, IdempotencyKeyParam};

use crate::access_log::{record_read, Answered};
use crate::api_key::ApiKeyHeader;
use crate::blocking::{as_caller, Call};
use crate::bounded_page;
use crate::dto::consent_read::{FiltroSolicitacoes, MostrarCpf, PaginaSolicitacoes, Solicitacao};
use crate::dto::consent_request::{
    CriarSolicitacaoAtiva, CriarSolicitacaoPendente, SolicitacaoCriada,
};
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro};
use crate::dto::revocation::RevogarSolicitacao;
use crate::error::ApiError;
use crate::idempotency::{
    self, IdempotentJson, IdempotentOptionalJson, IdempotentRequest, StoredResponse,
};
use crate::state::ApiState;

/// Registers a consent request the subject has already answered (status `ativo`).
#[utoipa::path(
    post,
    path = "/api/solicitacao-consentimento/criar/ativo",
    operation_id = "criarSolicitacaoAtiva",
    tag = "SolicitacaoConsentimento",
    request_body(content(
        (CriarSolicitacaoAtiva = "application/json"),
        (CriarSolicitacaoAtiva = "text/json"),
        (CriarSolicitacaoAtiva = "application/*+json"),
    )),
    params(IdempotencyKeyParam),
    responses(CreationResponses)
)]
pub async fn create_active(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    body: IdempotentJson<CriarSolicitacaoAtiva>,
) -> Result<HttpResponse, ApiError> {
    let draft = body.value.into();
    create(state, key, body.idempotency, draft, CreationVariant::Active).await
}

/// Registers a consent request waiting for the subject's answer (status `pendente`).
#[utoipa::path(
    post,
    path = "/api/solicitacao-consentimento/criar/pendente",
    operation_id = "criarSolicitacaoPendente",
    tag = "SolicitacaoConsentimento",
    request_body(content(
        (CriarSolicitacaoPendente = "application/json"),
        (CriarSolicitacaoPendente = "text/json"),
        (CriarSolicitacaoPendente = "application/*+json"),
    )),
    params(IdempotencyKeyParam),
    responses(CreationResponses)
)]
pub async fn create_pending(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    body: IdempotentJson<CriarSolicitacaoPendente>,
) -> Result<HttpResponse, ApiError> {
    let draft = body.value.into();
    create(
        state,
        key,
        body.idempotency,
        draft,
        CreationVariant::Pending,
    )
    .await
}

/// Creates under the id the idempotency key reserved, or a fresh one without a key.
async fn create(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    idempotency: Option<IdempotentRequest>,
    draft: ConsentRequestDraft,
    variant: CreationVariant,
) -> Result<HttpResponse, ApiError> {
    // a creation's answer carries ids only: its replay is no read of personal data
    let replayed = |_: &Services, _: &Call, _: &StoredResponse| Ok(());
    idempotency::run_as_company(
        &state,
        key,
        idempotency,
        replayed,
        move |s, company, reserved| {
            let service = &s.create_consent_request;
            let CreatedConsentRequest { id, pgcc_id } = match reserved {
                Some(id) => service.execute_with_id(company, draft, variant, id)?,
                None => service.execute(company, draft, variant)?,
            };
            Ok(Envelope::ok(SolicitacaoCriada { id, pgcc_id }))
        },
    )
    .await
}

/// One of the company's consent requests, with its history.
#[utoipa::path(
    get,
    path = "/api/solicitacao-consentimento/{id}",
    operation_id = "obterSolicitacao",
    tag = "SolicitacaoConsentimento",
    params(("id" = Uuid, Path, description = "Our id of the request."), MostrarCpf),
    responses(
        (status = 200, description = "The request, its effective status and its history.", body = EnvelopeDoc<Solicitacao>),
        (status = 404, description = "No such request for the company.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn get(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
    query: crate::query::Query<MostrarCpf>,
) -> Result<HttpResponse, ApiError> {
    let id = parse_id(&path)?;
    let show_cpf = query.show_cpf;
    let data = as_caller(&state, key, move |s, call| {
        let record = s.get_consent_request.execute(call.company(), id)?;
        let data = Solicitacao::from_domain(record.request, show_cpf, Some(record.history));
        // the full CPF or the proof: recorded before the answer goes out
        if show_cpf || data.proof_of_collection.is_some() {
            record_read(s, call, [(data.id, data.hash.as_str())])?;
        }
        Ok(data)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(data)))
}

/// The company's consent requests, filtered, oldest first, a page at a time.
#[utoipa::path(
    get,
    path = "/api/solicitacao-consentimento",
    operation_id = "listarSolicitacoes",
    tag = "SolicitacaoConsentimento",
    params(FiltroSolicitacoes),
    responses(
        (status = 200, description = "A page; follow `proximoCursor` until it is null.", body = EnvelopeDoc<PaginaSolicitacoes>),
        (status = 400, description = "A parameter of the wrong type (a date that is not ISO 8601, a non-numeric limit).", body = EnvelopeDoc<Erro>),
        (status = 422, description = "A filter breaks a rule (unknown status, invalid CPF, limit outside 1..500, bad cursor).", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn list(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    query: crate::query::Query<FiltroSolicitacoes>,
) -> Result<HttpResponse, ApiError> {
    let q = query.into_inner();
    let show_cpf = q.show_cpf;
    // a list filtered by a subject's CPF reads that subject's requests, masked or not, and even
    // finding none tells something of the subject (issue 39): recorded like the subject export
    let by_subject = q
        .subject_cpf
        .as_deref()
        .is_some_and(|cpf| !cpf.trim().is_empty());
    let list_query = ConsentListQuery {
        status: q.status,
        template_id: q.template_id,
        subject_cpf: q.subject_cpf,
        created_from: q.created_from,
        created_until: q.created_until,
        updated_from: q.updated_from,
        updated_until: q.updated_until,
        outdated_version: q.outdated_version,
        origin: q.origin,
        cursor: q.cursor,
        limit: q.limit,
    };
    let data = as_caller(&state, key, move |s, call| {
        let page = s
            .list_consent_requests
            .execute(call.company(), list_query)?;
        // rendered in the hop, so that exactly the items answered are recorded
        let answered = Answered::default();
        let items = bounded_page::within(
            page.items,
            s.page_max_bytes,
            application::resume_after,
            |r| Ok(answered.note(Solicitacao::from_domain(r, show_cpf, None), show_cpf)),
        )
        .map_err(ApiError::Internal)?;
        // a page with a full CPF or a proof, or any page of one subject, is recorded before the
        // answer goes out
        if by_subject {
            answered.record(s, call, items.items.len())?;
        } else {
            answered.record_if_personal(s, call, items.items.len())?;
        }
        // the documented shape is PaginaSolicitacoes; its items go out already serialized
        Ok(bounded_page::Page::of(items, page.next_cursor))
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(data)))
}

/// Revokes an active consent, or withdraws a pending request, on the PGCC, then here, with an
/// optional reason. A PGCC failure leaves the request as it was.
#[utoipa::path(
    post,
    path = "/api/solicitacao-consentimento/{id}/revogar",
    operation_id = "revogarSolicitacao",
    tag = "SolicitacaoConsentimento",
    params(("id" = Uuid, Path, description = "Our id of the request."), RevocationIdempotencyKey),
    request_body(
        description = "Optional: `{\"motivo\": \"...\"}`. No body (or an empty one) revokes without a reason.",
        content(
            (RevogarSolicitacao = "application/json"),
            (RevogarSolicitacao = "text/json"),
            (RevogarSolicitacao = "application/*+json"),
        )
    ),
    responses(
        (status = 200, description = "Revoked (an active consent) or withdrawn (a pending request): status `revogado`, cause `empresa`; the request with its history, the reason in the last entry's `motivo`. Also the answer of a retry after an attempt that revoked on the PGCC but failed before storing it here (the PGCC holds it `revogado`).", body = EnvelopeDoc<Solicitacao>,
            headers(("Idempotent-Replayed" = String, description = "`true` when this is the kept answer of an earlier request with the same Idempotency-Key."))),
        (status = 400, description = "Malformed JSON or unknown field in the body, or an invalid `Idempotency-Key` header.", body = EnvelopeDoc<Erro>),
        (status = 404, description = "No such request for the company.", body = EnvelopeDoc<Erro>),
        (status = 409, description = "The request is neither active nor pending here (refused, expired or already revoked); or a request with this `Idempotency-Key` is still running.", body = EnvelopeDoc<Erro>),
        (status = 413, description = "Body over the configured limit.", body = EnvelopeDoc<Erro>),
        (status = 415, description = "A body that is not JSON.", body = EnvelopeDoc<Erro>),
        (status = 422, description = "`motivo` empty, over 500 characters or with control characters (field error, nothing sent to the PGCC); the PGCC refused the revocation for good (`isPgccErro: true`; a 409 of the PGCC only when it does not hold the request `revogado`); or the `Idempotency-Key` was used with another request; nothing changed.", body = EnvelopeDoc<Erro>),
        (status = 502, description = "The PGCC failed (its 5xx, 401, 403) or is unreachable (`isPgccErro: true`); nothing changed.", body = EnvelopeDoc<Erro>),
        (status = 503, description = "The database did not answer in time (`Retry-After`). The PGCC may already have revoked: the same request, retried, completes the revocation here.", body = EnvelopeDoc<Erro>),
        (status = 504, description = "The PGCC timed out (`isPgccErro: true`); nothing changed.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn revoke(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
    body: IdempotentOptionalJson<RevogarSolicitacao>,
) -> Result<HttpResponse, ApiError> {
    let id = parse_id(&path)?;
    let reason = match body.value {
        Some(body) => body.try_into_domain().map_err(ApiError::Validation)?,
        None => None,
    };
    // The resource is the path's request: the id a key reserves is not used.
    idempotency::run_as_company(
        &state,
        key,
        body.idempotency,
        replayed_revocation,
        move |s, company, _| {
            let record = s.revoke_consent_request.execute(company, id, reason)?;
            let data = Solicitacao::from_domain(record.request, false, Some(record.history));
            Ok(Envelope::ok_with_message(data, "Consentimento revogado."))
        },
    )
    .await
}

/// A revocation's kept answer replayed (issue 39): the request as revoked, with its proof of
/// collection when it has one, to whichever key of the company sent the same `Idempotency-Key`.
/// That is a read of personal data, recorded as any other before the answer goes out (a 422
/// carries none).
fn replayed_revocation(s: &Services, call: &Call, kept: &StoredResponse) -> Result<(), ApiError> {
    if kept.status != 200 {
        return Ok(());
    }
    let Ok(body) = serde_json::from_slice::<serde_json::Value>(&kept.body) else {
        return Ok(());
    };
    let data = &body["data"];
    let (Some(id), Some(hash)) = (
        data["id"].as_str().and_then(|id| Uuid::parse_str(id).ok()),
        data["hash"].as_str(),
    ) else {
        return Ok(());
    };
    if data["provaColeta"].is_string() {
        record_read(s, call, [(id, hash)])?;
    }
    Ok(())
}

/// `Idempotency-Key` of `revogar`, as documented in the OpenAPI document.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)] // documentation only; the header is read by `IdempotentOptionalJson`
pub struct RevocationIdempotencyKey {
    /// Optional, 1 to 255 visible ASCII characters, scoped to the company, with the rules of the
    /// creations: a retry with the same key and the same request (path and body bytes) within
    /// 24 h answers the first answer again, byte for byte, with `Idempotent-Replayed: true`, and
    /// does nothing more. Kept answers: 200 and 422; any other (409, 502, 503, 504) is not kept,
    /// so a retry runs again. The same key with another request is 422; while the first request
    /// still runs, 409.
    #[serde(rename = "Idempotency-Key")]
    #[param(min_length = 1, max_length = 255, pattern = "^[!-~]+$")]
    idempotency_key: Option<String>,
}

/// A malformed id names no request: 404, as for an unknown one.
fn parse_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound(crate::error::Resource::ConsentRequest))
}
