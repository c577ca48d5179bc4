//! Signing in with the company's identity provider (issue 38, part 1; docs/console.md, "Signing
//! in with the company's identity provider"): OpenID Connect's authorization code flow with PKCE.
//!
//! `GET /console/entrar/oidc?empresa=<id or CNPJ>` keeps, server-side under the SHA-256 of an
//! opaque `state` (`<company id>.<random>`), a fresh `nonce` and PKCE verifier for 10 minutes, and
//! sends the browser to the provider. `GET /console/oidc/retorno` (the redirect URI) takes that
//! sign-in once, exchanges the code (with the verifier and the client secret), checks the
//! `id_token` ([`crate::id_token`]) and reads the person's roles from it: every sign-in reads them
//! again, so a role removed at the provider is gone at the next sign-in. No role of the console:
//! refused (403). Otherwise a session of the person is opened as a key's would be.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use chrono::Utc;
use delivery_http::blocking::{check_rate, in_blocking_hop};
use delivery_http::ApiError;
use domain::{scopes_of_roles, Cnpj, CompanyId};
use maud::html;
use ports::{CompanyRepository, ConsoleOidcStore, OidcProvider, PendingSignIn, SecretCipher};
use serde::Deserialize;

use crate::id_token::{self, Expected, Verified};
use crate::idp::{pkce_challenge, IdpClient};
use crate::layout::{self, alert};
use crate::refusal::Refusal;
use crate::session::{company_of, digest, random_token, SESSION_COOKIE};
use crate::visit::{see_other, set_cookie, Visit};

/// How long a sign-in may stay at the provider.
const PENDING_MINUTES: i64 = 10;

/// What the console needs to sign people in at their companies' providers.
pub struct OidcSetup {
    /// The companies' providers and the sign-ins under way.
    pub store: Arc<dyn ConsoleOidcStore>,
    /// Decrypts the client secrets (the webhook secrets' cipher).
    pub cipher: Arc<dyn SecretCipher>,
    /// The company of a person's session, read on every page.
    pub companies: Arc<dyn CompanyRepository>,
}

/// [`OidcSetup`] and the provider calls' cache.
pub struct Oidc {
    pub setup: OidcSetup,
    pub client: IdpClient,
}

#[derive(Deserialize)]
struct BeginQuery {
    #[serde(default)]
    empresa: String,
    /// `formulario` when the sign-in page's form sent it (see [`begin`]).
    #[serde(default)]
    via: String,
}

#[derive(Deserialize)]
struct ReturnQuery {
    #[serde(default)]
    code: String,
    #[serde(default)]
    state: String,
    #[serde(default)]
    error: String,
    /// RFC 9207: the issuer that answered, when the provider says it (checked: mix-up attacks).
    iss: Option<String>,
}

/// A refusal of the sign-in: its status and what the person is told (never why in detail).
fn refused(status: StatusCode, message: &str) -> HttpResponse {
    layout::page(
        status,
        "Entrar",
        None,
        html! {
            (alert(Some(message)))
            p { a href="/console" { "Voltar à página de entrada" } }
        },
    )
}

