use std::io::Write;

use crate::settings::Settings;
use crate::{wiring, workers};

/// Applies migrations, starts the background jobs, prints `consent-api worker running` on stdout
/// (scripts and tests wait for it) and runs until stopped.
pub fn run(settings: &Settings, exit_on_stdin_close: bool) -> anyhow::Result<()> {
    let pool = wiring::pool(settings)?;
    wiring::migrate(&pool)?;
    let handles = workers::start(wiring::workers(settings, pool)?, &settings.workers);
    if handles.is_empty() {
        anyhow::bail!("every worker is disabled (workers.*_seconds = 0): nothing to run");
    }
    if exit_on_stdin_close {
        super::serve::exit_when_stdin_closes();
    }
    println!("consent-api worker running");
    std::io::stdout().flush()?;
    for handle in handles {
        let _ = handle.join();
    }
    Ok(())
}
