//! The edge of every request, before any route, key or extractor: what a body may be and how
//! long it may take to arrive.
//!
//! - A request body must come unencoded: a `Content-Encoding` other than `identity` is a 415
//!   before a byte of the body is read or the `Api-Key` looked at. actix-web's decompression is
//!   compiled out too (workspace `Cargo.toml`); refusing at the edge keeps the answer the
//!   envelope and the same on every route, whatever the build's features.
//! - A body is handed on through [`BoundedBody`]: whoever reads it (the JSON extractor, the depth
//!   check, the idempotency fingerprint) gets an overflow error past `body_limit` bytes and a
//!   timeout error when the whole body has not arrived within `body_timeout` of the request's
//!   head, answered 413 / 408 by [`crate::ApiError::from_payload_error`].
//!
//! A route that never reads its body does not wait for it: actix answers and closes the
//! connection after a short linger (`client_disconnect_timeout`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::header::{self, HeaderMap};
use actix_web::middleware::Next;
use actix_web::web::Bytes;
use actix_web::{Error, HttpMessage, ResponseError};
use futures_core::Stream;

use crate::error::ApiError;

/// The bounds applied to every request body.
#[derive(Debug, Clone, Copy)]
pub struct BodyBounds {
    /// Bytes a body may have (the same limit as the extractors').
    pub limit: usize,
    /// Time from the request's head to the last byte of its body.
    pub timeout: Duration,
    /// The bounds of an imported file (`POST /api/importacoes` and the console's upload form,
    /// `importacao.max_bytes` and `importacao.upload_timeout_seconds`): a file is read as it
    /// arrives, never held whole.
    pub upload_limit: usize,
    pub upload_timeout: Duration,
    /// The bound of an evidence file's upload (`evidencias.max_bytes`; docs/evidencias.md): its
    /// time is an imported file's (`upload_timeout`).
    pub evidence_limit: usize,
}

/// The routes whose body is an imported file (docs/imports.md): the API's, and the console's
/// upload form (a multipart body: the file plus its CSRF token and the parts' headers, which
/// [`FORM_OVERHEAD`] leaves room for; the file itself is bounded by its reader).
const UPLOAD_PATH: &str = "/api/importacoes";
const CONSOLE_UPLOAD_PATH: &str = "/console/importacoes";
const FORM_OVERHEAD: usize = 64 * 1024;

/// Whether the request uploads an evidence file (`PUT .../arquivos`, `PUT .../arquivos/{sha256}`,
/// `PUT /api/arquivos/{sha256}`).
fn uploads_evidence(method: &actix_web::http::Method, path: &str) -> bool {
    if method != actix_web::http::Method::PUT {
        return false;
    }
    if path.starts_with("/api/arquivos/") {
        return true;
    }
    path.strip_prefix("/api/solicitacao-consentimento/")
        .and_then(|rest| rest.split_once('/'))
        .is_some_and(|(_, tail)| tail == "arquivos" || tail.starts_with("arquivos/"))
}

/// Whether every coding listed in the request's `Content-Encoding` headers is `identity`
/// (case-insensitive, lists and repeated headers included). No header: identity. A value that is
/// not visible ASCII cannot name `identity` and is refused.
pub fn body_is_unencoded(headers: &HeaderMap) -> bool {
    headers.get_all(header::CONTENT_ENCODING).all(|value| {
        value.to_str().is_ok_and(|text| {
            text.split(',')
                .map(str::trim)
                // A list may have empty elements (RFC 9110, 5.6.1): they name no coding.
                .filter(|coding| !coding.is_empty())
                .all(|coding| coding.eq_ignore_ascii_case("identity"))
        })
    })
}