/// `GET /console/entrar/oidc?empresa=<id or CNPJ>`: to the company's provider (303).
pub async fn begin(visit: Visit) -> HttpResponse {
    let Some(oidc) = visit.console.oidc.clone() else {
        return refused(StatusCode::NOT_FOUND, NO_PROVIDER);
    };
    let query: BeginQuery =
        serde_urlencoded::from_str(visit.req.query_string()).unwrap_or(BeginQuery {
            empresa: String::new(),
            via: String::new(),
        });
    let from_form = query.via == "formulario";
    // each start writes a row and may call the provider: counted against the client's address
    // as a failed authentication, so one address cannot flood either
    delivery_http::failed_auth::mark_failed(&visit.req);
    let empresa = query.empresa.trim().to_owned();
    let lookup = oidc.clone();
    let found = in_blocking_hop(&visit.state, move |_| {
        Ok(find_provider(&*lookup.setup.store, &empresa)?)
    })
    .await;
    let (company, provider) = match found {
        Ok(Some(found)) => found,
        Ok(None) => return refused(StatusCode::NOT_FOUND, NO_PROVIDER),
        Err(e) => return Refusal::Api(e).page(false),
    };
    let issuer = provider.issuer.clone();
    let calls = oidc.clone();
    let discovery = match web::block(move || calls.client.provider(&issuer)).await {
        Ok(Ok((discovery, _))) => discovery,
        Ok(Err(e)) => {
            tracing::warn!(error = %format!("{e:#}"), "the identity provider's discovery failed");
            return refused(StatusCode::BAD_GATEWAY, PROVIDER_DOWN);
        }
        Err(_) => return refused(StatusCode::SERVICE_UNAVAILABLE, PROVIDER_DOWN),
    };
    let state = format!("{}.{}", company.0.simple(), random_token());
    let pending = PendingSignIn {
        nonce: random_token(),
        verifier: random_token(),
    };
    let store = oidc.clone();
    let (state_hash, kept) = (digest(&state), pending.clone());
    let begun = in_blocking_hop(&visit.state, move |_| {
        let now = Utc::now();
        let stale = now - chrono::Duration::minutes(PENDING_MINUTES);
        Ok(store
            .setup
            .store
            .begin(company, state_hash, &kept, now, stale)?)
    })
    .await;
    if let Err(e) = begun {
        return Refusal::Api(e).page(false);
    }
    let scope = format!("openid email {}", provider.roles_claim);
    let location = format!(
        "{}{}{}",
        discovery.authorization_endpoint,
        if discovery.authorization_endpoint.contains('?') {
            '&'
        } else {
            '?'
        },
        form_urlencoded::Serializer::new(String::new())
            .append_pair("response_type", "code")
            .append_pair("client_id", &provider.client_id)
            .append_pair("redirect_uri", &redirect_uri(&visit))
            .append_pair("scope", &scope)
            .append_pair("state", &state)
            .append_pair("nonce", &pending.nonce)
            .append_pair("code_challenge", &pkce_challenge(&pending.verifier))
            .append_pair("code_challenge_method", "S256")
            .finish()
    );
    if from_form {
        return continue_page(&location);
    }
    see_other(&location)
}

/// The answer to the sign-in page's form: a link to the provider instead of a 303. A browser
/// enforcing the console's `form-action 'self'` refuses a form whose answer redirects to another
/// origin (Chromium does), and widening it would list every company's issuer on the sign-in
/// page; a link followed by the person is a navigation, not a form. A bookmark of
/// `/console/entrar/oidc?empresa=` (no `via`) still gets the 303.
fn continue_page(location: &str) -> HttpResponse {
    layout::page(
        StatusCode::OK,
        "Entrar",
        None,
        html! {
            p { "A sua empresa usa um provedor de identidade: entre por ele." }
            p { a href=(location) { "Continuar no provedor de identidade" } }
        },
    )
}

const NO_PROVIDER: &str = "Esta empresa não tem provedor de identidade configurado. Entre com \
                           uma chave de API.";
const PROVIDER_DOWN: &str = "O provedor de identidade da empresa não respondeu. Tente de novo \
                             em instantes.";
const FAILED: &str = "A entrada pelo provedor de identidade falhou. Entre de novo.";

/// The company named by `empresa` (its id, or its CNPJ) and its provider, when it has one.
fn find_provider(
    store: &dyn ConsoleOidcStore,
    empresa: &str,
) -> Result<Option<(CompanyId, OidcProvider)>, ports::RepoError> {
    let company = match uuid::Uuid::try_parse(empresa) {
        Ok(id) => Some(CompanyId(id)),
        Err(_) => match Cnpj::parse(empresa) {
            Ok(cnpj) => store.company_with_provider_by_cnpj(cnpj.as_str())?,
            Err(_) => None,
        },
    };
    let Some(company) = company else {
        return Ok(None);
    };
    Ok(store.provider(company)?.map(|p| (company, p)))
}

/// The redirect URI, on the host the browser used (the provider accepts only the one
/// registered for the client: docs/console.md).
fn redirect_uri(visit: &Visit) -> String {
    let info = visit.req.connection_info();
    format!("{}://{}/console/oidc/retorno", info.scheme(), info.host())
}

/// `GET /console/oidc/retorno?code&state`: the sign-in checked, a session opened, 303 home.
/// Every refusal counts against the client's address as a failed authentication.
pub async fn finish(visit: Visit) -> HttpResponse {
    let res = checked_return(&visit).await;
    if res.status() != StatusCode::SEE_OTHER {
        delivery_http::failed_auth::mark_failed(&visit.req);
    }
    res
}

