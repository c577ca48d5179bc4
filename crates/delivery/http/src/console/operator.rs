//! The operator's pages (`webhooks` scope; `auditor` reads them): the company's webhook URLs and
//! re-enabling a disabled one.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use domain::Scope;
use serde::Deserialize;
use uuid::Uuid;

use super::html::{self, esc};
use super::{nav, see_other, signed_in};
use crate::error::ApiError;
use crate::state::ApiState;

/// `GET /console/webhooks`: each URL with its state and the event types it receives; a
/// `webhooks` key gets a re-enable button on the disabled ones.
pub async fn webhooks(state: web::Data<ApiState>, req: HttpRequest) -> HttpResponse {
    let outcome = signed_in(
        &state,
        &req,
        "/console/webhooks",
        &[Scope::Webhooks, Scope::Auditor],
        None,
        |s, call| Ok(s.webhook_urls.list(call.company())?),
    )
    .await;
    let (signed, urls) = match outcome {
        Ok(done) => done,
        Err(refusal) => return refusal.page(false),
    };
    let manages = signed.scopes().contains(Scope::Webhooks);
    let rows: String = urls
        .iter()
        .map(|w| {
            let state = match w.disabled_at {
                Some(at) => format!("Desativada em {}", esc(&at.to_rfc3339())),
                None => "Ativa".to_owned(),
            };
            let events = match w.events.types() {
                Some(types) => esc(&types
                    .iter()
                    .map(|t| t.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")),
                None => "Todos".to_owned(),
            };
            let action = if manages && w.disabled_at.is_some() {
                html::post_form(
                    &format!("/console/webhooks/{}/reativar", w.id),
                    &signed.csrf,
                    "",
                    "Reativar",
                )
            } else {
                String::new()
            };
            format!(
                "<tr><td>{}</td><td>{state}</td><td>{events}</td><td>{action}</td></tr>",
                esc(&w.url)
            )
        })
        .collect();
    let main = if urls.is_empty() {
        "<p>Nenhuma webhook URL registrada.</p>".to_owned()
    } else {
        format!(
            "<table><caption>Webhook URLs da empresa</caption><thead><tr>\
             <th scope=\"col\">URL</th><th scope=\"col\">Estado</th>\
             <th scope=\"col\">Eventos</th><th scope=\"col\">Ações</th></tr></thead>\
             <tbody>{rows}</tbody></table>"
        )
    };
    html::page(StatusCode::OK, "Webhooks", &nav(&signed), &main)
}

#[derive(Deserialize)]
struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

/// `POST /console/webhooks/{id}/reativar` (CSRF): re-enables the URL, back to the list.
pub async fn reenable(
    state: web::Data<ApiState>,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    let csrf = serde_urlencoded::from_bytes::<CsrfForm>(&body)
        .map(|f| f.csrf)
        .unwrap_or_default();
    let id = Uuid::parse_str(&path).ok();
    let outcome = signed_in(
        &state,
        &req,
        "/console/webhooks/{id}/reativar",
        &[Scope::Webhooks],
        Some(&csrf),
        move |s, call| {
            let id = id.ok_or(ApiError::NotFound("Webhook URL"))?;
            Ok(s.webhook_urls.reenable(call.company(), id)?)
        },
    )
    .await;
    match outcome {
        Ok(_) => see_other("/console/webhooks"),
        Err(refusal) => refusal.page(true),
    }
}
