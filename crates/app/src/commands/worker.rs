use std::io::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::context::ProcessContext;
use crate::settings::Settings;
use crate::wiring;
use crate::workers::{self, Stop};

/// Applies migrations, starts the background jobs, prints `consent-api worker running` on stdout
/// (scripts and tests wait for it) and runs until SIGTERM or SIGINT: then each job finishes its
/// current round (a webhook delivery in progress completes) within
/// `server.shutdown_grace_seconds`, and the command returns. A second signal exits at once.
pub fn run(
    settings: &Settings,
    context: &ProcessContext,
    exit_on_stdin_close: bool,
) -> anyhow::Result<()> {
    let pool = wiring::pool(settings)?;
    let signers = wiring::start_database(settings, &pool)?;
    wiring::check_encryption_key(settings, pool.clone())?;
    let stop = Stop::new();
    let mut handles = workers::start(
        wiring::workers(settings, context, pool.clone(), signers)?,
        &context.metrics,
        &settings.workers,
        &settings.webhooks,
        &settings.audit,
        &stop,
    );
    if handles.is_empty() {
        anyhow::bail!("every worker is disabled (workers.*_seconds = 0): nothing to run");
    }
    // This process's PGCC calls count in the PGCC's health.
    handles.push(workers::spawn_pgcc_health(
        wiring::pgcc_health_job(settings, context, pool),
        &stop,
    ));
    if exit_on_stdin_close {
        super::serve::exit_when_stdin_closes();
    }
    let (signalled_tx, signalled) = mpsc::channel();
    super::serve::on_stop_signal(move |signal| {
        let _ = signalled_tx.send((signal, Instant::now()));
    })?;
    println!("consent-api worker running");
    std::io::stdout().flush()?;
    let grace = Duration::from_secs(settings.server.shutdown_grace_seconds);
    let (signal, at) = signalled
        .recv()
        .unwrap_or(("the signal thread ended", Instant::now()));
    tracing::info!(
        signal,
        grace_seconds = grace.as_secs(),
        "stopping: finishing the current worker rounds"
    );
    stop.stop();
    let left = workers::join_within(handles, at + grace);
    if left > 0 {
        tracing::warn!(
            still_running = left,
            "grace period over: exiting with worker rounds unfinished (they are retried by the next process)"
        );
    }
    tracing::info!("stopped");
    Ok(())
}
