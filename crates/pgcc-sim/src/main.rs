//! `pgcc-sim --port P [--seed FILE] [--host 127.0.0.1] [--token T] [--exit-on-stdin-close]`

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;

/// A simulator of the PGCC (external consent platform). Contract: docs/pgcc.md.
#[derive(Debug, Parser)]
#[command(name = "pgcc-sim", version)]
struct Args {
    /// Port to listen on; 0 picks a free one.
    #[arg(long)]
    port: u16,
    /// Seed file (JSON): companies, their links and use cases. Empty when absent.
    #[arg(long)]
    seed: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// When given, the /pgcc/v1 routes require `Authorization: Bearer <token>`.
    #[arg(long)]
    token: Option<String>,
    /// Exit when standard input reaches end of file (so a parent's death ends the simulator).
    #[arg(long)]
    exit_on_stdin_close: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let seed = match &args.seed {
        Some(path) => pgcc_sim::load_seed(path)?,
        None => pgcc_sim::Seed::default(),
    };
    let listener = TcpListener::bind((args.host.as_str(), args.port))
        .with_context(|| format!("binding {}:{}", args.host, args.port))?;
    let addr = listener.local_addr().context("reading the bound address")?;

    if args.exit_on_stdin_close {
        std::thread::spawn(|| {
            let mut sink = [0u8; 1024];
            let mut stdin = std::io::stdin().lock();
            while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
            std::process::exit(0);
        });
    }

    actix_web::rt::System::new().block_on(async move {
        let server = pgcc_sim::serve(listener, seed, args.token)?;
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "pgcc-sim listening on http://{addr}")?;
        stdout.flush()?;
        drop(stdout);
        server.await
    })?;
    Ok(())
}
