//! `/api/titulares` (tag Titulares): what the company holds of one data subject, for an LGPD
//! art. 18 access request. The CPF travels in the body, never in a URL.

use actix_web::{web, HttpResponse};
use application::SubjectExportQuery;
use domain::Envelope;

use crate::access_log::Answered;
use crate::api_key::ApiKeyHeader;
use crate::blocking::as_caller;
use crate::bounded_page;
use crate::dto::consent_read::Solicitacao;
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro};
use crate::dto::subject_export::{ConsentimentosDoTitular, ExportarTitular, PaginaExportacao};
use crate::error::ApiError;
use crate::state::ApiState;

/// Every consent request of the subject for the company, with history and proof, the CPF in full.
#[utoipa::path(
    post,
    path = "/api/titulares/consentimentos",
    operation_id = "exportarConsentimentosDoTitular",
    tag = "Titulares",
    params(PaginaExportacao),
    request_body(content(
        (ExportarTitular = "application/json"),
        (ExportarTitular = "text/json"),
        (ExportarTitular = "application/*+json"),
    )),
    responses(
        (status = 200, description = "A page of the subject's requests, oldest first; follow `proximoCursor` until it is null.", body = EnvelopeDoc<ConsentimentosDoTitular>),
        (status = 400, description = "Malformed JSON, unknown field, or a non-numeric limit.", body = EnvelopeDoc<Erro>),
        (status = 413, description = "Body over the configured limit.", body = EnvelopeDoc<Erro>),
        (status = 415, description = "Content-Type is not JSON.", body = EnvelopeDoc<Erro>),
        (status = 422, description = "Missing or invalid CPF, limit outside 1..500, bad cursor.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn export(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    query: crate::query::Query<PaginaExportacao>,
    body: web::Json<ExportarTitular>,
) -> Result<HttpResponse, ApiError> {
    let page = query.into_inner();
    let export_query = SubjectExportQuery {
        subject_cpf: body.into_inner().subject_cpf,
        cursor: page.cursor,
        limit: page.limit,
    };
    let data = as_caller(&state, key, move |s, call| {
        let page = s.export_subject.execute(call.company(), export_query)?;
        // rendered in the hop, so that exactly the items answered are recorded
        let answered = Answered::default();
        let items = bounded_page::within(
            page.items,
            s.page_max_bytes,
            |r| application::resume_after(&r.request),
            |r| {
                let item = Solicitacao::from_domain(r.request, true, Some(r.history));
                Ok(answered.note(item, true))
            },
        )
        .map_err(ApiError::Internal)?;
        // every export carries the full CPF: recorded, even when it found nothing (the answer
        // still tells whether the subject has consents), before the answer goes out
        answered.record(s, call, items.items.len())?;
        // the documented shape is ConsentimentosDoTitular; its items go out already serialized
        Ok(bounded_page::Page::of(items, page.next_cursor))
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(data)))
}
