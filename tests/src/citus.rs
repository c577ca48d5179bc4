//! Test databases distributed on a Citus cluster (`make test-citus`, scripts/test-citus.sh;
//! issue 23, parts 4 and 5). The coordinator is `TEST_DATABASE_URL`'s cluster and
//! `TEST_CITUS_WORKERS` lists the workers' admin URLs; unset, every test database is plain
//! PostgreSQL, as in `make test`.
//!
//! A template cannot be cloned here: Citus keeps its metadata per database and on every node, so
//! each test database is made whole: created on every node with the `citus` extension, the
//! workers added, migrated on the coordinator, then distributed by `scripts/citus/distribute.sql`
//! (the same file an operator runs), with `TEST_CITUS_SHARD_COUNT` shards per table (default 4,
//! so that a test database takes seconds, not minutes), and granted to the runtime role, made on
//! every node, which the service connects as here too.

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::PgConnection;
use diesel_migrations::MigrationHarness;

use crate::db::{create_runtime_role, with_database, MIGRATIONS, RUNTIME_ROLE};

/// The distribution, as an operator runs it with psql (its `\set` lines are psql's own).
const DISTRIBUTE: &str = include_str!("../../scripts/citus/distribute.sql");

/// The workers' admin URLs when the tests run on Citus.
pub fn workers() -> Option<Vec<String>> {
    let list = std::env::var("TEST_CITUS_WORKERS").ok()?;
    let workers: Vec<String> = list
        .split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    (!workers.is_empty()).then_some(workers)
}

/// Whether the tests run on a Citus cluster (`make test-citus`).
pub fn on_citus() -> bool {
    workers().is_some()
}

/// For a test of something a Citus database does not have (a schema from before the tables were
/// keyed by company, a database migrated from empty behind a pooler): `true` on Citus, after
/// saying on stderr why the test stops there; the test runs whole on one node (`make test`).
/// Every other test runs the same on both (issue 40, part 5; docs/scaling.md).
pub fn one_node_only(reason: &str) -> bool {
    let citus = on_citus();
    if citus {
        eprintln!("one node only, not run on Citus: {reason}");
    }
    citus
}

/// The port of an admin URL (`postgres://user@host:port/db`).
pub fn port(url: &str) -> u16 {
    let host = url
        .split_once("://")
        .map_or(url, |(_, rest)| rest)
        .split(['/', '?'])
        .next()
        .unwrap_or_default();
    host.rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok())
        .unwrap_or(5432)
}

