//! A database per test: cloned from a template migrated once per migration set, dropped when the
//! test ends, so tests run in parallel without sharing rows.

use std::hash::{Hash, Hasher};
use std::path::Path;

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel::PgConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

/// The migrations of `../migrations` (the service embeds the same).
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../migrations");

/// The admin URL of the test cluster, exported by `make test` (scripts/test.sh).
/// GSSAPI encryption is disabled as in the service (see `postgres_adapter::with_connection_defaults`).
pub fn admin_url() -> String {
    let url = std::env::var("TEST_DATABASE_URL").unwrap_or_else(|_| {
        panic!(
            "TEST_DATABASE_URL is not set: run the tests with `make test`, which starts a \
             PostgreSQL cluster, or export the admin URL of one (postgres://user@host:port/postgres)"
        )
    });
    without_gss(url)
}

/// `url` with GSSAPI encryption disabled unless it says otherwise.
fn without_gss(url: String) -> String {
    if url.contains("gssencmode=") {
        url
    } else if url.contains('?') {
        format!("{url}&gssencmode=disable")
    } else {
        format!("{url}?gssencmode=disable")
    }
}

/// A database that exists for the lifetime of this value.
pub struct TestDb {
    name: String,
    url: String,
    /// The admin URL of the cluster it lives on (to drop it).
    admin: String,
    /// On Citus (`make test-citus`): the other nodes that hold it (to drop it there too).
    nodes: std::sync::Mutex<Vec<String>>,
}

impl TestDb {
    /// Creates an empty, fully migrated database.
    pub fn new() -> TestDb {
        TestDb::on_cluster(&admin_url())
    }

    /// The same, on the cluster of `admin` (an admin URL) instead of `TEST_DATABASE_URL`'s, e.g.
    /// a [`crate::cluster::Cluster`] of the test's own.
    pub fn on_cluster(admin: &str) -> TestDb {
        let admin = without_gss(admin.to_owned());
        if let Some(workers) = crate::citus::workers().filter(|_| admin == admin_url()) {
            return TestDb::distributed(admin, workers);
        }
        let template = ensure_template(&admin);
        let name = format!("test_{}", uuid::Uuid::new_v4().simple());
        let mut conn = PgConnection::establish(&admin).expect("connect to the test cluster");
        diesel::sql_query(format!(
            "CREATE DATABASE \"{name}\" TEMPLATE \"{template}\""
        ))
        .execute(&mut conn)
        .expect("create the test database from the template");
        let url = with_database(&admin, &name);
        TestDb {
            name,
            url,
            admin,
            nodes: Default::default(),
        }
    }

    /// On the Citus coordinator of `make test-citus`, with `workers` (admin URLs) as its workers
    /// instead of `TEST_CITUS_WORKERS`'s: the same workers through relays the test controls.
    pub fn on_citus_workers(workers: Vec<String>) -> TestDb {
        TestDb::distributed(without_gss(admin_url()), workers)
    }

    /// On the Citus cluster of `make test-citus`: made whole on every node (crate::citus).
    fn distributed(admin: String, workers: Vec<String>) -> TestDb {
        let name = format!("test_{}", uuid::Uuid::new_v4().simple());
        let db = TestDb {
            url: with_database(&admin, &name),
            name,
            admin,
            nodes: std::sync::Mutex::new(workers.clone()),
        };
        crate::citus::create_distributed(&db.admin, &workers, &db.name);
        db
    }

    /// Adds the Citus worker `worker` (an admin URL) to this database's cluster: the database
    /// is made there, and dropped there with this value (`make test-citus`'s growth test).
    pub fn add_citus_worker(&self, worker: &str) {
        let worker = without_gss(worker.to_owned());
        crate::citus::create_on_node(&worker, &self.name);
        self.nodes.lock().unwrap().push(worker.clone());
        crate::citus::add_worker(&self.admin, &self.name, &worker);
    }

