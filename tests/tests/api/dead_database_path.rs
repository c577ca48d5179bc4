//! A database that stops answering without refusing anything (a network path that drops
//! packets): a relay of the test's own between the API and PostgreSQL stops forwarding. The API
//! must answer 503 in the envelope within about its checkout timeout (2 s), not hold requests
//! until the kernel gives up on the connection (about 15 minutes), and serve again by itself
//! once the path forwards again.

use std::time::{Duration, Instant};

use testkit::processes::company_with_key;
use testkit::relay::host_port;
use testkit::{wait_until, Api, Client, Relay, Sim, TestDb};

use crate::helpers::*;

/// Far below the 15 minutes a dead path costs without the defence, and above the 2 s (checkout
/// timeout) it takes on a quiet machine: the test checks the behaviour, not the speed.
const ANSWERED_WITHIN: Duration = Duration::from_secs(8);

#[test]
fn a_database_path_that_stops_answering_gives_503_in_seconds_then_the_api_recovers_by_itself() {
    let db = TestDb::new();
    let relay = Relay::start(&host_port(db.url()));
    let sim = Sim::start(&seed());
    let (_, key) = company_with_key(&db, &sim, "Empresa A", CNPJ_A);
    let through_relay = relay.url_for(db.url());
    let api = Api::start_with(
        &db,
        &sim,
        &[
            ("APP__DATABASE__URL", through_relay.as_str()),
            ("APP__DATABASE__CHECKOUT_TIMEOUT_MS", "2000"),
            ("APP__WORKERS__RUN_IN_SERVE", "false"),
        ],
    );
    let a = Client::new(&api.base_url, Some(&key));
    let anonymous = Client::new(&api.base_url, None);
    a.get("/api/solicitacao-consentimento").expect(200);
    assert!(
        wait_until(Duration::from_secs(10), || anonymous
            .get("/health/ready")
            .status
            == 200),
        "never ready through the relay"
    );

    relay.pause();
    // Readers arriving at once (some get a pooled connection and wait on the dead path) and a
    // bit later (the probes have noticed by then).
    let readers: Vec<_> = (0..6)
        .map(|i| {
            let a = Client::new(&api.base_url, Some(&key));
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300 * i));
                let sent = Instant::now();
                let reply = a.get("/api/solicitacao-consentimento");
                (reply, sent.elapsed())
            })
        })
        .collect();
    for reader in readers {
        let (reply, took) = reader.join().unwrap();
        let reply = reply.expect(503);
        assert_eq!(reply.json["isPgccErro"], false);
        assert!(reply.retry_after.is_some(), "503 without Retry-After");
        assert!(
            took < ANSWERED_WITHIN,
            "a read waited {took:?} on the dead path"
        );
    }
    let sent = Instant::now();
    let ready = anonymous.get("/health/ready");
    assert_eq!(ready.status, 503, "{}", ready.text);
    assert_eq!(ready.json["checks"]["database"]["status"], "down");
    assert!(
        sent.elapsed() < ANSWERED_WITHIN,
        "readiness waited on the dead path"
    );

    relay.resume();
    assert!(
        wait_until(Duration::from_secs(30), || a
            .get("/api/solicitacao-consentimento")
            .status
            == 200),
        "the API did not recover once the database answered again"
    );
    assert_eq!(anonymous.get("/health/ready").status, 200);
}
