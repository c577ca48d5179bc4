//! The service on a pg_auto_failover formation (monitor and two synchronous data nodes, from
//! `scripts/failover-formation.sh`), through its multi-host URL
//! (`target_session_attrs=read-write`), its change feed included: two clients create at a
//! steady rate under Idempotency-Keys while the primary node is killed (keeper and postmaster,
//! kill -9), then while a planned switchover runs. Answers during the failover are 503 in the
//! envelope and none waits past the checkout timeout (plus a margin for the rest of the
//! request); the service serves again by itself; every creation answered 200 is on the new
//! primary and reached the PGCC once; clients that retry their 503s under the same key end with
//! every consent created exactly once.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use testkit::failover::{available_or_skip, Formation};
use testkit::processes::company_with_key;
use testkit::{wait_until, Api, Client, Sim, TestDb};

use crate::helpers::*;

/// The pool's wait for a connection: a request that cannot get one answers 503 after it.
const CHECKOUT_TIMEOUT_MS: u64 = 2000;
/// What a request may take on top of one checkout wait: its other statements, on a machine
/// shared with the rest of the suite. A request past it hangs (it is not a speed bound).
const MARGIN: Duration = Duration::from_secs(4);

/// A stuck creation (its row stored, the answer lost with the primary) is settled by the
/// reconciler within seconds, so a retry under its key ends.
const SERVICE_ENV: [(&str, &str); 5] = [
    ("APP__DATABASE__CHECKOUT_TIMEOUT_MS", "2000"),
    ("APP__WORKERS__RECONCILE_SECONDS", "1"),
    ("APP__WORKERS__RECONCILE_GRACE_SECONDS", "3"),
    ("APP__WORKERS__STATUS_POLL_SECONDS", "0"),
    ("APP__WORKERS__RECONCILE_NOT_FOUND_SECONDS", "2"),
];

/// One answer a client got.
#[derive(Clone, Debug)]
struct Attempt {
    key: String,
    /// Whether it was a retry of an earlier answer under the same key.
    retry: bool,
    sent: Instant,
    took: Duration,
    status: u16,
    /// `data.id` of a 200.
    id: Option<String>,
    body: String,
}

/// Everything both clients saw.
#[derive(Default)]
struct Log {
    attempts: Vec<Attempt>,
}

/// A client creating one consent every 50 ms under a new Idempotency-Key, retrying an answer
/// other than 200 under the same key after its Retry-After (1 s), as the API's guide says.
fn client(
    name: &'static str,
    base_url: String,
    api_key: String,
    body: Value,
    stop: Arc<AtomicBool>,
    log: Arc<Mutex<Log>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let client = Client::new(&base_url, Some(&api_key));
        let mut n = 0u32;
        while !stop.load(Ordering::SeqCst) {
            n += 1;
            let key = format!("{name}-{n}-{}", uuid::Uuid::new_v4().simple());
            let mut retry = false;
            // A key is never given up before its 200 (bounded here for a failing run): a
            // request cut by the failover after it claimed its key holds it until its release,
            // retried in the background, reaches the new primary (at worst its lease, 60 s,
            // IDEMPOTENCY_LEASE_SECONDS), and a retry meets 409 until then.
            let deadline = Instant::now() + Duration::from_secs(90);
            loop {
                let sent = Instant::now();
                let r = client.post_json_with(PENDENTE, &body, &[("Idempotency-Key", &key)]);
                let took = sent.elapsed();
                let ok = r.status == 200;
                log.lock().unwrap().attempts.push(Attempt {
                    key: key.clone(),
                    retry,
                    sent,
                    took,
                    status: r.status,
                    id: ok.then(|| r.data()["id"].as_str().unwrap().to_owned()),
                    body: r.text.clone(),
                });
                if ok || Instant::now() > deadline {
                    break;
                }
                retry = true;
                std::thread::sleep(Duration::from_secs(1));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    })
}

struct Setup {
    formation: Formation,
    db: TestDb,
    sim: Sim,
    api: Api,
    key_a: String,
    key_b: String,
}

impl Setup {
    fn new() -> Setup {
        let formation = Formation::start();
        // the per-test database is made on the formation's primary (replicated to its standby)
        let db = TestDb::on_cluster(&formation.admin_url());
        assert!(
            db.url().contains(",127.0.0.1:"),
            "the service must get the multi-host URL: {}",
            db.url()
        );
        let sim = Sim::start(&seed());
        let (_, key_a) = company_with_key(&db, &sim, "Empresa A", CNPJ_A);
        let (_, key_b) = company_with_key(&db, &sim, "Empresa B", CNPJ_B);
        let api = Api::start_with(&db, &sim, &SERVICE_ENV);
        // the service runs as the runtime role on the formation too (issue 36): the multi-host
        // URL carries it
        assert!(
            db.runtime_url().starts_with("postgresql://consent_app@"),
            "{}",
            db.runtime_url()
        );
        for key in [&key_a, &key_b] {
            Client::new(&api.base_url, Some(key))
                .post_empty("/api/casos-de-uso/sincronizar")
                .expect(200);
        }
        assert!(
            db.scalar(
                "SELECT count(*) AS v FROM pg_stat_activity \
                 WHERE usename = 'consent_app' AND datname = current_database()"
            ) > 0,
            "no session of the runtime role on the primary"
        );
        Setup {
            formation,
            db,
            sim,
            api,
            key_a,
            key_b,
        }
    }

