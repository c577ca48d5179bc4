use anyhow::Context;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};

use crate::PgPool;

/// Every migration of `migrations/` at the workspace root, embedded at build time (`build.rs`
/// rebuilds this crate when that folder changes).
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../../migrations");

/// Session advisory lock held while migrating, so that replicas started together apply each
/// migration once instead of racing on it.
const MIGRATION_LOCK_KEY: i64 = 0x636f_6e73_656e_7401;

/// Applies the pending migrations, each in its own transaction, and returns the names of those
/// applied (`2026-11-21-000001_create_empresas`, ...), oldest first; empty when up to date.
pub fn run_migrations(pool: &PgPool) -> anyhow::Result<Vec<String>> {
    let mut conn = pool
        .get()
        .context("could not connect to the database to run the migrations")?;
    diesel::sql_query("SELECT pg_advisory_lock($1)")
        .bind::<BigInt, _>(MIGRATION_LOCK_KEY)
        .execute(&mut conn)
        .context("taking the migration lock")?;
    let applied = apply_pending(&mut conn);
    let unlocked = diesel::sql_query("SELECT pg_advisory_unlock($1)")
        .bind::<BigInt, _>(MIGRATION_LOCK_KEY)
        .execute(&mut conn)
        .context("releasing the migration lock");
    let applied = applied?;
    unlocked?;
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
        tracing::info!(migration = %name, "migration applied");
        applied.push(name);
    }
    Ok(applied)
}
