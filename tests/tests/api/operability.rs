//! Operability: health (live, ready; the database gone; the PGCC down), metrics (token, series
//! after traffic), request ids, JSON logs, and `config check` (secrets hidden, production's
//! refusals).

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use testkit::processes::{bin_path, repo_root};
use testkit::{wait_until, Api, Client, Cluster, Sim, TestDb};

use crate::helpers::*;
use crate::lifecycle::create;

/// The operator's endpoints answer plain JSON or text, not the envelope.
trait StatusIs {
    fn status_is(self, status: u16) -> Self;
}

impl StatusIs for testkit::Reply {
    fn status_is(self, status: u16) -> Self {
        assert_eq!(self.status, status, "{}", self.text);
        self
    }
}

#[test]
fn live_and_ready_answer_200_listing_each_check_without_a_key() {
    let app = TestApp::spawn();
    let live = app.anonymous.get("/health/live").status_is(200);
    assert_eq!(live.json, json!({"status": "ok"}));
    let ready = app.anonymous.get("/health/ready").status_is(200);
    assert_eq!(ready.json["status"], "ready", "{}", ready.text);
    for check in ["database", "migrations", "pgcc"] {
        assert_eq!(
            ready.json["checks"][check]["status"], "up",
            "{check}: {}",
            ready.text
        );
    }
    assert_eq!(ready.json["checks"]["pgcc"]["required"], false);
}

#[test]
fn a_pgcc_that_cannot_be_reached_is_reported_down_but_the_api_stays_ready() {
    let app = TestApp::spawn();
    // A port nothing listens on: bind one, note it, close it.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let pgcc_url = format!("http://127.0.0.1:{closed}");
    let api = Api::start_with(&app.db, &app.sim, &[("APP__PGCC__BASE_URL", &pgcc_url)]);
    let ready = Client::new(&api.base_url, None)
        .get("/health/ready")
        .status_is(200);
    assert_eq!(ready.json["status"], "ready");
    assert_eq!(
        ready.json["checks"]["pgcc"]["status"], "down",
        "{}",
        ready.text
    );
    assert_eq!(ready.json["checks"]["database"]["status"], "up");
}

#[test]
fn ready_is_503_while_the_database_is_gone_and_live_stays_200() {
    // Dropped last: the API and the database go first.
    let cluster = Cluster::start();
    let db = TestDb::on_cluster(cluster.admin_url());
    let sim = Sim::start(&seed());
    let api = Api::start_with(&db, &sim, &[("APP__DATABASE__CHECKOUT_TIMEOUT_MS", "1000")]);
    let client = Client::new(&api.base_url, None);
    client.get("/health/ready").status_is(200);
    cluster.crash();
    // The answer is the probes' last, at most a second old (plus a probe's round): not at once.
    assert!(
        wait_until(Duration::from_secs(5), || client
            .get("/health/ready")
            .status
            == 503),
        "still ready with the database gone"
    );
    let ready = client.get("/health/ready").status_is(503);
    assert_eq!(ready.json["status"], "unavailable");
    assert_eq!(
        ready.json["checks"]["database"]["status"], "down",
        "{}",
        ready.text
    );
    client.get("/health/live").status_is(200);
    cluster.restart();
    assert!(
        wait_until(Duration::from_secs(20), || client
            .get("/health/ready")
            .status
            == 200),
        "ready again once the database is back"
    );
}

