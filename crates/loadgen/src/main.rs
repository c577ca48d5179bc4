//! `loadgen`: the open-loop load generator of `make bench` (scripts/bench.sh).
//!
//! Request `i` is due at `start + i / rate`, whatever happened to the ones before it; each of
//! `connections` threads (one keep-alive connection each) takes the next due request, waits for
//! its due time if it is early, sends it, and records the latency from the due time (not from
//! the send), so a stall of the server counts for every request it delayed: the correction for
//! coordinated omission of wrk2 and `oha --latency-correction`. When every connection is busy,
//! requests fall behind their schedule and their latencies grow, as a real client's would.
//!
//! Why not oha: it does the same, but `cargo install oha` takes 12-16 minutes on the 2-core
//! machines this runs on, more than the whole 10-minute budget of `make bench`; this binary is
//! built with the service from crates the workspace already compiles (ureq, clap, rand).
//!
//! Output (`--out`, JSON): the shape of oha's `--output-format json` that scripts/bench/parse.py
//! reads: `summary.total` (seconds), `statusCodeDistribution`, `errorDistribution`,
//! `latencyPercentiles.{p50,p90,p99,p999}` (seconds), and `rate` (`target`, `achieved`,
//! `generatorBound`) plus `attempts` (one such object per attempt).
//!
//! Every latency printed is the service's: a run that fell behind its schedule by more than 5%
//! is generator-bound, its percentiles are null, and the next attempt goes at a lower rate (see
//! `pace.rs`), up to `--attempts`; the report is the last attempt's.

mod pace;
mod run;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;

/// Sends requests at a fixed rate over a fixed number of connections and reports the
/// corrected latency percentiles.
#[derive(Debug, Parser)]
#[command(name = "loadgen", version)]
struct Args {
    /// The URL of every request (or see --urls-file).
    url: Option<String>,
    /// Requests per second, due on a fixed schedule.
    #[arg(long)]
    rate: f64,
    /// Attempts in all: after a generator-bound one (more than 5% behind its schedule), the next
    /// goes at a lower rate.
    #[arg(long, default_value_t = 3)]
    attempts: usize,
    /// No attempt below this rate.
    #[arg(long, default_value_t = 1.0)]
    min_rate: f64,
    /// Connections (one thread each).
    #[arg(long, default_value_t = 16)]
    connections: usize,
    /// How long requests are issued, in seconds (those in flight then are awaited).
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Timeout of one request, in seconds (counted as an error).
    #[arg(long, default_value_t = 5.0)]
    timeout: f64,
    #[arg(long, default_value = "GET")]
    method: String,
    /// A header sent with every request, `Name: value` (repeatable).
    #[arg(long = "header")]
    headers: Vec<String>,
    /// Each request's body is a random line of this file (sent as application/json); with as
    /// many lines as --keys, line i is sent with key i.
    #[arg(long)]
    bodies: Option<PathBuf>,
    /// Each request's `Api-Key` is a random line of this file.
    #[arg(long)]
    keys: Option<PathBuf>,
    /// With --keys: the `If-None-Match` of the key on the same line.
    #[arg(long)]
    etags: Option<PathBuf>,
    /// Each request's URL is a random line of this file; with as many lines as --keys, line i
    /// is sent with key i.
    #[arg(long)]
    urls_file: Option<PathBuf>,
    /// Where the JSON report goes.
    #[arg(long)]
    out: PathBuf,
}

fn lines(path: &Option<PathBuf>) -> anyhow::Result<Vec<String>> {
    let Some(path) = path else {
        return Ok(Vec::new());
    };
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path:?}"))?;
    let lines: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect();
    anyhow::ensure!(!lines.is_empty(), "{path:?} has no line");
    Ok(lines)
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    anyhow::ensure!(args.rate > 0.0, "--rate must be more than 0");
    anyhow::ensure!(args.connections > 0, "--connections must be at least 1");
    let mut urls = lines(&args.urls_file)?;
    if urls.is_empty() {
        urls.push(
            args.url
                .clone()
                .context("a URL or --urls-file is required")?,
        );
    }
    let headers = args
        .headers
        .iter()
        .map(|h| {
            h.split_once(':')
                .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
                .with_context(|| format!("header {h:?} is not `Name: value`"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let keys = lines(&args.keys)?;
    let etags = lines(&args.etags)?;
    anyhow::ensure!(
        etags.is_empty() || etags.len() == keys.len(),
        "--etags needs one line per line of --keys"
    );
    let plan = run::Plan {
        method: args.method.to_uppercase(),
        urls,
        headers,
        bodies: lines(&args.bodies)?,
        keys,
        etags,
        connections: args.connections,
        duration: Duration::from_secs_f64(args.seconds),
        timeout: Duration::from_secs_f64(args.timeout),
    };
    let mut tried = pace::attempts(args.rate, args.attempts, args.min_rate, |rate| {
        let report = run::run(&plan, rate);
        (report.pace(rate, &plan), report)
    });
    let attempts: Vec<_> = tried.iter().map(|(p, _)| run::pace_json(p)).collect();
    let (pace, report) = tried.pop().expect("at least one attempt");
    for p in &attempts {
        eprintln!("loadgen: {p}");
    }
    let mut json = report.to_json(&pace);
    json["attempts"] = serde_json::Value::Array(attempts);
    std::fs::write(&args.out, serde_json::to_vec_pretty(&json)?)
        .with_context(|| format!("writing {:?}", args.out))?;
    Ok(())
}
