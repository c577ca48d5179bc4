//! `GET /docs`: the OpenAPI document rendered by Swagger UI, from assets compiled into the binary
//! (`crates/delivery/http/assets/swagger-ui/`, swagger-ui-dist from npm; no CDN, so it works on
//! a closed network). Outside `/api`: no key, no envelope (HTML, CSS and JavaScript). An unknown
//! `/docs/<name>` falls through to the service's 404 envelope. Each answer is prepared once per
//! process with a strong `ETag`; `If-None-Match` naming it gets 304.

use std::sync::LazyLock;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest, HttpResponse};

use crate::conditional;

/// swagger-ui-dist version plus a revision of our own files; appended as `?v=` to the asset URLs
/// of the page, so a new binary is never served stale assets from a browser cache.
pub const ASSETS_VERSION: &str = "5.35.0-1";

const INDEX_HTML: &str = include_str!("../../assets/swagger-ui/index.html");
const INITIALIZER_JS: &str = include_str!("../../assets/swagger-ui/swagger-initializer.js");
const SWAGGER_UI_CSS: &str = include_str!("../../assets/swagger-ui/swagger-ui.css");
const SWAGGER_UI_BUNDLE_JS: &[u8] = include_bytes!("../../assets/swagger-ui/swagger-ui-bundle.js");
const LICENSE: &str = include_str!("../../assets/swagger-ui/LICENSE");

/// The assets under `/docs/`: name, content type, bytes.
const ASSETS: &[(&str, &str, &[u8])] = &[
    (
        "swagger-ui.css",
        "text/css; charset=utf-8",
        SWAGGER_UI_CSS.as_bytes(),
    ),
    (
        "swagger-ui-bundle.js",
        "text/javascript; charset=utf-8",
        SWAGGER_UI_BUNDLE_JS,
    ),
    (
        "swagger-initializer.js",
        "text/javascript; charset=utf-8",
        INITIALIZER_JS.as_bytes(),
    ),
    ("LICENSE", "text/plain; charset=utf-8", LICENSE.as_bytes()),
];

/// Scripts and styles from this server only; Swagger UI needs inline styles and `data:` images.
/// Requests ("Try it out") may go to any of the document's servers.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                   img-src 'self' data:; font-src 'self' data:; connect-src 'self' https: http:; \
                   frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// Assets are versioned by `?v=` in the page: cache them for a year.
const LONG_CACHE: &str = "public, max-age=31536000, immutable";

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/docs")
            .route(web::get().to(index))
            .default_service(super::not_allowed("GET")),
    )
    .service(
        web::resource("/docs/")
            .route(web::get().to(index))
            .default_service(super::not_allowed("GET")),
    )
    .service(
        web::resource("/docs/{asset}")
            .route(web::get().to(asset))
            .default_service(super::not_allowed("GET")),
    );
}

/// The page and the assets, each with its tag, prepared on first use and kept for the process
/// (they are compiled in; nothing about them changes while it runs).
struct Prepared {
    index: conditional::Prepared,
    assets: Vec<(&'static str, conditional::Prepared)>,
}

static PREPARED: LazyLock<Prepared> = LazyLock::new(|| Prepared {
    // small, revalidated each time: it names the assets' version
    index: conditional::Prepared::new(
        INDEX_HTML.replace("__ASSETS_VERSION__", ASSETS_VERSION),
        "text/html; charset=utf-8",
        "no-cache",
    ),
    assets: ASSETS
        .iter()
        .map(|(name, content_type, bytes)| {
            (
                *name,
                conditional::Prepared::new(*bytes, content_type, LONG_CACHE),
            )
        })
        .collect(),
});

/// The page: 200, or 304 when `If-None-Match` names its tag.
pub async fn index(req: HttpRequest) -> HttpResponse {
    let mut res = PREPARED.index.respond(&req);
    let headers = res.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    res
}

/// An asset: 200, or 304 when `If-None-Match` names its tag; an unknown name is 404.
pub async fn asset(
    req: HttpRequest,
    name: web::Path<String>,
) -> Result<HttpResponse, crate::ApiError> {
    let Some((_, prepared)) = PREPARED.assets.iter().find(|(n, _)| *n == name.as_str()) else {
        return Err(crate::ApiError::NotFound(crate::error::Resource::Route));
    };
    let mut res = prepared.respond(&req);
    res.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_names_only_shipped_assets_and_no_remote_host() {
        let html = INDEX_HTML.replace("__ASSETS_VERSION__", ASSETS_VERSION);
        for src in [
            "swagger-ui.css",
            "swagger-ui-bundle.js",
            "swagger-initializer.js",
        ] {
            assert!(
                html.contains(&format!("/docs/{src}?v={ASSETS_VERSION}")),
                "{src}"
            );
            assert!(ASSETS.iter().any(|(n, _, _)| *n == src), "{src}");
        }
        assert!(!html.contains("http://") && !html.contains("https://"));
        assert!(INITIALIZER_JS.contains("\"/openapi.json\""));
    }
}
