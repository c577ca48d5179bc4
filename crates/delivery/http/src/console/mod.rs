//! `/console` (issue 26; docs/console.md): server-rendered pages in Portuguese for the people who
//! are not developers, signed in with an API key exchanged for a session. Outside `/api`: no
//! `Api-Key` header, no envelope; each page checks the session's key and its scopes itself
//! (`signed_in`), as `routes/grants.rs` does for `/api`, and runs in one blocking hop like the
//! API's handlers.

mod accesses;
mod chart;
mod export;
pub(crate) use chart::ChartRows;
pub(crate) use export::ExportsUnderWay;
mod health;
mod html;
mod human;
mod operator;
mod pages;
mod receipt;
pub mod session;
mod sign_in;
mod subjects;

use std::sync::Arc;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use application::Services;
use domain::{Scope, Scopes};

pub use session::{ConsoleSettings, Sessions};

use crate::blocking::{in_blocking_hop, Call};
use crate::error::ApiError;
use crate::state::ApiState;

const STYLESHEET: &str = include_str!("../../assets/console/estilo.css");
/// The request page's receipt check, run in the browser (docs/console.md, "Receipts").
const RECEIPT_SCRIPT: &str = include_str!("../../assets/console/recibo.js");

pub fn configure(cfg: &mut web::ServiceConfig) {
    use crate::routes::not_allowed;
    cfg.service(
        web::resource("/console")
            .route(web::get().to(sign_in::home))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/console/estilo.css")
            .route(web::get().to(stylesheet))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/console/recibo.js")
            .route(web::get().to(receipt_script))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/console/solicitacoes/{id}/recibo")
            .route(web::get().to(receipt::download))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/console/solicitacoes/{id}/verificacao")
            .route(web::get().to(receipt::material))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/console/entrar")
            .route(web::post().to(sign_in::sign_in))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/console/sair")
            .route(web::post().to(sign_in::sign_out))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/console/solicitacoes/{id}")
            .route(web::get().to(pages::request))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/console/acessos")
            .route(web::get().to(accesses::list))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/console/titulares")
            .route(web::get().to(subjects::search_form))
            .route(web::post().to(subjects::search))
            .default_service(not_allowed("GET, POST")),
    )
    .service(
        web::resource("/console/webhooks")
            .route(web::get().to(operator::webhooks))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/console/webhooks/{id}/entregas")
            .route(web::get().to(operator::deliveries))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/console/webhooks/{id}/testar")
            .route(web::post().to(operator::test))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/console/webhooks/{id}/reativar")
            .route(web::post().to(operator::reenable))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/console/webhooks/{id}/segredo")
            .route(web::post().to(operator::rotate_secret))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/console/webhooks/{id}/entregas/{entrega}/reenviar")
            .route(web::post().to(operator::replay))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/console/painel")
            .route(web::get().to(chart::page))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/console/exportar")
            .route(web::get().to(export::export))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/console/pgcc")
            .route(web::get().to(health::page))
            .default_service(not_allowed("GET")),
    );
}

async fn stylesheet() -> HttpResponse {
    let mut res = HttpResponse::Ok().body(STYLESHEET);
    html::secure_headers(&mut res, "text/css; charset=utf-8");
    res
}

async fn receipt_script() -> HttpResponse {
    let mut res = HttpResponse::Ok().body(RECEIPT_SCRIPT);
    html::secure_headers(&mut res, "text/javascript; charset=utf-8");
    res
}

/// The value of cookie `name` of the request (actix's cookie feature is off: parsed here).
fn cookie(req: &HttpRequest, name: &str) -> Option<String> {
    req.headers()
        .get_all(header::COOKIE)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.to_owned())
}

/// A `Set-Cookie` for the console's path: HttpOnly, SameSite=Strict, `Secure` when configured;
/// `max_age` 0 deletes it, `None` makes it end with the browser.
fn set_cookie(
    res: &mut HttpResponse,
    settings: ConsoleSettings,
    name: &str,
    value: &str,
    max_age: Option<u64>,
) {
    let mut cookie = format!("{name}={value}; Path=/console; HttpOnly; SameSite=Strict");
    if let Some(age) = max_age {
        cookie.push_str(&format!("; Max-Age={age}"));
    }
    if settings.secure_cookies {
        cookie.push_str("; Secure");
    }
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        res.headers_mut().append(header::SET_COOKIE, value);
    }
}

