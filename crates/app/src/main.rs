//! `consent-api`: the thin binary. Reads config, builds adapters, hands them to services, serves.

mod change_feed;
mod cli;
mod commands;
mod config_reference;
mod context;
mod delivery_pool;
mod memory;
mod readiness_watch;
mod replica_heartbeat;
mod secret;
mod settings;
mod telemetry;
mod wiring;
mod witness_client;
mod workers;

use std::process::ExitCode;

use clap::Parser;

use cli::{
    ApiKeyCommand, AuditCommand, Cli, Command, CompanyCommand, ConfigCommand, WitnessCommand,
};
use context::ProcessContext;
use settings::Settings;

fn main() -> ExitCode {
    // before anything else: it may start the binary again (crates/app/src/memory.rs)
    memory::bound_thread_caches();
    // before any other thread allocates
    memory::bound_malloc_arenas();
    let cli = Cli::parse();
    let settings = match Settings::load() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let telemetry = telemetry::init(&settings);
    // What this process shares among everything it runs, built once (crates/app/src/context.rs).
    let context = ProcessContext::new(&settings);
    // operators' commands run as the owner (`database.migration_url`) when it is set
    let admin = settings.for_administration();
    let outcome = match cli.command {
        Command::Serve {
            exit_on_stdin_close,
        } => commands::serve::run(&settings, &context, exit_on_stdin_close),
        Command::Worker {
            exit_on_stdin_close,
        } => commands::worker::run(&settings, &context, exit_on_stdin_close),
        Command::Migrate => commands::migrate::run(&settings),
        Command::Company {
            command: CompanyCommand::Create { nome, cnpj },
        } => commands::company::create(&admin, &context, &nome, &cnpj),
        Command::Company {
            command:
                CompanyCommand::Profile {
                    empresa,
                    nome,
                    endereco,
                    contato_dpo,
                },
        } => commands::company::profile(&admin, &context, &empresa, &nome, &endereco, &contato_dpo),
        Command::Company {
            command:
                CompanyCommand::Oidc {
                    empresa,
                    issuer,
                    client_id,
                    client_secret,
                    roles_claim,
                },
        } => commands::company::oidc(
            &admin,
            &empresa,
            &issuer,
            &client_id,
            &client_secret,
            &roles_claim,
        ),
        Command::ApiKey {
            command:
                ApiKeyCommand::Issue {
                    company,
                    scopes,
                    sandbox,
                },
        } => commands::api_key::issue(&admin, &context, &company, scopes.as_deref(), sandbox),
        Command::ApiKey {
            command: ApiKeyCommand::List { company },
        } => commands::api_key::list(&admin, &context, &company),
        Command::ApiKey {
            command: ApiKeyCommand::Revoke { id },
        } => commands::api_key::revoke(&admin, &context, &id),
        Command::Audit {
            command: AuditCommand::Verify { company },
        } => commands::audit::verify(&admin, company.as_deref()),
        Command::Audit {
            command:
                AuditCommand::Monitor {
                    url,
                    state,
                    witnesses,
                    sandbox,
                },
        } => commands::monitor::run(&url, &state, &witnesses, sandbox),
        Command::Witness {
            command:
                WitnessCommand::Serve {
                    listen,
                    state,
                    logs,
                    name,
                    exit_on_stdin_close,
                },
        } => commands::witness::serve(commands::witness::ServeArgs {
            listen,
            state,
            logs,
            name,
            exit_on_stdin_close,
        }),
        Command::Config {
            command: ConfigCommand::Check,
        } => commands::config::check(&settings),
        // the runtime role, as the HTTP route (the import's tables are the service's to write)
        Command::Import {
            company,
            file,
            format,
            no_wait,
            errors_file,
        } => commands::import::run(
            &settings,
            &context,
            commands::import::ImportArgs {
                company,
                file,
                format,
                no_wait,
                errors_file,
            },
        ),
    };
    telemetry.shutdown();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