async fn checked_return(visit: &Visit) -> HttpResponse {
    let Some(oidc) = visit.console.oidc.clone() else {
        return refused(StatusCode::NOT_FOUND, NO_PROVIDER);
    };
    let query: ReturnQuery = match serde_urlencoded::from_str(visit.req.query_string()) {
        Ok(q) => q,
        Err(_) => return refused(StatusCode::BAD_REQUEST, FAILED),
    };
    let Some(company) = company_of(&query.state) else {
        return refused(StatusCode::BAD_REQUEST, FAILED);
    };
    let store = oidc.clone();
    let state_hash = digest(&query.state);
    let taken = in_blocking_hop(&visit.state, move |_| {
        let stale = Utc::now() - chrono::Duration::minutes(PENDING_MINUTES);
        let Some(pending) = store.setup.store.take(company, state_hash, stale)? else {
            return Ok(None);
        };
        Ok(store.setup.store.provider(company)?.map(|p| (pending, p)))
    })
    .await;
    let (pending, provider) = match taken {
        Ok(Some(found)) => found,
        Ok(None) => return refused(StatusCode::BAD_REQUEST, FAILED),
        Err(e) => return Refusal::Api(e).page(false),
    };
    if query
        .iss
        .as_deref()
        .is_some_and(|iss| iss != provider.issuer)
    {
        return refused(StatusCode::UNAUTHORIZED, FAILED);
    }
    if !query.error.is_empty() || query.code.is_empty() {
        return refused(StatusCode::UNAUTHORIZED, FAILED);
    }
    let Ok(secret) = oidc.setup.cipher.decrypt(&provider.client_secret) else {
        tracing::error!("the identity provider's client secret does not decrypt");
        return refused(StatusCode::SERVICE_UNAVAILABLE, PROVIDER_DOWN);
    };
    let redirect = redirect_uri(visit);
    let calls = oidc.clone();
    let checked = web::block(move || {
        let (discovery, _) = calls.client.provider(&provider.issuer)?;
        let token = calls.client.exchange(
            &discovery,
            &provider.client_id,
            &secret,
            &query.code,
            &redirect,
            &pending.verifier,
        )?;
        let kid = jsonwebtoken::decode_header(&token).ok().and_then(|h| h.kid);
        let keys = calls.client.keys_with(&provider.issuer, kid.as_deref())?;
        let verified = id_token::verify(
            &token,
            &keys,
            &Expected {
                issuer: &provider.issuer,
                client_id: &provider.client_id,
                nonce: &pending.nonce,
                roles_claim: &provider.roles_claim,
            },
        );
        // kept (encrypted) with the session: the `id_token_hint` of the sign-out at the provider
        Ok::<_, anyhow::Error>(verified.map(|v| (v, calls.setup.cipher.encrypt(&token))))
    })
    .await;
    let (Verified { person, roles }, id_token) = match checked {
        Ok(Ok(Ok(verified))) => verified,
        Ok(Ok(Err(refusal))) => {
            tracing::warn!(reason = %refusal, "an id_token was refused");
            return refused(StatusCode::UNAUTHORIZED, FAILED);
        }
        Ok(Err(e)) => {
            tracing::warn!(error = %format!("{e:#}"), "signing in at the identity provider failed");
            return refused(StatusCode::BAD_GATEWAY, FAILED);
        }
        Err(_) => return refused(StatusCode::SERVICE_UNAVAILABLE, PROVIDER_DOWN),
    };
    let Some(scopes) = scopes_of_roles(roles.iter().map(String::as_str)) else {
        tracing::warn!(sub = %person.sub, "a person without a console role tried to sign in");
        return refused(
            StatusCode::FORBIDDEN,
            "Sua conta no provedor de identidade não tem papel no console (dpo, operador ou \
             leitura). Peça o papel a quem administra o provedor.",
        );
    };
    let sessions = visit.console.sessions.clone();
    let limiter = delivery_http::rate_limit::current_limiter();
    let sub = person.sub.clone();
    let opened = in_blocking_hop(&visit.state, move |_| {
        // a sign-in is one of the company's requests, as a key's is
        check_rate(limiter.as_deref(), company, 1)?;
        sessions
            .open_person(company, person, scopes, id_token)?
            .ok_or_else(|| ApiError::Unavailable(anyhow::anyhow!("too many console sessions")))
    })
    .await;
    let id = match opened {
        Ok((id, _)) => id,
        Err(e) => return Refusal::Api(e).page(false),
    };
    tracing::info!(sub = %sub, scopes = %scopes, "a person signed in to the console");
    let mut res = see_other("/console");
    set_cookie(&mut res, visit.settings(), SESSION_COOKIE, &id, None);
    res
}
