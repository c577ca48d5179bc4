//! Signing in and out, and the home page. The sign-in form posts the API key once; the answer
//! sets the session cookie and redirects (303), so the key is never in a page, a URL or the
//! browser's history. The sign-in form's own CSRF token is a double-submit one (a cookie and a
//! hidden field that must be equal), since there is no session yet.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use delivery_http::blocking::{check_rate, in_blocking_hop};
use delivery_http::ApiError;
use maud::html;
use serde::Deserialize;

use crate::layout::{self, alert};
use crate::oidc_sign_out;
use crate::refusal::Refusal;
use crate::session::{random_token, same_token, SESSION_COOKIE};
use crate::visit::{csrf_of, see_other, set_cookie, Visit};

/// The cookie of the sign-in form's CSRF token.
const SIGN_IN_COOKIE: &str = "console_entrada";

/// `GET /console`: the home page when signed in (`home`), the sign-in form otherwise.
pub async fn home(visit: Visit) -> HttpResponse {
    match crate::home::page(&visit).await {
        Ok(page) => page,
        Err(Refusal::NoSession) => sign_in_page(&visit, StatusCode::OK, None),
        Err(refusal) => refusal.page(false),
    }
}

/// The sign-in form, with a fresh double-submit token.
fn sign_in_page(visit: &Visit, status: StatusCode, error: Option<&str>) -> HttpResponse {
    let token = random_token();
    let main = html! {
        (alert(error))
        p {
            "Entre com uma chave de API da sua empresa. A chave fica só no servidor, durante a \
             sessão."
        }
        form method="post" action="/console/entrar" {
            input type="hidden" name="csrf" value=(token);
            label for="chave" { "Chave de API" }
            input id="chave" name="chave" type="password" autocomplete="off" required;
            button type="submit" { "Entrar" }
        }
        h2 { "Empresas com provedor de identidade" }
        form method="get" action="/console/entrar/oidc" {
            // answered with a link to the provider, not a redirect (`oidc_sign_in::begin`)
            input type="hidden" name="via" value="formulario";
            label for="empresa" { "CNPJ ou identificador da empresa" }
            input id="empresa" name="empresa" type="text" autocomplete="organization" required;
            button type="submit" { "Entrar pelo provedor de identidade" }
        }
    };
    let mut res = layout::page(status, "Entrar", None, main);
    set_cookie(
        &mut res,
        visit.settings(),
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

/// `POST /console/entrar`: the key checked, a session opened, 303 to the home page.
pub async fn sign_in(visit: Visit, body: web::Bytes) -> HttpResponse {
    let Ok(form) = serde_urlencoded::from_bytes::<SignInForm>(&body) else {
        return sign_in_page(
            &visit,
            StatusCode::BAD_REQUEST,
            Some("Formulário inválido."),
        );
    };
    let expected = visit.cookie(SIGN_IN_COOKIE).unwrap_or_default();
    if expected.is_empty() || !same_token(&form.csrf, &expected) {
        return Refusal::BadCsrf.page(true);
    }
    let key = form.chave.trim().to_owned();
    let sessions = visit.console.sessions.clone();
    // a task-local: taken here, not on the blocking thread
    let limiter = delivery_http::rate_limit::current_limiter();
    let opened = in_blocking_hop(&visit.state, move |s| {
        let caller = s.auth.authenticate(Some(&key)).map_err(ApiError::from)?;
        // a sign-in with a valid key is one of the company's requests, as every console page is
        // (issue 39: it was never charged); a made-up key is a 401, charged to the address
        check_rate(limiter.as_deref(), caller.quota_of, 1)?;
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
                &visit,
                StatusCode::UNAUTHORIZED,
                Some("Chave inválida ou revogada."),
            )
        }
        Err(e) => return Refusal::Api(e).page(true),
    };
    let settings = visit.settings();
    let mut res = see_other("/console");
    set_cookie(&mut res, settings, SESSION_COOKIE, &id, None);
    set_cookie(&mut res, settings, SIGN_IN_COOKIE, "", Some(0));
    res
}

/// `POST /console/sair`: the session ended (with its CSRF token), its cookie deleted; a person
/// signed in at the company's identity provider goes on to sign out there
/// (`oidc_sign_out`), a key's session back to the sign-in page.
pub async fn sign_out(visit: Visit, body: web::Bytes) -> HttpResponse {
    let csrf = csrf_of(&body);
    let signed = match visit
        .signed_in("/console/sair", &[], Some(&csrf), |_, _| Ok(()))
        .await
    {
        Ok((signed, ())) => signed,
        Err(refusal) => return refusal.page(true),
    };
    let sessions = visit.console.sessions.clone();
    let company = signed.call.caller.company.id;
    let cookie = signed.cookie;
    let id_token = match in_blocking_hop(&visit.state, move |_| Ok(sessions.close(&cookie)?)).await
    {
        Ok(id_token) => id_token,
        Err(e) => return Refusal::Api(e).page(true),
    };
    let at_provider = match id_token {
        Some(id_token) => oidc_sign_out::end_session_url(&visit, company, id_token).await,
        None => None,
    };
    let mut res = match at_provider {
        Some(location) => oidc_sign_out::continue_page(&location),
        None => see_other("/console"),
    };
    set_cookie(&mut res, visit.settings(), SESSION_COOKIE, "", Some(0));
    res
}
