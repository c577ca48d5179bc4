//! The DPO's search of a subject (`auditor` scope): the CPF is typed in a form and posted (never
//! in a URL, so never in an access line, a proxy's log or the browser's history). The answer is
//! a 303 to the subject's page, `/console/titulares/<token>` (`subject_page`), a GET: Back and
//! reload repeat it without resubmitting the form. The token is opaque; the CPF stays on the
//! server (`subject_searches`). The page's read is recorded in the access log there.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use delivery_http::ApiError;
use domain::{Cpf, Scope};
use maud::{html, Markup};
use serde::Deserialize;

use crate::layout::{self, alert, post_form};
use crate::session::SESSION_COOKIE;
use crate::visit::{see_other, SignedIn, Visit};

pub(crate) const TITLE: &str = "Solicitações de um titular";

/// The search form (`error`: shown above it).
pub(crate) fn form(signed: &SignedIn, error: Option<&str>) -> Markup {
    html! {
        (alert(error))
        (post_form("/console/titulares", &signed.csrf, html! {
            label for="cpf" { "CPF do titular" }
            input id="cpf" name="cpf" inputmode="numeric" autocomplete="off" required;
        }, "Buscar"))
    }
}

/// `GET /console/titulares`: the form.
pub async fn search_form(visit: Visit) -> HttpResponse {
    match visit
        .signed_in("/console/titulares", &[Scope::Auditor], None, |_, _| Ok(()))
        .await
    {
        Ok((signed, ())) => layout::page(StatusCode::OK, TITLE, Some(&signed), form(&signed, None)),
        Err(refusal) => refusal.page(false),
    }
}

#[derive(Deserialize, Default)]
struct SearchForm {
    #[serde(default)]
    cpf: String,
    #[serde(default)]
    csrf: String,
}

/// `POST /console/titulares` (CSRF): a valid CPF is kept under a new token for this session and
/// company, and the answer is 303 to the subject's page; an invalid CPF gets the form again
/// (422), nothing kept, nothing read.
pub async fn search(visit: Visit, body: web::Bytes) -> HttpResponse {
    let form_data = serde_urlencoded::from_bytes::<SearchForm>(&body).unwrap_or_default();
    let cpf = Cpf::parse(form_data.cpf.trim()).ok();
    let searches = visit.console.searches.clone();
    let cookie = visit.cookie(SESSION_COOKIE).unwrap_or_default();
    let lifetime = visit.settings().search_lifetime;
    let outcome = visit
        .signed_in(
            "/console/titulares",
            &[Scope::Auditor],
            Some(&form_data.csrf),
            move |_, call| {
                // kept in the page's blocking hop: the store is the database
                cpf.map(|cpf| searches.keep(call.company().id, &cookie, cpf.as_str(), lifetime))
                    .transpose()
                    .map_err(ApiError::from)
            },
        )
        .await;
    match outcome {
        Ok((_, Some(token))) => see_other(&format!("/console/titulares/{token}")),
        Ok((signed, None)) => layout::page(
            StatusCode::UNPROCESSABLE_ENTITY,
            TITLE,
            Some(&signed),
            form(&signed, Some("CPF inválido: confira os dígitos.")),
        ),
        Err(refusal) => refusal.page(true),
    }
}