/// 303 to `location` (after a form, or to the sign-in page).
fn see_other(location: &str) -> HttpResponse {
    let mut res = HttpResponse::SeeOther()
        .insert_header((header::LOCATION, location.to_owned()))
        .finish();
    html::secure_headers(&mut res, "text/html; charset=utf-8");
    res
}

/// A signed-in request: the session's cookie value, its CSRF token, and its key authenticated
/// again (revoked: no session).
pub(crate) struct SignedIn {
    pub cookie: String,
    pub csrf: String,
    pub call: Call,
}

impl SignedIn {
    pub fn scopes(&self) -> Scopes {
        self.call.caller.scopes
    }
}

/// Why a console request is not answered with its page.
pub(crate) enum Refusal {
    /// No live session: to the sign-in page (a GET) or 401 (a form).
    NoSession,
    /// A session cookie that opens no session (made up, expired, or its key revoked): answered
    /// as [`Refusal::NoSession`], and counted as a failed authentication of the client.
    UnknownSession,
    /// The form's CSRF token is missing or wrong: nothing changed.
    BadCsrf,
    /// The session's key lacks every scope that grants the page.
    Forbidden(Scopes),
    /// What the API would have answered.
    Api(ApiError),
}

impl From<ApiError> for Refusal {
    fn from(e: ApiError) -> Self {
        match e {
            ApiError::Unauthorized => Refusal::NoSession,
            e => Refusal::Api(e),
        }
    }
}

