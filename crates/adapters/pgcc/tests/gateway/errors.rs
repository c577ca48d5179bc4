use std::net::TcpListener;
use std::time::{Duration, Instant};

use domain::CreationVariant;
use ports::{PgccError, PgccGateway};
use serde_json::json;

use crate::helpers::{cnpj, consent, fault, gateway, gateway_to, received, seed, sim, CPF};

#[test]
fn a_503_from_the_pgcc_is_failed_503() {
    let sim = sim();
    fault(&sim, json!({"status": 503}));
    let error = gateway(&sim).list_use_cases(&cnpj()).unwrap_err();
    assert!(
        matches!(error, PgccError::Failed { status: 503 }),
        "{error:?}"
    );
}

#[test]
fn a_429_408_or_425_from_the_pgcc_is_try_later_with_its_retry_after() {
    let sim = sim();
    fault(&sim, json!({"status": 429, "retryAfter": "17"}));
    let error = gateway(&sim)
        .create_consent_request(&consent("tpl-credito", CreationVariant::Active))
        .unwrap_err();
    assert!(
        matches!(
            error,
            PgccError::TryLater {
                status: 429,
                retry_after_seconds: Some(17)
            }
        ),
        "{error:?}"
    );
    assert!(received(&sim).is_empty());

    for status in [408, 425] {
        fault(&sim, json!({"status": status}));
        let error = gateway(&sim).list_use_cases(&cnpj()).unwrap_err();
        assert!(
            matches!(
                error,
                PgccError::TryLater { status: s, retry_after_seconds: None } if s == status
            ),
            "{error:?}"
        );
    }
}

#[test]
fn a_404_from_the_pgcc_is_rejected_404() {
    let sim = sim();
    fault(&sim, json!({"status": 404}));
    let error = gateway(&sim)
        .create_consent_request(&consent("tpl-credito", CreationVariant::Active))
        .unwrap_err();
    assert!(
        matches!(error, PgccError::Rejected { status: 404 }),
        "{error:?}"
    );
    assert!(received(&sim).is_empty());
}

#[test]
fn a_wrong_or_missing_token_is_failed_401() {
    let sim = pgcc_sim::spawn_in_background_with_token(seed(), Some("certo".into()));
    for token in [None, Some("errado")] {
        let gateway = gateway_to(&sim.base_url, token, Duration::from_secs(5));
        let error = gateway.list_use_cases(&cnpj()).unwrap_err();
        assert!(
            matches!(error, PgccError::Failed { status: 401 }),
            "{error:?}"
        );
    }
}

#[test]
fn a_403_is_failed_and_a_409_is_rejected() {
    let sim = sim();
    fault(&sim, json!({"status": 403}));
    let error = gateway(&sim).list_use_cases(&cnpj()).unwrap_err();
    assert!(
        matches!(error, PgccError::Failed { status: 403 }),
        "{error:?}"
    );
    fault(&sim, json!({"status": 409}));
    let error = gateway(&sim).list_use_cases(&cnpj()).unwrap_err();
    assert!(
        matches!(error, PgccError::Rejected { status: 409 }),
        "{error:?}"
    );
}

#[test]
fn an_answer_slower_than_the_timeout_is_timeout() {
    let sim = sim();
    fault(&sim, json!({"latencyMs": 3000}));
    let gateway = gateway_to(&sim.base_url, None, Duration::from_millis(300));

    let started = Instant::now();
    let error = gateway.list_use_cases(&cnpj()).unwrap_err();

    assert!(matches!(error, PgccError::Timeout), "{error:?}");
    assert!(
        started.elapsed() < Duration::from_millis(2000),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_closed_port_is_unreachable() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let gateway = gateway_to(
        &format!("http://127.0.0.1:{port}"),
        None,
        Duration::from_secs(2),
    );
    let error = gateway.list_use_cases(&cnpj()).unwrap_err();
    assert!(matches!(error, PgccError::Unreachable(_)), "{error:?}");
}

#[test]
fn an_unknown_template_is_rejected_404() {
    let sim = sim();
    let error = gateway(&sim)
        .create_consent_request(&consent("tpl-inexistente", CreationVariant::Pending))
        .unwrap_err();
    assert!(
        matches!(error, PgccError::Rejected { status: 404 }),
        "{error:?}"
    );
}

#[test]
fn an_unknown_company_is_rejected_404() {
    let sim = pgcc_sim::spawn_in_background(pgcc_sim::Seed::default());
    let error = gateway(&sim).list_use_cases(&cnpj()).unwrap_err();
    assert!(
        matches!(error, PgccError::Rejected { status: 404 }),
        "{error:?}"
    );
}

#[test]
fn a_2xx_with_an_unreadable_body_is_unexpected() {
    // a tiny server that answers 200 with a body that is not the contract's JSON
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut stream, _) = listener.accept().unwrap();
        let mut buf = [0u8; 4096];
        let _ = stream.read(&mut buf);
        let body = "não é json";
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
    });
    let error = gateway_to(&base, None, Duration::from_secs(2))
        .list_use_cases(&cnpj())
        .unwrap_err();
    server.join().unwrap();
    assert!(matches!(error, PgccError::Unexpected(_)), "{error:?}");
}

#[test]
fn no_error_message_carries_the_cpf_the_proof_or_the_token() {
    let sim = pgcc_sim::spawn_in_background_with_token(seed(), Some("tok-secreto".into()));
    let consent = consent("tpl-credito", CreationVariant::Active);
    let mut messages = Vec::new();
    for token in [Some("tok-secreto"), None] {
        for rule in [
            json!({"status": 503}),
            json!({"status": 400}),
            json!({"latencyMs": 1000}),
        ] {
            crate::helpers::fault(&sim, rule);
            let gateway = gateway_to(&sim.base_url, token, Duration::from_millis(300));
            let error = gateway.create_consent_request(&consent).unwrap_err();
            let shown = format!("{error} | {error:?}");
            messages.push(format!("{shown} | {:?}", anyhow::Error::from(error)));
        }
    }
    for message in messages {
        for secret in [CPF, "assinatura-eletronica-123", "tok-secreto"] {
            assert!(!message.contains(secret), "{message}");
        }
    }
}
