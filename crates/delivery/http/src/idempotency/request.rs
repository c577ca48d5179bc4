//! What an idempotent request brings: the optional `Idempotency-Key` header, and its JSON body
//! with the exact bytes read (the fingerprint covers them).

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use actix_web::web::{self, Bytes};
use actix_web::{FromRequest, HttpRequest};
use futures_core::Stream;
use serde::de::DeserializeOwned;

use super::{request_fingerprint, IdempotencyKey, IDEMPOTENCY_KEY_HEADER};
use crate::error::ApiError;

/// A request sent with an `Idempotency-Key`: the key and the request's fingerprint.
#[derive(Debug, Clone)]
pub struct IdempotentRequest {
    pub key: IdempotencyKey,
    /// [`request_fingerprint`] of the method, the path and the body bytes.
    pub fingerprint: String,
}

/// A JSON body (decoded by the app's JSON extractor: same content types, size limit and error
/// answers as `web::Json`) and, when the request has an `Idempotency-Key`, what runs it under
/// the key. An invalid header is a 400 naming it, before the body is read.
pub struct IdempotentJson<T> {
    pub value: T,
    pub idempotency: Option<IdempotentRequest>,
}

impl<T: DeserializeOwned + 'static> FromRequest for IdempotentJson<T> {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, actix_web::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let key = match key_of(req) {
            Ok(key) => key,
            Err(e) => return Box::pin(std::future::ready(Err(e.into()))),
        };
        let decoding = decode_keeping_bytes::<T>(req, payload);
        let (method, path) = (req.method().clone(), req.path().to_owned());
        Box::pin(async move {
            let (value, bytes) = decoding.await?;
            let idempotency = key.map(|key| IdempotentRequest {
                key,
                fingerprint: request_fingerprint(method.as_str(), &path, &bytes),
            });
            Ok(IdempotentJson { value, idempotency })
        })
    }
}

/// A JSON body a route takes but does not require (`revogar`'s `{"motivo"}`), decoded as
/// [`crate::optional_json::OptionalJson`] decodes it (no body, an empty one or `null` is
/// `None`), and, when the request has an `Idempotency-Key`, what runs it under the key. The
/// fingerprint covers the body's bytes as received (none: the empty body), so a retry must
/// send the same bytes.
pub struct IdempotentOptionalJson<T> {
    pub value: Option<T>,
    pub idempotency: Option<IdempotentRequest>,
}

impl<T: DeserializeOwned + 'static> FromRequest for IdempotentOptionalJson<T> {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, actix_web::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let key = match key_of(req) {
            Ok(key) => key,
            Err(e) => return Box::pin(std::future::ready(Err(e.into()))),
        };
        let (method, path) = (req.method().clone(), req.path().to_owned());
        let fingerprint = move |bytes: &[u8]| {
            key.map(|key| IdempotentRequest {
                key,
                fingerprint: request_fingerprint(method.as_str(), &path, bytes),
            })
        };
        if crate::optional_json::declares_no_body(req) {
            let idempotency = fingerprint(b"");
            return Box::pin(std::future::ready(Ok(IdempotentOptionalJson {
                value: None,
                idempotency,
            })));
        }
        let decoding = decode_keeping_bytes::<Option<T>>(req, payload);
        Box::pin(async move {
            let (value, bytes) = decoding.await?;
            Ok(IdempotentOptionalJson {
                value,
                idempotency: fingerprint(&bytes),
            })
        })
    }
}

/// Decodes the body with the app's JSON extractor (`web::Json`: same content types, size limit
/// and error answers), keeping a copy of the bytes it read for the fingerprint.
fn decode_keeping_bytes<U: DeserializeOwned + 'static>(
    req: &HttpRequest,
    payload: &mut Payload,
) -> impl Future<Output = Result<(U, Vec<u8>), actix_web::Error>> {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let tee = Tee {
        inner: payload.take(),
        seen: seen.clone(),
    };
    let stream: Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> = Box::pin(tee);
    let mut teed = Payload::Stream { payload: stream };
    let decoding = web::Json::<U>::from_request(req, &mut teed);
    async move {
        let value = decoding.await?.into_inner();
        Ok((value, seen.take()))
    }
}

/// The optional `Idempotency-Key` header: absent is `None`; present, it must be one value of 1 to
/// 255 visible ASCII characters.
fn key_of(req: &HttpRequest) -> Result<Option<IdempotencyKey>, ApiError> {
    let mut values = req.headers().get_all(IDEMPOTENCY_KEY_HEADER);
    let Some(first) = values.next() else {
        return Ok(None);
    };
    let key = if values.next().is_some() {
        None
    } else {
        first
            .to_str()
            .ok()
            .and_then(|raw| IdempotencyKey::parse(raw).ok())
    };
    match key {
        Some(key) => Ok(Some(key)),
        None => Err(ApiError::BadRequest(format!(
            "o cabeçalho {IDEMPOTENCY_KEY_HEADER} deve ter um único valor de 1 a 255 \
             caracteres ASCII visíveis"
        ))),
    }
}

/// A payload stream that copies every chunk it passes on.
struct Tee {
    inner: Payload,
    seen: Rc<RefCell<Vec<u8>>>,
}

impl Stream for Tee {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_next(cx);
        if let Poll::Ready(Some(Ok(chunk))) = &polled {
            this.seen.borrow_mut().extend_from_slice(chunk);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use actix_web::http::StatusCode;
    use actix_web::test::TestRequest;
    use actix_web::ResponseError;

    use super::*;

    fn header_of(values: &[&str]) -> Result<Option<IdempotencyKey>, ApiError> {
        let mut req = TestRequest::default();
        for v in values {
            req = req.append_header((IDEMPOTENCY_KEY_HEADER, *v));
        }
        key_of(&req.to_http_request())
    }

    #[test]
    fn no_header_is_none_and_a_valid_one_is_the_key() {
        assert!(header_of(&[]).unwrap().is_none());
        let key = header_of(&["pedido-42"]).unwrap().unwrap();
        assert_eq!(key.as_str(), "pedido-42");
    }

    #[test]
    fn an_invalid_or_repeated_header_is_a_400_naming_it() {
        for values in [
            vec![""],
            vec!["com espaço"],
            vec![&*"k".repeat(256)],
            vec!["a", "b"],
        ] {
            let error = header_of(&values).unwrap_err();
            assert_eq!(error.status_code(), StatusCode::BAD_REQUEST, "{values:?}");
            assert!(error.to_string().contains("Idempotency-Key"), "{error}");
        }
    }
}
