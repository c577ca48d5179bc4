//! Behind a transaction-mode connection pooler (Debian's PgBouncer, pool_mode = transaction):
//! with `database.prepared_statements = false` every command works through it, and a revoked
//! key is refused by the replica within 2 s whether its change feed reaches PostgreSQL directly
//! (the caches in use, told of the revocation) or goes through the pooler too (LISTEN hears
//! nothing there: the feed's probe never comes back and the caches stay off).

use std::process::Output;
use std::time::{Duration, Instant};

use diesel_migrations::MigrationHarness;
use testkit::pgbouncer::{available_or_skip, PgBouncer};
use testkit::processes::{cli_with, repo_root, single_line};
use testkit::{wait_until, Api, Client, Sim, TestDb, Worker};

use crate::helpers::*;

fn ok(out: Output, what: &str) -> Output {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `/metrics` text.
fn metrics(client: &Client) -> String {
    client.get("/metrics").text
}

fn cache_in_use(client: &Client) -> Option<u8> {
    metrics(client)
        .lines()
        .find_map(|l| l.strip_prefix("consent_api_cache_in_use "))
        .map(|v| v.trim().parse().unwrap())
}

fn key_hits(client: &Client) -> u64 {
    metrics(client)
        .lines()
        .find_map(|l| {
            l.strip_prefix("consent_api_cache_lookups_total{cache=\"api_keys\",result=\"hit\"} ")
        })
        .map_or(0, |n| n.trim().parse().unwrap())
}

/// Whether this run is on Citus, where these tests stop: they migrate an empty database from
/// the service, through PgBouncer, and a Citus database is migrated, then distributed
/// (scripts/citus/distribute.sql), then granted: a service migrating it whole has no
/// distribution to run (its unique indexes, made on tables already distributed, are refused).
fn one_node_only() -> bool {
    testkit::citus::one_node_only(
        "the service migrates an empty database through PgBouncer; a Citus database is \
         migrated, distributed and granted in the operator's order (docs/scaling.md)",
    )
}

/// A database with no migration applied, a simulator, PgBouncer in front of the test cluster,
/// and the environment that sends the service's connections through it.
struct Setup {
    db: TestDb,
    sim: Sim,
    bouncer: PgBouncer,
    through_bouncer: String,
}

impl Setup {
    fn new() -> Setup {
        let db = TestDb::new();
        db.conn()
            .revert_all_migrations(testkit::db::MIGRATIONS)
            .unwrap();
        let sim = Sim::start(&seed());
        let bouncer = PgBouncer::start(db.url());
        let through_bouncer = bouncer.url_for(db.url());
        Setup {
            db,
            sim,
            bouncer,
            through_bouncer,
        }
    }

    /// Pool through PgBouncer, without named prepared statements.
    fn env<'a>(&'a self, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut env = vec![
            ("APP__DATABASE__URL", self.through_bouncer.as_str()),
            ("APP__DATABASE__PREPARED_STATEMENTS", "false"),
        ];
        env.extend_from_slice(extra);
        env
    }

    fn cli(&self, args: &[&str]) -> Output {
        ok(cli_with(&self.db, &self.sim, &self.env(&[]), args), args[0])
    }

    /// `migrate`, `company create` and `api-key issue` through PgBouncer: (company, key).
    fn migrated_company_with_key(&self) -> (String, String) {
        let migrated = self.cli(&["migrate"]);
        let said = String::from_utf8_lossy(&migrated.stderr);
        let shipped = std::fs::read_dir(repo_root().join("migrations"))
            .unwrap()
            .count();
        assert!(
            said.contains(&format!("migrations: {shipped} applied")),
            "{said}"
        );
        let company = single_line(
            &self
                .cli(&["company", "create", "--nome", "Empresa A", "--cnpj", CNPJ_A])
                .stdout,
        );
        let key = single_line(
            &self
                .cli(&["api-key", "issue", "--empresa", &company])
                .stdout,
        );
        (company, key)
    }

    fn key_id(&self, company: &str) -> String {
        let listed = self.cli(&["api-key", "list", "--empresa", company]);
        let text = single_line(&listed.stdout);
        text.split('\t').next().unwrap().to_owned()
    }

    /// Revokes the key through PgBouncer while another client keeps calling the replica: the
    /// key must be refused within 2 s of the command's start, and by the time it returns.
    fn revoke_and_expect_refusal_within_2_s(&self, company: &str, api: &Api, key: &str) {
        let id = self.key_id(company);
        let key_again = key;
        let (base_url, key) = (api.base_url.clone(), key.to_owned());
        let started = Instant::now();
        let watcher = std::thread::spawn(move || {
            let client = Client::new(&base_url, Some(&key));
            let refused = wait_until(Duration::from_secs(2), || {
                client.get("/api/casos-de-uso").status == 401
            });
            refused.then(|| started.elapsed())
        });
        self.cli(&["api-key", "revoke", &id]);
        let returned = started.elapsed();
        let after_return = Client::new(&api.base_url, Some(key_again))
            .get("/api/casos-de-uso")
            .status;
        let refused_after = watcher.join().unwrap();
        eprintln!(
            "revoked key refused {refused_after:?} after `api-key revoke` started; the command \
             returned after {returned:?}"
        );
        let refused_after = refused_after.expect("the revoked key was still accepted after 2 s");
        assert!(refused_after <= Duration::from_secs(2), "{refused_after:?}");
        assert_eq!(
            after_return, 401,
            "accepted after `api-key revoke` returned"
        );
    }
}

