//! Traces (issue 25, part 4): with `APP__TELEMETRY__OTLP_ENDPOINT` set, one creation is one
//! trace, continued from the caller's `traceparent`, from the HTTP request through its database
//! statements and PGCC call to the webhook attempt, and both the PGCC and the company's receiver
//! get a `traceparent` of that trace. Off by default: nothing exported, read or sent. A real
//! OTLP/HTTP receiver (otlp_receiver.rs), the real simulator and a real webhook receiver.

use std::time::Duration;

use serde_json::json;
use testkit::{wait_until, Receiver};

use crate::helpers::*;
use crate::lifecycle::synced_with;
use crate::otlp_receiver::{ExportedSpan, OtlpReceiver};

/// Spans are sent every 100 ms instead of every 5 s (the SDK's standard variable).
const EXPORT_EVERY: (&str, &str) = ("OTEL_BSP_SCHEDULE_DELAY", "100");

fn register(client: &testkit::Client, url: &str) {
    client
        .post_json("/api/webhook-urls", &json!({"url": url}))
        .expect(200);
}

/// A caller's trace: (trace id, its span id, the `traceparent` naming both, sampled).
fn caller_trace() -> (String, String, String) {
    let trace_id = uuid::Uuid::new_v4().simple().to_string();
    let span_id = uuid::Uuid::new_v4().simple().to_string()[..16].to_owned();
    let traceparent = format!("00-{trace_id}-{span_id}-01");
    (trace_id, span_id, traceparent)
}

/// The `traceparent` headers the simulator received on creations.
fn sim_creation_traceparents(app: &TestApp) -> Vec<String> {
    let r = app.sim_admin.get("/_sim/traceparents");
    assert_eq!(r.status, 200, "{}", r.text);
    r.json
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["metodo"] == "POST" && c["caminho"] == "/pgcc/v1/solicitacoes")
        .map(|c| c["traceparent"].as_str().unwrap().to_owned())
        .collect()
}

/// The span id a `traceparent` names as the parent (its third field).
fn parent_of(traceparent: &str) -> &str {
    traceparent.split('-').nth(2).unwrap_or("")
}

fn named<'a>(spans: &'a [ExportedSpan], name: &str) -> Vec<&'a ExportedSpan> {
    spans.iter().filter(|s| s.name == name).collect()
}

