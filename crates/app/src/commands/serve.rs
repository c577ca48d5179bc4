use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;

use anyhow::Context;
use delivery_http::HttpSettings;

use crate::settings::Settings;
use crate::wiring;

/// Applies migrations, binds, prints `consent-api listening on http://ADDR` on stdout (scripts
/// and tests wait for that line), and serves until stopped.
pub fn run(settings: &Settings, exit_on_stdin_close: bool) -> anyhow::Result<()> {
    let pool = wiring::pool(settings)?;
    // Each applied migration is logged by the adapter.
    wiring::migrate(&pool)?;
    if settings.workers.run_in_serve {
        crate::workers::start(wiring::workers(settings, pool.clone())?, &settings.workers);
    }
    let services = Arc::new(wiring::services(settings, pool)?);
    let address = format!("{}:{}", settings.server.host, settings.server.port);
    let listener = TcpListener::bind(&address)
        .with_context(|| format!("binding {address} (server.host, server.port)"))?;
    let bound = listener.local_addr()?;
    let http = HttpSettings {
        body_limit_bytes: settings.server.body_limit_bytes,
        workers: settings.server.workers,
    };
    if exit_on_stdin_close {
        exit_when_stdin_closes();
    }
    actix_web::rt::System::new().block_on(async move {
        let server = delivery_http::build_server(listener, services, http)?;
        println!("consent-api listening on http://{bound}");
        std::io::stdout().flush()?;
        tracing::info!(address = %bound, "serving");
        server.await.context("HTTP server")
    })
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
