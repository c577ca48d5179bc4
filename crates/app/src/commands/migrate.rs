use crate::settings::Settings;
use crate::wiring;

/// Applies the pending migrations (as the owner of `database.migration_url` when set, granting
/// the role of `database.url` what the service needs), then runs the backfills they registered to their end (in
/// batches, while the service keeps serving: docs/operations.md, "Migrate").
pub fn run(settings: &Settings) -> anyhow::Result<()> {
    let runtime = wiring::pool(settings)?;
    // Each applied migration is logged by the adapter; as the owner when
    // `database.migration_url` is set, which also grants the runtime role its privileges.
    let prepared = wiring::prepare_database(settings, &runtime)?;
    eprintln!(
        "migrations: {} applied, database up to date",
        prepared.applied.len()
    );
    for report in wiring::backfill(&prepared.backfills)? {
        eprintln!(
            "backfill {}: {} rows in {} batches",
            report.name, report.touched, report.batches
        );
    }
    Ok(())
}
