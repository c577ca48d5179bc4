//! Faults of what the API depends on, with real processes: PostgreSQL crashing and coming back
//! under load, and a slow or failing PGCC. Each test runs its own PostgreSQL cluster, so crashing
//! it affects no other test; the cluster is stopped and removed when the test ends, panics
//! included.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use diesel::RunQueryDsl;
use serde_json::{json, Value};
use testkit::processes::company_with_key;
use testkit::{wait_until, Api, Client, Cluster, Reply, Sim, TestDb};

use crate::helpers::*;

/// The API on a database of `cluster`, with company A (synchronized) and its client.
struct OwnClusterApp {
    // Dropped in this order: the API and the simulator, then the database, then the cluster.
    api: Api,
    _sim: Sim,
    db: TestDb,
    a: Client,
    key_a: String,
    sim_admin: Client,
    cluster: Cluster,
}

impl OwnClusterApp {
    fn start(env: &[(&str, &str)]) -> OwnClusterApp {
        let cluster = Cluster::start();
        let db = TestDb::on_cluster(cluster.admin_url());
        // Durability is under test: the throw-away clusters of scripts/pg.sh commit
        // asynchronously (fast, but a crash may then roll back the last commits); this database
        // commits synchronously, as a deployment does. Set before any connection of the API.
        diesel::sql_query(format!(
            "ALTER DATABASE \"{}\" SET synchronous_commit = on",
            db.name()
        ))
        .execute(&mut db.conn())
        .expect("synchronous commits");
        let sim = Sim::start(&seed());
        let (_, key_a) = company_with_key(&db, &sim, "Empresa A", CNPJ_A);
        let api = Api::start_with(&db, &sim, env);
        let a = Client::new(&api.base_url, Some(&key_a));
        a.post_empty("/api/casos-de-uso/sincronizar").expect(200);
        let sim_admin = Client::new(&sim.base_url, None);
        OwnClusterApp {
            api,
            _sim: sim,
            db,
            a,
            key_a,
            sim_admin,
            cluster,
        }
    }

    fn fault(&self, fault: Value) {
        let r = self.sim_admin.post_raw(
            "/_sim/faults",
            "application/json",
            fault.to_string().as_bytes(),
        );
        assert!(r.status < 300, "setting a fault failed: {}", r.text);
    }

    /// Our ids (`referenciaExterna`) of every request the simulator created.
    fn ids_at_the_pgcc(&self) -> HashSet<String> {
        let r = self.sim_admin.get("/_sim/solicitacoes");
        assert_eq!(r.status, 200, "{}", r.text);
        r.json
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["referenciaExterna"].as_str().map(str::to_owned))
            .collect()
    }

    fn stored(&self, id: &str) -> bool {
        self.db.scalar(&format!(
            "SELECT count(*) AS v FROM solicitacoes_consentimento WHERE id = '{id}' AND criacao = 'confirmada'"
        )) == 1
    }
}

/// One call's outcome, timed.
struct Outcome {
    reply: Reply,
    took: Duration,
    sent_at: Instant,
}

