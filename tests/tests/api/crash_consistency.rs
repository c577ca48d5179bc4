//! No consent lost or duplicated between the PGCC and us, even when `consent-api` dies at any
//! point of a creation: our row is stored before the PGCC is asked, and the reconciler settles
//! whatever a crash (or a PGCC timeout or failure) left unfinished by asking the PGCC by external
//! reference.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::*;

/// The reconciler every second, for creations whose last attempt is 3 s old (above the test
/// profile's 2 s PGCC timeout), cancelling what the PGCC has not held for 2 s; no status poll
/// (it would only add PGCC calls).
const FAST_RECONCILER: [(&str, &str); 4] = [
    ("APP__WORKERS__RECONCILE_SECONDS", "1"),
    ("APP__WORKERS__RECONCILE_GRACE_SECONDS", "3"),
    ("APP__WORKERS__STATUS_POLL_SECONDS", "0"),
    ("APP__WORKERS__RECONCILE_NOT_FOUND_SECONDS", "2"),
];

/// SplitMix64: a tiny deterministic generator, so the kill points are the same on every run.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform enough in `low..=high` for kill points.
    fn between(&mut self, low: usize, high: usize) -> usize {
        low + (self.next() % (high - low + 1) as u64) as usize
    }
}

/// Our confirmed consents: id -> PGCC id.
fn confirmed_rows(app: &TestApp) -> HashMap<String, String> {
    let text = app
        .db
        .text(
            "SELECT coalesce(string_agg(id::text || '=' || pgcc_id, ','), '') AS v \
             FROM solicitacoes_consentimento WHERE criacao = 'confirmada'",
        )
        .unwrap_or_default();
    text.split(',')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (id, pgcc_id) = pair.split_once('=').expect("id=pgcc_id");
            (id.to_owned(), pgcc_id.to_owned())
        })
        .collect()
}

/// The invariants: the PGCC holds exactly our confirmed consents, each once, under our id.
fn assert_pgcc_and_us_agree(app: &TestApp) -> HashMap<String, String> {
    let ours = confirmed_rows(app);
    let theirs = app.sim_requests();
    assert_eq!(
        theirs.len(),
        ours.len(),
        "the PGCC's count of requests = our count of confirmed consents"
    );
    let pgcc_ids: HashSet<&String> = ours.values().collect();
    assert_eq!(
        pgcc_ids.len(),
        ours.len(),
        "no PGCC id twice among our consents"
    );
    let mut references = HashSet::new();
    let mut held: HashMap<&str, &str> = HashMap::new();
    for request in &theirs {
        let reference = request["referenciaExterna"].as_str().unwrap();
        assert!(
            references.insert(reference),
            "referenciaExterna {reference} twice at the PGCC"
        );
        held.insert(request["id"].as_str().unwrap(), reference);
    }
    for (id, pgcc_id) in &ours {
        assert_eq!(
            held.get(pgcc_id.as_str()).copied(),
            Some(id.as_str()),
            "consent {id}: its PGCC id must exist at the PGCC with our id as its reference"
        );
    }
    ours
}

fn unfinished(app: &TestApp) -> i64 {
    app.creation_rows("em_andamento")
}

/// One creation as a real client sees it: the answer's id and PGCC id, or a failure (the server
/// died under it, or answered an error).
fn create_once(
    agent: &ureq::Agent,
    base_url: &str,
    api_key: &str,
) -> Result<(String, String), String> {
    let mut res = agent
        .post(format!("{base_url}{PENDENTE}"))
        .header("Content-Type", "application/json")
        .header("Api-Key", api_key)
        .send(pending_body().to_string())
        .map_err(|e| format!("transport: {e}"))?;
    let status = res.status().as_u16();
    let text = res.body_mut().read_to_string().unwrap_or_default();
    if status != 200 {
        return Err(format!("HTTP {status}"));
    }
    let body: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    Ok((
        body["data"]["id"].as_str().unwrap().to_owned(),
        body["data"]["pgccId"].as_str().unwrap().to_owned(),
    ))
}