#[test]
fn metrics_require_the_token_and_show_route_templates_pgcc_outcomes_pool_and_backlog() {
    let app = TestApp::spawn_with(&[("APP__METRICS__TOKEN", "metrics-token-e2e")]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let (id, _) = create(&app.a, PENDENTE, &pending_body());
    app.a
        .get(&format!("/api/solicitacao-consentimento/{id}"))
        .expect(200);
    app.anonymous.get("/no-such-route");

    let metrics = Client::new(&app.api.base_url, None);
    metrics.get("/metrics").status_is(401);
    metrics
        .get_with("/metrics", &[("Authorization", "Bearer wrong")])
        .status_is(401);
    let r = metrics
        .get_with("/metrics", &[("Authorization", "Bearer metrics-token-e2e")])
        .status_is(200);
    let text = r.text;
    let company = &app.company_a;
    for expected in [
        format!("consent_api_http_requests_total{{route=\"/api/solicitacao-consentimento/{{id}}\",method=\"GET\",status=\"200\",company=\"{company}\"}} 1"),
        format!("consent_api_http_requests_total{{route=\"/api/solicitacao-consentimento/criar/pendente\",method=\"POST\",status=\"200\",company=\"{company}\"}} 1"),
        "route=\"unmatched\",method=\"GET\",status=\"404\",company=\"none\"".to_owned(),
        "consent_api_http_request_duration_seconds_count{route=\"/api/solicitacao-consentimento/{id}\",method=\"GET\"} 1".to_owned(),
        "consent_api_pgcc_calls_total{operation=\"list_use_cases\",outcome=\"ok\"} 1".to_owned(),
        "consent_api_pgcc_calls_total{operation=\"create_consent_request\",outcome=\"ok\"} 1".to_owned(),
        "consent_api_pgcc_call_duration_seconds_count{operation=\"create_consent_request\"} 1".to_owned(),
        "consent_api_db_pool_max_connections 4".to_owned(),
        "consent_api_db_pool_connections ".to_owned(),
        "consent_api_db_pool_idle_connections ".to_owned(),
        "consent_api_status_checks_due ".to_owned(),
        "consent_api_status_check_oldest_due_seconds ".to_owned(),
        "consent_api_webhook_deliveries_due 0".to_owned(),
        "consent_api_webhook_delivery_oldest_due_seconds ".to_owned(),
    ] {
        assert!(text.contains(&expected), "missing {expected} in:\n{text}");
    }
    assert!(
        !text.contains(&id),
        "a raw path (with an id) became a label:\n{text}"
    );
}

#[test]
fn the_request_id_is_echoed_when_usable_and_generated_otherwise() {
    let app = TestApp::spawn();
    let given = app
        .a
        .get_with("/api/casos-de-uso", &[("X-Request-Id", "pedido-42.abc")])
        .expect(200);
    assert_eq!(given.header("x-request-id"), Some("pedido-42.abc"));

    let generated = app.anonymous.get("/health/live");
    let id = generated.header("x-request-id").expect("a generated id");
    assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");

    let too_long = "x".repeat(129);
    let replaced = app
        .anonymous
        .get_with("/health/live", &[("X-Request-Id", &too_long)]);
    let id = replaced.header("x-request-id").unwrap();
    assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");
    // Errors carry it too.
    let unauthorized = app
        .anonymous
        .get_with("/api/casos-de-uso", &[("X-Request-Id", "sem-chave")])
        .expect(401);
    assert_eq!(unauthorized.header("x-request-id"), Some("sem-chave"));
}

#[test]
fn json_logs_are_one_object_per_line_carrying_the_request_id_and_the_company() {
    let app = TestApp::spawn_with(&[("APP__LOG__FORMAT", "json")]);
    app.a
        .get_with("/api/casos-de-uso", &[("X-Request-Id", "json-log-probe")])
        .expect(200);
    let mut found: Option<Value> = None;
    let parsed_all = wait_until(Duration::from_secs(5), || {
        let log = std::fs::read_to_string(&app.api.log).unwrap();
        let lines: Vec<Value> = log
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect();
        found = lines
            .into_iter()
            .find(|l| l["span"]["request_id"] == "json-log-probe");
        found.is_some()
    });
    assert!(
        parsed_all,
        "no line of the request in {}",
        app.api.log.display()
    );
    let line = found.unwrap();
    assert_eq!(line["span"]["company_id"], app.company_a.as_str(), "{line}");
    assert_eq!(line["span"]["route"], "/api/casos-de-uso", "{line}");
    assert!(line["level"].is_string() && line["timestamp"].is_string());
}

/// `consent-api ARGS` with exactly `env` (and the config folder).
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(bin_path("consent-api"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("APP_CONFIG_DIR", repo_root().join("config"))
        .envs(env.iter().copied())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run consent-api")
}

const KEY: &str = "c2VjcmV0LWtleS1mb3ItdGhlLWNvbmZpZy10ZXN0cyE=";
/// An Ed25519 seed (base64 of 32 bytes) for the deployed profiles' audit signing key.
/// A witness (`url=..;key=<vkey>`): production requires one (docs/auditoria.md, "Witnesses").
pub(crate) const WITNESSES: &str =
    "url=https://witness.example;key=witness.example/w1+da40b4ad+BBERERERERERERERERERERERERERERERERERERERERER";
const AUDIT_KEY: &str = "b3BlcmFiaWxpdHktYXVkaXQtc2lnbmluZy1rZXkhISE=";
/// Another seed: the sandbox companies' key (`auditoria.signing_key_sandbox`), required too.
pub(crate) const SANDBOX_AUDIT_KEY: &str = "b3BlcmFiaWxpdHktc2FuZGJveC1zaWduaW5nLWtlISE=";

#[test]
fn config_check_prints_every_section_with_the_secrets_hidden() {
    let out = run(
        &["config", "check"],
        &[
            ("APP_ENV", "production"),
            (
                "APP__DATABASE__URL",
                "postgres://app:db-password-e2e@db.internal:5432/consent",
            ),
            ("APP__PGCC__BASE_URL", "https://pgcc.example"),
            ("APP__PGCC__TOKEN", "pgcc-token-e2e"),
            ("APP__WEBHOOKS__ENCRYPTION_KEY", KEY),
            ("APP__METRICS__TOKEN", "metrics-token-e2e"),
            ("APP__SERVER__TRUSTED_PROXIES", "10.0.0.0/8"),
            ("APP__AUDITORIA__SIGNING_KEY", AUDIT_KEY),
            ("APP__AUDITORIA__SIGNING_KEY_SANDBOX", SANDBOX_AUDIT_KEY),
            ("APP__AUDITORIA__WITNESSES", WITNESSES),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for secret in [
        "db-password-e2e",
        "pgcc-token-e2e",
        KEY,
        "metrics-token-e2e",
        AUDIT_KEY,
        SANDBOX_AUDIT_KEY,
    ] {
        assert!(!stdout.contains(secret), "{secret} shown:\n{stdout}");
        assert!(!String::from_utf8_lossy(&out.stderr).contains(secret));
    }
    for section in [
        "[server]",
        "[database]",
        "[pgcc]",
        "[workers]",
        "[webhooks]",
        "[rate_limit]",
        "[idempotency]",
        "[log]",
        "[metrics]",
        "[auditoria]",
    ] {
        assert!(stdout.contains(section), "{section} missing:\n{stdout}");
    }
    assert!(stdout.contains("url = \"postgres://app:<hidden>@db.internal:5432/consent\""));
    assert!(stdout.contains("token = \"<hidden>\""));
    assert!(stdout.contains("encryption_key = \"<hidden>\""));
    assert!(stdout.contains("signing_key = \"<hidden>\""));
    assert!(stdout.contains("format = \"json\""), "production logs JSON");
}

#[test]
fn config_check_shows_the_connection_limits_and_the_feed_url_without_its_password() {
    let out = run(
        &["config", "check"],
        &[
            ("APP_ENV", "test"),
            ("APP__DATABASE__STATEMENT_TIMEOUT_MS", "2500"),
            ("APP__DATABASE__PREPARED_STATEMENTS", "false"),
            (
                "APP__CACHE__FEED_URL",
                "postgres://app:feed-password-e2e@db-primary:5432/consent",
            ),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "statement_timeout_ms = 2500",
        "idle_in_transaction_timeout_ms = 10000",
        "prepared_statements = false",
        "key_ttl_seconds = 60",
        "feed_url = \"postgres://app:<hidden>@db-primary:5432/consent\"",
    ] {
        assert!(stdout.contains(line), "{line} missing:\n{stdout}");
    }
    assert!(!stdout.contains("feed-password-e2e"), "{stdout}");

    let unset = run(&["config", "check"], &[("APP_ENV", "test")]);
    assert!(String::from_utf8_lossy(&unset.stdout).contains("# feed_url: unset"));

    for (variable, value) in [
        ("APP__CACHE__KEY_TTL_SECONDS", "0"),
        ("APP__CACHE__FEED_URL", "http://db-primary:5432/consent"),
        ("APP__DATABASE__STATEMENT_TIMEOUT_MS", "86400001"),
    ] {
        let out = run(
            &["config", "check"],
            &[("APP_ENV", "test"), (variable, value)],
        );
        assert!(!out.status.success(), "{variable}={value} accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(variable), "{stderr}");
    }
}

#[test]
fn production_refuses_a_plaintext_pgcc_url_and_a_missing_metrics_token_in_one_line() {
    let base = [
        ("APP_ENV", "production"),
        ("APP__WEBHOOKS__ENCRYPTION_KEY", KEY),
        ("APP__METRICS__TOKEN", "t"),
        ("APP__PGCC__BASE_URL", "http://pgcc.example"),
    ];
    let out = run(&["config", "check"], &base);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("pgcc.base_url") && stderr.contains("APP__PGCC__BASE_URL"),
        "{stderr}"
    );

    let out = run(
        &["config", "check"],
        &[
            ("APP_ENV", "production"),
            ("APP__WEBHOOKS__ENCRYPTION_KEY", KEY),
            ("APP__PGCC__BASE_URL", "https://pgcc.example"),
        ],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("APP__METRICS__TOKEN"), "{stderr}");

    // serve refuses the same way, before touching anything
    let out = run(&["serve"], &base);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("APP__PGCC__BASE_URL"));
}

#[test]
fn every_command_has_its_help() {
    for args in [
        vec!["--help"],
        vec!["serve", "--help"],
        vec!["worker", "--help"],
        vec!["migrate", "--help"],
        vec!["company", "create", "--help"],
        vec!["api-key", "issue", "--help"],
        vec!["api-key", "list", "--help"],
        vec!["api-key", "revoke", "--help"],
        vec!["config", "check", "--help"],
        vec!["witness", "serve", "--help"],
        vec!["audit", "monitor", "--help"],
    ] {
        let out = run(&args, &[]);
        assert!(out.status.success(), "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("Usage:"), "{args:?}: {text}");
    }
    let top = String::from_utf8_lossy(&run(&["--help"], &[]).stdout).into_owned();
    assert!(top.contains("config"), "{top}");
}

#[test]
fn staging_and_production_refuse_to_start_without_a_valid_audit_signing_key() {
    for profile in ["staging", "production"] {
        let base = [
            ("APP_ENV", profile),
            ("APP__WEBHOOKS__ENCRYPTION_KEY", KEY),
            ("APP__METRICS__TOKEN", "t"),
            ("APP__PGCC__BASE_URL", "https://pgcc.example"),
            ("APP__SERVER__TRUSTED_PROXIES", "none"),
            ("APP__AUDITORIA__WITNESSES", WITNESSES),
            ("APP__AUDITORIA__SIGNING_KEY_SANDBOX", SANDBOX_AUDIT_KEY),
        ];
        let out = run(&["config", "check"], &base);
        assert!(
            !out.status.success(),
            "{profile} starts without a signing key"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("APP__AUDITORIA__SIGNING_KEY"), "{stderr}");

        let mut with_bad_key = base.to_vec();
        with_bad_key.push(("APP__AUDITORIA__SIGNING_KEY", "not-a-key"));
        let out = run(&["config", "check"], &with_bad_key);
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("APP__AUDITORIA__SIGNING_KEY"), "{stderr}");
        assert!(
            !stderr.contains("not-a-key"),
            "the value is never echoed: {stderr}"
        );

        let mut with_key = base.to_vec();
        with_key.push(("APP__AUDITORIA__SIGNING_KEY", AUDIT_KEY));
        let out = run(&["config", "check"], &with_key);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );

        // the sandbox's key: required, valid, and never the production key
        let without_sandbox: Vec<_> = with_key
            .iter()
            .copied()
            .filter(|(k, _)| *k != "APP__AUDITORIA__SIGNING_KEY_SANDBOX")
            .collect();
        let out = run(&["config", "check"], &without_sandbox);
        assert!(
            !out.status.success(),
            "{profile} starts without a sandbox key"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("APP__AUDITORIA__SIGNING_KEY_SANDBOX"),
            "{stderr}"
        );
        let mut same_key = without_sandbox.clone();
        same_key.push(("APP__AUDITORIA__SIGNING_KEY_SANDBOX", AUDIT_KEY));
        let out = run(&["config", "check"], &same_key);
        assert!(
            !out.status.success(),
            "{profile} signs the sandbox with the production key"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("APP__AUDITORIA__SIGNING_KEY_SANDBOX"),
            "{stderr}"
        );
        assert!(
            !stderr.contains(AUDIT_KEY),
            "the value is never echoed: {stderr}"
        );
    }
}
