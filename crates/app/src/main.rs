//! `consent-api`: the thin binary. Reads config, builds adapters, hands them to services, serves.

mod change_feed;
mod cli;
mod commands;
mod config_reference;
mod delivery_pool;
mod readiness_watch;
mod replica_heartbeat;
mod secret;
mod settings;
mod wiring;
mod workers;

use std::process::ExitCode;

use clap::Parser;

use cli::{ApiKeyCommand, AuditCommand, Cli, Command, CompanyCommand, ConfigCommand};
use settings::{LogFormat, Settings};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let settings = match Settings::load() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    init_logging(&settings);
    let outcome = match cli.command {
        Command::Serve {
            exit_on_stdin_close,
        } => commands::serve::run(&settings, exit_on_stdin_close),
        Command::Worker {
            exit_on_stdin_close,
        } => commands::worker::run(&settings, exit_on_stdin_close),
        Command::Migrate => commands::migrate::run(&settings),
        Command::Company {
            command: CompanyCommand::Create { nome, cnpj },
        } => commands::company::create(&settings, &nome, &cnpj),
        Command::ApiKey {
            command:
                ApiKeyCommand::Issue {
                    company,
                    scopes,
                    sandbox,
                },
        } => commands::api_key::issue(&settings, &company, scopes.as_deref(), sandbox),
        Command::ApiKey {
            command: ApiKeyCommand::List { company },
        } => commands::api_key::list(&settings, &company),
        Command::ApiKey {
            command: ApiKeyCommand::Revoke { id },
        } => commands::api_key::revoke(&settings, &id),
        Command::Audit {
            command: AuditCommand::Verify { company },
        } => commands::audit::verify(&settings, company.as_deref()),
        Command::Config {
            command: ConfigCommand::Check,
        } => commands::config::check(&settings),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Logs go to stderr (stdout carries the values scripts capture); RUST_LOG overrides the level.
/// `log.format = "json"`: one JSON object per line, with the fields of the current span
/// (`request_id`, `method`, `route`, `company_id`) under `span`; `"text"`: readable lines.
fn init_logging(settings: &Settings) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(&settings.log.level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match settings.log.format {
        LogFormat::Json => builder
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .init(),
        LogFormat::Text => builder
            // Colours only on a terminal: files and log collectors get plain text.
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
    }
}