#[test]
fn killing_the_api_at_random_points_of_2000_creations_loses_and_duplicates_no_consent() {
    const CREATIONS: usize = 2_000;
    const CLIENTS: usize = 4;
    let mut rng = SplitMix64(0x00c0_ffee_5eed_2026);
    let mut kill_points = Vec::new();
    let mut at = 0;
    loop {
        at += rng.between(250, 400);
        if at >= CREATIONS - 100 {
            break;
        }
        kill_points.push(at);
    }
    let mut env = FAST_RECONCILER.to_vec();
    env.push(("APP__DATABASE__POOL_SIZE", "6"));
    let mut app = TestApp::spawn_with(&env);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let started = Instant::now();

    // The API's current address and its generation (bumped at each restart).
    let api = Arc::new(RwLock::new((0u64, app.api.base_url.clone())));
    let next = Arc::new(AtomicUsize::new(0));
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let failures = Arc::new(Mutex::new(Vec::new()));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (api, next, acknowledged, failures) = (
                api.clone(),
                next.clone(),
                acknowledged.clone(),
                failures.clone(),
            );
            let api_key = app.key_a.clone();
            std::thread::spawn(move || {
                let agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .timeout_global(Some(Duration::from_secs(20)))
                    .build()
                    .new_agent();
                while next.fetch_add(1, Ordering::SeqCst) < CREATIONS {
                    let (generation, base_url) = api.read().unwrap().clone();
                    match create_once(&agent, &base_url, &api_key) {
                        Ok(created) => acknowledged.lock().unwrap().push(created),
                        Err(why) => {
                            let transport = why.starts_with("transport");
                            failures.lock().unwrap().push(why);
                            if transport {
                                // the server died: wait for the next one, as a client would retry
                                // its connection (bounded: a restart takes a second or two)
                                let deadline = Instant::now() + Duration::from_secs(30);
                                while api.read().unwrap().0 == generation
                                    && Instant::now() < deadline
                                {
                                    std::thread::sleep(Duration::from_millis(20));
                                }
                            }
                        }
                    }
                }
            })
        })
        .collect();

    for (generation, point) in kill_points.iter().enumerate() {
        assert!(
            testkit::wait_until(Duration::from_secs(120), || next.load(Ordering::SeqCst)
                >= *point),
            "creations stalled before kill point {point}"
        );
        // SIGKILL the whole process mid-traffic, then a new one on the same database
        app.restart_api(&env);
        *api.write().unwrap() = (generation as u64 + 1, app.api.base_url.clone());
    }
    for client in clients {
        client.join().unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    let failures = failures.lock().unwrap().clone();
    assert_eq!(acknowledged.len() + failures.len(), CREATIONS);
    assert!(
        failures.iter().all(|f| f.starts_with("transport")),
        "only the kills may fail a creation: {failures:?}"
    );

    // The last API's reconciler settles what the kills left unfinished.
    assert!(
        testkit::wait_until(Duration::from_secs(60), || unfinished(&app) == 0),
        "{} creations still unfinished",
        unfinished(&app)
    );
    let ours = assert_pgcc_and_us_agree(&app);
    // Every acknowledged creation is there, with the PGCC id its client was given.
    for (id, pgcc_id) in &acknowledged {
        assert_eq!(ours.get(id), Some(pgcc_id), "acknowledged consent {id}");
    }
    eprintln!(
        "{CREATIONS} creations, {} kills at {kill_points:?}: {} acknowledged, {} cut by a kill; \
         {} consents in the end ({} confirmed although their client saw a failure), {} cancelled; \
         {:?}",
        kill_points.len(),
        acknowledged.len(),
        failures.len(),
        ours.len(),
        ours.len() - acknowledged.len(),
        app.creation_rows("cancelada"),
        started.elapsed()
    );
    assert!(kill_points.len() >= 4, "{kill_points:?}");
}

