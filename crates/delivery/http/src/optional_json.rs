//! A JSON body a route takes but does not require (`revogar`'s `{"motivo"}`): no body at all, an
//! empty one (`Content-Length: 0`) or `null` is `None`, as before the body existed; anything
//! else is decoded exactly as `web::Json` decodes (the shared `JsonConfig`: 415 for a body that
//! is not JSON, 413 over the limit, 400 with serde's message reduced), so a bad body is never
//! mistaken for no body.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest};
use serde::de::DeserializeOwned;

/// The decoded body, or `None` when the request carried none.
pub struct OptionalJson<T>(pub Option<T>);

/// Whether the request says it has no body: `Content-Length: 0`, or neither a length nor a
/// chunked transfer (HTTP/1.1: then there is no body).
pub(crate) fn declares_no_body(req: &HttpRequest) -> bool {
    let headers = req.headers();
    match headers.get(header::CONTENT_LENGTH) {
        Some(length) => length.to_str().ok().map(str::trim) == Some("0"),
        None => !headers.contains_key(header::TRANSFER_ENCODING),
    }
}

impl<T: DeserializeOwned + 'static> FromRequest for OptionalJson<T> {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        if declares_no_body(req) {
            return Box::pin(std::future::ready(Ok(OptionalJson(None))));
        }
        let decoding = web::Json::<Option<T>>::from_request(req, payload);
        Box::pin(async move { Ok(OptionalJson(decoding.await?.into_inner())) })
    }
}
