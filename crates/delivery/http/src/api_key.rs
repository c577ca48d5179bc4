//! The `Api-Key` header. Extracted (and checked for shape, with no database query) before the
//! body, so a request without a usable key is 401 whatever its body; the lookup happens in the
//! request's blocking hop.
//!
//! The extractor also finds the route's grant (`routes::grants`): when the key's scopes are
//! known from memory (the key cache) and none grants the route, the request is refused 403 here,
//! before the body is read; otherwise the hop checks them right after the lookup, before any
//! work (see `blocking`).

use std::future::{ready, Ready};

use actix_web::{dev::Payload, web, FromRequest, HttpRequest};
use application::Caller;
use domain::Scopes;

use crate::error::ApiError;
use crate::routes::grants::{self, Grant};
use crate::state::ApiState;

pub const API_KEY_HEADER: &str = "Api-Key";

/// The raw key, the grant of the route it is used on, and the key's resolution when it came
/// from memory (so the request's hop does not hash and look it up again). Its `Debug` hides
/// the key: keys never reach a log line.
pub struct ApiKeyHeader {
    key: String,
    grant: Option<&'static Grant>,
    cached: Option<Caller>,
}

impl ApiKeyHeader {
    pub fn as_str(&self) -> &str {
        &self.key
    }

    /// The key's resolution from memory, taken once (see `blocking`).
    pub(crate) fn take_cached(&mut self) -> Option<Caller> {
        self.cached.take()
    }

    /// The route's template as registered (what the record of reads names); `"<unmatched>"`
    /// for a route with no grant (which no key may use anyway).
    pub fn route(&self) -> &'static str {
        self.grant.map_or("<unmatched>", |g| g.path)
    }

    /// `Ok` when a key holding `scopes` may use this route; 403 otherwise (and for a route the
    /// grant table lacks).
    pub fn permits(&self, scopes: Scopes) -> Result<(), ApiError> {
        match self.grant {
            Some(grant) if scopes.intersects(grant.scopes) => Ok(()),
            Some(grant) => Err(ApiError::Forbidden {
                granted_to: grant.scopes,
            }),
            None => Err(ApiError::Forbidden {
                granted_to: Scopes::NONE,
            }),
        }
    }

    #[cfg(test)]
    pub(crate) fn for_tests(key: &str, grant: Option<&'static Grant>) -> Self {
        ApiKeyHeader {
            key: key.to_owned(),
            grant,
            cached: None,
        }
    }
}

impl std::fmt::Debug for ApiKeyHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKeyHeader(<redacted>)")
    }
}

impl FromRequest for ApiKeyHeader {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let key = req
            .headers()
            .get(API_KEY_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|k| application::looks_like_api_key(k));
        let Some(key) = key else {
            return ready(Err(ApiError::Unauthorized));
        };
        // Known from memory (and no last use to write): refused here, before the body is read.
        // Not known: the hop checks right after the lookup.
        let cached = req
            .app_data::<web::Data<ApiState>>()
            .and_then(|state| state.services.auth.authenticate_cached(Some(key)));
        let header = ApiKeyHeader {
            key: key.to_owned(),
            grant: grants::of_request(req),
            cached,
        };
        if let Some(caller) = &header.cached {
            if let Err(refused) = header.permits(caller.scopes) {
                return ready(Err(refused));
            }
        }
        ready(Ok(header))
    }
}

#[cfg(test)]
mod tests {
    use domain::Scope;

    use super::*;

    #[test]
    fn a_key_may_use_a_route_when_it_holds_any_of_its_scopes() {
        let grant = grants::find("POST", "/api/titulares/consentimentos");
        let header = ApiKeyHeader::for_tests("k", grant);
        assert!(header.permits(Scopes::of(&[Scope::Auditor])).is_ok());
        assert!(header.permits(Scopes::DEFAULT).is_ok());
        assert!(matches!(
            header.permits(Scopes::of(&[Scope::Check, Scope::Webhooks])),
            Err(ApiError::Forbidden { .. })
        ));
        assert_eq!(header.route(), "/api/titulares/consentimentos");
    }

    #[test]
    fn a_route_without_a_grant_is_refused_to_every_key() {
        let header = ApiKeyHeader::for_tests("k", None);
        let all = Scopes::of(&Scope::ALL);
        assert!(matches!(
            header.permits(all),
            Err(ApiError::Forbidden { .. })
        ));
    }
}