#[test]
fn postgres_crashing_under_load_answers_503_then_recovers_and_loses_no_acknowledged_creation() {
    // The shipped checkout timeout, stated here because the test relies on it.
    let checkout = Duration::from_millis(2000);
    let app = OwnClusterApp::start(&[("APP__DATABASE__CHECKOUT_TIMEOUT_MS", "2000")]);

    // Load: three clients creating requests back to back until told to stop.
    let stop = Arc::new(AtomicBool::new(false));
    let outcomes: Arc<Mutex<Vec<Outcome>>> = Arc::default();
    let loaders: Vec<_> = (0..3)
        .map(|_| {
            let client = Client::new(&app.api.base_url, Some(&app.key_a));
            let (stop, outcomes) = (stop.clone(), outcomes.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let sent_at = Instant::now();
                    let reply = client.post_json(PENDENTE, &pending_body());
                    let took = sent_at.elapsed();
                    outcomes.lock().unwrap().push(Outcome {
                        reply,
                        took,
                        sent_at,
                    });
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        })
        .collect();
    let successes = |after: Instant| {
        outcomes
            .lock()
            .unwrap()
            .iter()
            .filter(|o| o.reply.status == 200 && o.sent_at >= after)
            .count()
    };
    let began = Instant::now();
    assert!(
        wait_until(Duration::from_secs(30), || successes(began) >= 5),
        "no load got through before the crash"
    );

    app.cluster.crash();
    let crashed_at = Instant::now();
    // While it is down: 503 with Retry-After, for the load and for a read, after at most the
    // checkout timeout (plus scheduling slack), never a 500 nor a hang.
    assert!(
        wait_until(Duration::from_secs(20), || {
            outcomes
                .lock()
                .unwrap()
                .iter()
                .filter(|o| o.sent_at >= crashed_at && o.reply.status == 503)
                .count()
                >= 3
        }),
        "the load never saw a 503 while the database was down"
    );
    let sent = Instant::now();
    let r = app.a.get("/api/casos-de-uso").expect(503);
    assert!(sent.elapsed() < checkout + Duration::from_secs(6), "hung");
    assert_eq!(r.retry_after.as_deref(), Some("1"));
    assert_eq!(r.json["isPgccErro"], false);

    app.cluster.restart();
    let back_at = Instant::now();
    assert!(
        wait_until(Duration::from_secs(5), || app
            .a
            .get("/api/casos-de-uso")
            .status
            == 200),
        "the API did not answer 2xx within 5 s of the database being back"
    );
    assert!(
        wait_until(Duration::from_secs(30), || successes(back_at) >= 5),
        "the load did not get through again after the restart"
    );
    stop.store(true, Ordering::SeqCst);
    for loader in loaders {
        loader.join().expect("a load thread panicked");
    }

    let outcomes = std::mem::take(&mut *outcomes.lock().unwrap());
    let at_the_pgcc = app.ids_at_the_pgcc();
    let mut acknowledged = 0;
    for Outcome { reply, took, .. } in outcomes {
        match reply.status {
            200 => {
                let reply = reply.expect(200);
                let id = reply.data()["id"].as_str().unwrap().to_owned();
                assert!(
                    app.stored(&id),
                    "acknowledged creation {id} lost by the database"
                );
                assert!(
                    at_the_pgcc.contains(&id),
                    "acknowledged creation {id} unknown to the PGCC"
                );
                acknowledged += 1;
            }
            503 => {
                assert_eq!(reply.retry_after.as_deref(), Some("1"), "{}", reply.text);
                let reply = reply.expect(503);
                assert_eq!(reply.json["isPgccErro"], false);
                assert!(
                    took < checkout + Duration::from_secs(6),
                    "a 503 took {took:?}: the request hung past the checkout timeout"
                );
            }
            other => panic!(
                "{other} under a database crash (only 200 or 503): {}",
                reply.text
            ),
        }
    }
    assert!(acknowledged >= 10, "{acknowledged} creations acknowledged");
}

#[test]
fn reads_keep_answering_while_creations_wait_on_a_slow_pgcc_and_a_failing_pgcc_is_a_502() {
    // The PGCC's own timeout above the fault's latency, so the stalled creations succeed; no
    // background job calls the PGCC and takes a faulty answer meant for the creations.
    let app = OwnClusterApp::start(&[
        ("APP__PGCC__TIMEOUT_MS", "10000"),
        ("APP__WORKERS__RUN_IN_SERVE", "false"),
    ]);
    app.a.post_json(PENDENTE, &pending_body()).expect(200);

    // More stalled creations than the test profile's pool has connections (4): a creation must
    // not hold a database connection while it waits on the PGCC.
    let stalled = 6;
    app.fault(json!({"latencyMs": 3000, "count": stalled}));
    let creations_done = Arc::new(AtomicUsize::new(0));
    let creations: Vec<_> = (0..stalled)
        .map(|_| {
            let client = Client::new(&app.api.base_url, Some(&app.key_a));
            let done = creations_done.clone();
            std::thread::spawn(move || {
                let reply = client.post_json(PENDENTE, &pending_body());
                done.fetch_add(1, Ordering::SeqCst);
                reply
            })
        })
        .collect();
    // Wait until they all reach the PGCC (each stores its unfinished row first), where they are
    // held for 3 s.
    assert!(
        wait_until(Duration::from_secs(10), || {
            app.db
                .scalar("SELECT count(*) AS v FROM solicitacoes_consentimento")
                == 1 + stalled as i64
        }),
        "the creations never reached the PGCC call"
    );
    let mut lists = 0;
    for round in 0..10 {
        let path = if round % 2 == 0 {
            "/api/solicitacao-consentimento?limite=10"
        } else {
            "/api/casos-de-uso"
        };
        app.a.get(path).expect(200);
        lists += 1;
        assert_eq!(
            creations_done.load(Ordering::SeqCst),
            0,
            "a creation returned before list call #{lists}: the reads were not served while the PGCC stalled"
        );
    }
    for creation in creations {
        let reply = creation.join().unwrap().expect(200);
        let id = reply.data()["id"].as_str().unwrap().to_owned();
        assert!(app.stored(&id));
    }

    // Failing: the creation is a PGCC error, no consent stored (its row stays an unfinished,
    // invisible creation for the reconciler); reads are unaffected.
    app.fault(json!({"status": 503, "count": 1}));
    let confirmed =
        "SELECT count(*) AS v FROM solicitacoes_consentimento WHERE criacao = 'confirmada'";
    let before = app.db.scalar(confirmed);
    let r = app.a.post_json(PENDENTE, &pending_body()).expect(502);
    assert_eq!(r.json["isPgccErro"], true);
    assert_eq!(r.json["pgccCodigoErro"], "ServiceUnavailable");
    app.a.get("/api/solicitacao-consentimento").expect(200);
    assert_eq!(app.db.scalar(confirmed), before);
}