impl Refusal {
    /// The page of the refusal; `is_form`: the request was a POST.
    pub fn page(self, is_form: bool) -> HttpResponse {
        match self {
            Refusal::NoSession | Refusal::UnknownSession if !is_form => see_other("/console"),
            Refusal::NoSession | Refusal::UnknownSession => html::page(
                StatusCode::UNAUTHORIZED,
                "Sessão encerrada",
                "",
                "<p>Sua sessão terminou ou não existe. Nada foi alterado.</p>\
                 <p><a href=\"/console\">Entrar novamente</a></p>",
            ),
            Refusal::BadCsrf => html::page(
                StatusCode::FORBIDDEN,
                "Formulário recusado",
                "",
                "<p>O formulário não trazia o código de segurança desta sessão. Nada foi \
                 alterado. Volte à página e envie o formulário de novo.</p>\
                 <p><a href=\"/console\">Início</a></p>",
            ),
            Refusal::Forbidden(granted_to) => html::page(
                StatusCode::FORBIDDEN,
                "Sem permissão",
                "",
                &format!(
                    "<p>A chave desta sessão não tem o escopo que esta página exige ({}).</p>\
                     <p><a href=\"/console\">Início</a></p>",
                    granted_to
                        .names()
                        .iter()
                        .map(|s| human::scope_label(s))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            Refusal::Api(ApiError::NotFound(_)) => html::page(
                StatusCode::NOT_FOUND,
                "Não encontrado",
                "",
                "<p>Nada com este identificador para a sua empresa.</p>\
                 <p><a href=\"/console\">Início</a></p>",
            ),
            Refusal::Api(ApiError::RateLimited(status)) => {
                let mut res = html::page(
                    StatusCode::TOO_MANY_REQUESTS,
                    "Muitas requisições",
                    "",
                    "<p>A empresa passou do seu limite de requisições por segundo (o mesmo da \
                     API). Nada foi feito. Tente de novo em instantes.</p>\
                     <p><a href=\"/console\">Início</a></p>",
                );
                for (name, value) in status.headers() {
                    res.headers_mut().insert(name, value);
                }
                res
            }
            Refusal::Api(ApiError::Conflict(why)) => html::page(
                StatusCode::CONFLICT,
                "Não foi possível fazer isto agora",
                "",
                // a conflict's message is the API's, written for the caller: no row in it
                &format!(
                    "<p>{}</p><p><a href=\"/console\">Início</a></p>",
                    html::esc(&why)
                ),
            ),
            Refusal::Api(e) => {
                let status = e.status_code();
                if status.is_server_error() {
                    tracing::warn!(status = status.as_u16(), "console page failed: {e}");
                }
                html::page(
                    status,
                    "Não foi possível atender",
                    "",
                    "<p>O serviço não conseguiu atender agora. Tente de novo em instantes.</p>\
                     <p><a href=\"/console\">Início</a></p>",
                )
            }
        }
    }
}

/// The session of the request's cookie, its key authenticated again, then `work` run for it in
/// one blocking hop, when the key holds any of `granted_to` (an empty set: any key). `csrf`:
/// the token a form carried (`None` for a page that changes nothing). `route`: the page's
/// template, what the access log records.
pub(crate) async fn signed_in<T, F>(
    state: &web::Data<ApiState>,
    req: &HttpRequest,
    route: &'static str,
    granted_to: &[Scope],
    csrf: Option<&str>,
    work: F,
) -> Result<(SignedIn, T), Refusal>
where
    F: FnOnce(&Services, &Call) -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    let cookie = cookie(req, session::SESSION_COOKIE).ok_or(Refusal::NoSession)?;
    let sessions: Arc<Sessions> = state.console.clone();
    let granted_to = Scopes::of(granted_to);
    let sent_csrf = csrf.map(str::to_owned);
    let id = cookie.clone();
    // a task-local: taken here, not on the blocking thread
    let limiter = crate::rate_limit::current_limiter();
    // the session's store may be the database: read in the blocking hop, with the page's work
    let outcome = in_blocking_hop(state, move |s| {
        let Some(session) = sessions.touch(&id)? else {
            return Ok(Err(Refusal::UnknownSession));
        };
        if let Some(sent) = &sent_csrf {
            if !session::same_token(sent, &session.csrf) {
                return Ok(Err(Refusal::BadCsrf));
            }
        }
        let caller = match s
            .auth
            .authenticate_hash(&session.key_hash)
            .map_err(ApiError::from)
        {
            Ok(caller) => caller,
            Err(ApiError::Unauthorized) => {
                // the key was revoked: its session ends too
                sessions.close(&id)?;
                return Ok(Err(Refusal::UnknownSession));
            }
            Err(e) => return Ok(Err(Refusal::Api(e))),
        };
        if !granted_to.is_empty() && !caller.scopes.intersects(granted_to) {
            return Ok(Err(Refusal::Forbidden(granted_to)));
        }
        // a console page is one of the company's requests, as an API call is: one share of its
        // rate limit (429 when over, nothing done)
        if let Err(e) = crate::blocking::check_rate(limiter.as_deref(), caller.quota_of, 1) {
            return Ok(Err(Refusal::Api(e)));
        }
        let call = Call { caller, route };
        Ok(match work(s, &call) {
            Ok(value) => Ok((call, session.csrf, value)),
            Err(e) => Err(Refusal::from(e)),
        })
    })
    .await
    .map_err(Refusal::Api)?;
    let (call, csrf, value) = match outcome {
        Ok(done) => done,
        Err(Refusal::UnknownSession) => {
            // a cookie that opened nothing cost a lookup: a failed authentication of the
            // client's address, as a made-up API key is (issue 39; `failed_auth::guard`)
            crate::failed_auth::mark_failed(req);
            return Err(Refusal::NoSession);
        }
        Err(refusal) => return Err(refusal),
    };
    Ok((SignedIn { cookie, csrf, call }, value))
}

/// The navigation of a signed-in page: the pages the key's scopes allow, and sign-out. The
/// link of the page shown is marked `aria-current="page"`; the section a deeper page belongs
/// to (a request under Titulares, a URL's deliveries under Webhooks) `aria-current="true"`.
pub(crate) fn nav(signed: &SignedIn) -> String {
    let scopes = signed.scopes();
    let route = signed.call.route;
    let mut pages: Vec<(&str, &str, &[&str])> = vec![("/console", "Início", &[])];
    if scopes.contains(Scope::Auditor) {
        pages.push((
            "/console/titulares",
            "Titulares",
            &["/console/solicitacoes/"],
        ));
        pages.push(("/console/acessos", "Acessos", &[]));
        pages.push(("/console/exportar", "Exportar", &[]));
        pages.push(("/console/painel", "Painel", &[]));
    }
    if scopes.contains(Scope::Webhooks) || scopes.contains(Scope::Auditor) {
        pages.push(("/console/webhooks", "Webhooks", &["/console/webhooks/"]));
    }
    pages.push(("/console/pgcc", "PGCC", &[]));
    let links: String = pages
        .into_iter()
        .map(|(href, label, under)| {
            let current = if route == href {
                " aria-current=\"page\""
            } else if under.iter().any(|prefix| route.starts_with(prefix)) {
                " aria-current=\"true\""
            } else {
                ""
            };
            format!("<li><a href=\"{href}\"{current}>{label}</a></li>")
        })
        .collect();
    format!(
        "<nav aria-label=\"Principal\"><ul>{links}<li>{}</li></ul></nav>",
        html::post_form("/console/sair", &signed.csrf, "", "Sair")
    )
}
