//! `GET /docs`: Swagger UI served from assets compiled into the binary, outside `/api` (no key,
//! no envelope), and driven in a real browser (headless Chromium + Python Playwright).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use testkit::processes::{log_dir, repo_root};

use crate::helpers::*;

#[test]
fn the_docs_page_and_its_assets_are_served_without_a_key_with_their_content_types() {
    let app = TestApp::spawn();
    let page = app.anonymous.get("/docs");
    assert_eq!(page.status, 200, "{}", page.text);
    assert_eq!(page.content_type, "text/html; charset=utf-8");
    assert_eq!(page.header("cache-control"), Some("no-cache"));
    assert!(page
        .header("content-security-policy")
        .is_some_and(|csp| csp.contains("script-src 'self'")));
    assert!(page.text.contains("<div id=\"swagger-ui\">"));
    assert!(!page.text.contains("https://") && !page.text.contains("http://"));
    assert_eq!(app.anonymous.get("/docs/").status, 200);
    for (asset, content_type, needle) in [
        ("swagger-ui.css", "text/css; charset=utf-8", ".swagger-ui"),
        (
            "swagger-ui-bundle.js",
            "text/javascript; charset=utf-8",
            "SwaggerUIBundle",
        ),
        (
            "swagger-initializer.js",
            "text/javascript; charset=utf-8",
            "/openapi.json",
        ),
        ("LICENSE", "text/plain; charset=utf-8", "Apache License"),
    ] {
        // The page names each asset with its version; the query string changes nothing.
        let r = app.anonymous.get(&format!("/docs/{asset}?v=x"));
        assert_eq!(r.status, 200, "{asset}");
        assert_eq!(r.content_type, content_type, "{asset}");
        assert_eq!(
            r.header("cache-control"),
            Some("public, max-age=31536000, immutable"),
            "{asset}"
        );
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
        assert!(r.text.contains(needle), "{asset} contains {needle}");
        // A key changes nothing either (and costs no rate-limit token).
        let keyed = app.a.get(&format!("/docs/{asset}"));
        assert_eq!(keyed.status, 200, "{asset}");
        assert!(keyed.header("ratelimit").is_none(), "{asset}");
    }
    // Unknown asset or wrong method: the service's envelope, as everywhere.
    app.anonymous.get("/docs/nao-existe.js").expect(404);
    let r = app.anonymous.delete("/docs").expect(405);
    assert_eq!(r.allow.as_deref(), Some("GET"));
    // /api keeps its rules.
    app.anonymous.get("/api/casos-de-uso").expect(401);
}

