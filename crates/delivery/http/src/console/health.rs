//! `GET /console/pgcc`: the PGCC's health as `GET /api/status` answers it (issue 25), for any
//! signed-in key: the operator sees why creations fail before reading a delivery log.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};

use super::html::{self, esc};
use super::human::{health_label, operation_label, when};
use super::{nav, signed_in};
use crate::state::ApiState;

/// The code, its explanation, since when, and the operations that are unavailable.
pub async fn page(state: web::Data<ApiState>, req: HttpRequest) -> HttpResponse {
    let outcome = signed_in(&state, &req, "/console/pgcc", &[], None, |s, _call| {
        Ok(s.pgcc_status.execute()?)
    })
    .await;
    let (signed, health) = match outcome {
        Ok(done) => done,
        Err(refusal) => return refusal.page(false),
    };
    let unavailable = if health.unavailable_endpoints.is_empty() {
        "nenhuma".to_owned()
    } else {
        health
            .unavailable_endpoints
            .iter()
            .map(|o| operation_label(o))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let main = format!(
        "<p role=\"status\">Situação: <strong>{}</strong></p><p>{}</p><dl>\
         <dt>Detectada em</dt><dd>{}</dd><dt>Atualizada em</dt><dd>{}</dd>\
         <dt>Operações indisponíveis</dt><dd>{unavailable}</dd></dl>\
         <p>O mesmo que a API informa aos sistemas da empresa, calculado das chamadas à PGCC \
         do último intervalo observado.</p>",
        health_label(health.code.as_str()),
        esc(&health.explanation),
        when(health.detection_time),
        when(health.update_time),
    );
    html::page(StatusCode::OK, "Saúde da PGCC", &nav(&signed), &main)
}