fn execute(url: &str, sql: &str) {
    let mut conn = PgConnection::establish(url).unwrap_or_else(|e| panic!("connect: {e}"));
    conn.batch_execute(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Creates database `name` on `node` (an admin URL) with the `citus` extension, and the
/// service's runtime role on that node: a role is the cluster's, not the database's, and Citus
/// propagates roles only from a database that has the extension, so each node gets it here, as an
/// operator makes it on each node (docs/scaling.md, "Least privilege on Citus").
pub fn create_on_node(node: &str, name: &str) {
    let mut conn = PgConnection::establish(node).unwrap_or_else(|e| panic!("connect: {e}"));
    create_runtime_role(&mut conn);
    skip_lock_permission_checks(&mut conn);
    execute(node, &format!("CREATE DATABASE \"{name}\""));
    execute(&with_database(node, name), "CREATE EXTENSION citus");
}

/// Lets the runtime role write `api_keys` (a reference table with a foreign key to `empresas`,
/// another one): Citus serializes such a write by locking the referenced table's shard on the
/// first worker (`lock_shard_resources`), and that lock asks for a write privilege on
/// `empresas`, which the runtime role must not have. This setting (superuser only, set on the
/// role on every node) skips that check for the runtime role alone: it lets the role take
/// Citus's internal shard locks, not write a row (docs/scaling.md, "Least privilege on Citus").
/// Tests run in parallel: a concurrent `ALTER ROLE` of the same role fails with "tuple
/// concurrently updated" (`XX000`) or, when both inserted the role's first setting, on the
/// settings' unique index (`23505`); either way the other one has set it.
fn skip_lock_permission_checks(conn: &mut PgConnection) {
    conn.batch_execute(&format!(
        "DO $$ BEGIN \
           IF NOT EXISTS (SELECT 1 FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole \
                          WHERE r.rolname = '{RUNTIME_ROLE}' AND s.setdatabase = 0 \
                            AND 'citus.skip_advisory_lock_permission_checks=on' = ANY (s.setconfig)) THEN \
             ALTER ROLE {RUNTIME_ROLE} SET citus.skip_advisory_lock_permission_checks = on; \
           END IF; \
         EXCEPTION WHEN internal_error OR unique_violation THEN NULL; END $$"
    ))
    .expect("let the runtime role take Citus's shard locks");
}

/// Adds `worker` (an admin URL, its database `name` already made by [`create_on_node`]) to
/// the cluster of database `name` on the coordinator `coordinator`.
pub fn add_worker(coordinator: &str, name: &str, worker: &str) {
    let url = with_database(coordinator, name);
    let sql = format!("SELECT citus_add_node('127.0.0.1', {})", port(worker));
    // The coordinator's first connection to a database just made on a busy worker can fail
    // ("failure on connection marked as essential"); a few tries, then the error.
    for _ in 0..4 {
        let tried = PgConnection::establish(&url)
            .map_err(|e| e.to_string())
            .and_then(|mut conn| conn.batch_execute(&sql).map_err(|e| e.to_string()));
        if tried.is_ok() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    execute(&url, &sql);
}

/// Database `name`, made, migrated and distributed on the coordinator `coordinator` and the
/// `workers`, then granted to the runtime role by the owner's function: in the operator's order
/// (migrate, distribute, grant), so that Citus carries each grant to the shards and to the
/// workers' copies of the tables.
pub fn create_distributed(coordinator: &str, workers: &[String], name: &str) {
    for worker in workers {
        create_on_node(worker, name);
    }
    create_on_node(coordinator, name);
    let url = with_database(coordinator, name);
    execute(
        &url,
        &format!(
            "SELECT citus_set_coordinator_host('127.0.0.1', {})",
            port(coordinator)
        ),
    );
    for worker in workers {
        add_worker(coordinator, name, worker);
    }
    let mut conn = PgConnection::establish(&url).expect("connect to the coordinator");
    conn.run_pending_migrations(MIGRATIONS)
        .expect("migrate on the coordinator");
    let shards = std::env::var("TEST_CITUS_SHARD_COUNT").unwrap_or_else(|_| "4".to_owned());
    conn.batch_execute(&format!("SET citus.shard_count = {shards}"))
        .expect("set the shard count");
    for statement in statements(DISTRIBUTE) {
        conn.batch_execute(&statement).unwrap_or_else(|e| {
            panic!("distribute (scripts/citus/distribute.sql): {e}\n{statement}")
        });
    }
    grant(&mut conn);
}

/// The runtime role granted by the owner's function. Databases are made in parallel, and Citus
/// carries each grant's role to the workers: two grants at once can meet on the role's catalog
/// row there ("tuple concurrently updated", `XX000`); the other one has done the same, so the
/// grant is tried again, a few times, then the error.
fn grant(conn: &mut PgConnection) {
    let sql = format!("SELECT consent_api_conceder_acesso('{RUNTIME_ROLE}')");
    for _ in 0..4 {
        match conn.batch_execute(&sql) {
            Err(e) if e.to_string().contains("tuple concurrently updated") => {
                std::thread::sleep(std::time::Duration::from_millis(500));
            }
            done => {
                done.expect("grant the runtime role on the distributed tables");
                return;
            }
        }
    }
    conn.batch_execute(&sql)
        .expect("grant the runtime role on the distributed tables");
}

/// The statements of a psql script, each to run on its own as psql runs them (one
/// multi-statement string would be one transaction, in which Citus cannot distribute a table
/// after a parallel operation): its `\` lines left out, split at a `;` that ends a line outside
/// a `$$` body and a comment.
fn statements(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut in_body = false;
    for line in script.lines().filter(|l| !l.starts_with('\\')) {
        current.push_str(line);
        current.push('\n');
        if line.matches("$$").count() % 2 == 1 {
            in_body = !in_body;
        }
        // a comment's `;` ends nothing (psql reads the script the same way)
        if !in_body && !line.trim_start().starts_with("--") && line.trim_end().ends_with(';') {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

/// Drops database `name` from `nodes` (admin URLs), as far as it goes. A test that stopped its
/// service in the middle of a distributed transaction can leave it prepared on a worker; with its
/// coordinator database gone nothing would ever finish it, and a prepared transaction holds back
/// every logical replication slot made on that node afterwards, so every shard move of the
/// growth test waited on it ("Setting Up" for good). Rolled back first: the test is over.
pub fn drop_on(nodes: &[String], name: &str) {
    #[derive(QueryableByName)]
    struct Prepared {
        #[diesel(sql_type = diesel::sql_types::Text)]
        gid: String,
    }
    for node in nodes {
        if let Ok(mut conn) = PgConnection::establish(&with_database(node, name)) {
            let prepared: Vec<Prepared> = diesel::sql_query(
                "SELECT gid FROM pg_prepared_xacts WHERE database = current_database()",
            )
            .load(&mut conn)
            .unwrap_or_default();
            for p in prepared {
                let _ = conn.batch_execute(&format!("ROLLBACK PREPARED '{}'", p.gid));
            }
        }
        if let Ok(mut conn) = PgConnection::establish(node) {
            let _ = conn.batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{port, statements};

    #[test]
    fn a_psql_script_is_split_into_its_statements_keeping_do_bodies_whole() {
        let script = "\\set ON_ERROR_STOP on\n-- a comment\nSET a = 1;\nDO $$\nBEGIN\n  PERFORM 1;\nEND $$;\nSELECT 2;\n";
        let got: Vec<String> = statements(script)
            .iter()
            .map(|s| s.trim().to_owned())
            .collect();
        assert_eq!(
            got,
            [
                "-- a comment\nSET a = 1;",
                "DO $$\nBEGIN\n  PERFORM 1;\nEND $$;",
                "SELECT 2;"
            ]
        );
    }

    #[test]
    fn the_port_is_read_from_an_admin_url() {
        assert_eq!(port("postgres://postgres@127.0.0.1:45123/postgres"), 45123);
        assert_eq!(
            port("postgres://postgres@127.0.0.1:45124/postgres?gssencmode=disable"),
            45124
        );
        assert_eq!(port("postgres://postgres@localhost/postgres"), 5432);
    }
}