#[test]
fn the_document_declares_the_api_key_scheme_servers_and_examples() {
    let app = TestApp::spawn_with(&[
        ("APP__DOCS__PRODUCTION_URL", "https://api.exemplo.com.br/"),
        (
            "APP__DOCS__STAGING_URL",
            "https://staging.api.exemplo.com.br",
        ),
    ]);
    let doc = app.anonymous.get("/openapi.json").json;
    let scheme = &doc["components"]["securitySchemes"]["ApiKey"];
    assert_eq!(scheme["type"], "apiKey");
    assert_eq!(scheme["in"], "header");
    assert_eq!(scheme["name"], "Api-Key");
    let servers: Vec<(&str, &str)> = doc["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["url"].as_str().unwrap(),
                s["description"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        servers,
        [
            (
                "/",
                "this server: the environment (development, staging or production) that serves this document"
            ),
            ("https://api.exemplo.com.br", "production"),
            ("https://staging.api.exemplo.com.br", "staging")
        ]
    );
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            assert_eq!(
                op["security"],
                serde_json::json!([{"ApiKey": []}]),
                "{method} {path}"
            );
            // The required header parameter stays, next to the scheme.
            assert!(op["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "Api-Key" && p["required"] == true));
            if let Some(content) = op["requestBody"]["content"].as_object() {
                for (media, c) in content {
                    assert!(
                        c["examples"].as_object().is_some_and(|e| !e.is_empty()),
                        "{method} {path} request {media}"
                    );
                }
            }
            for (status, response) in op["responses"].as_object().unwrap() {
                for (media, c) in response["content"].as_object().into_iter().flatten() {
                    let examples = c["examples"]
                        .as_object()
                        .unwrap_or_else(|| panic!("{method} {path} {status} {media}: no examples"));
                    for (name, e) in examples {
                        if media == "text/plain" && e["value"].is_string() {
                            // a plain-text answer (the audit checkpoint), not an envelope
                            continue;
                        }
                        if media == "application/octet-stream" && e["value"].is_string() {
                            // an export's page, gzip bytes shown as the lines they hold
                            continue;
                        }
                        if (media == "application/x-ndjson" || media == "text/csv")
                            && e["value"].is_string()
                        {
                            // a file (an import's errors, docs/imports.md), not an envelope
                            continue;
                        }
                        if domain_evidence_type(media) && e["value"].is_string() {
                            // an evidence file's bytes (docs/evidencias.md), not an envelope
                            continue;
                        }
                        if media == "application/ld+json" && e["value"]["@context"].is_string() {
                            // a JSON-LD consent record, not an envelope (docs/records.md)
                            continue;
                        }
                        let sucesso = e["value"]["sucesso"].as_bool();
                        assert_eq!(
                            sucesso,
                            Some(status.starts_with('2')),
                            "{method} {path} {status} {name}"
                        );
                    }
                }
            }
        }
    }
    let ativo = &doc["paths"][ATIVO]["post"];
    let e422 = ativo["responses"]["422"]["content"]["application/json"]["examples"]
        .as_object()
        .unwrap();
    assert!(e422.contains_key("campos") && e422.contains_key("pgcc_recusou"));
    // Without the settings, only this server.
    let plain = TestApp::spawn();
    let doc = plain.anonymous.get("/openapi.json").json;
    assert_eq!(
        doc["servers"],
        serde_json::json!([{
            "url": "/",
            "description": "this server: the environment (development, staging or production) that serves this document",
            "x-internal": false
        }])
    );
}

/// Headless Chromium (Debian's `chromium`), driven by Python Playwright (pinned, in a virtualenv
/// under target/; Playwright's browsers are never downloaded): Authorize, Try it out, Execute on
/// GET /api/casos-de-uso, and the envelope rendered. Skipped only when Chromium is missing
/// outside CI; in CI (`CI=true`) a missing Chromium fails.
#[test]
fn swagger_ui_authorizes_and_executes_a_request_in_a_real_browser() {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !Path::new(&chromium).exists() {
        let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        assert!(
            !in_ci,
            "{chromium} is missing in CI: .ci/run installs it (apt-get install chromium)"
        );
        eprintln!(
            "SKIPPED swagger_ui_authorizes_and_executes_a_request_in_a_real_browser: {chromium} \
             not found (apt-get install chromium, or set CHROMIUM); in CI this fails instead"
        );
        return;
    }
    let app = TestApp::synced();
    let started = Instant::now();
    let out = Command::new("bash")
        .arg(repo_root().join("tests/browser/run.sh"))
        .arg(&app.api.base_url)
        .arg(&app.key_a)
        .args([
            "tpl-a-marketing",
            "Marketing por e-mail",
            "Análise de crédito",
        ])
        .env("CHROMIUM", &chromium)
        .env("DOCS_UI_ARTIFACTS", log_dir())
        .output()
        .expect("run tests/browser/run.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!(
        "browser test took {:.1}s\n{stdout}",
        started.elapsed().as_secs_f64()
    );
    assert!(
        out.status.success() && stdout.contains("DOCS_UI_OK"),
        "the browser test failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    // Company B's use case never showed up for company A.
    assert!(!stdout.contains("tpl-b-seguro"));
}

/// Whether `media` is one of an evidence file's media types (the download's answers).
fn domain_evidence_type(media: &str) -> bool {
    [
        "application/pdf",
        "image/png",
        "image/jpeg",
        "audio/mpeg",
        "audio/ogg",
        "audio/wav",
        "video/mp4",
    ]
    .contains(&media)
}
