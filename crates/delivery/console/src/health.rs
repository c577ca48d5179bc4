//! `GET /console/pgcc`: the PGCC's health as `GET /api/status` answers it (issue 25), for any
//! signed-in key: the operator sees why creations fail before reading a delivery log.

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use domain::PgccHealth;
use maud::{html, Markup};

use crate::human::{health_label, operation_label, when};
use crate::layout;
use crate::visit::Visit;

/// The code, its explanation, since when, and the operations that are unavailable.
pub async fn page(visit: Visit) -> HttpResponse {
    let outcome = visit
        .signed_in("/console/pgcc", &[], None, |s, _call| {
            Ok(s.pgcc_status.execute()?)
        })
        .await;
    match outcome {
        Ok((signed, health)) => layout::page(
            StatusCode::OK,
            "Saúde da PGCC",
            Some(&signed),
            view(&health),
        ),
        Err(refusal) => refusal.page(false),
    }
}

fn view(health: &PgccHealth) -> Markup {
    let unavailable: Vec<&str> = health
        .unavailable_endpoints
        .iter()
        .map(|o| operation_label(o))
        .collect();
    html! {
        p role="status" { "Situação: " strong { (health_label(health.code.as_str())) } }
        p { (health.explanation) }
        dl {
            dt { "Detectada em" } dd { (when(health.detection_time)) }
            dt { "Atualizada em" } dd { (when(health.update_time)) }
            dt { "Operações indisponíveis" }
            dd {
                @if unavailable.is_empty() { "nenhuma" } @else { (unavailable.join(", ")) }
            }
        }
        p {
            "O mesmo que a API informa aos sistemas da empresa, calculado das chamadas à PGCC do \
             último intervalo observado."
        }
    }
}