#[test]
fn one_creation_is_one_trace_from_the_callers_traceparent_to_the_webhook() {
    let otlp = OtlpReceiver::start();
    let app = synced_with(&[
        ("APP__TELEMETRY__OTLP_ENDPOINT", &otlp.base_url),
        EXPORT_EVERY,
    ]);
    let hooks = Receiver::start(&[]);
    register(&app.a, &hooks.url);
    let (trace_id, caller_span, incoming) = caller_trace();

    app.a
        .post_json_with(ATIVO, &active_body(), &[("traceparent", &incoming)])
        .expect(200);

    // The company's receiver: a traceparent of the caller's trace, sampled.
    let got = hooks.wait_for(1, Duration::from_secs(20));
    assert_eq!(got.len(), 1, "the creation's webhook never arrived");
    assert_eq!(got[0].json()["type"], "solicitacao.criada");
    let webhook_traceparent = got[0].header("traceparent").to_owned();
    assert!(
        webhook_traceparent.starts_with(&format!("00-{trace_id}-"))
            && webhook_traceparent.ends_with("-01"),
        "the webhook's traceparent is not of the caller's trace: {webhook_traceparent:?}"
    );
    // The event kept the creation's trace context for its deliveries.
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM webhook_eventos WHERE traceparent LIKE '00-{trace_id}-%'"
        )),
        1
    );

    // The PGCC: the creation call carried a traceparent of the same trace.
    let sim_traceparents = sim_creation_traceparents(&app);
    assert_eq!(sim_traceparents.len(), 1, "{sim_traceparents:?}");
    assert!(
        sim_traceparents[0].starts_with(&format!("00-{trace_id}-")),
        "{sim_traceparents:?}"
    );

    // The collector: the request, its statements, the PGCC call and the webhook attempt, all
    // under the caller's trace id.
    let complete = |spans: &[ExportedSpan]| {
        !named(spans, "request").is_empty()
            && !named(spans, "create_consent_request").is_empty()
            && !named(spans, "webhook attempt").is_empty()
            && spans
                .iter()
                .any(|s| s.attribute("db.system") == Some("postgresql"))
    };
    assert!(
        wait_until(Duration::from_secs(15), || complete(&otlp.trace(&trace_id))),
        "the trace never came whole: {:#?}",
        otlp.trace(&trace_id)
    );
    let spans = otlp.trace(&trace_id);
    let by_id = |id: &str| spans.iter().find(|s| s.span_id == id);

    let request = named(&spans, "request");
    assert_eq!(request.len(), 1, "{request:#?}");
    let request = request[0];
    assert_eq!(
        request.parent_span_id, caller_span,
        "not the caller's child"
    );
    assert_eq!(request.attribute("method"), Some("POST"));
    assert_eq!(
        request.attribute("route"),
        Some("/api/solicitacao-consentimento/criar/ativo")
    );
    assert_eq!(request.attribute("http.response.status_code"), Some("200"));
    assert_eq!(
        request.attribute("company_id"),
        Some(app.company_a.as_str())
    );
    assert_eq!(request.service, "consent-api");

    // Every statement of the request hangs under it (through the PGCC call or directly).
    let under_request = |span: &ExportedSpan| {
        let mut at = Some(span);
        while let Some(s) = at {
            if s.span_id == request.span_id {
                return true;
            }
            at = by_id(&s.parent_span_id);
        }
        false
    };
    let statements: Vec<&ExportedSpan> = spans
        .iter()
        .filter(|s| s.attribute("db.system") == Some("postgresql"))
        .collect();
    assert!(
        statements
            .iter()
            .filter(|s| under_request(s))
            .any(|s| s.attribute("db.operation").is_some_and(|o| !o.is_empty())),
        "no statement of the request: {statements:#?}"
    );

    let pgcc = named(&spans, "create_consent_request");
    assert_eq!(pgcc.len(), 1, "{pgcc:#?}");
    let pgcc = pgcc[0];
    assert_eq!(pgcc.parent_span_id, request.span_id);
    assert_eq!(
        pgcc.attribute("pgcc.operation"),
        Some("create_consent_request")
    );
    assert!(
        pgcc.attribute("http.response.status_code")
            .is_some_and(|s| s.starts_with('2')),
        "{pgcc:#?}"
    );
    // what the PGCC got names the call's own span
    assert_eq!(parent_of(&sim_traceparents[0]), pgcc.span_id);

    let attempt = named(&spans, "webhook attempt");
    assert_eq!(attempt.len(), 1, "{attempt:#?}");
    let attempt = attempt[0];
    assert!(
        under_request(attempt),
        "the attempt is not under the request"
    );
    assert_eq!(attempt.attribute("webhook.outcome"), Some("delivered"));
    assert_eq!(attempt.attribute("webhook.attempt"), Some("1"));
    assert_eq!(attempt.attribute("http.response.status_code"), Some("200"));
    // what the receiver got names the attempt's own span
    assert_eq!(parent_of(&webhook_traceparent), attempt.span_id);

    // No personal data in any span the process exported (names and attributes), nor the
    // webhook URL (it may carry a token).
    for span in otlp.spans() {
        let shown = format!("{} {:?}", span.name, span.attributes);
        assert_no_canary_cpf("an exported span", &shown);
        assert!(!shown.contains(&hooks.url), "the URL in a span: {shown}");
        assert!(
            !shown.contains("assinatura-digital"),
            "the proof in a span: {shown}"
        );
    }
    assert!(otlp.refused.lock().unwrap().is_empty());
}

#[test]
fn a_malformed_traceparent_starts_a_new_trace() {
    let otlp = OtlpReceiver::start();
    let app = synced_with(&[
        ("APP__TELEMETRY__OTLP_ENDPOINT", &otlp.base_url),
        EXPORT_EVERY,
    ]);
    let r = app.a.get_with(
        "/api/casos-de-uso",
        &[("traceparent", "00-zzzz-not-a-trace-01")],
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let request = || {
        otlp.spans()
            .into_iter()
            .find(|s| s.name == "request" && s.attribute("route") == Some("/api/casos-de-uso"))
    };
    assert!(wait_until(Duration::from_secs(15), || request().is_some()));
    let request = request().unwrap();
    assert!(request.parent_span_id.is_empty(), "{request:#?}");
    assert_eq!(request.trace_id.len(), 32);
}

#[test]
fn traces_are_off_by_default_nothing_is_exported_read_or_sent() {
    let otlp = OtlpReceiver::start();
    // The SDK's own variables do not turn traces on: only APP__TELEMETRY__OTLP_ENDPOINT does.
    let app = synced_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &otlp.base_url),
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", &otlp.base_url),
        EXPORT_EVERY,
    ]);
    let hooks = Receiver::start(&[]);
    register(&app.a, &hooks.url);
    let (_, _, incoming) = caller_trace();

    app.a
        .post_json_with(ATIVO, &active_body(), &[("traceparent", &incoming)])
        .expect(200);

    let got = hooks.wait_for(1, Duration::from_secs(20));
    assert_eq!(got.len(), 1, "the creation's webhook never arrived");
    assert_eq!(got[0].header("traceparent"), "", "{:?}", got[0].headers);
    assert_eq!(sim_creation_traceparents(&app), Vec::<String>::new());
    assert_eq!(
        app.db
            .scalar("SELECT count(*) AS v FROM webhook_eventos WHERE traceparent IS NOT NULL"),
        0
    );
    // Spans would have gone out every 100 ms; ten times that and still nothing.
    std::thread::sleep(Duration::from_secs(1));
    assert!(otlp.spans().is_empty(), "{:#?}", otlp.spans());
    assert!(otlp.refused.lock().unwrap().is_empty());
}