    /// Starts both clients (company A and company B); returns their stop flag, log and threads.
    fn clients(&self) -> Clients {
        let stop = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(Log::default()));
        let mut b_body = pending_body();
        b_body["casoDeUsoIdTemplate"] = json!("tpl-b-seguro");
        let threads = vec![
            client(
                "a",
                self.api.base_url.clone(),
                self.key_a.clone(),
                pending_body(),
                stop.clone(),
                log.clone(),
            ),
            client(
                "b",
                self.api.base_url.clone(),
                self.key_b.clone(),
                b_body,
                stop.clone(),
                log.clone(),
            ),
        ];
        Clients { stop, log, threads }
    }

    /// Our confirmed consents (id), read on the primary through the multi-host URL; asserts it
    /// is `node`.
    fn confirmed_on(&self, node: &str) -> HashSet<String> {
        let port = self.db.scalar("SELECT inet_server_port()::bigint AS v");
        assert_eq!(
            port,
            i64::from(self.formation.port(node)),
            "the multi-host URL must lead to the primary, {node}"
        );
        self.db
            .text(
                "SELECT coalesce(string_agg(id::text, ','), '') AS v \
                 FROM solicitacoes_consentimento WHERE criacao = 'confirmada'",
            )
            .unwrap_or_default()
            .split(',')
            .filter(|id| !id.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// referenciaExterna of every request the PGCC received, with how often.
    fn at_pgcc(&self) -> HashMap<String, usize> {
        let r = Client::new(&self.sim.base_url, None).get("/_sim/solicitacoes");
        assert_eq!(r.status, 200, "{}", r.text);
        let mut seen = HashMap::new();
        for request in r.json.as_array().cloned().unwrap_or_default() {
            let reference = request["referenciaExterna"].as_str().unwrap().to_owned();
            *seen.entry(reference).or_insert(0) += 1;
        }
        seen
    }

    /// The invariants after a run: each key answered 200 in the end, with one id per key; the
    /// primary (`node`) holds exactly those consents, and the PGCC got each exactly once.
    fn assert_exactly_once(&self, attempts: &[Attempt], node: &str) {
        let mut by_key: HashMap<&str, &str> = HashMap::new();
        let keys: HashSet<&str> = attempts.iter().map(|a| a.key.as_str()).collect();
        for a in attempts {
            if let Some(id) = &a.id {
                if let Some(before) = by_key.insert(&a.key, id) {
                    assert_eq!(before, id, "key {}: two different consents", a.key);
                }
            }
        }
        let unanswered: Vec<&&str> = keys.iter().filter(|k| !by_key.contains_key(**k)).collect();
        assert!(
            unanswered.is_empty(),
            "keys never answered 200 despite their retries: {unanswered:?}"
        );
        let acknowledged: HashSet<String> = by_key.values().map(|id| (*id).to_owned()).collect();
        assert_eq!(
            acknowledged.len(),
            keys.len(),
            "one consent per Idempotency-Key"
        );
        let stored = self.confirmed_on(node);
        let lost: Vec<&String> = acknowledged.difference(&stored).collect();
        assert!(
            lost.is_empty(),
            "acknowledged creations missing on the new primary: {lost:?}"
        );
        let extra: Vec<&String> = stored.difference(&acknowledged).collect();
        assert!(
            extra.is_empty(),
            "consents stored that no client was given: {extra:?}"
        );
        let pgcc = self.at_pgcc();
        for id in &acknowledged {
            assert_eq!(
                pgcc.get(id).copied(),
                Some(1),
                "consent {id} must have reached the PGCC exactly once"
            );
        }
        assert_eq!(
            pgcc.len(),
            acknowledged.len(),
            "the PGCC holds exactly our consents"
        );
    }
}

impl Setup {
    /// Whether the change feed (on the same multi-host URL) is connected and the caches in use:
    /// after a role change it must have found the new primary by itself.
    fn feed_connected(&self) -> bool {
        Client::new(&self.api.base_url, Some(&self.key_a))
            .get("/metrics")
            .text
            .lines()
            .any(|l| l.trim() == "consent_api_cache_in_use 1")
    }
}

struct Clients {
    stop: Arc<AtomicBool>,
    log: Arc<Mutex<Log>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Clients {
    /// The 200s answered to requests sent after `since`.
    fn served_since(&self, since: Instant) -> usize {
        let log = self.log.lock().unwrap();
        log.attempts
            .iter()
            .filter(|a| a.sent >= since && a.status == 200)
            .count()
    }

    /// Stops both clients (each finishes its current key) and returns every answer.
    fn finish(self) -> Vec<Attempt> {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads {
            t.join().expect("a client thread panicked");
        }
        let log = self.log.lock().unwrap();
        log.attempts.clone()
    }
}

/// Every answer is 200 or a 503 envelope (`isPgccErro: false`, with Retry-After) and none took
/// longer than a checkout wait plus the margin. A retry may also meet its own first attempt
/// still running (409), which the client retries as well.
fn assert_only_200_or_503(attempts: &[Attempt]) {
    let bound = Duration::from_millis(CHECKOUT_TIMEOUT_MS) + MARGIN;
    for a in attempts {
        let allowed = a.status == 200 || a.status == 503 || (a.retry && a.status == 409);
        assert!(allowed, "key {} answered {}: {}", a.key, a.status, a.body);
        if a.status != 200 {
            let body: Value =
                serde_json::from_str(&a.body).unwrap_or_else(|_| panic!("not JSON: {}", a.body));
            assert_eq!(body["sucesso"], false, "{}", a.body);
            assert_eq!(body["isPgccErro"], false, "{}", a.body);
        }
        assert!(
            a.took <= bound,
            "key {}: a request hung {:?} (status {}), past the checkout timeout and margin",
            a.key,
            a.took,
            a.status
        );
    }
}

fn summary(attempts: &[Attempt]) -> String {
    let mut by_status: HashMap<u16, usize> = HashMap::new();
    for a in attempts {
        *by_status.entry(a.status).or_insert(0) += 1;
    }
    let slowest = attempts.iter().map(|a| a.took).max().unwrap_or_default();
    let mut first_sent: HashMap<&str, Instant> = HashMap::new();
    let mut settled = Duration::ZERO;
    for a in attempts {
        let first = *first_sent.entry(&a.key).or_insert(a.sent);
        if a.status == 200 {
            settled = settled.max(a.sent + a.took - first);
        }
    }
    format!(
        "{} answers {by_status:?}, slowest {slowest:?}, longest from a key's first attempt to its 200 {settled:?}",
        attempts.len()
    )
}

#[test]
fn a_killed_primary_is_replaced_and_every_creation_lands_once_then_a_switchover() {
    if !available_or_skip("failover::a_killed_primary_is_replaced_and_every_creation_lands_once") {
        return;
    }
    let setup = Setup::new();
    assert!(
        wait_until(Duration::from_secs(20), || setup.feed_connected()),
        "the change feed never connected through the multi-host URL"
    );
    let first = setup.formation.primary();
    let standby = if first == "node1" { "node2" } else { "node1" };

    // 1. The primary dies.
    let clients = setup.clients();
    assert!(
        wait_until(Duration::from_secs(20), || clients
            .served_since(Instant::now() - Duration::from_secs(60))
            >= 20),
        "the clients were not served before the failover"
    );
    let killed_at = Instant::now();
    setup.formation.kill(&first);
    let recovered = wait_until(Duration::from_secs(20), || {
        clients.served_since(killed_at + Duration::from_millis(1)) > 0
            && setup.formation.primary() == standby
    });
    let recovered_after = killed_at.elapsed();
    // a few more seconds of creations on the new primary
    std::thread::sleep(Duration::from_secs(3));
    let attempts = clients.finish();
    eprintln!(
        "failover: served again {recovered_after:?} after the kill; {}",
        summary(&attempts)
    );
    assert!(
        recovered,
        "the service did not serve creations again within 20 s of the primary's death ({})",
        setup.formation.dir().display()
    );
    assert!(
        attempts
            .iter()
            .any(|a| a.status == 503 && a.sent >= killed_at),
        "no request met the failover: the test proved nothing"
    );
    assert_only_200_or_503(&attempts);
    setup.assert_exactly_once(&attempts, standby);
    assert!(
        wait_until(Duration::from_secs(20), || setup.feed_connected()),
        "the change feed did not reconnect to the new primary"
    );

    // 2. The killed node rejoins as the standby; a planned switchover gives it back the primary.
    setup.formation.rejoin(&first);
    setup.formation.wait_healthy();
    let clients = setup.clients();
    assert!(
        wait_until(Duration::from_secs(20), || clients
            .served_since(Instant::now() - Duration::from_secs(60))
            >= 10),
        "the clients were not served before the switchover"
    );
    let switched_at = Instant::now();
    setup.formation.switchover();
    assert!(
        wait_until(Duration::from_secs(20), || clients
            .served_since(Instant::now() - Duration::from_millis(500))
            > 0
            && setup.formation.primary() == first),
        "the service did not serve again after the switchover"
    );
    std::thread::sleep(Duration::from_secs(3));
    let second = clients.finish();
    eprintln!(
        "switchover: done {:?} after it started; {}",
        switched_at.elapsed(),
        summary(&second)
    );
    assert_only_200_or_503(&second);
    let mut all = attempts;
    all.extend(second);
    setup.assert_exactly_once(&all, &first);
    assert!(
        wait_until(Duration::from_secs(20), || setup.feed_connected()),
        "the change feed did not reconnect after the switchover"
    );
}
