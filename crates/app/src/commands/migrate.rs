use crate::settings::Settings;
use crate::wiring;

/// Applies the pending migrations, then runs the backfills they registered to their end (in
/// batches, while the service keeps serving: docs/operations.md, "Migrate").
pub fn run(settings: &Settings) -> anyhow::Result<()> {
    let pool = wiring::pool(settings)?;
    // Each applied migration is logged by the adapter.
    let applied = wiring::migrate(&pool)?;
    eprintln!("migrations: {} applied, database up to date", applied.len());
    for report in wiring::backfill(&pool)? {
        eprintln!(
            "backfill {}: {} rows in {} batches",
            report.name, report.touched, report.batches
        );
    }
    Ok(())
}
