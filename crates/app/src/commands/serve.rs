use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use delivery_http::HttpSettings;

use crate::context::ProcessContext;
use crate::settings::Settings;
use crate::wiring;
use crate::workers::{self, Stop};

/// Applies migrations, binds, prints `consent-api listening on http://ADDR` on stdout (scripts
/// and tests wait for that line), and serves until SIGTERM or SIGINT: then it accepts no new
/// connection, lets in-flight requests and the workers' current rounds finish within
/// `server.shutdown_grace_seconds`, and returns (exit code 0). A second signal exits at once.
pub fn run(
    settings: &Settings,
    context: &ProcessContext,
    exit_on_stdin_close: bool,
) -> anyhow::Result<()> {
    let pool = wiring::pool(settings)?;
    // Each applied migration is logged by the adapter.
    let signers = wiring::start_database(settings, &pool)?;
    wiring::check_encryption_key(settings, pool.clone())?;
    let stop = Stop::new();
    let mut jobs = if settings.workers.run_in_serve {
        workers::start(
            wiring::workers(settings, context, pool.clone(), signers.clone())?,
            &context.metrics,
            &settings.workers,
            &settings.webhooks,
            &settings.audit,
            &stop,
        )
    } else {
        Vec::new()
    };
    // Whatever run_in_serve: this process's PGCC calls count in the PGCC's health.
    jobs.push(workers::spawn_pgcc_health(
        wiring::pgcc_health_job(settings, context, pool.clone()),
        &stop,
    ));
    // Built once: the API's lag-tolerant lists and the gauges of `/metrics` read the same pools.
    let reads = wiring::read_pools(settings, &pool)?;
    let operations = Arc::new(wiring::operations(settings, pool.clone(), reads.clone()));
    // The probes run until the HTTP server has drained, not only until the stop signal: the
    // requests finishing in the grace period still need the database gate's verdict.
    let watch_stop = Stop::new();
    let mut watchers = crate::readiness_watch::start(operations.clone(), &watch_stop);
    let operability = delivery_http::Operability {
        operations,
        metrics: context.metrics.clone(),
        metrics_token: settings
            .metrics
            .token
            .as_ref()
            .map(|t| t.expose().to_owned()),
    };
    let state = Arc::new(wiring::api_state(
        settings,
        context,
        pool.clone(),
        reads,
        signers,
    )?);
    let console = wiring::console(settings, pool.clone());
    let replicas = delivery_http::LiveReplicas::default();
    // Stops with the probes, after the HTTP server drained: requests of the grace period are
    // still counted against this replica's share.
    watchers.extend(crate::replica_heartbeat::start(
        pool.clone(),
        settings.rate_limit.replica_heartbeat_ms,
        replicas.clone(),
        &watch_stop,
    ));
    jobs.extend(crate::change_feed::start(
        settings,
        pool,
        state.services.change_tracker.clone(),
        &stop,
    ));
    let address = format!("{}:{}", settings.server.host, settings.server.port);
    let listener = TcpListener::bind(&address)
        .with_context(|| format!("binding {address} (server.host, server.port)"))?;
    let bound = listener.local_addr()?;
    let grace = Duration::from_secs(settings.server.shutdown_grace_seconds);
    let http = HttpSettings {
        body_limit_bytes: settings.server.body_limit_bytes,
        body_timeout: Duration::from_millis(settings.server.body_timeout_ms),
        upload_limit_bytes: usize::try_from(settings.import.max_bytes).unwrap_or(usize::MAX),
        upload_timeout: Duration::from_secs(settings.import.upload_timeout_seconds),
        header_timeout: Duration::from_millis(settings.server.header_timeout_ms),
        workers: settings.server.workers,
        json_max_depth: settings.server.json_max_depth,
        shutdown_grace_seconds: settings.server.shutdown_grace_seconds,
        rate_limit: settings.rate_limit.http(),
        replicas,
        failed_auth: settings.rate_limit.failed_auth(&settings.server),
        docs: settings.docs.http(),
        database_unanswered_after: settings.checkout_timeout(),
    };
    if exit_on_stdin_close {
        exit_when_stdin_closes();
    }
    let signalled_at: Arc<Mutex<Option<Instant>>> = Arc::default();
    actix_web::rt::System::new().block_on(async {
        let server = delivery_http::HttpApp::new(state, operability, http)
            .mounting(console.mount())
            .serve(listener)?;
        // Start-up is done (the OpenAPI document is rendered): what it freed goes back now,
        // before it sits under everything the requests keep (crates/app/src/memory.rs).
        crate::memory::release_freed_memory();
        let handle = server.handle();
        let (stop, signalled_at) = (stop.clone(), signalled_at.clone());
        on_stop_signal(move |signal| {
            *signalled_at.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
            tracing::info!(
                signal,
                grace_seconds = grace.as_secs(),
                "stopping: no new connections; finishing in-flight requests and worker rounds"
            );
            stop.stop();
            // Sends the command now; the server future below ends when the workers are done.
            drop(handle.stop(true));
        })?;
        println!("consent-api listening on http://{bound}");
        std::io::stdout().flush()?;
        tracing::info!(address = %bound, "serving");
        server.await.context("HTTP server")
    })?;
    // The HTTP side is done (or its grace ran out); the jobs get what is left of the grace.
    stop.stop();
    watch_stop.stop();
    jobs.extend(watchers);
    let started = signalled_at
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .unwrap_or_else(Instant::now);
    let left = workers::join_within(jobs, started + grace);
    if left > 0 {
        tracing::warn!(
            still_running = left,
            "grace period over: exiting with worker rounds unfinished (they are retried by the next process)"
        );
    }
    tracing::info!("stopped");
    Ok(())
}

/// Listens for SIGTERM and SIGINT on a thread of its own (installed before returning, so a signal
/// sent right after start-up is never lost): the first calls `on_first` with the signal's name, a
/// second one ends the process at once with exit code 1.
pub fn on_stop_signal(on_first: impl FnOnce(&'static str) + Send + 'static) -> anyhow::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("signal runtime")?;
    let (mut term, mut int) = {
        let _entered = runtime.enter();
        (
            signal(SignalKind::terminate()).context("installing the SIGTERM handler")?,
            signal(SignalKind::interrupt()).context("installing the SIGINT handler")?,
        )
    };
    std::thread::Builder::new()
        .name("stop-signal".into())
        .spawn(move || {
            runtime.block_on(async move {
                on_first(next_signal(&mut term, &mut int).await);
                let second = next_signal(&mut term, &mut int).await;
                tracing::warn!(signal = second, "second stop signal: exiting now");
                std::process::exit(1);
            })
        })
        .context("starting the signal thread")?;
    Ok(())
}

async fn next_signal(
    term: &mut tokio::signal::unix::Signal,
    int: &mut tokio::signal::unix::Signal,
) -> &'static str {
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    }
}

/// Ends the process when standard input closes: a test harness holds the pipe, so the process
/// dies with the test even if the test is killed.
pub fn exit_when_stdin_closes() {
    std::thread::spawn(|| {
        let mut sink = [0u8; 64];
        while matches!(std::io::stdin().read(&mut sink), Ok(n) if n > 0) {}
        std::process::exit(0);
    });
}
