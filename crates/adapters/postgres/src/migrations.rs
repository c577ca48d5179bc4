use std::time::Duration;

use anyhow::Context;
use diesel::connection::SimpleConnection;
use diesel::migration::Migration;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use crate::PgPool;

/// Every migration of `migrations/` at the workspace root, embedded at build time (`build.rs`
/// rebuilds this crate when that folder changes).
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../../migrations");

/// Transaction-level advisory lock held while migrating, so that replicas started together
/// apply each migration once instead of racing on it.
pub(crate) const MIGRATION_LOCK_KEY: i64 = 0x636f_6e73_656e_7401;

/// How long a migration's statement may wait for a table lock. A statement waiting for an
/// ACCESS EXCLUSIVE lock (an `ALTER TABLE`) queues every later read and write of that table
/// behind it, so this bounds what a migration may make the service wait: well under the one
/// second a reader may be blocked (issue 21).
pub const MIGRATION_LOCK_TIMEOUT: Duration = Duration::from_millis(500);

/// Attempts of a migration whose lock wait timed out (a long transaction of the service held
/// the table), each after a pause growing by [`RETRY_PAUSE`] up to ten times it.
const LOCK_ATTEMPTS: u32 = 30;
const RETRY_PAUSE: Duration = Duration::from_millis(200);

/// Applies the pending migrations and returns the names of those applied
/// (`2026-11-21-000001_create_empresas`, ...), oldest first; empty when up to date.
///
/// Each migration is its own transaction, committed before the next one starts, so that no lock
/// a migration takes outlives it. Everything works the same directly and through a
/// transaction-mode pooler (PgBouncer), which keeps a client on one server connection only for
/// the length of a transaction:
/// - the lock is `pg_advisory_xact_lock`, taken by each migration's transaction, which then
///   lists what is still pending (a replica that waited finds the others' work done); a session
///   lock taken through such a pooler would stay on whichever server connection took it;
/// - `SET LOCAL` turns the statement and idle-in-transaction timeouts off for that transaction
///   only (an index build may take longer than a request may, and a replica waiting for the lock
///   must not give up) and sets `lock_timeout` to [`MIGRATION_LOCK_TIMEOUT`]: a migration that
///   cannot have its lock at once gives up, lets the service's queries through, and is tried
///   again (up to `LOCK_ATTEMPTS` times). The pooled connection keeps its limits.
///
/// A migration with `run_in_transaction = false` in its `metadata.toml` (a `CREATE INDEX
/// CONCURRENTLY`, which PostgreSQL refuses inside a transaction) runs in autocommit once the
/// transaction that found it pending has committed: a concurrent build waits for every
/// transaction open when it starts, so it must not run while this process holds one. Its
/// statement is idempotent (`IF NOT EXISTS`); a replica that finds the index already being built
/// by another waits for that build, and the migration is recorded under the lock once built.
/// The connection's `statement_timeout` is lifted with a session `SET` for the build and put
/// back after it (through a transaction-mode pooler those `SET`s may reach other server
/// connections: docs/operations.md says to run such releases' `migrate` straight against
/// PostgreSQL). A build that failed half-way leaves an invalid index, which stops the run with
/// its name.
///
/// A failing migration rolls back alone: the ones before it stay applied.
/// Backfills of existing rows are not done here: see [`crate::backfills`].
pub fn run_migrations(pool: &PgPool) -> anyhow::Result<Vec<String>> {
    let mut conn = pool
        .get()
        .context("could not connect to the database to run the migrations")?;
    let mut applied = Vec::new();
    loop {
        let step = with_lock_retries(|| locked(&mut conn, apply_next))?;
        let name = match step {
            Step::UpToDate => return Ok(applied),
            Step::Applied(name) => name,
            Step::Outside(migration) => {
                let name = migration.name().to_string();
                run_outside_transaction(&mut conn, &*migration)
                    .with_context(|| format!("applying migration {name}"))?;
                let version = migration.name().version().to_string();
                locked(&mut conn, |conn| {
                    diesel::sql_query(
                        "INSERT INTO __diesel_schema_migrations (version) VALUES ($1) \
                         ON CONFLICT DO NOTHING",
                    )
                    .bind::<Text, _>(&version)
                    .execute(conn)
                    .with_context(|| format!("recording migration {name}"))
                })?;
                name
            }
        };
        tracing::info!(migration = %name, "migration applied");
        applied.push(name);
    }
}

/// What one locked transaction of [`run_migrations`] did.
enum Step {
    UpToDate,
    Applied(String),
    /// The next pending migration, to run outside a transaction.
    Outside(Box<dyn Migration<Pg>>),
}

/// Runs `work` in a transaction holding the migration lock, with the migrations' timeouts.
fn locked<T>(
    conn: &mut PgConnection,
    work: impl FnOnce(&mut PgConnection) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    conn.transaction(|conn| {
        conn.batch_execute(&format!(
            "SET LOCAL statement_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0; \
             SET LOCAL lock_timeout = {}",
            MIGRATION_LOCK_TIMEOUT.as_millis()
        ))
        .context("setting the timeouts of the migrations")?;
        diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
            .bind::<BigInt, _>(MIGRATION_LOCK_KEY)
            .execute(conn)
            .context("taking the migration lock")?;
        work(conn)
    })
}

