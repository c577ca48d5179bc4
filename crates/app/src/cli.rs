//! The command line of `consent-api`.

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "consent-api",
    version,
    about = "Consent management API in front of the PGCC",
    long_about = "Consent management API in front of the PGCC.\n\nConfiguration: config/default.toml, then config/<APP_ENV>.toml (APP_ENV = development | test | staging | production), then APP__SECTION__KEY environment variables (APP__DATABASE__URL, APP__SERVER__HOST, APP__SERVER__PORT, APP__PGCC__BASE_URL, ...)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Apply pending migrations, then serve the HTTP API.
    Serve {
        /// Exit when standard input closes (lets a test harness tie the server to its own life).
        #[arg(long, hide = true)]
        exit_on_stdin_close: bool,
    },
    /// Run the background jobs alone (status checks with the PGCC, expiry, scheduled use-case
    /// sync), without the HTTP API. Any number of these may run against one database.
    Worker {
        /// Exit when standard input closes.
        #[arg(long, hide = true)]
        exit_on_stdin_close: bool,
    },
    /// Apply pending database migrations and exit.
    Migrate,
    /// Manage companies (the API's callers).
    Company {
        #[command(subcommand)]
        command: CompanyCommand,
    },
    /// Manage API keys.
    #[command(name = "api-key")]
    ApiKey {
        #[command(subcommand)]
        command: ApiKeyCommand,
    },
    /// Check the verifiable log (docs/auditoria.md).
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// Run a witness of the verifiable log (C2SP tlog-witness; docs/auditoria.md, "Witnesses").
    Witness {
        #[command(subcommand)]
        command: WitnessCommand,
    },
    /// Import a file of consents for a company (docs/imports.md, "From the command line"): the
    /// same file and rules as POST /api/importacoes (JSON Lines or CSV), read and staged here
    /// with a progress bar, then registered on the PGCC by the service's workers (`serve` or
    /// `worker`), which this command waits for unless --sem-esperar. Prints a summary on stdout
    /// (`importacao`, `status`, `linhas`, `validas`, `registradas`, `falhas`, the first errors).
    /// Exits 0 once the file was read, whatever its lines' errors; non-zero when the file as a
    /// whole was refused (over a limit, a bad CSV header), which imports nothing.
    Import {
        /// The company's id (from `company create`).
        #[arg(long = "empresa")]
        company: String,
        /// The file: JSON Lines or CSV (with a header).
        file: std::path::PathBuf,
        /// `csv` or `jsonl`; default: by the file's extension (.csv; .jsonl, .ndjson, .json).
        #[arg(long = "formato")]
        format: Option<String>,
        /// Return once the file is staged, without waiting for its registration.
        #[arg(long = "sem-esperar", alias = "no-wait")]
        no_wait: bool,
        /// Write every error of the import to this file (JSON Lines: linha, campo, mensagem).
        #[arg(long = "erros")]
        errors_file: Option<std::path::PathBuf>,
    },
    /// Inspect the configuration.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Recompute each company's tree from the stored entries, check every checkpoint's signature
    /// and that each is the root of the log's first entries (so all are consistent), and check
    /// each request's current row against its last entry. Exits 0 when everything matches;
    /// otherwise prints the first mismatch (naming the request or the entry) and exits 1.
    Verify {
        /// Only this company's log (its id); default every company's.
        #[arg(long = "empresa")]
        company: Option<String>,
    },
    /// What a company runs on its side, with an `auditor` key (in `CONSENT_API_KEY`) and no
    /// database: fetches the company's latest checkpoint, checks the log's signature (JWKS) and
    /// each `--testemunha`'s cosignature, and that it is consistent with the checkpoint kept in
    /// `--estado` (RFC 9162 proof from `/api/auditoria/consistencia`), then keeps it. Exits 1
    /// naming both checkpoints' sizes when they are not consistent, or the witness whose
    /// cosignature is missing.
    Monitor {
        /// The API's base URL.
        #[arg(long)]
        url: String,
        /// The file keeping the last checkpoint seen (created by the first run).
        #[arg(long = "estado")]
        state: std::path::PathBuf,
        /// A witness's cosignature verifier key (vkey) every checkpoint must carry; repeatable.
        #[arg(long = "testemunha")]
        witnesses: Vec<String>,
        /// The company is a sandbox (a `cak_test_` key): its checkpoints are signed with the
        /// JWKS key marked `"ambiente": "sandbox"`. Without it only production keys count.
        #[arg(long)]
        sandbox: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum WitnessCommand {
    /// Serve `POST /add-checkpoint` (C2SP tlog-witness): cosign a company's checkpoint, with the
    /// key in `WITNESS_SIGNING_KEY` (base64 of a 32-byte Ed25519 seed), only when it is
    /// consistent with the last one this witness cosigned for its origin (409 otherwise, 404 for
    /// an origin not in `--logs`). Prints `witness vkey <vkey>` (what the service's
    /// `APP__AUDITORIA__WITNESSES` and the companies' monitors configure) and `witness listening
    /// on http://ADDR`. Needs no database.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8090")]
        listen: String,
        /// The file holding the latest checkpoint cosigned per origin (created when absent).
        #[arg(long = "estado")]
        state: std::path::PathBuf,
        /// The logs this witness knows: one `<origin> <log vkey>` a line; read on every request.
        #[arg(long)]
        logs: std::path::PathBuf,
        /// The witness's name (the key name of its cosignatures).
        #[arg(long = "nome", default_value = "consent-api-witness")]
        name: String,
        /// Exit when standard input closes.
        #[arg(long, hide = true)]
        exit_on_stdin_close: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Validate the configuration of APP_ENV and print it, every section, as it is in effect
    /// (files, then environment variables), with secrets (database password, PGCC token,
    /// webhook encryption key, metrics token) shown as `<hidden>`. Exits 0 when valid; otherwise
    /// prints one line naming the bad key and exits non-zero.
    Check,
}

#[derive(Debug, Subcommand)]
pub enum CompanyCommand {
    /// Create a company; prints its id alone on one line.
    Create {
        /// The company's name.
        #[arg(long)]
        nome: String,
        /// The company's CNPJ (masked or not, numeric or alphanumeric); must match the PGCC's.
        #[arg(long)]
        cnpj: String,
    },
    /// Set the company's controller profile, what its consent records name as data controller
    /// (docs/records.md): its name, postal address and the e-mail of its data protection officer.
    /// Replaces an earlier profile.
    Profile {
        /// The company's id (from `company create`).
        #[arg(long)]
        empresa: String,
        /// The controller's (legal) name.
        #[arg(long)]
        nome: String,
        /// The controller's postal address.
        #[arg(long)]
        endereco: String,
        /// The e-mail of the data protection officer (encarregado, LGPD art. 41).
        #[arg(long = "contato-dpo")]
        contato_dpo: String,
    },
    /// Set the company's OpenID Provider for the console (docs/console.md): its people sign in
    /// there (authorization code with PKCE) with roles `dpo`, `operador`, `leitura` in a claim
    /// of the id_token. The client secret is stored encrypted with webhooks.encryption_key.
    /// Replaces an earlier provider. Register `https://<host>/console/oidc/retorno` as the
    /// client's redirect URI at the provider.
    Oidc {
        /// The company's id (from `company create`).
        #[arg(long)]
        empresa: String,
        /// The provider's issuer URL (its discovery is `<issuer>/.well-known/openid-configuration`).
        #[arg(long)]
        issuer: String,
        /// The client id registered at the provider for the console.
        #[arg(long = "client-id")]
        client_id: String,
        /// The client's secret (client_secret_basic).
        #[arg(long = "client-secret")]
        client_secret: String,
        /// The id_token's claim holding the person's roles.
        #[arg(long = "roles-claim", default_value = "roles")]
        roles_claim: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum ApiKeyCommand {
    /// Issue a new key for a company; prints the key alone on one line. It is shown only once:
    /// only its hash is stored.
    Issue {
        /// The company's id (from `company create`).
        #[arg(long = "empresa")]
        company: String,
        /// What the key may do, comma-separated: integracao (create, revoke, read its requests),
        /// consulta (HashConsulta only), auditor (every read and the audit routes; no writes),
        /// webhooks (the webhook URLs). Default: integracao,consulta,webhooks.
        #[arg(long = "escopos")]
        scopes: Option<String>,
        /// Issue a sandbox key (`cak_test_`) instead: it acts on the company's sandbox, a
        /// company of its own (created by the first such key) whose PGCC is simulated inside the
        /// service and whose data is purged after `sandbox.retention_days` (docs/api.md,
        /// "Sandbox"). Prints the key on stdout and the sandbox's company id on stderr.
        #[arg(long)]
        sandbox: bool,
    },
    /// List a company's keys, oldest first: one line per key, tab-separated:
    /// id, prefix, created, last used (or -), revoked (or -), scopes (comma-separated). Never
    /// the key or its hash.
    List {
        /// The company's id (from `company create`).
        #[arg(long = "empresa")]
        company: String,
    },
    /// Revoke a key by id (from `api-key list`): every running instance refuses it from its next
    /// request. Revoking a revoked key changes nothing.
    Revoke {
        /// The key's id.
        id: String,
    },
}