/// Middleware (`from_fn`) of the whole app: refuses encoded bodies, bounds the others.
pub async fn bound_body(
    mut req: ServiceRequest,
    next: Next<impl MessageBody>,
    bounds: BodyBounds,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, Error> {
    if !body_is_unencoded(req.headers()) {
        let refusal = ApiError::UnsupportedContentEncoding.error_response();
        return Ok(req.into_response(refusal).map_into_right_body());
    }
    match req.take_payload() {
        // No body (e.g. a GET): nothing to bound, no timer.
        Payload::None => {}
        payload => {
            let bounds =
                if req.method() == actix_web::http::Method::POST && req.path() == UPLOAD_PATH {
                    BodyBounds {
                        limit: bounds.upload_limit,
                        timeout: bounds.upload_timeout,
                        ..bounds
                    }
                } else if req.method() == actix_web::http::Method::POST
                    && req.path() == CONSOLE_UPLOAD_PATH
                {
                    BodyBounds {
                        limit: bounds.upload_limit.saturating_add(FORM_OVERHEAD),
                        timeout: bounds.upload_timeout,
                        ..bounds
                    }
                } else if uploads_evidence(req.method(), req.path()) {
                    BodyBounds {
                        limit: bounds.evidence_limit,
                        timeout: bounds.upload_timeout,
                        ..bounds
                    }
                } else {
                    bounds
                };
            req.set_payload(Payload::Stream {
                payload: Box::pin(BoundedBody::new(payload, bounds)),
            })
        }
    }
    Ok(next.call(req).await?.map_into_left_body())
}

/// What [`BoundedBody`] reports when the body did not arrive in time: an I/O error of kind
/// `TimedOut` whose source is this type, so it is told apart from a real socket timeout.
#[derive(Debug, thiserror::Error)]
#[error("request body not received within {0:?}")]
pub struct BodyTimedOut(pub Duration);

impl BodyTimedOut {
    /// Whether `err` is this timeout.
    pub fn is(err: &PayloadError) -> bool {
        matches!(err, PayloadError::Io(io) if io
            .get_ref()
            .is_some_and(|inner| inner.is::<BodyTimedOut>()))
    }
}

/// A request body that ends in an error past `limit` bytes or after its deadline. The deadline
/// is a timer of its own, so a body that stops arriving (a client trickling or stalling) is cut
/// when it passes, not when the next byte comes.
pub struct BoundedBody {
    inner: Payload,
    deadline: Pin<Box<tokio::time::Sleep>>,
    bounds: BodyBounds,
    received: usize,
    ended: bool,
}

impl BoundedBody {
    pub fn new(inner: Payload, bounds: BodyBounds) -> Self {
        BoundedBody {
            inner,
            deadline: Box::pin(tokio::time::sleep(bounds.timeout)),
            bounds,
            received: 0,
            ended: false,
        }
    }

    fn end_with(&mut self, err: PayloadError) -> Poll<Option<Result<Bytes, PayloadError>>> {
        self.ended = true;
        Poll::Ready(Some(Err(err)))
    }
}

impl Stream for BoundedBody {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                this.received = this.received.saturating_add(chunk.len());
                if this.received > this.bounds.limit {
                    return this.end_with(PayloadError::Overflow);
                }
                if this.deadline.as_mut().poll(cx).is_ready() {
                    return this.end_with(timed_out(this.bounds.timeout));
                }
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(None) => {
                this.ended = true;
                Poll::Ready(None)
            }
            Poll::Ready(Some(Err(e))) => this.end_with(e),
            // Registers the timer's waker too: the read ends at the deadline even if no byte comes.
            Poll::Pending if this.deadline.as_mut().poll(cx).is_ready() => {
                this.end_with(timed_out(this.bounds.timeout))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

fn timed_out(after: Duration) -> PayloadError {
    PayloadError::Io(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        BodyTimedOut(after),
    ))
}

#[cfg(test)]
mod tests {
    use actix_web::http::header::HeaderValue;

    use super::*;

    fn encoded(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(header::CONTENT_ENCODING, HeaderValue::from_str(v).unwrap());
        }
        headers
    }

    #[test]
    fn only_identity_counts_as_unencoded_in_any_case_and_in_lists() {
        for ok in [
            &[][..],
            &["identity"],
            &["IDENTITY"],
            &["Identity, identity"],
            &[" , identity,"],
        ] {
            assert!(body_is_unencoded(&encoded(ok)), "{ok:?}");
        }
        for bad in [
            &["gzip"][..],
            &["deflate"],
            &["br"],
            &["zstd"],
            &["GZIP"],
            &["gzip, identity"],
            &["identity, gzip"],
            &["identity", "gzip"],
            &["x-gzip"],
            &["identityx"],
        ] {
            assert!(!body_is_unencoded(&encoded(bad)), "{bad:?}");
        }
        let mut opaque = HeaderMap::new();
        opaque.insert(
            header::CONTENT_ENCODING,
            HeaderValue::from_bytes(b"identit\xc3\xa9").unwrap(),
        );
        assert!(!body_is_unencoded(&opaque));
    }

    fn bounded(chunks: Vec<Result<Bytes, PayloadError>>, limit: usize, ms: u64) -> BoundedBody {
        let stream: Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> =
            Box::pin(Chunks(chunks.into_iter().collect()));
        BoundedBody::new(
            Payload::Stream { payload: stream },
            BodyBounds {
                limit,
                timeout: Duration::from_millis(ms),
                upload_limit: limit,
                upload_timeout: Duration::from_millis(ms),
                evidence_limit: limit,
            },
        )
    }

    /// The chunks given, then the end; never pending.
    struct Chunks(std::collections::VecDeque<Result<Bytes, PayloadError>>);

    impl Stream for Chunks {
        type Item = Result<Bytes, PayloadError>;
        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            Poll::Ready(self.0.pop_front())
        }
    }

    async fn collect(mut body: BoundedBody) -> Result<Vec<u8>, PayloadError> {
        let mut out = Vec::new();
        while let Some(chunk) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_next(cx)).await {
            out.extend_from_slice(&chunk?);
        }
        Ok(out)
    }

    #[actix_web::test]
    async fn a_body_within_its_bounds_passes_unchanged() {
        let body = bounded(
            vec![
                Ok(Bytes::from_static(b"{\"a\":")),
                Ok(Bytes::from_static(b"1}")),
            ],
            7,
            1_000,
        );
        assert_eq!(collect(body).await.unwrap(), b"{\"a\":1}");
    }

    #[actix_web::test]
    async fn a_body_past_the_limit_ends_in_an_overflow() {
        let body = bounded(vec![Ok(Bytes::from(vec![b' '; 8]))], 7, 1_000);
        assert!(matches!(collect(body).await, Err(PayloadError::Overflow)));
    }

    /// One chunk, then nothing ever again (a client that stalled).
    struct Stalled(Option<Bytes>);

    impl Stream for Stalled {
        type Item = Result<Bytes, PayloadError>;
        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            match self.0.take() {
                Some(chunk) => Poll::Ready(Some(Ok(chunk))),
                None => Poll::Pending,
            }
        }
    }

    #[actix_web::test]
    async fn a_body_that_stops_arriving_ends_at_its_deadline() {
        let stream: Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> =
            Box::pin(Stalled(Some(Bytes::from_static(b"{"))));
        let body = BoundedBody::new(
            Payload::Stream { payload: stream },
            BodyBounds {
                limit: 1_000,
                timeout: Duration::from_millis(50),
                upload_limit: 1_000,
                upload_timeout: Duration::from_millis(50),
                evidence_limit: 1_000,
            },
        );
        let started = std::time::Instant::now();
        let err = collect(body).await.unwrap_err();
        assert!(BodyTimedOut::is(&err), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
