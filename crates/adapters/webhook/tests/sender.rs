//! The sender against real local receivers.

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpListener;
use std::thread;
use std::time::Duration;

use ports::{CheckedTarget, SendFailure, WebhookSender};
use support::{response, sender, target, Receiver, USER_AGENT};

const TIMEOUT: Duration = Duration::from_secs(5);

fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn a_200_is_reported_with_its_status_and_latency() {
    let receiver = Receiver::start(response("200 OK", &[]), Duration::ZERO);
    let url = format!("{}/hook", receiver.base_url);

    let report = sender(TIMEOUT).send(&url, &target(&url), &[], "{}");

    assert_eq!(report.status, Some(200));
    assert_eq!(report.retry_after, None);
    assert_eq!(report.error, None);
    assert_eq!(report.body, None, "an empty answer keeps nothing");
    assert!(report.latency < TIMEOUT);
    receiver.received();
}

#[test]
fn headers_and_body_arrive_as_sent() {
    let receiver = Receiver::start(response("204 No Content", &[]), Duration::ZERO);
    let url = format!("{}/hooks/a?x=1&y=2", receiver.base_url);
    let body = r#"{"type":"consent.updated","data":{"id":"ção"}}"#;
    let sent = headers(&[
        ("Content-Type", "application/json"),
        ("webhook-id", "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"),
        ("webhook-timestamp", "1700000000"),
        (
            "webhook-signature",
            "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
        ),
    ]);

    let report = sender(TIMEOUT).send(&url, &target(&url), &sent, body);

    assert_eq!(report.status, Some(204));
    assert_eq!(report.error, None);
    let received = receiver.received();
    assert_eq!(received.request_line, "POST /hooks/a?x=1&y=2 HTTP/1.1");
    for (name, value) in &sent {
        assert_eq!(received.header(name), Some(value.as_str()), "{name}");
    }
    assert_eq!(received.header("user-agent"), Some(USER_AGENT));
    assert_eq!(
        received.header("content-length"),
        Some(body.len().to_string().as_str())
    );
    assert_eq!(received.body, body.as_bytes());
}

#[test]
fn a_500_with_retry_after_is_reported() {
    let receiver = Receiver::start(
        response("500 Internal Server Error", &["Retry-After: 7"]),
        Duration::ZERO,
    );

    let report = sender(TIMEOUT).send(&receiver.base_url, &target(&receiver.base_url), &[], "{}");

    assert_eq!(report.status, Some(500));
    assert_eq!(report.retry_after, Some(Duration::from_secs(7)));
    assert_eq!(report.error, None);
    receiver.received();
}

#[test]
fn a_garbage_retry_after_is_ignored() {
    let receiver = Receiver::start(
        response("429 Too Many Requests", &["Retry-After: soon"]),
        Duration::ZERO,
    );

    let report = sender(TIMEOUT).send(&receiver.base_url, &target(&receiver.base_url), &[], "{}");

    assert_eq!(report.status, Some(429));
    assert_eq!(report.retry_after, None);
    receiver.received();
}

#[test]
fn a_redirect_is_not_followed() {
    // Where the redirect points: nothing may connect to it.
    let elsewhere = TcpListener::bind("127.0.0.1:0").unwrap();
    elsewhere.set_nonblocking(true).unwrap();
    let location = format!(
        "Location: http://{}/stolen",
        elsewhere.local_addr().unwrap()
    );
    for status in [
        "302 Found",
        "307 Temporary Redirect",
        "308 Permanent Redirect",
    ] {
        let receiver = Receiver::start(response(status, &[&location]), Duration::ZERO);

        let report =
            sender(TIMEOUT).send(&receiver.base_url, &target(&receiver.base_url), &[], "{}");

        let code: u16 = status[..3].parse().unwrap();
        assert_eq!(report.status, Some(code));
        assert_eq!(report.error, None);
        receiver.received();
    }
    match elsewhere.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the redirect was followed: {other:?}"),
    }
}