    /// The owner's URL (the cluster's superuser): migrations, the tests' own reads and set-ups.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The URL of the service's runtime role ([`RUNTIME_ROLE`]), which owns nothing: on one node
    /// and on Citus alike (there the role is made on every node and granted once the tables are
    /// distributed, crate::citus).
    pub fn runtime_url(&self) -> String {
        with_user(&self.url, RUNTIME_ROLE)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// A direct connection, for asserting on rows.
    pub fn conn(&self) -> PgConnection {
        PgConnection::establish(&self.url).expect("connect to the test database")
    }
}

impl Default for TestDb {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Ok(mut conn) = PgConnection::establish(&self.admin) {
            let _ = diesel::sql_query(format!(
                "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
                self.name
            ))
            .execute(&mut conn);
        }
        let nodes = std::mem::take(&mut *self.nodes.lock().unwrap());
        crate::citus::drop_on(&nodes, &self.name);
    }
}

/// `url` with its database name replaced by `database`.
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let base = match base.rfind('/') {
        Some(i) if i > "postgres://".len() => &base[..i],
        _ => base,
    };
    match query {
        Some(q) => format!("{base}/{database}?{q}"),
        None => format!("{base}/{database}"),
    }
}

#[derive(QueryableByName)]
struct Exists {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Creates `consent_tpl_<fingerprint of ../migrations>` once; concurrent tests wait on an advisory
/// lock. It is built under a temporary name and renamed, so a half-migrated template never exists.
fn ensure_template(admin: &str) -> String {
    let template = format!("consent_tpl_{:016x}", migrations_fingerprint());
    let mut conn = PgConnection::establish(admin).expect("connect to the test cluster");
    diesel::sql_query("SELECT pg_advisory_lock(727272)")
        .execute(&mut conn)
        .expect("take the template lock");
    let exists = diesel::sql_query("SELECT count(*) AS n FROM pg_database WHERE datname = $1")
        .bind::<Text, _>(&template)
        .get_result::<Exists>(&mut conn)
        .expect("look the template up")
        .n
        > 0;
    // The service's runtime role (docs/security.md, "Least privilege"): one per cluster, granted
    // in the template by the owner's own function, so every database cloned from it has it.
    create_runtime_role(&mut conn);
    if !exists {
        let building = format!("{template}_building");
        diesel::sql_query(format!(
            "DROP DATABASE IF EXISTS \"{building}\" WITH (FORCE)"
        ))
        .execute(&mut conn)
        .expect("drop a half-built template");
        diesel::sql_query(format!("CREATE DATABASE \"{building}\""))
            .execute(&mut conn)
            .expect("create the template");
        {
            let mut tpl = PgConnection::establish(&with_database(admin, &building))
                .expect("connect to the template");
            tpl.run_pending_migrations(MIGRATIONS)
                .expect("migrate the template");
            diesel::sql_query(format!(
                "SELECT consent_api_conceder_acesso('{RUNTIME_ROLE}')"
            ))
            .execute(&mut tpl)
            .expect("grant the runtime role in the template");
        }
        diesel::sql_query(format!(
            "ALTER DATABASE \"{building}\" RENAME TO \"{template}\""
        ))
        .execute(&mut conn)
        .expect("publish the template");
    }
    diesel::sql_query("SELECT pg_advisory_unlock(727272)")
        .execute(&mut conn)
        .expect("release the template lock");
    template
}

/// The role `consent-api serve` and `worker` run as in the tests: it owns nothing (the tests'
/// superuser owns the tables) and writes the evidence only through the owner's functions.
pub const RUNTIME_ROLE: &str = "consent_app";

/// Makes [`RUNTIME_ROLE`] in the cluster of `conn` (an admin connection), unless it is there.
/// Concurrent tests may race to make it: the loser's error is the winner's role.
pub(crate) fn create_runtime_role(conn: &mut PgConnection) {
    diesel::sql_query(format!(
        "DO $$ BEGIN CREATE ROLE {RUNTIME_ROLE} LOGIN; \
         EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"
    ))
    .execute(conn)
    .expect("create the runtime role");
}

/// `url` with its user replaced by `user`.
pub fn with_user(url: &str, user: &str) -> String {
    // both schemes libpq accepts: the failover formation prints `postgresql://`
    let Some((scheme, rest)) = ["postgres://", "postgresql://"]
        .into_iter()
        .find_map(|scheme| url.strip_prefix(scheme).map(|rest| (scheme, rest)))
    else {
        return url.to_owned();
    };
    match rest.split_once('@') {
        Some((_, host)) => format!("{scheme}{user}@{host}"),
        None => format!("{scheme}{user}@{rest}"),
    }
}

/// Changes whenever a migration file changes, so a stale template is never reused.
fn migrations_fingerprint() -> u64 {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations");
    let mut files = Vec::new();
    collect(&dir, &mut files);
    files.sort();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for f in files {
        f.hash(&mut hasher);
        std::fs::read(&f).unwrap_or_default().hash(&mut hasher);
    }
    hasher.finish()
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                collect(&p, out);
            } else {
                out.push(p);
            }
        }
    }
}

