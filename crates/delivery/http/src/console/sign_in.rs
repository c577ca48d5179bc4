//! Signing in and out. The sign-in form posts the API key once; the answer sets the session
//! cookie and redirects (303), so the key is never in a page, a URL or the browser's history.
//! The sign-in form's own CSRF token is a double-submit one (a cookie and a hidden field that
//! must be equal), since there is no session yet.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use domain::Scope;
use serde::Deserialize;

use super::html::{self, esc};
use super::session::{random_token, same_token, SESSION_COOKIE};
use super::{cookie, nav, see_other, set_cookie, signed_in, Refusal};
use crate::blocking::in_blocking_hop;
use crate::error::ApiError;
use crate::state::ApiState;

/// The cookie of the sign-in form's CSRF token.
const SIGN_IN_COOKIE: &str = "console_entrada";

/// `GET /console`: the home page when signed in, the sign-in form otherwise.
pub async fn home(state: web::Data<ApiState>, req: HttpRequest) -> HttpResponse {
    match signed_in(&state, &req, "/console", &[], None, |_, _| Ok(())).await {
        Ok((signed, ())) => {
            let scopes = signed.scopes();
            let company = &signed.call.caller.company;
            let mut sections = String::new();
            if scopes.contains(Scope::Auditor) {
                sections.push_str(
                    "<section aria-labelledby=\"dpo\"><h2 id=\"dpo\">Encarregado de dados</h2>\
                     <p><a href=\"/console/titulares\">Solicitações de um titular</a>: \
                     busca pelo CPF; cada solicitação abre com status, histórico, caso de uso e \
                     prova de coleta (cada busca e cada abertura ficam no registro de acessos).</p>\
                     <p><a href=\"/console/acessos\">Registro de acessos</a>: quem leu dados \
                     pessoais, por chave e período.</p>\
                     </section>",
                );
            }
            if scopes.contains(Scope::Webhooks) || scopes.contains(Scope::Auditor) {
                sections.push_str(
                    "<section aria-labelledby=\"op\"><h2 id=\"op\">Operação</h2>\
                     <p><a href=\"/console/webhooks\">Webhook URLs da empresa</a></p></section>",
                );
            }
            if sections.is_empty() {
                sections.push_str(
                    "<p>A chave desta sessão não dá acesso a nenhuma página do console.</p>",
                );
            }
            let main = format!(
                "<p>Empresa: <strong>{}</strong>. Escopos da chave: {}.</p>{sections}",
                esc(&company.name),
                scopes
                    .names()
                    .iter()
                    .map(|s| super::human::scope_label(s))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            html::page(StatusCode::OK, "Início", &nav(&signed), &main)
        }
        Err(Refusal::NoSession) => sign_in_page(&state, StatusCode::OK, None),
        Err(refusal) => refusal.page(false),
    }
}

/// The sign-in form, with a fresh double-submit token.
fn sign_in_page(state: &ApiState, status: StatusCode, error: Option<&str>) -> HttpResponse {
    let token = random_token();
    let error = error
        .map(|e| format!("<p class=\"erro\" role=\"alert\">{}</p>", esc(e)))
        .unwrap_or_default();
    let main = format!(
        "{error}<p>Entre com uma chave de API da sua empresa. A chave fica só no servidor, \
         durante a sessão.</p>\
         <form method=\"post\" action=\"/console/entrar\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{token}\">\
         <label for=\"chave\">Chave de API</label>\
         <input id=\"chave\" name=\"chave\" type=\"password\" autocomplete=\"off\" required>\
         <button type=\"submit\">Entrar</button></form>"
    );
    let mut res = html::page(status, "Entrar", "", &main);
    set_cookie(
        &mut res,
        state.console.settings(),
        SIGN_IN_COOKIE,
        &token,
        Some(3600),
    );
    res
}

#[derive(Deserialize)]
struct SignInForm {
    #[serde(default)]
    chave: String,
    #[serde(default)]
    csrf: String,
}

#[derive(Deserialize)]
struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

/// `POST /console/entrar`: the key checked, a session opened, 303 to the home page.
pub async fn sign_in(
    state: web::Data<ApiState>,
    req: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    let Ok(form) = serde_urlencoded::from_bytes::<SignInForm>(&body) else {
        return sign_in_page(
            &state,
            StatusCode::BAD_REQUEST,
            Some("Formulário inválido."),
        );
    };
    let expected = cookie(&req, SIGN_IN_COOKIE).unwrap_or_default();
    if expected.is_empty() || !same_token(&form.csrf, &expected) {
        return Refusal::BadCsrf.page(true);
    }
    let key = form.chave.trim().to_owned();
    let sessions = state.console.clone();
    // a task-local: taken here, not on the blocking thread
    let limiter = crate::rate_limit::current_limiter();
    let opened = in_blocking_hop(&state, move |s| {
        let caller = s.auth.authenticate(Some(&key)).map_err(ApiError::from)?;
        // a sign-in with a valid key is one of the company's requests, as every console page is
        // (issue 39: it was never charged); a made-up key is a 401, charged to the address
        crate::blocking::check_rate(limiter.as_deref(), caller.quota_of, 1)?;
        // the store keeps the key's hash, never the key
        sessions
            .open(caller.company.id, application::hash_api_key(&key))?
            .ok_or_else(|| ApiError::Unavailable(anyhow::anyhow!("too many console sessions")))
    })
    .await;
    let id = match opened {
        Ok((id, _)) => id,
        Err(ApiError::Unauthorized) => {
            return sign_in_page(
                &state,
                StatusCode::UNAUTHORIZED,
                Some("Chave inválida ou revogada."),
            )
        }
        Err(e) => return Refusal::Api(e).page(true),
    };
    let settings = state.console.settings();
    let mut res = see_other("/console");
    set_cookie(&mut res, settings, SESSION_COOKIE, &id, None);
    set_cookie(&mut res, settings, SIGN_IN_COOKIE, "", Some(0));
    res
}

/// `POST /console/sair`: the session ended (with its CSRF token), its cookie deleted.
pub async fn sign_out(
    state: web::Data<ApiState>,
    req: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    let csrf = serde_urlencoded::from_bytes::<CsrfForm>(&body)
        .map(|f| f.csrf)
        .unwrap_or_default();
    match signed_in(&state, &req, "/console/sair", &[], Some(&csrf), |_, _| {
        Ok(())
    })
    .await
    {
        Ok((signed, ())) => {
            let sessions = state.console.clone();
            let cookie = signed.cookie.clone();
            if let Err(e) = in_blocking_hop(&state, move |_| Ok(sessions.close(&cookie)?)).await {
                return Refusal::Api(e).page(true);
            }
            let mut res = see_other("/console");
            set_cookie(
                &mut res,
                state.console.settings(),
                SESSION_COOKIE,
                "",
                Some(0),
            );
            res
        }
        Err(refusal) => refusal.page(true),
    }
}
