use anyhow::Context;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use crate::PgPool;

/// Every migration of `migrations/` at the workspace root, embedded at build time (`build.rs`
/// rebuilds this crate when that folder changes).
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../../migrations");

/// Transaction-level advisory lock held while migrating, so that replicas started together
/// apply each migration once instead of racing on it.
const MIGRATION_LOCK_KEY: i64 = 0x636f_6e73_656e_7401;

/// Applies the pending migrations and returns the names of those applied
/// (`2026-11-21-000001_create_empresas`, ...), oldest first; empty when up to date.
///
/// Everything happens in one transaction (each migration in a savepoint of it), so that it
/// works the same directly and through a transaction-mode pooler (PgBouncer), which keeps a
/// client on one server connection only for the length of a transaction:
/// - the lock is `pg_advisory_xact_lock`, released by the commit (a session lock taken through
///   such a pooler would stay on whichever server connection took it);
/// - `SET LOCAL` turns the statement and idle-in-transaction timeouts off for this transaction
///   only: a migration (an index build, a backfill) may take longer than a request may, and a
///   replica waiting for the lock must not give up. The pooled connection keeps its limits.
///
/// A failing migration rolls back every migration of the run: the database is left as it was.
pub fn run_migrations(pool: &PgPool) -> anyhow::Result<Vec<String>> {
    let mut conn = pool
        .get()
        .context("could not connect to the database to run the migrations")?;
    let applied = conn.transaction(|conn| {
        conn.batch_execute(
            "SET LOCAL statement_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0",
        )
        .context("lifting the timeouts for the migrations")?;
        diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
            .bind::<BigInt, _>(MIGRATION_LOCK_KEY)
            .execute(conn)
            .context("taking the migration lock")?;
        apply_pending(conn)
    })?;
    // logged once committed: a failure above rolls every one of them back
    for name in &applied {
        tracing::info!(migration = %name, "migration applied");
    }
    Ok(applied)
}

fn apply_pending(conn: &mut PgConnection) -> anyhow::Result<Vec<String>> {
    let pending = conn
        .pending_migrations(MIGRATIONS)
        .map_err(|e| anyhow::anyhow!(e))
        .context("listing the pending migrations")?;
    let mut applied = Vec::with_capacity(pending.len());
    for migration in pending {
        let name = migration.name().to_string();
        conn.run_migration(&migration)
            .map_err(|e| anyhow::anyhow!(e))
            .with_context(|| format!("applying migration {name}"))?;
        applied.push(name);
    }
    Ok(applied)
}
