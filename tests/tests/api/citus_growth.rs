//! Growth without downtime on Citus (issue 23, part 5), run by `make test-citus` only
//! (scripts/test-citus.sh: ignored by `make test`, which has no Citus). A third worker joins the
//! cluster and `citus_rebalance_start()` moves shards onto it while two companies create consents
//! and read them back: every answer is 200 (or 503 with `Retry-After`), and every creation
//! answered 200 is there afterwards, on its company, as its reads said.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use serde_json::Value;
use testkit::Client;

use crate::helpers::*;
use crate::lifecycle::synced_with;

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Status {
    #[diesel(sql_type = Text)]
    state: String,
}

/// What one company's client saw: the ids created (200), and every other answer.
#[derive(Default)]
struct Seen {
    created: Vec<String>,
    refused: Vec<String>,
    calls: usize,
}

/// A client that creates a consent, then reads it back by id and lists its company's requests,
/// until `stop`.
fn load(base_url: String, key: String, body: Value, stop: Arc<AtomicBool>) -> JoinHandle<Seen> {
    std::thread::spawn(move || {
        let client = Client::new(&base_url, Some(&key));
        let mut seen = Seen::default();
        let judge = |r: &testkit::Reply, what: &str, seen: &mut Seen| {
            seen.calls += 1;
            let retry_after = r.header("retry-after").is_some();
            if r.status != 200 && !(r.status == 503 && retry_after) {
                seen.refused
                    .push(format!("{what}: {} {}", r.status, r.text));
            }
            r.status == 200
        };
        while !stop.load(Ordering::SeqCst) {
            let r = client.post_json(PENDENTE, &body);
            if judge(&r, "create", &mut seen) {
                let id = r.data()["id"].as_str().unwrap().to_owned();
                let read = client.get(&format!("/api/solicitacao-consentimento/{id}"));
                if judge(&read, "read", &mut seen) {
                    assert_eq!(read.data()["id"], id.as_str(), "{}", read.text);
                }
                seen.created.push(id);
            }
            let list = client.get("/api/solicitacao-consentimento?limite=20");
            judge(&list, "list", &mut seen);
            std::thread::sleep(Duration::from_millis(20));
        }
        seen
    })
}

#[test]
#[ignore = "needs a Citus cluster: make test-citus"]
fn citus_growth_a_worker_added_and_shards_rebalanced_under_load_lose_nothing_and_answer_200_or_503()
{
    let spare = std::env::var("TEST_CITUS_SPARE_WORKER")
        .expect("TEST_CITUS_SPARE_WORKER: run this test with `make test-citus`");
    let app = synced_with(&[]);
    let mut of_b = pending_body();
    of_b["casoDeUsoIdTemplate"] = serde_json::json!("tpl-b-seguro");

    let stop = Arc::new(AtomicBool::new(false));
    let clients = [
        load(
            app.api.base_url.clone(),
            app.key_a.clone(),
            pending_body(),
            stop.clone(),
        ),
        load(
            app.api.base_url.clone(),
            app.key_b.clone(),
            of_b,
            stop.clone(),
        ),
    ];
    std::thread::sleep(Duration::from_secs(2));

    // the third worker joins and the shards are spread over the three, under load
    app.db.add_citus_worker(&spare);
    let mut conn = app.db.conn();
    let spare_port = testkit::citus::port(&spare);
    diesel::sql_query("SELECT citus_rebalance_start()")
        .execute(&mut conn)
        .expect("start the rebalance");
    let started = Instant::now();
    let finished = loop {
        let state = diesel::sql_query("SELECT state::text AS state FROM citus_rebalance_status()")
            .get_result::<Status>(&mut conn)
            .map(|s| s.state)
            .unwrap_or_else(|e| format!("unknown: {e}"));
        // citus_job_status: scheduled, running, cancelling, failing, then finished, cancelled
        // or failed
        if state == "finished" {
            break true;
        }
        if ["failed", "failing", "cancelled", "cancelling"].contains(&state.as_str())
            || started.elapsed() > Duration::from_secs(300)
        {
            eprintln!("rebalance: {state}");
            break false;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    std::thread::sleep(Duration::from_secs(2));
    stop.store(true, Ordering::SeqCst);
    let seen: Vec<Seen> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    assert!(finished, "the rebalance finished");

    let moved = diesel::sql_query(format!(
        "SELECT count(*) AS n FROM pg_dist_shard_placement WHERE nodeport = {spare_port}"
    ))
    .get_result::<Count>(&mut conn)
    .unwrap()
    .n;
    assert!(moved > 0, "shards were moved onto the new worker");

    let companies = [(&app.company_a, &app.a), (&app.company_b, &app.b)];
    for ((company, client), seen) in companies.iter().zip(&seen) {
        assert!(
            seen.refused.is_empty(),
            "answers other than 200/503: {:?}",
            seen.refused
        );
        assert!(
            seen.created.len() >= 10,
            "the company kept creating during the move: {}",
            seen.created.len()
        );
        // every acknowledged creation is there, on its company, read through the API and in SQL
        for id in &seen.created {
            client
                .get(&format!("/api/solicitacao-consentimento/{id}"))
                .expect(200);
        }
        let stored = diesel::sql_query(format!(
            "SELECT count(*) AS n FROM solicitacoes_consentimento \
             WHERE empresa_id = '{company}' AND id = ANY ('{{{}}}'::uuid[])",
            seen.created.join(",")
        ))
        .get_result::<Count>(&mut conn)
        .unwrap()
        .n;
        assert_eq!(stored as usize, seen.created.len(), "every 200 is stored");
        eprintln!(
            "company {company}: {} calls, {} creations during the rebalance",
            seen.calls,
            seen.created.len()
        );
    }
}
