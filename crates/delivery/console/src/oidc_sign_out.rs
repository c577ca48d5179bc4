//! Signing out at the company's identity provider (issue 38, part 1; OpenID Connect RP-Initiated
//! Logout 1.0; docs/console.md, "Signing out at the provider"). "Sair" on a session a person
//! opened at the provider ends the console's session first (`sign_in::sign_out`), then sends the
//! browser to the provider's `end_session_endpoint` (from its discovery document) with the
//! `id_token` of the sign-in as `id_token_hint` (kept encrypted with the session, on the server
//! only), `post_logout_redirect_uri` (the console's sign-in page, on the host the browser used:
//! the client must register it at the provider), `client_id` and a fresh `state`.
//!
//! Sent as a page, not a 303: "Sair" is a form, and a browser enforcing the console's
//! `form-action 'self'` refuses a form whose answer redirects to another origin (as for the
//! sign-in form, `oidc_sign_in::continue_page`). The page's `Refresh` header takes the browser
//! on at once (a navigation of the page, outside `form-action`); its link does when a browser
//! ignores the header. The CSP is not widened.
//!
//! When the provider cannot be reached, has no `end_session_endpoint`, or the company's provider
//! is gone, the console's session is still ended and the person lands on the sign-in page (logged).

use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use delivery_http::blocking::in_blocking_hop;
use domain::CompanyId;
use maud::html;
use ports::EncryptedSecret;

use crate::layout;
use crate::session::random_token;
use crate::visit::Visit;

/// Where the provider sends the browser back: the console's sign-in page, on the host the
/// browser used (registered at the provider as a `post_logout_redirect_uri`).
fn back_to_sign_in(visit: &Visit) -> String {
    let info = visit.req.connection_info();
    format!("{}://{}/console", info.scheme(), info.host())
}

/// The provider's sign-out URL for the session of `company` that kept `id_token`; `None` when
/// there is none to go to (the reason logged).
pub async fn end_session_url(
    visit: &Visit,
    company: CompanyId,
    id_token: EncryptedSecret,
) -> Option<String> {
    let oidc = visit.console.oidc.clone()?;
    let store = oidc.clone();
    let found = in_blocking_hop(&visit.state, move |_| {
        Ok(store.setup.store.provider(company)?)
    })
    .await;
    let provider = match found {
        Ok(Some(provider)) => provider,
        Ok(None) => {
            tracing::info!("the company's identity provider is gone: signed out locally");
            return None;
        }
        Err(e) => {
            tracing::warn!(error = %e, "the company's identity provider could not be read: signed out locally");
            return None;
        }
    };
    let Ok(hint) = oidc.setup.cipher.decrypt(&id_token) else {
        tracing::error!("a session's id_token does not decrypt: signed out locally");
        return None;
    };
    let issuer = provider.issuer.clone();
    let calls = oidc.clone();
    let discovery = match web::block(move || calls.client.provider(&issuer)).await {
        Ok(Ok((discovery, _))) => discovery,
        Ok(Err(e)) => {
            tracing::warn!(error = %format!("{e:#}"), "the identity provider's discovery failed: signed out locally");
            return None;
        }
        Err(_) => return None,
    };
    let Some(endpoint) = discovery.end_session_endpoint.as_deref() else {
        tracing::info!("the identity provider has no end_session_endpoint: signed out locally");
        return None;
    };
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("id_token_hint", &hint)
        .append_pair("post_logout_redirect_uri", &back_to_sign_in(visit))
        .append_pair("client_id", &provider.client_id)
        // the spec's opaque value, echoed back to the sign-in page, which keeps nothing for it
        .append_pair("state", &random_token())
        .finish();
    let separator = if endpoint.contains('?') { '&' } else { '?' };
    Some(format!("{endpoint}{separator}{query}"))
}

/// The answer to "Sair" when the provider's session is to end too: the console's session is
/// over; on to `location` at once (`Refresh`), or by the link.
pub fn continue_page(location: &str) -> HttpResponse {
    let mut res = layout::page(
        StatusCode::OK,
        "Você saiu do console",
        None,
        html! {
            p { "A sua sessão no console terminou. Falta sair do provedor de identidade da empresa." }
            p { a href=(location) { "Sair também do provedor de identidade" } }
        },
    );
    if let Ok(value) = HeaderValue::from_str(&format!("0; url={location}")) {
        res.headers_mut()
            .insert(HeaderName::from_static("refresh"), value);
    }
    res
}