#[test]
fn behind_pgbouncer_with_a_direct_feed_the_caches_work_and_a_revoked_key_is_refused_within_2_s() {
    if !available_or_skip("behind_pgbouncer_with_a_direct_feed") || one_node_only() {
        return;
    }
    let setup = Setup::new();
    let (company, key) = setup.migrated_company_with_key();
    let direct_feed = setup.db.url().to_owned();
    let api = Api::start_with(
        &setup.db,
        &setup.sim,
        &setup.env(&[("APP__CACHE__FEED_URL", &direct_feed)]),
    );
    let client = Client::new(&api.base_url, Some(&key));
    let anonymous = Client::new(&api.base_url, None);

    // a write and reads through PgBouncer
    client
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let listed = client.get("/api/casos-de-uso").expect(200);
    assert_eq!(listed.data().as_array().unwrap().len(), 3);
    let created = client.post_json(ATIVO, &active_body()).expect(200);
    let id = created.data()["id"].as_str().unwrap().to_owned();
    client
        .get(&format!("/api/solicitacao-consentimento/{id}"))
        .expect(200);
    // the feed hears its probes: the caches are in use and the key is served from memory
    assert!(
        wait_until(Duration::from_secs(5), || cache_in_use(&anonymous)
            == Some(1)),
        "the caches never came into use: {}",
        metrics(&anonymous)
    );
    std::thread::sleep(Duration::from_millis(300));
    let hits_before = key_hits(&anonymous);
    // five reads, at least three from memory: a probe round late under a loaded machine may
    // turn the caches off for a moment (that is the design), not for most of them
    for _ in 0..5 {
        client.get("/api/casos-de-uso").expect(200);
    }
    assert!(
        key_hits(&anonymous) >= hits_before + 3,
        "the key was not cached"
    );

    // `worker` starts (its migration step included) through PgBouncer as well
    let worker = Worker::start_with(&setup.db, &setup.sim, &setup.env(&[]));

    setup.revoke_and_expect_refusal_within_2_s(&company, &api, &key);

    drop(worker);
    let log = std::fs::read_to_string(&api.log).unwrap_or_default();
    assert!(!log.contains("prepared statement"), "{log}");
    assert!(!log.contains("does not exist"), "{log}");
    assert!(
        !log.contains(&setup.through_bouncer),
        "a database URL in the log"
    );
    drop(setup.bouncer);
}

#[test]
fn with_the_feed_through_pgbouncer_too_the_caches_stay_off_and_a_revoked_key_is_refused_within_2_s()
{
    if !available_or_skip("with_the_feed_through_pgbouncer_too") || one_node_only() {
        return;
    }
    let setup = Setup::new();
    let (company, key) = setup.migrated_company_with_key();
    let api = Api::start_with(
        &setup.db,
        &setup.sim,
        &setup.env(&[("APP__CACHE__FEED_URL", &setup.through_bouncer)]),
    );
    let client = Client::new(&api.base_url, Some(&key));
    let anonymous = Client::new(&api.base_url, None);
    client
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);

    // LISTEN through the pooler is accepted and hears nothing: never trusted, however long
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        assert_eq!(cache_in_use(&anonymous), Some(0), "{}", metrics(&anonymous));
        client.get("/api/casos-de-uso").expect(200);
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(key_hits(&anonymous), 0, "nothing is served from memory");

    setup.revoke_and_expect_refusal_within_2_s(&company, &api, &key);

    let log = std::fs::read_to_string(&api.log).unwrap_or_default();
    assert!(log.contains("probe did not come back"), "{log}");
    assert!(
        !log.contains(&setup.through_bouncer),
        "a database URL in the log"
    );
}
