//! Conditional GETs (RFC 9110 section 13): answers whose bytes are fixed for the life of the
//! process, or cached, are tagged once with a strong `ETag`, and a request naming that tag in
//! `If-None-Match` gets 304 without a body.

use actix_web::http::header::{self, HeaderValue};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse};
use sha2::{Digest, Sha256};

/// `"` + 32 hex digits of the SHA-256 of `bytes` + `"`: a strong tag, the same for the same bytes
/// on every instance (so a client moving between replicas keeps its 304s).
pub fn strong_etag(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    format!("\"{}\"", hex::encode(&digest[..16]))
}

/// RFC 9110 13.1.2: `*`, or a list of tags compared weakly (`W/` ignored).
pub fn if_none_match(header: Option<&HeaderValue>, etag: &str) -> bool {
    let Some(value) = header.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let value = value.trim();
    value == "*"
        || value
            .split(',')
            .map(|tag| tag.trim().trim_start_matches("W/"))
            .any(|tag| tag == etag)
}

/// A whole answer prepared once: its bytes, content type, `Cache-Control` and tag.
#[derive(Debug, Clone)]
pub struct Prepared {
    body: Bytes,
    content_type: &'static str,
    cache_control: &'static str,
    etag: String,
}

impl Prepared {
    /// Tags `body` (hashing it once, here).
    pub fn new(
        body: impl Into<Bytes>,
        content_type: &'static str,
        cache_control: &'static str,
    ) -> Self {
        let body = body.into();
        let etag = strong_etag(&body);
        Prepared {
            body,
            content_type,
            cache_control,
            etag,
        }
    }

    pub fn etag(&self) -> &str {
        &self.etag
    }

    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// 304 without a body when `If-None-Match` names the tag (or is `*`), else 200 with the
    /// bytes (a cheap clone of the shared buffer). Both carry `ETag` and `Cache-Control`, as
    /// RFC 9110 15.4.5 asks of a 304.
    pub fn respond(&self, req: &HttpRequest) -> HttpResponse {
        let unchanged = if_none_match(req.headers().get(header::IF_NONE_MATCH), &self.etag);
        let mut response = if unchanged {
            HttpResponse::NotModified()
        } else {
            HttpResponse::Ok()
        };
        response
            .insert_header((header::ETAG, self.etag.as_str()))
            .insert_header((header::CACHE_CONTROL, self.cache_control));
        if unchanged {
            return response.finish();
        }
        response
            .insert_header((header::CONTENT_TYPE, self.content_type))
            .body(self.body.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    const TAG: &str = "\"0123456789abcdef0123456789abcdef\"";

    fn matches(value: &str) -> bool {
        if_none_match(Some(&HeaderValue::from_str(value).unwrap()), TAG)
    }

    #[test]
    fn the_current_tag_or_a_star_matches() {
        assert!(matches(TAG));
        assert!(matches("*"));
        assert!(matches(&format!("W/{TAG}")));
        assert!(matches(&format!("\"other\", {TAG}")));
    }

    #[test]
    fn another_tag_a_bare_value_or_no_header_does_not_match() {
        assert!(!matches("\"other\""));
        assert!(!matches(TAG.trim_matches('"')));
        assert!(!matches(""));
        assert!(!if_none_match(None, TAG));
    }

    #[test]
    fn the_same_bytes_give_the_same_strong_tag() {
        let tag = strong_etag(b"A");
        assert_eq!(tag, strong_etag(b"A"));
        assert_ne!(tag, strong_etag(b"B"));
        assert!(tag.starts_with('"') && tag.ends_with('"') && tag.len() == 34);
    }

    #[actix_web::test]
    async fn a_matching_tag_is_304_without_a_body_and_with_the_cache_headers() {
        let prepared = Prepared::new("{}", "application/json", "no-cache");
        let req = TestRequest::default()
            .insert_header((header::IF_NONE_MATCH, prepared.etag().to_owned()))
            .to_http_request();
        let res = prepared.respond(&req);
        assert_eq!(res.status(), 304);
        assert_eq!(res.headers().get(header::ETAG).unwrap(), prepared.etag());
        assert_eq!(
            res.headers().get(header::CACHE_CONTROL).unwrap(),
            "no-cache"
        );
        let body = actix_web::body::to_bytes(res.into_body()).await.unwrap();
        assert!(body.is_empty());

        let fresh = prepared.respond(&TestRequest::default().to_http_request());
        assert_eq!(fresh.status(), 200);
        assert_eq!(
            fresh.headers().get(header::CONTENT_TYPE).unwrap(),
            "application/json"
        );
        let body = actix_web::body::to_bytes(fresh.into_body()).await.unwrap();
        assert_eq!(&body[..], b"{}");
    }
}
