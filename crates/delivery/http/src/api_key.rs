//! The `Api-Key` header. Extracted (and checked for shape, with no database query) before the
//! body, so a request without a usable key is 401 whatever its body; the lookup happens in the
//! request's blocking hop.

use std::future::{ready, Ready};

use actix_web::{dev::Payload, FromRequest, HttpRequest};

use crate::error::ApiError;

pub const API_KEY_HEADER: &str = "Api-Key";

/// The raw key. Its `Debug` hides it: keys never reach a log line.
pub struct ApiKeyHeader(String);

impl ApiKeyHeader {
    pub fn as_str(&self) -> &str {
        &self.0
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
        ready(match key {
            Some(k) => Ok(ApiKeyHeader(k.to_owned())),
            None => Err(ApiError::Unauthorized),
        })
    }
}
