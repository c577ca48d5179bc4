//! The HTTP side of idempotent creations: the `Idempotency-Key` header, the exact body bytes of
//! the request (its fingerprint), the bytes of an answer (kept for replays) and the replay.

use std::cell::RefCell;
use std::future::{ready, Future, Ready};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use actix_web::body::MessageBody;
use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use actix_web::http::{header, StatusCode};
use actix_web::web::{self, Bytes};
use actix_web::{FromRequest, HttpRequest, HttpResponse, ResponseError};
use application::{IdempotencyError, IdempotencyKey};
use domain::ValidationErrors;
use futures_core::Stream;
use ports::StoredResponse;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

pub const IDEMPOTENCY_KEY_HEADER: &str = "Idempotency-Key";
pub const IDEMPOTENT_REPLAYED_HEADER: &str = "Idempotent-Replayed";

/// The optional `Idempotency-Key` header: absent is `None`; present, it must be one value of 1 to
/// 255 visible ASCII characters, or the request is a 400 naming the header (before the body is
/// read).
#[derive(Debug)]
pub struct IdempotencyHeader(pub Option<IdempotencyKey>);

impl FromRequest for IdempotencyHeader {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let mut values = req.headers().get_all(IDEMPOTENCY_KEY_HEADER);
        let Some(first) = values.next() else {
            return ready(Ok(IdempotencyHeader(None)));
        };
        let key = if values.next().is_some() {
            None
        } else {
            first
                .to_str()
                .ok()
                .and_then(|raw| IdempotencyKey::parse(raw).ok())
        };
        ready(match key {
            Some(key) => Ok(IdempotencyHeader(Some(key))),
            None => Err(ApiError::BadRequest(format!(
                "o cabeçalho {IDEMPOTENCY_KEY_HEADER} deve ter um único valor de 1 a 255 \
                 caracteres ASCII visíveis"
            ))),
        })
    }
}

/// A JSON body decoded by the app's JSON extractor (same content types, size limit and error
/// answers as `web::Json`), with the exact bytes it read.
pub struct JsonWithBytes<T> {
    pub value: T,
    pub bytes: Bytes,
}

impl<T: DeserializeOwned + 'static> FromRequest for JsonWithBytes<T> {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, actix_web::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let seen = Rc::new(RefCell::new(Vec::new()));
        let tee = Tee {
            inner: payload.take(),
            seen: seen.clone(),
        };
        let stream: Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> = Box::pin(tee);
        let mut teed = Payload::Stream { payload: stream };
        let decoding = web::Json::<T>::from_request(req, &mut teed);
        Box::pin(async move {
            let value = decoding.await?.into_inner();
            let bytes = Bytes::from(seen.take());
            Ok(JsonWithBytes { value, bytes })
        })
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

/// The bytes of the success answer, as `HttpResponse::json` would write them.
pub fn success_answer<T: serde::Serialize>(envelope: &T) -> Result<StoredResponse, ApiError> {
    let body = serde_json::to_vec(envelope)
        .map_err(|e| ApiError::Internal(anyhow::Error::new(e).context("serializing an answer")))?;
    Ok(StoredResponse { status: 200, body })
}

/// The bytes of an error's answer (its envelope, as its `ResponseError` writes it), when the
/// error is a final outcome worth keeping: a 422 (a broken rule, or the PGCC's final refusal).
/// Any other error (PGCC timeout, failure or "try later" (503), database, bug) is not final:
/// `None`, the key is released and a retry runs again.
pub fn kept_error_answer(error: &ApiError) -> Option<StoredResponse> {
    if error.status_code() != StatusCode::UNPROCESSABLE_ENTITY {
        return None;
    }
    let response = error.error_response();
    let status = response.status().as_u16();
    match response.into_body().try_into_bytes() {
        Ok(body) => Some(StoredResponse {
            status,
            body: body.to_vec(),
        }),
        Err(_) => None,
    }
}

/// An answer as kept: its status, its bytes, labelled JSON (the media type is negotiated
/// afterwards like any other answer).
pub fn answer(kept: StoredResponse) -> HttpResponse {
    let status = StatusCode::from_u16(kept.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    HttpResponse::build(status)
        .insert_header((header::CONTENT_TYPE, "application/json"))
        .body(kept.body)
}

/// A kept answer replayed: the same status and bytes, plus `Idempotent-Replayed: true`.
pub fn replay(kept: StoredResponse) -> HttpResponse {
    let mut response = answer(kept);
    response.headers_mut().insert(
        header::HeaderName::from_static("idempotent-replayed"),
        header::HeaderValue::from_static("true"),
    );
    response
}

impl From<IdempotencyError> for ApiError {
    fn from(e: IdempotencyError) -> Self {
        match e {
            IdempotencyError::Mismatch => ApiError::Validation(ValidationErrors::single(
                IDEMPOTENCY_KEY_HEADER,
                "esta chave já foi usada com outra requisição (outro corpo ou outra rota); use \
                 uma nova chave",
            )),
            IdempotencyError::InProgress => ApiError::Conflict(
                "Uma requisição com esta Idempotency-Key ainda está em processamento; tente \
                 novamente em instantes."
                    .to_owned(),
            ),
            IdempotencyError::Repo(e) => e.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    fn header_of(values: &[&str]) -> Result<IdempotencyHeader, ApiError> {
        let mut req = TestRequest::default();
        for v in values {
            req = req.append_header((IDEMPOTENCY_KEY_HEADER, *v));
        }
        let req = req.to_http_request();
        IdempotencyHeader::from_request(&req, &mut Payload::None).into_inner()
    }

    #[test]
    fn no_header_is_none_and_a_valid_one_is_the_key() {
        assert!(header_of(&[]).unwrap().0.is_none());
        let key = header_of(&["pedido-42"]).unwrap().0.unwrap();
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

    #[test]
    fn only_422_answers_are_kept() {
        let kept = kept_error_answer(&ApiError::Validation(ValidationErrors::single(
            "cpfTitular",
            "inválido",
        )))
        .unwrap();
        assert_eq!(kept.status, 422);
        let body: serde_json::Value = serde_json::from_slice(&kept.body).unwrap();
        assert_eq!(body["data"]["erros"][0]["campo"], "cpfTitular");

        for not_final in [
            ApiError::Pgcc(ports::PgccError::Timeout),
            ApiError::Pgcc(ports::PgccError::Failed { status: 503 }),
            ApiError::Pgcc(ports::PgccError::TryLater {
                status: 429,
                retry_after_seconds: Some(3),
            }),
            ApiError::Pgcc(ports::PgccError::TryLater {
                status: 408,
                retry_after_seconds: None,
            }),
            ApiError::Unavailable(anyhow::anyhow!("down")),
            ApiError::Internal(anyhow::anyhow!("bug")),
        ] {
            assert!(kept_error_answer(&not_final).is_none(), "{not_final:?}");
        }
        let refused =
            kept_error_answer(&ApiError::Pgcc(ports::PgccError::Rejected { status: 404 })).unwrap();
        assert_eq!(refused.status, 422);
    }

    #[test]
    fn a_replay_has_the_same_status_and_bytes_and_says_so() {
        let replayed = replay(StoredResponse {
            status: 422,
            body: b"{\"x\":1}".to_vec(),
        });
        assert_eq!(replayed.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(
            replayed.headers().get(IDEMPOTENT_REPLAYED_HEADER).unwrap(),
            "true"
        );
        let body = replayed.into_body().try_into_bytes().unwrap();
        assert_eq!(&body[..], b"{\"x\":1}");
    }
}
