use crate::settings::Settings;
use crate::wiring;

pub fn run(settings: &Settings) -> anyhow::Result<()> {
    let pool = wiring::pool(settings)?;
    // Each applied migration is logged by the adapter.
    let applied = wiring::migrate(&pool)?;
    eprintln!("migrations: {} applied, database up to date", applied.len());
    Ok(())
}
