//! The sender ignores proxy variables. Its own test binary: it sets process environment.

mod support;

use std::io::ErrorKind;
use std::net::TcpListener;
use std::time::Duration;

use ports::WebhookSender;
use support::{response, sender, target, Receiver};

#[test]
fn proxy_variables_are_ignored() {
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    proxy.set_nonblocking(true).unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    for name in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        std::env::set_var(name, &proxy_url);
    }
    for name in ["NO_PROXY", "no_proxy"] {
        std::env::remove_var(name);
    }
    let receiver = Receiver::start(response("200 OK", &[]), Duration::ZERO);

    let report = sender(Duration::from_secs(5)).send(
        &receiver.base_url,
        &target(&receiver.base_url),
        &[],
        "{}",
    );

    assert_eq!(report.status, Some(200));
    receiver.received();
    match proxy.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the proxy was used: {other:?}"),
    }
}