#[test]
fn a_creation_the_pgcc_made_after_our_timeout_is_confirmed_by_the_reconciler() {
    let mut env = FAST_RECONCILER.to_vec();
    env.push(("APP__PGCC__TIMEOUT_MS", "500"));
    env[1] = ("APP__WORKERS__RECONCILE_GRACE_SECONDS", "2");
    let app = TestApp::spawn_with(&env);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    // the PGCC creates the request, but answers after our timeout
    app.fault(json!({"latencyMs": 1000, "count": 1}));

    let r = app.a.post_json(ATIVO, &active_body()).expect(504);
    assert_eq!(r.json["pgccCodigoErro"], "GatewayTimeout");
    assert_eq!(app.consent_rows(), 0, "not visible while unsettled");
    assert_eq!(unfinished(&app), 1);

    assert!(
        testkit::wait_until(Duration::from_secs(20), || app.consent_rows() == 1),
        "the reconciler did not confirm it"
    );
    let ours = assert_pgcc_and_us_agree(&app);
    let (id, pgcc_id) = ours.iter().next().unwrap();
    let read = app
        .a
        .get(&format!("/api/solicitacao-consentimento/{id}"))
        .expect(200);
    assert_eq!(read.data()["pgccId"], pgcc_id.as_str());
    assert_eq!(read.data()["status"], "ativo");
    assert_eq!(
        read.data()["historico"].as_array().unwrap().len(),
        1,
        "its creation, once"
    );
}

#[test]
fn a_creation_the_pgcc_never_made_is_cancelled_by_the_reconciler_and_never_shown() {
    let app = TestApp::spawn_with(&FAST_RECONCILER);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    app.fault(json!({"status": 503, "count": 1}));

    app.a.post_json(PENDENTE, &pending_body()).expect(502);
    assert_eq!(unfinished(&app), 1);

    assert!(
        testkit::wait_until(Duration::from_secs(20), || app.creation_rows("cancelada")
            == 1),
        "the reconciler did not cancel it"
    );
    assert_eq!(app.consent_rows(), 0);
    assert!(app.sim_requests().is_empty());
    let page = app.a.get("/api/solicitacao-consentimento").expect(200);
    assert_eq!(page.data()["itens"], json!([]));
}

#[test]
fn a_refused_creation_is_cancelled_at_once() {
    let app = TestApp::synced();
    app.fault(json!({"status": 409, "count": 1}));

    app.a.post_json(ATIVO, &active_body()).expect(422);

    assert_eq!(app.creation_rows("cancelada"), 1);
    assert_eq!(unfinished(&app), 0);
    assert_eq!(app.consent_rows(), 0);
}

#[test]
fn a_worker_process_alone_reconciles_what_a_dead_api_left() {
    let mut app = TestApp::spawn_with(&[
        ("APP__WORKERS__RUN_IN_SERVE", "false"),
        ("APP__PGCC__TIMEOUT_MS", "500"),
    ]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    app.fault(json!({"latencyMs": 1000, "count": 1}));
    app.a.post_json(PENDENTE, &pending_body()).expect(504);
    app.api.kill();
    assert!(testkit::wait_until(Duration::from_secs(10), || app
        .sim_requests()
        .len()
        == 1));
    assert_eq!(unfinished(&app), 1);

    let mut env = FAST_RECONCILER.to_vec();
    env[1] = ("APP__WORKERS__RECONCILE_GRACE_SECONDS", "1");
    env.push(("APP__PGCC__TIMEOUT_MS", "500"));
    let _worker = testkit::Worker::start_with(&app.db, &app.sim, &env);

    assert!(
        testkit::wait_until(Duration::from_secs(20), || app.consent_rows() == 1),
        "the worker did not confirm it"
    );
    assert_pgcc_and_us_agree(&app);
}

#[test]
fn a_reconcile_grace_not_above_the_pgcc_timeout_or_no_retention_stops_start_up() {
    let run = |env: &[(&str, &str)]| {
        let out = std::process::Command::new(testkit::processes::bin_path("consent-api"))
            .env("APP_ENV", "test")
            .envs(env.iter().copied())
            .arg("migrate")
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };

    let err = run(&[
        ("APP__PGCC__TIMEOUT_MS", "30000"),
        ("APP__WORKERS__RECONCILE_GRACE_SECONDS", "30"),
    ]);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("APP__WORKERS__RECONCILE_GRACE_SECONDS"),
        "{err}"
    );

    let err = run(&[("APP__IDEMPOTENCY__RETENTION_HOURS", "0")]);
    assert!(err.contains("APP__IDEMPOTENCY__RETENTION_HOURS"), "{err}");
}