/// Runs `attempt` again while it fails on a lock timeout (SQLSTATE 55P03), pausing between tries.
fn with_lock_retries<T>(mut attempt: impl FnMut() -> anyhow::Result<T>) -> anyhow::Result<T> {
    let mut tries = 1;
    loop {
        match attempt() {
            Err(e) if tries < LOCK_ATTEMPTS && is_lock_timeout(&e) => {
                tracing::warn!(
                    attempt = tries,
                    "migration waited too long for a lock; trying again"
                );
                std::thread::sleep(RETRY_PAUSE * tries.min(10));
                tries += 1;
            }
            other => return other,
        }
    }
}

fn is_lock_timeout(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|cause| cause.to_string().contains("due to lock timeout"))
}

/// Applies the oldest pending migration if it runs in a transaction (this one); hands it back
/// if it does not.
#[derive(QueryableByName)]
struct AppliedVersion {
    #[diesel(sql_type = Text)]
    version: String,
}

/// How many of the embedded migrations the database has not applied, read with a plain
/// `SELECT`: diesel's own check first creates its table when missing, which the service's runtime
/// role may not (it owns nothing: docs/security.md, "Least privilege").
pub(crate) fn pending_count(conn: &mut PgConnection) -> anyhow::Result<usize> {
    use diesel::migration::MigrationSource;
    let applied: std::collections::HashSet<String> =
        diesel::sql_query("SELECT version::text AS version FROM __diesel_schema_migrations")
            .load::<AppliedVersion>(conn)?
            .into_iter()
            .map(|row| row.version)
            .collect();
    let embedded = MigrationSource::<Pg>::migrations(&MIGRATIONS)
        .map_err(|e| anyhow::anyhow!("reading the embedded migrations: {e}"))?;
    Ok(embedded
        .iter()
        .filter(|m| !applied.contains(&m.name().version().to_string()))
        .count())
}

fn apply_next(conn: &mut PgConnection) -> anyhow::Result<Step> {
    let pending = conn
        .pending_migrations(MIGRATIONS)
        .map_err(|e| anyhow::anyhow!(e))
        .context("listing the pending migrations")?;
    let Some(migration) = pending.into_iter().next() else {
        return Ok(Step::UpToDate);
    };
    if !migration.metadata().run_in_transaction() {
        return Ok(Step::Outside(migration));
    }
    let name = migration.name().to_string();
    migration
        .run(conn)
        .map_err(|e| anyhow::anyhow!(e))
        .with_context(|| format!("applying migration {name}"))?;
    diesel::sql_query("INSERT INTO __diesel_schema_migrations (version) VALUES ($1)")
        .bind::<Text, _>(migration.name().version().to_string())
        .execute(conn)
        .with_context(|| format!("recording migration {name}"))?;
    Ok(Step::Applied(name))
}

/// Runs `migration` in autocommit with no statement timeout, puts the connection's timeout
/// back, then waits for any index build still running (another replica's) and refuses to go on
/// if an index was left invalid.
fn run_outside_transaction(
    conn: &mut PgConnection,
    migration: &dyn Migration<Pg>,
) -> anyhow::Result<()> {
    #[derive(QueryableByName)]
    struct Setting {
        #[diesel(sql_type = Text)]
        statement_timeout: String,
    }
    let previous =
        diesel::sql_query("SELECT current_setting('statement_timeout') AS statement_timeout")
            .get_result::<Setting>(conn)
            .context("reading the statement timeout")?
            .statement_timeout;
    conn.batch_execute("SET statement_timeout = 0")
        .context("lifting the statement timeout")?;
    let outcome = migration.run(conn).map_err(|e| anyhow::anyhow!(e));
    let restored = diesel::sql_query("SELECT set_config('statement_timeout', $1, false)")
        .bind::<Text, _>(&previous)
        .execute(conn)
        .context("putting the statement timeout back");
    outcome?;
    restored?;
    loop {
        let invalid = invalid_indexes(conn)?;
        if invalid.is_empty() {
            return Ok(());
        }
        #[derive(QueryableByName)]
        struct Count {
            #[diesel(sql_type = BigInt)]
            n: i64,
        }
        let building = diesel::sql_query(
            "SELECT count(*) AS n FROM pg_stat_progress_create_index \
             WHERE datid = (SELECT oid FROM pg_database WHERE datname = current_database())",
        )
        .get_result::<Count>(conn)
        .context("looking for index builds")?
        .n;
        anyhow::ensure!(
            building > 0,
            "invalid index left by a failed concurrent build: {} (drop it with DROP INDEX \
             CONCURRENTLY, then migrate again)",
            invalid.join(", ")
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Indexes of the public schema left invalid (a `CREATE INDEX CONCURRENTLY` that failed).
pub fn invalid_indexes(conn: &mut PgConnection) -> anyhow::Result<Vec<String>> {
    #[derive(QueryableByName)]
    struct Name {
        #[diesel(sql_type = Text)]
        name: String,
    }
    Ok(diesel::sql_query(
        "SELECT c.relname::text AS name FROM pg_index i \
         JOIN pg_class c ON c.oid = i.indexrelid \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = 'public' AND NOT i.indisvalid ORDER BY 1",
    )
    .load::<Name>(conn)
    .context("looking for invalid indexes")?
    .into_iter()
    .map(|n| n.name)
    .collect())
}