#[test]
fn a_large_answer_body_is_read_only_up_to_the_bound() {
    let big = "x".repeat(4 * 1024 * 1024);
    let answer = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{big}",
        big.len()
    );
    let receiver = Receiver::start(answer, Duration::ZERO);

    let report = sender(TIMEOUT).send(&receiver.base_url, &target(&receiver.base_url), &[], "{}");

    assert_eq!(report.status, Some(200));
    assert_eq!(report.error, None);
    // its start kept, cut at the characters an attempt keeps
    assert_eq!(
        report.body.as_deref(),
        Some("x".repeat(ports::RESPONSE_BODY_KEPT).as_str())
    );
    receiver.received();
}

#[test]
fn a_slow_receiver_times_out() {
    let timeout = Duration::from_millis(300);
    let receiver = Receiver::start(response("200 OK", &[]), Duration::from_millis(1500));

    let report = sender(timeout).send(&receiver.base_url, &target(&receiver.base_url), &[], "{}");

    assert_eq!(report.status, None);
    assert_eq!(report.error, Some(SendFailure::Timeout));
    assert!(report.latency >= timeout, "{:?}", report.latency);
    assert!(
        report.latency < Duration::from_millis(1500),
        "{:?}",
        report.latency
    );
    receiver.received();
}

#[test]
fn a_closed_port_is_an_error_without_status() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };

    let report = sender(TIMEOUT).send(
        &format!("http://127.0.0.1:{port}/"),
        &target(&format!("http://127.0.0.1:{port}/")),
        &[],
        "{}",
    );

    assert_eq!(report.status, None);
    assert_eq!(report.retry_after, None);
    assert_eq!(report.error, Some(SendFailure::ConnectionRefused));
}

#[test]
fn a_target_with_no_address_is_a_dns_failure_and_nothing_is_looked_up() {
    let none = CheckedTarget { addresses: vec![] };

    let report = sender(TIMEOUT).send("http://localhost:9/hook", &none, &[], "{}");

    assert_eq!(report.status, None);
    assert_eq!(report.error, Some(SendFailure::Dns));
}

#[test]
fn the_connection_goes_to_the_checked_address_whatever_the_name_resolves_to_now() {
    // `rebound.invalid` resolves to nothing at all; the guard's answer is the receiver.
    let receiver = Receiver::start(response("200 OK", &[]), Duration::ZERO);
    let port = receiver.base_url.rsplit(':').next().unwrap().to_owned();
    let url = format!("http://rebound.invalid:{port}/hook");

    let report = sender(TIMEOUT).send(&url, &target(&receiver.base_url), &[], "{}");

    assert_eq!(report.status, Some(200), "{report:?}");
    let received = receiver.received();
    assert_eq!(
        received.header("host"),
        Some(format!("rebound.invalid:{port}").as_str()),
        "the name stays the name (Host, SNI); only the address is pinned"
    );
}

#[test]
fn a_tls_failure_is_named() {
    // A plain-HTTP server on the https port: the TLS handshake cannot succeed.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut hello = [0u8; 1024];
        let _ = stream.read(&mut hello);
        let _ = stream.write_all(response("400 Bad Request", &[]).as_bytes());
    });

    let report = sender(TIMEOUT).send(
        &format!("https://{address}/"),
        &target(&format!("https://{address}/")),
        &[],
        "{}",
    );

    assert_eq!(report.status, None);
    assert_eq!(report.error, Some(SendFailure::Tls));
    server.join().unwrap();
}

#[test]
fn an_error_never_carries_the_answer_body() {
    // The receiver answers garbage with a recognisable body: no status, and no body text.
    let receiver = Receiver::start("NOT-HTTP secret-answer-body\r\n\r\n", Duration::ZERO);

    let report = sender(TIMEOUT).send(&receiver.base_url, &target(&receiver.base_url), &[], "{}");

    assert_eq!(report.status, None);
    // A class, not a text: nothing of the answer can reach the delivery log.
    assert_eq!(report.error, Some(SendFailure::InvalidResponse));
    receiver.received();
}
