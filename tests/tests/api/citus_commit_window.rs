//! The events feed across Citus's commit of a creation (issue 23), run by `make test-citus` only
//! (scripts/test-citus.sh: ignored by `make test`, which has no Citus).
//!
//! A creation's confirmation is one call of `consentimento_confirmar_criacao`, delegated to the
//! company's worker inside a coordinator transaction that first takes the coordinator's
//! transaction id (issue 40, part 2). One worker wrote, so Citus commits in one phase: the
//! worker's `COMMIT` first, then the coordinator's own. Until the worker has committed, the
//! creation's rows are visible nowhere while the coordinator's transaction id is still running.
//! (Until the confirmation was one call, its deliveries' `INSERT ... SELECT` went through the
//! coordinator and every creation committed in two phases: the window was then the worker's
//! `COMMIT PREPARED`, after the coordinator's commit.) The workers here are reached through
//! relays, and the next `COMMIT` sent to a worker is held there, which keeps the creation in
//! that window as long as the test wants (the start, `consentimento_iniciar`, is one delegated
//! statement the worker commits on its own, with no `COMMIT` sent). A creation made meanwhile
//! commits whole. A client reading the feed along its cursor must not be handed the second
//! event while the first, which the log orders before it, is still on its way: it would move
//! past the first for good (`settled.rs`).
//!
//! Every node reaches the workers through the relays (the workers are registered by the relays'
//! addresses), so a delegated function that opened connections of its own from its worker would
//! have its own commit held instead. `consentimento_iniciar` did, until migration
//! `2026-12-07-004280` (its data-modifying CTE was planned as subplans shipped to every node):
//! the hold caught the start, and every creation after it waited on the held worker
//! (docs/scaling.md, "make test-citus under least privilege").

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{json, Value};
use testkit::relay::host_port;
use testkit::{wait_until, Client, Relay, TestDb};

use crate::helpers::*;
use crate::lifecycle::create;

/// `COMMIT` as the coordinator sends it to a worker: a simple query ('Q', its length of 4 + 7
/// bytes, the text and its NUL).
const COMMIT_MESSAGE: &str = "Q\u{0}\u{0}\u{0}\u{b}COMMIT\u{0}";

/// An active request of subject `cpf` (each creation its own subject: the same content twice is
/// the same request).
fn of(cpf: &str) -> Value {
    let mut body = active_body();
    body["cpfTitular"] = json!(cpf);
    body
}

/// The ids of the consent requests in a feed page, and its next cursor.
fn page(client: &Client, cursor: &str) -> (Vec<String>, String) {
    let r = client
        .get(&format!("/api/eventos?limite=500&cursor={cursor}"))
        .expect(200);
    let ids = r.data()["itens"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "solicitacao.criada")
        .map(|i| i["data"]["id"].as_str().unwrap().to_owned())
        .collect();
    let next = r.data()["proximoCursor"].as_str().unwrap().to_owned();
    (ids, next)
}

#[test]
#[ignore = "needs a Citus cluster: make test-citus"]
fn citus_commit_window_a_creation_still_committing_on_its_worker_holds_the_feed_back() {
    let workers = testkit::citus::workers()
        .expect("TEST_CITUS_WORKERS: run this test with `make test-citus`");
    // declared before the app: dropped after it, so the database is dropped through them
    let relays: Vec<Relay> = workers
        .iter()
        .map(|w| Relay::start(&host_port(w)))
        .collect();
    let through = workers
        .iter()
        .zip(&relays)
        .map(|(w, r)| r.url_for(w))
        .collect();
    // no background work in the API: the only commits are the test's creations
    let app = TestApp::spawn_on(
        TestDb::on_citus_workers(through),
        &[("APP__WORKERS__RUN_IN_SERVE", "false")],
    );
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let (first, _) = create(&app.a, ATIVO, &of(CPF));
    let mut cursor = String::new();
    assert!(
        wait_until(Duration::from_secs(30), || {
            let r = app.a.get("/api/eventos?limite=500").expect(200);
            let found = r.text.contains(&first);
            cursor = r.data()["proximoCursor"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            found
        }),
        "the first creation's event in the feed"
    );

    // the next COMMIT to a worker, whichever, is held: that creation stays in the window. The
    // whole simple-query message ('Q', its length, the text): "COMMITTED" appears in the
    // transaction's BEGIN, and a two-phase commit would be "COMMIT PREPARED '...'"
    for relay in &relays {
        relay.hold_next(COMMIT_MESSAGE);
    }
    let held = std::thread::spawn({
        let (url, key) = (app.api.base_url.clone(), app.key_a.clone());
        move || create(&Client::new(&url, Some(&key)), ATIVO, &of("111.444.777-35")).0
    });
    assert!(
        wait_until(Duration::from_secs(20), || relays
            .iter()
            .any(|r| r.held() == 1)),
        "no creation reached its worker's COMMIT (the relays read it only without TLS between \
         the nodes: citus.node_conninfo = 'sslmode=disable', as scripts/citus/nodes.sh sets)"
    );
    // another creation commits whole meanwhile
    let (later, _) = create(&app.a, ATIVO, &of("390.533.447-05"));

    // A client reads along its cursor while the first is held: the later one, ordered after it,
    // is held back too (it would be read, and the held one skipped, on the snapshot's xmin).
    let mut read: Vec<String> = Vec::new();
    for _ in 0..10 {
        let (ids, next) = page(&app.a, &cursor);
        read.extend(ids);
        cursor = next;
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!held.is_finished(), "the held creation answered while held");
    assert!(
        read.is_empty(),
        "read while a creation was still committing on its worker: {read:?}"
    );

    for relay in &relays {
        relay.release();
    }
    let held = held
        .join()
        .expect("the held creation answers once released");
    // then both, along the same cursor, once each
    let complete = wait_until(Duration::from_secs(30), || {
        let (ids, next) = page(&app.a, &cursor);
        read.extend(ids);
        cursor = next;
        read.len() >= 2
    });
    assert!(complete, "read along the cursor: {read:?}");
    let expected: HashSet<&String> = [&held, &later].into_iter().collect();
    assert_eq!(read.len(), 2, "{read:?}");
    assert_eq!(read.iter().collect::<HashSet<_>>(), expected);
}
