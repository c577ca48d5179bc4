//! Audit routes (`/api/auditoria/...`, `auditor` keys only; docs/security.md). Every audit
//! route records its own read in the access log ([`crate::access_log::record_read`]).

use actix_web::{web, HttpResponse};
use application::AccessListQuery;
use domain::Envelope;

use crate::access_log::record_read;
use crate::api_key::ApiKeyHeader;
use crate::blocking::as_caller;
use crate::dto::access_log::{Acesso, FiltroAcessos, PaginaAcessos};
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro};
use crate::error::ApiError;
use crate::state::ApiState;

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
