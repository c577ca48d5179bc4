//! A request to the console ([`Visit`]): the API's state, the console's, and the request; its
//! session found and its key authenticated again ([`Visit::signed_in`]), with the cookies and
//! redirects the pages answer with.

use std::future::{ready, Ready};

use actix_web::dev::Payload;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, FromRequest, HttpRequest, HttpResponse};
use application::Services;
use delivery_http::blocking::{check_rate, in_blocking_hop, Call};
use delivery_http::{ApiError, ApiState};
use domain::{Scope, Scopes};
use ports::SessionHolder;

use crate::refusal::Refusal;
use crate::session::{self, ConsoleSettings, SESSION_COOKIE};
use crate::{layout, Console};

/// What every console handler is handed: the API's state, the console's, and the request.
pub struct Visit {
    pub state: web::Data<ApiState>,
    pub console: web::Data<Console>,
    pub req: HttpRequest,
}

impl FromRequest for Visit {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<ApiState>>().cloned();
        let console = req.app_data::<web::Data<Console>>().cloned();
        ready(match (state, console) {
            (Some(state), Some(console)) => Ok(Visit {
                state,
                console,
                req: req.clone(),
            }),
            // the binary mounts the console into the app that holds the API's state: a wiring
            // mistake, never a client's
            _ => Err(actix_web::error::ErrorInternalServerError(
                "the console is not mounted",
            )),
        })
    }
}

/// A signed-in request: the session's cookie value, its CSRF token, and its key authenticated
/// again (revoked: no session).
pub struct SignedIn {
    pub cookie: String,
    pub csrf: String,
    pub call: Call,
}

impl SignedIn {
    pub fn scopes(&self) -> Scopes {
        self.call.caller.scopes
    }

    /// The person of a session opened at the company's identity provider.
    pub fn person(&self) -> Option<&domain::Person> {
        self.call.caller.person.as_ref()
    }
}

impl Visit {
    /// The session of the request's cookie, its key authenticated again, then `work` run for it
    /// in one blocking hop, when the key holds any of `granted_to` (an empty set: any key).
    /// `csrf`: the token a form carried (`None` for a page that changes nothing). `route`: the
    /// page's template, what the access log records.
    pub async fn signed_in<T, F>(
        &self,
        route: &'static str,
        granted_to: &[Scope],
        csrf: Option<&str>,
        work: F,
    ) -> Result<(SignedIn, T), Refusal>
    where
        F: FnOnce(&Services, &Call) -> Result<T, ApiError> + Send + 'static,
        T: Send + 'static,
    {
        let cookie = self.cookie(SESSION_COOKIE).ok_or(Refusal::NoSession)?;
        let sessions = self.console.sessions.clone();
        let granted_to = Scopes::of(granted_to);
        let sent_csrf = csrf.map(str::to_owned);
        let id = cookie.clone();
        let oidc = self.console.oidc.clone();
        // a task-local: taken here, not on the blocking thread
        let limiter = delivery_http::rate_limit::current_limiter();
        // the session's store may be the database: read in the blocking hop, with the page's work
        let outcome = in_blocking_hop(&self.state, move |s| {
            let Some(session) = sessions.touch(&id)? else {
                return Ok(Err(Refusal::UnknownSession));
            };
            if let Some(sent) = &sent_csrf {
                if !session::same_token(sent, &session.csrf) {
                    return Ok(Err(Refusal::BadCsrf));
                }
            }
            let caller = match session.holder {
                SessionHolder::Key(key_hash) => {
                    match s.auth.authenticate_hash(&key_hash).map_err(ApiError::from) {
                        Ok(caller) => caller,
                        Err(ApiError::Unauthorized) => {
                            // the key was revoked: its session ends too
                            sessions.close(&id)?;
                            return Ok(Err(Refusal::UnknownSession));
                        }
                        Err(e) => return Ok(Err(Refusal::Api(e))),
                    }
                }
                SessionHolder::Person {
                    session_id,
                    person,
                    scopes,
                } => {
                    // the scopes the person's roles gave at sign-in (read again at the next)
                    let company = session::company_of(&id)
                        .zip(oidc.as_ref())
                        .map(|(company, oidc)| oidc.setup.companies.get(company))
                        .transpose()?
                        .flatten();
                    let Some(company) = company else {
                        sessions.close(&id)?;
                        return Ok(Err(Refusal::UnknownSession));
                    };
                    application::Caller {
                        // what the access log names where a key's id would be
                        key_id: session_id,
                        quota_of: company.id,
                        company,
                        scopes,
                        person: Some(person),
                    }
                }
            };
            if !granted_to.is_empty() && !caller.scopes.intersects(granted_to) {
                return Ok(Err(Refusal::Forbidden(granted_to)));
            }
            // a console page is one of the company's requests, as an API call is: one share of
            // its rate limit (429 when over, nothing done)
            if let Err(e) = check_rate(limiter.as_deref(), caller.quota_of, 1) {
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
                delivery_http::failed_auth::mark_failed(&self.req);
                return Err(Refusal::NoSession);
            }
            Err(refusal) => return Err(refusal),
        };
        Ok((SignedIn { cookie, csrf, call }, value))
    }

    /// The sessions' settings.
    pub fn settings(&self) -> ConsoleSettings {
        self.console.sessions.settings()
    }

    /// The value of cookie `name` of the request (actix's cookie feature is off: parsed here).
    pub fn cookie(&self, name: &str) -> Option<String> {
        self.req
            .headers()
            .get_all(header::COOKIE)
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_owned())
    }
}

/// Logs an action of the console that changed something (re-enabling a URL, rotating its secret,
/// sending its test event, replaying a delivery), naming who did it: the key's id or the
/// session's, and the person (`sub`, e-mail) when signed in at the company's identity provider
/// (issue 38). `route` is the page's template; `target` the URL's or the delivery's id.
pub fn log_action(call: &Call, route: &'static str, target: uuid::Uuid) {
    let caller = &call.caller;
    let (sub, email) = caller
        .person
        .as_ref()
        .map(|p| (p.sub.as_str(), p.email.as_deref().unwrap_or("")))
        .unwrap_or(("", ""));
    tracing::info!(
        route,
        %target,
        empresa = %caller.company.id.0,
        chave_ou_sessao = %caller.key_id,
        pessoa_sub = sub,
        pessoa_email = email,
        "console action"
    );
}

/// A `Set-Cookie` for the console's path: HttpOnly, SameSite=Strict, `Secure` when configured;
/// `max_age` 0 deletes it, `None` makes it end with the browser.
pub fn set_cookie(
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
pub fn see_other(location: &str) -> HttpResponse {
    let mut res = HttpResponse::SeeOther()
        .insert_header((header::LOCATION, location.to_owned()))
        .finish();
    layout::secure_headers(&mut res, "text/html; charset=utf-8");
    res
}

/// The `csrf` field of a posted form (missing or unreadable: empty, which no session has).
pub fn csrf_of(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct CsrfForm {
        #[serde(default)]
        csrf: String,
    }
    serde_urlencoded::from_bytes::<CsrfForm>(body)
        .map(|f| f.csrf)
        .unwrap_or_default()
}