#[derive(QueryableByName)]
struct One {
    #[diesel(sql_type = BigInt)]
    v: i64,
}

#[derive(QueryableByName)]
struct OneText {
    #[diesel(sql_type = diesel::sql_types::Nullable<Text>)]
    v: Option<String>,
}

/// Rows a seed writes in one transaction ([`TestDb::seed_in_batches`]): a few seconds on Citus
/// under load, well inside the 30 s the tests wait for a checkpoint or an event.
pub const SEED_BATCH: u64 = 25_000;

/// The ranges `lo..=hi` of at most [`SEED_BATCH`] rows that cover `1..=total`, in order.
fn seed_batches(total: u64) -> impl Iterator<Item = (u64, u64)> {
    (1..=total)
        .step_by(SEED_BATCH as usize)
        .map(move |lo| (lo, (lo + SEED_BATCH - 1).min(total)))
}

impl TestDb {
    /// The single bigint an SQL query returns (alias it `v`): `SELECT count(*) AS v FROM ...`.
    pub fn scalar(&self, sql: &str) -> i64 {
        diesel::sql_query(sql)
            .get_result::<One>(&mut self.conn())
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .v
    }

    /// Writes a seed of `total` rows in transactions of at most [`SEED_BATCH`]: `batch(lo, hi)`
    /// is the SQL for rows `lo..=hi` (one or more statements, one transaction: a simple query's
    /// statements commit together), run for consecutive ranges from 1.
    ///
    /// Why in batches: the events feed's and the audit checkpoints' watermark waits for every
    /// transaction running on the database (docs/decisions.md, "Costs and limits"), and until it
    /// left other databases out, a million rows seeded in one statement held every other test's
    /// feed and checkpoints on the shared cluster: over a minute on Citus under `make
    /// test-citus`'s load, which failed the witness tests' 30 s wait. Bounded transactions keep
    /// a test's own feed from waiting long, and Citus from pulling a million rows through the
    /// coordinator at once.
    pub fn seed_in_batches(&self, total: u64, batch: impl Fn(u64, u64) -> String) {
        let mut conn = self.conn();
        for (lo, hi) in seed_batches(total) {
            let sql = batch(lo, hi);
            diesel::connection::SimpleConnection::batch_execute(&mut conn, &sql)
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
    }

    /// [`TestDb::seed_in_batches`] for a statement answering how many rows it wrote (`v`):
    /// answers their sum.
    pub fn seed_counted_in_batches(&self, total: u64, batch: impl Fn(u64, u64) -> String) -> i64 {
        seed_batches(total)
            .map(|(lo, hi)| self.scalar(&batch(lo, hi)))
            .sum()
    }

    /// The single nullable text an SQL query returns (alias it `v`).
    pub fn text(&self, sql: &str) -> Option<String> {
        diesel::sql_query(sql)
            .get_result::<OneText>(&mut self.conn())
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .v
    }
}
