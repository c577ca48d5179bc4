//! Typed settings: `config/default.toml` (also compiled in, so the binary runs from any folder),
//! then `config/<APP_ENV>.toml`, then (development only) `.run/development.toml`, which `make run`
//! writes while it runs, then `APP__SECTION__KEY` environment variables.

use std::path::PathBuf;
use std::time::Duration;

use config::{Config, Environment, File, FileFormat};
use serde::Deserialize;

use crate::secret::Secret;

const DEFAULTS: &str = include_str!("../../../config/default.toml");

/// What `make run` (scripts/run.sh) writes while it runs, in the checkout: its database's URL (a
/// port chosen at start) and its simulator's. Read in development only, after the profile's
/// file and before the environment, so the command line run from the checkout finds the local
/// database with no `APP__DATABASE__URL`.
const LOCAL_RUN: &str = ".run/development.toml";
/// What a deployed profile must be even when its `config/<APP_ENV>.toml` is missing from the
/// deployment's config folder (an image built without it, a mistyped mount): the SSRF guard on,
/// https-only webhooks, JSON logs. Layered over `default.toml` (compiled in or on disk) and
/// under `<APP_ENV>.toml` and the `APP__` variables, which may still set otherwise explicitly.
const STAGING_FLOOR: &str = include_str!("profiles/staging.toml");
const PRODUCTION_FLOOR: &str = include_str!("profiles/production.toml");
pub const ENVIRONMENTS: [&str; 4] = ["development", "test", "staging", "production"];

#[derive(Debug, Clone, Deserialize)]
pub struct Settings {
    pub server: ServerSettings,
    pub database: DatabaseSettings,
    pub pgcc: PgccSettings,
    /// `GET /api/status`: the PGCC's health.
    pub pgcc_status: PgccStatusSettings,
    pub workers: WorkerSettings,
    pub webhooks: WebhookSettings,
    pub idempotency: IdempotencySettings,
    pub retention: RetentionSettings,
    /// The sandbox (`[sandbox]`, `APP__SANDBOX__*`; docs/api.md, "Sandbox").
    pub sandbox: SandboxSettings,
    /// Bulk imports (`[importacao]`, `APP__IMPORTACAO__*`; docs/imports.md).
    #[serde(rename = "importacao")]
    pub import: ImportSettings,
    /// Evidence files (`[evidencias]`, `APP__EVIDENCIAS__*`; docs/evidencias.md).
    #[serde(rename = "evidencias")]
    pub evidence: EvidenceSettings,
    /// The verifiable log (`[auditoria]`, `APP__AUDITORIA__*`).
    #[serde(rename = "auditoria")]
    pub audit: AuditSettings,
    /// What the consent records in the ISO/IEC TS 27560 form state of storage, jurisdiction and
    /// withdrawal (`[registro]`, `APP__REGISTRO__*`; docs/records.md).
    #[serde(rename = "registro")]
    pub records: RecordSettings,
    pub cache: CacheSettings,
    pub rate_limit: RateLimitSettings,
    pub log: LogSettings,
    /// Traces over OTLP/HTTP (`[telemetry]`, docs/observability.md).
    pub telemetry: TelemetrySettings,
    /// `GET /metrics` access.
    #[serde(default)]
    pub metrics: MetricsSettings,
    pub docs: DocsSettings,
    /// The console (`/console`, docs/console.md).
    pub console: ConsoleSettings,
    /// The `APP_ENV` these settings were loaded for.
    #[serde(skip)]
    pub environment: String,
}

/// The PGCC's health (`GET /api/status`, docs/decisions.md "The PGCC's health").
#[derive(Debug, Clone, Deserialize)]
pub struct PgccStatusSettings {
    /// The window of PGCC calls assessed, in seconds (1 to 3600; validated at load time).
    pub window_seconds: u64,
    /// Calls of one operation in the window that found the PGCC unavailable before it leaves
    /// `OK` (1 to 1,000,000): one timeout is not an incident.
    pub min_failed_calls: u32,
    /// How long (seconds, below `window_seconds`) an operation has been failing before it
    /// leaves `OK`.
    pub min_failure_seconds: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct WorkerSettings {
    pub status_poll_seconds: u64,
    /// The longest wait between two checks of a `pendente` request.
    pub pending_recheck_max_seconds: u64,
    /// How often an `ativo` request is checked.
    pub active_recheck_seconds: u64,
    /// PGCC status calls per second, every process together.
    pub pgcc_status_calls_per_second: u32,
    pub expiry_seconds: u64,
    pub sync_seconds: u64,
    pub batch_size: u32,
    pub run_in_serve: bool,
    pub delivery_poll_ms: u64,
    pub disable_check_seconds: u64,
    /// How often unfinished creations are settled with the PGCC (0: off).
    pub reconcile_seconds: u64,
    /// How old an unfinished creation's last attempt must be before the reconciler asks the PGCC
    /// (must exceed the PGCC timeout).
    pub reconcile_grace_seconds: u64,
    /// How long the PGCC must keep answering "not found" for an unfinished creation (from its
    /// first such answer to a later one) before the reconciler cancels it: a PGCC may commit a
    /// creation after our call gave up on it.
    pub reconcile_not_found_seconds: u64,
    /// How often idempotency keys past their retention are purged (0: off).
    pub idempotency_purge_seconds: u64,
    /// How often the retention purge runs (0: off).
    pub retention_seconds: u64,
}

impl WorkerSettings {
    /// When the status worker checks each request (validated at load time).
    pub fn status_check_policy(&self) -> application::StatusCheckPolicy {
        let seconds = |s: u64| chrono::Duration::seconds(s.min(86_400 * 30) as i64);
        application::StatusCheckPolicy {
            poll: seconds(self.status_poll_seconds.max(1)),
            pending_max: seconds(self.pending_recheck_max_seconds),
            active_every: seconds(self.active_recheck_seconds),
            ids_per_call: self.batch_size,
        }
    }
}

/// The verifiable log's signing (docs/auditoria.md).
#[derive(Debug, Clone, Deserialize)]
pub struct AuditSettings {
    /// The signers' name (key name of the notes, origin prefix).
    pub name: String,
    /// Base64 of the Ed25519 seed; empty: a development key kept in the database.
    pub signing_key: Secret,
    /// The sandbox companies' key (base64 of its Ed25519 seed), never the production one;
    /// empty: a development key of its own kept in the database.
    pub signing_key_sandbox: Secret,
    /// Comma-separated base64 public keys still published.
    pub retired_public_keys: String,
    /// How often grown logs get a checkpoint (0: not by this process).
    pub checkpoint_seconds: u64,
    /// The witnesses each checkpoint is submitted to: comma-separated `url=<url>;key=<vkey>`
    /// (docs/auditoria.md, "Witnesses"); at least one in production.
    pub witnesses: String,
}

impl AuditSettings {
    /// The retired public keys (validated at load time).
    pub fn retired(&self) -> Option<Vec<[u8; 32]>> {
        self.retired_public_keys
            .split(',')
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .map(application::public_key_from_base64)
            .collect()
    }

    /// The configured witnesses, `(url, verifier key)` each (validated at load time).
    pub fn witness_list(&self) -> Option<Vec<(String, WitnessKey)>> {
        crate::commands::witness::parse_witnesses(&self.witnesses)
    }
}

/// A witness's cosigning verifier key (C2SP vkey, type 0x04).
pub type WitnessKey = application::audit::witness::keys::VerifierKey;

/// How long the retention purge keeps things (docs/security.md, "Retention").
#[derive(Debug, Clone, Deserialize)]
pub struct RetentionSettings {
    /// Final webhook deliveries, their attempts, and events with no delivery left.
    pub webhook_days: u64,
    /// Cancelled creations, before their personal data is blanked.
    pub cancelled_days: u64,
    /// The record of who read personal data (`acessos_dados_pessoais`).
    pub access_log_days: u64,
    /// Evidence files' bytes (docs/evidencias.md, "Retention").
    pub evidence_days: u64,
}

/// What every consent record states (docs/records.md).
#[derive(Debug, Clone, Deserialize)]
pub struct RecordSettings {
    /// ISO 3166-1 alpha-2 code of the country where personal data is stored.
    pub local_armazenamento: String,
    /// ISO 3166-1 alpha-2 code of the jurisdiction whose law applies.
    pub jurisdicao: String,
    /// Where a subject withdraws consent; empty: the use case's notice URL.
    pub url_revogacao: String,
}

impl RecordSettings {
    /// The application's form (validated at load time).
    pub fn service(&self) -> application::RecordSettings {
        let url = self.url_revogacao.trim();
        application::RecordSettings {
            storage_location: self.local_armazenamento.trim().to_owned(),
            jurisdiction: self.jurisdicao.trim().to_owned(),
            withdrawal_url: (!url.is_empty()).then(|| url.to_owned()),
        }
    }
}

/// Bulk imports (docs/imports.md).
#[derive(Debug, Clone, Deserialize)]
pub struct ImportSettings {
    /// Bytes an imported file may have (1 to 2^40).
    pub max_bytes: u64,
    /// Lines an imported file may have (1 to 10^9).
    pub max_linhas: u64,
    /// PGCC calls a second the imports' registrations make, every process together (1 to
    /// 10,000): a budget of their own, apart from the status checks' and the live creations'.
    pub pgcc_calls_per_second: u32,
    /// Seconds an imported file may take to arrive, from the request's head (1 to 86,400).
    pub upload_timeout_seconds: u64,
    /// Seconds a line claimed for registration is held before another worker may claim it
    /// (a worker killed mid-line: its line is taken over after this; 1 to 3,600). Longer than
    /// one creation with the PGCC takes, retries included.
    pub lease_seconds: u64,
}

impl ImportSettings {
    pub fn limits(&self) -> application::ImportLimits {
        application::ImportLimits {
            max_bytes: self.max_bytes,
            max_lines: self.max_linhas,
            calls_per_second: self.pgcc_calls_per_second,
        }
    }
}

/// Evidence files (docs/evidencias.md): their bound, and where their bytes go. With every
/// `s3_*` set the bytes go to that S3-compatible bucket; with none, to PostgreSQL.
#[derive(Debug, Clone, Deserialize)]
pub struct EvidenceSettings {
    /// Bytes an evidence file may have (1 to 2^40; default 20 MiB).
    pub max_bytes: u64,
    /// Uploads one company may have under way in one process (1 to 1,000).
    pub uploads_por_empresa: u32,
    /// The bucket; empty: the bytes are kept in PostgreSQL.
    #[serde(default)]
    pub s3_bucket: String,
    /// The endpoint (`https://...`; `http://` only for a bucket on this host, as in tests).
    #[serde(default)]
    pub s3_endpoint: String,
    #[serde(default)]
    pub s3_region: String,
    #[serde(default)]
    pub s3_access_key_id: String,
    /// Never logged (its `Debug` hides it).
    #[serde(default)]
    pub s3_secret_access_key: Option<Secret>,
}

impl EvidenceSettings {
    pub fn limits(&self) -> application::EvidenceLimits {
        application::EvidenceLimits {
            max_bytes: self.max_bytes,
            uploads_per_company: self.uploads_por_empresa,
        }
    }

    /// Whether the bytes go to an S3-compatible bucket.
    pub fn uses_s3(&self) -> bool {
        !self.s3_bucket.is_empty()
    }
}

/// What is wrong with the `evidencias.s3_*` settings, if anything: all set or all empty; an
/// `https://` endpoint, or `http://` to this host only (a test's bucket).
fn s3_settings_problem(e: &EvidenceSettings) -> Option<&'static str> {
    let secret = e
        .s3_secret_access_key
        .as_ref()
        .is_some_and(|s| !s.expose().is_empty());
    let set = [
        !e.s3_bucket.is_empty(),
        !e.s3_endpoint.is_empty(),
        !e.s3_region.is_empty(),
        !e.s3_access_key_id.is_empty(),
        secret,
    ];
    if set.iter().all(|s| !s) {
        return None;
    }
    if !set.iter().all(|s| *s) {
        return Some("must be all set (bucket, endpoint, region, access key id, secret access key) or all empty");
    }
    if e.s3_endpoint.starts_with("https://") {
        return None;
    }
    let host = e
        .s3_endpoint
        .strip_prefix("http://")
        .map(|rest| rest.split(['/', ':']).next().unwrap_or(""));
    match host {
        Some("127.0.0.1" | "localhost") => None,
        Some(_) => Some("an http:// endpoint is only for a bucket on this host (127.0.0.1, localhost); use https://"),
        None => Some("the endpoint must be an https:// URL"),
    }
}

/// The sandbox companies' data (docs/decisions.md, "The sandbox").
#[derive(Debug, Clone, Deserialize)]
pub struct SandboxSettings {
    /// Days a sandbox company's data is kept before the sandbox purge.
    pub retention_days: u64,
}

impl SandboxSettings {
    /// Validated at load time to be 1 to [`MAX_RETENTION_DAYS`].
    pub fn retention(&self) -> chrono::Duration {
        chrono::Duration::days(self.retention_days.clamp(1, MAX_RETENTION_DAYS) as i64)
    }
}

/// The longest retention accepted, in days (a hundred years: "keep").
pub const MAX_RETENTION_DAYS: u64 = 36_500;

impl RetentionSettings {
    /// Validated at load time to be 0 to [`MAX_RETENTION_DAYS`].
    pub fn periods(&self) -> application::RetentionPeriods {
        let days = |d: u64| chrono::Duration::days(d.min(MAX_RETENTION_DAYS) as i64);
        application::RetentionPeriods {
            webhook: days(self.webhook_days),
            cancelled: days(self.cancelled_days),
            access_log: days(self.access_log_days),
            evidence: days(self.evidence_days),
        }
    }
}

/// `Idempotency-Key` handling of the creations.
#[derive(Debug, Clone, Deserialize)]
pub struct IdempotencySettings {
    /// How long a key (and its kept answer) is kept, at least.
    pub retention_hours: u64,
}

impl IdempotencySettings {
    /// Validated at load time to be 1 to 87 600 hours (ten years).
    pub fn retention(&self) -> chrono::Duration {
        chrono::Duration::hours(self.retention_hours.min(87_600) as i64)
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct WebhookSettings {
    /// "0,5,300": read with [`WebhookSettings::retry_schedule`].
    #[serde(deserialize_with = "string_or_number")]
    pub retry_schedule_seconds: String,
    pub timeout_ms: u64,
    /// Deliveries attempted at once by this process.
    pub concurrency: u32,
    /// Deliveries of one company attempted at once by this process.
    pub max_in_flight_per_company: u32,
    /// The longest a registration's name lookup may take.
    pub dns_timeout_ms: u64,
    /// Name lookups one company may have under way at once in this process (stuck ones
    /// included); beyond it its registrations are answered 429 at once.
    pub dns_in_flight_per_company: u32,
    pub secret_overlap_seconds: u64,
    pub disable_after_seconds: u64,
    pub encryption_key: Secret,
    pub require_https: bool,
    pub allow_non_public_targets: bool,
    /// Webhook URLs a company may have not removed (disabled ones count).
    pub max_urls_per_company: u32,
    /// Pending deliveries a company may have (parked ones count); past it the soonest due fail.
    pub max_pending_per_company: u32,
}

/// The key shipped in config/default.toml, for development and tests only.
pub const DEVELOPMENT_ENCRYPTION_KEY: &str = "ZGV2LW9ubHkta2V5LWRvLW5vdC11c2UtaW4tcHJvZCE=";

impl WebhookSettings {
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    pub fn dns_timeout(&self) -> Duration {
        Duration::from_millis(self.dns_timeout_ms)
    }

    /// How long a claimed delivery is its sender's: the lookup and the send (each bounded by
    /// the timeout) and 30 s for recording the attempt. Past it another instance may claim the
    /// delivery, and the first sender's attempt is then not recorded.
    pub fn lease(&self) -> Duration {
        self.timeout() * 2 + Duration::from_secs(30)
    }

    /// The delays of `retry_schedule_seconds`; `None` when it is not a non-empty list of
    /// whole seconds.
    pub fn retry_schedule(&self) -> Option<Vec<Duration>> {
        let delays: Option<Vec<Duration>> = self
            .retry_schedule_seconds
            .split(',')
            .map(|d| d.trim().parse::<u64>().ok().map(Duration::from_secs))
            .collect();
        delays.filter(|d| !d.is_empty())
    }
}

/// An environment variable `APP__WEBHOOKS__RETRY_SCHEDULE_SECONDS=5` arrives as a number.
fn string_or_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Text(String),
        Number(u64),
    }
    Ok(match Raw::deserialize(d)? {
        Raw::Text(t) => t,
        Raw::Number(n) => n.to_string(),
    })
}

/// The in-process caches (resolved API keys, rendered use-case lists); see docs/performance.md.
#[derive(Debug, Clone, Deserialize)]
pub struct CacheSettings {
    pub enabled: bool,
    /// Resolved API keys kept.
    pub api_keys: u64,
    /// Bytes of rendered use-case lists kept.
    pub use_case_lists_bytes: u64,
    /// Caches are bypassed when the change feed has not confirmed its connection for this
    /// long: the longest a key revoked elsewhere can still be accepted.
    pub max_silence_ms: u64,
    /// Hashes of keys the database did not know, kept to refuse a repeated one from memory.
    pub unknown_api_keys: u64,
    /// How long such a hash is believed, in seconds (issuing any key forgets them all).
    pub unknown_api_key_ttl_seconds: u64,
    /// Where the change feed LISTENs; unset: `database.url`. Must reach PostgreSQL itself
    /// (LISTEN through a transaction-mode pooler hears nothing).
    pub feed_url: Option<Secret>,
    /// A resolved API key is read again after this long, whatever the feed says.
    pub key_ttl_seconds: u64,
}

impl CacheSettings {
    pub fn max_silence(&self) -> Duration {
        Duration::from_millis(self.max_silence_ms)
    }

    /// How long the feed waits for notifications per round: well inside `max_silence`.
    pub fn feed_wait(&self) -> Duration {
        (self.max_silence() / 4).min(Duration::from_millis(250))
    }

    pub fn service(&self) -> application::CacheSettings {
        application::CacheSettings {
            enabled: self.enabled,
            api_keys: self.api_keys,
            max_silence: self.max_silence(),
            unknown_api_keys: self.unknown_api_keys,
            unknown_api_key_ttl: Duration::from_secs(self.unknown_api_key_ttl_seconds),
            api_key_ttl: Duration::from_secs(self.key_ttl_seconds),
        }
    }
}

/// `server.trusted_proxies` of a deployment whose clients connect directly.
pub const NO_PROXY: &str = "none";

#[derive(Debug, Clone, Deserialize)]
pub struct ServerSettings {
    pub host: String,
    pub port: u16,
    pub body_limit_bytes: usize,
    /// From a request's head to the last byte of its body, in milliseconds (408 past it).
    pub body_timeout_ms: u64,
    /// For a request's headers to arrive, in milliseconds (408 and the connection closed past it).
    pub header_timeout_ms: u64,
    pub workers: usize,
    /// Deepest nesting of arrays/objects in a JSON body (400 above it).
    pub json_max_depth: usize,
    /// On SIGTERM/SIGINT: how long in-flight requests and worker rounds may take to finish.
    pub shutdown_grace_seconds: u64,
    /// Comma-separated addresses or CIDR ranges of the proxies whose `X-Forwarded-For` is
    /// believed (empty: none; the socket's peer is the client).
    pub trusted_proxies: String,
    /// A paged answer (consent list, subject export, events, delivery log) stops adding items
    /// once they hold this many bytes and answers `proximoCursor` to continue.
    pub page_max_bytes: usize,
}

impl ServerSettings {
    /// `trusted_proxies` read; `None` when an entry is neither an address nor a CIDR range.
    /// `none` says that no proxy is in front: an empty list, said on purpose.
    pub fn trusted_proxies(&self) -> Option<Vec<ipnet::IpNet>> {
        if self.trusted_proxies.trim().eq_ignore_ascii_case(NO_PROXY) {
            return Some(Vec::new());
        }
        self.trusted_proxies
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(|entry| {
                entry
                    .parse::<ipnet::IpNet>()
                    .ok()
                    .or_else(|| entry.parse::<std::net::IpAddr>().ok().map(Into::into))
            })
            .collect()
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct DatabaseSettings {
    /// The service's runtime role: owns nothing, writes the evidence only through the owner's
    /// functions (docs/security.md, "Least privilege").
    pub url: Secret,
    /// The owner's URL (`APP__DATABASE__MIGRATION_URL`): migrations, the runtime role's grants and
    /// the signing key's publication run as this role; the CLI's administrative commands too.
    /// Unset: `url` does all (development with one role).
    #[serde(default)]
    pub migration_url: Option<Secret>,
    pub pool_size: u32,
    pub checkout_timeout_ms: u64,
    /// PostgreSQL's `statement_timeout` on every connection (0: none).
    pub statement_timeout_ms: u64,
    /// PostgreSQL's `idle_in_transaction_session_timeout` on every connection (0: none).
    pub idle_in_transaction_timeout_ms: u64,
    /// false: no named prepared statements (behind a transaction-mode pooler).
    pub prepared_statements: bool,
    /// Comma-separated `postgres://` URLs of streaming replicas for the reads that tolerate
    /// lag (empty: none).
    #[serde(default = "no_replicas")]
    pub replica_urls: Secret,
    /// A replica whose replay is further behind than this (milliseconds) is not read.
    #[serde(default = "default_max_replica_lag_ms")]
    pub max_replica_lag_ms: u64,
}

fn no_replicas() -> Secret {
    Secret::default()
}

fn default_max_replica_lag_ms() -> u64 {
    1000
}

#[derive(Debug, Clone, Deserialize)]
pub struct PgccSettings {
    pub base_url: String,
    pub timeout_ms: u64,
    pub token: Option<Secret>,
    /// The longest `Retry-After` of the PGCC passed on to the companies, in seconds.
    pub max_retry_after_seconds: u64,
}

/// Requests per company: a token bucket of `burst` requests refilled at `per_second` per
/// second (`per_second = 0`: no limit).
#[derive(Debug, Clone, Deserialize)]
pub struct RateLimitSettings {
    pub per_second: u32,
    pub burst: u32,
    /// How often each `serve` process beats in `replicas_ativas` (0: no sharing of the quota).
    pub replica_heartbeat_ms: u64,
    /// Failed authentications per second a client address may sustain (0: no limit).
    pub failed_auth_per_second: u32,
    /// Failed authentications a client address may make at once.
    pub failed_auth_burst: u32,
    /// IPv4 clients are counted by network of this prefix length (32: per address).
    pub failed_auth_ipv4_prefix: u8,
    /// IPv6 clients are counted by network of this prefix length (64: per /64).
    pub failed_auth_ipv6_prefix: u8,
    /// Failed authentications per second of one IPv4 /24 (IPv6 /48), all its clients together.
    pub failed_auth_network_per_second: u32,
    /// Failed authentications one IPv4 /24 (IPv6 /48) may make at once.
    pub failed_auth_network_burst: u32,
    /// Failed authentications per second of every client together, per process.
    pub failed_auth_process_per_second: u32,
    /// Failed authentications of every client together at once, per process.
    pub failed_auth_process_burst: u32,
}

impl RateLimitSettings {
    pub fn http(&self) -> delivery_http::RateLimitSettings {
        delivery_http::RateLimitSettings {
            per_second: self.per_second,
            burst: self.burst,
        }
    }

    /// The failure budget per client address, with the proxies `server.trusted_proxies` lists
    /// (validated at load time).
    pub fn failed_auth(&self, server: &ServerSettings) -> delivery_http::FailedAuthSettings {
        delivery_http::FailedAuthSettings {
            per_second: self.failed_auth_per_second,
            burst: self.failed_auth_burst,
            trusted_proxies: server.trusted_proxies().unwrap_or_default(),
            ipv4_prefix: self.failed_auth_ipv4_prefix,
            ipv6_prefix: self.failed_auth_ipv6_prefix,
            network_per_second: self.failed_auth_network_per_second,
            network_burst: self.failed_auth_network_burst,
            process_per_second: self.failed_auth_process_per_second,
            process_burst: self.failed_auth_process_burst,
        }
    }
}

/// The console's sessions (`[console]`, `APP__CONSOLE__*`; docs/console.md).
#[derive(Debug, Clone, Deserialize)]
pub struct ConsoleSettings {
    /// A session unused this long ends (at least 1).
    pub session_minutes: u64,
    /// When above 0, the idle timeout in seconds instead (for tests: minutes are too long to
    /// wait for).
    pub session_seconds: u64,
    /// A session ends this long after it was opened, however used (at least 1).
    pub session_max_minutes: u64,
    /// When above 0, the absolute lifetime in seconds instead (for tests).
    pub session_max_seconds: u64,
    /// How long a CPF search's token opens the subject's page (at least 1 s; issue 38).
    pub search_seconds: u64,
}

impl ConsoleSettings {
    /// The console sessions' settings; cookies are `Secure` in every environment but development.
    pub fn sessions(&self, environment: &str) -> delivery_console::ConsoleSettings {
        let idle = if self.session_seconds > 0 {
            Duration::from_secs(self.session_seconds)
        } else {
            Duration::from_secs(self.session_minutes.max(1) * 60)
        };
        let absolute = if self.session_max_seconds > 0 {
            Duration::from_secs(self.session_max_seconds)
        } else {
            Duration::from_secs(self.session_max_minutes.max(1) * 60)
        };
        delivery_console::ConsoleSettings {
            idle_timeout: idle,
            absolute_timeout: absolute,
            search_lifetime: Duration::from_secs(self.search_seconds.max(1)),
            secure_cookies: environment != "development",
        }
    }
}

/// Servers listed in `/openapi.json` (and so in `/docs`) besides this one; empty: not listed.
#[derive(Debug, Clone, Deserialize)]
pub struct DocsSettings {
    pub production_url: String,
    pub staging_url: String,
}

impl DocsSettings {
    pub fn http(&self) -> delivery_http::DocsServers {
        delivery_http::DocsServers {
            production_url: self.production_url.clone(),
            staging_url: self.staging_url.clone(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct LogSettings {
    pub level: String,
    /// `text` (readable; development, test) or `json` (one object per line; staging, production).
    pub format: LogFormat,
}

/// Traces (docs/observability.md): off while `otlp_endpoint` is empty.
#[derive(Debug, Clone, Deserialize)]
pub struct TelemetrySettings {
    /// The OTLP/HTTP collector's base URL (`/v1/traces` is added) or its traces URL; empty: off.
    pub otlp_endpoint: String,
    /// The share of new traces kept (0 to 1; validated at load time); a continued trace follows
    /// its caller's sampled flag.
    pub sample_ratio: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

/// With a token, `GET /metrics` requires `Authorization: Bearer <token>`; without one it is open,
/// which only development and test accept.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct MetricsSettings {
    pub token: Option<Secret>,
}

/// A configuration problem, reported as one line naming the key.
#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct SettingsError(String);

impl Settings {
    /// Loads the settings of `APP_ENV` (default `development`) from `APP_CONFIG_DIR`
    /// (default `config`).
    pub fn load() -> Result<Settings, SettingsError> {
        let (env, config) = Settings::layers()?;
        let settings: Settings = config
            .try_deserialize()
            .map_err(|e| SettingsError(e.to_string()))?;
        let mut settings = settings;
        settings.environment = env;
        settings.validate()?;
        Ok(settings)
    }

    /// The `APP_ENV` and its layered configuration (files, then environment), not yet typed.
    pub fn layers() -> Result<(String, Config), SettingsError> {
        let env = std::env::var("APP_ENV").unwrap_or_else(|_| "development".to_owned());
        if !ENVIRONMENTS.contains(&env.as_str()) {
            return Err(SettingsError(format!(
                "APP_ENV: unknown environment `{env}` (expected one of {})",
                ENVIRONMENTS.join(", ")
            )));
        }
        let dir =
            PathBuf::from(std::env::var("APP_CONFIG_DIR").unwrap_or_else(|_| "config".to_owned()));
        let floor = match env.as_str() {
            "staging" => STAGING_FLOOR,
            "production" => PRODUCTION_FLOOR,
            _ => "",
        };
        let mut builder = Config::builder()
            .add_source(File::from_str(DEFAULTS, FileFormat::Toml))
            .add_source(File::from(dir.join("default.toml")).required(false))
            .add_source(File::from_str(floor, FileFormat::Toml))
            .add_source(File::from(dir.join(format!("{env}.toml"))).required(false));
        if env == "development" {
            builder = builder.add_source(File::from(PathBuf::from(LOCAL_RUN)).required(false));
        }
        let settings = builder
            .add_source(
                Environment::with_prefix("APP")
                    .prefix_separator("__")
                    .separator("__")
                    .try_parsing(true),
            )
            .build()
            .map_err(|e| SettingsError(e.to_string()))?;
        Ok((env, settings))
    }

    fn validate(&self) -> Result<(), SettingsError> {
        let bad =
            |key: &str, why: &str| Err(SettingsError(format!("{key} ({}) {why}", env_name(key))));
        let db = self.database.url.expose();
        if !(db.starts_with("postgres://") || db.starts_with("postgresql://")) {
            return bad("database.url", "must be a postgres:// URL");
        }
        if self.database.checkout_timeout_ms == 0 {
            return bad("database.checkout_timeout_ms", "must be above 0");
        }
        if !(0.0..=1.0).contains(&self.telemetry.sample_ratio) {
            return bad("telemetry.sample_ratio", "must be between 0 and 1");
        }
        let otlp = self.telemetry.otlp_endpoint.trim();
        if !(otlp.is_empty() || otlp.starts_with("http://") || otlp.starts_with("https://")) {
            return bad(
                "telemetry.otlp_endpoint",
                "must be empty (traces off) or an http:// or https:// URL",
            );
        }
        if !(1..=3600).contains(&self.pgcc_status.window_seconds) {
            return bad(
                "pgcc_status.window_seconds",
                "must be between 1 and 3600 (seconds)",
            );
        }
        if !(1..=1_000_000).contains(&self.pgcc_status.min_failed_calls) {
            return bad(
                "pgcc_status.min_failed_calls",
                "must be between 1 and 1000000",
            );
        }
        // the failures it waits for must still be in the window when it has waited
        if self.pgcc_status.min_failure_seconds >= self.pgcc_status.window_seconds {
            return bad(
                "pgcc_status.min_failure_seconds",
                "must be below pgcc_status.window_seconds",
            );
        }
        if self.database.statement_timeout_ms > 86_400_000 {
            return bad(
                "database.statement_timeout_ms",
                "must be between 0 (no limit) and 86400000 (milliseconds)",
            );
        }
        if self.database.idle_in_transaction_timeout_ms > 86_400_000 {
            return bad(
                "database.idle_in_transaction_timeout_ms",
                "must be between 0 (no limit) and 86400000 (milliseconds)",
            );
        }
        for url in self.replica_urls() {
            if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
                return bad(
                    "database.replica_urls",
                    "must be comma-separated postgres:// URLs",
                );
            }
        }
        if !(1..=86_400_000).contains(&self.database.max_replica_lag_ms) {
            return bad(
                "database.max_replica_lag_ms",
                "must be between 1 and 86400000 (milliseconds)",
            );
        }
        if let Some(feed) = &self.cache.feed_url {
            let feed = feed.expose();
            if !(feed.starts_with("postgres://") || feed.starts_with("postgresql://")) {
                return bad("cache.feed_url", "must be a postgres:// URL when set");
            }
        }
        if !(1..=86_400).contains(&self.cache.key_ttl_seconds) {
            return bad(
                "cache.key_ttl_seconds",
                "must be between 1 and 86400 (seconds)",
            );
        }
        if !(self.pgcc.base_url.starts_with("http://")
            || self.pgcc.base_url.starts_with("https://"))
        {
            return bad("pgcc.base_url", "must be an http:// or https:// URL");
        }
        if self.pgcc.timeout_ms == 0 {
            return bad("pgcc.timeout_ms", "must be above 0");
        }
        if !(1..=86_400).contains(&self.pgcc.max_retry_after_seconds) {
            return bad(
                "pgcc.max_retry_after_seconds",
                "must be between 1 and 86400 (seconds)",
            );
        }
        if !(1..=500).contains(&self.workers.batch_size) {
            return bad("workers.batch_size", "must be between 1 and 500");
        }
        if !(1..=10_000).contains(&self.workers.pgcc_status_calls_per_second) {
            return bad(
                "workers.pgcc_status_calls_per_second",
                "must be between 1 and 10000",
            );
        }
        for (key, value) in [
            (
                "workers.pending_recheck_max_seconds",
                self.workers.pending_recheck_max_seconds,
            ),
            (
                "workers.active_recheck_seconds",
                self.workers.active_recheck_seconds,
            ),
        ] {
            if !(1..=86_400 * 30).contains(&value) {
                return bad(key, "must be between 1 and 2592000 (seconds)");
            }
        }
        if self.webhooks.retry_schedule().is_none() {
            return bad(
                "webhooks.retry_schedule_seconds",
                "must be a comma-separated list of whole seconds, e.g. 0,5,300",
            );
        }
        if !(1..=600_000).contains(&self.webhooks.timeout_ms) {
            return bad(
                "webhooks.timeout_ms",
                "must be between 1 and 600000 (milliseconds)",
            );
        }
        if !(1..=1024).contains(&self.webhooks.concurrency) {
            return bad("webhooks.concurrency", "must be between 1 and 1024");
        }
        if !(1..=self.webhooks.concurrency).contains(&self.webhooks.max_in_flight_per_company) {
            return bad(
                "webhooks.max_in_flight_per_company",
                "must be between 1 and webhooks.concurrency",
            );
        }
        if !(1..=60_000).contains(&self.webhooks.dns_timeout_ms) {
            return bad(
                "webhooks.dns_timeout_ms",
                "must be between 1 and 60000 (milliseconds)",
            );
        }
        if !(1..=64).contains(&self.webhooks.dns_in_flight_per_company) {
            return bad(
                "webhooks.dns_in_flight_per_company",
                "must be between 1 and 64 (the lookups the process runs at once, all companies together)",
            );
        }
        if !(1..=1_000_000_000).contains(&self.webhooks.max_pending_per_company) {
            return bad(
                "webhooks.max_pending_per_company",
                "must be between 1 and 1000000000",
            );
        }
        if !(1..=1000).contains(&self.webhooks.max_urls_per_company) {
            return bad(
                "webhooks.max_urls_per_company",
                "must be between 1 and 1000",
            );
        }
        if self.retention.webhook_days > MAX_RETENTION_DAYS {
            return bad(
                "retention.webhook_days",
                "must be between 0 and 36500 (days)",
            );
        }
        if self.retention.cancelled_days > MAX_RETENTION_DAYS {
            return bad(
                "retention.cancelled_days",
                "must be between 0 and 36500 (days)",
            );
        }
        if self.retention.access_log_days > MAX_RETENTION_DAYS {
            return bad(
                "retention.access_log_days",
                "must be between 0 and 36500 (days)",
            );
        }
        for (key, code) in [
            (
                "registro.local_armazenamento",
                &self.records.local_armazenamento,
            ),
            ("registro.jurisdicao", &self.records.jurisdicao),
        ] {
            let code = code.trim();
            if code.len() != 2 || !code.chars().all(|c| c.is_ascii_uppercase()) {
                return bad(key, "must be an ISO 3166-1 alpha-2 country code (BR)");
            }
        }
        let url = self.records.url_revogacao.trim();
        if !(url.is_empty() || url.starts_with("https://") || url.starts_with("http://")) {
            return bad(
                "registro.url_revogacao",
                "must be empty or an absolute http(s) URL",
            );
        }
        if !(1..=(1_u64 << 40)).contains(&self.import.max_bytes) {
            return bad("importacao.max_bytes", "must be 1 to 1099511627776");
        }
        if !(1..=1_000_000_000).contains(&self.import.max_linhas) {
            return bad("importacao.max_linhas", "must be 1 to 1000000000");
        }
        if !(1..=10_000).contains(&self.import.pgcc_calls_per_second) {
            return bad("importacao.pgcc_calls_per_second", "must be 1 to 10000");
        }
        if !(1..=3_600).contains(&self.import.lease_seconds) {
            return bad("importacao.lease_seconds", "must be 1 to 3600");
        }
        if !(1..=86_400).contains(&self.import.upload_timeout_seconds) {
            return bad("importacao.upload_timeout_seconds", "must be 1 to 86400");
        }
        if !(1..=(1_u64 << 40)).contains(&self.evidence.max_bytes) {
            return bad("evidencias.max_bytes", "must be 1 to 1099511627776");
        }
        if !(1..=1_000).contains(&self.evidence.uploads_por_empresa) {
            return bad("evidencias.uploads_por_empresa", "must be 1 to 1000");
        }
        if let Some(why) = s3_settings_problem(&self.evidence) {
            return bad("evidencias.s3_*", why);
        }
        if self.retention.evidence_days > MAX_RETENTION_DAYS {
            return bad(
                "retention.evidence_days",
                "must be between 0 and 36500 (days)",
            );
        }
        if !(1..=MAX_RETENTION_DAYS).contains(&self.sandbox.retention_days) {
            return bad(
                "sandbox.retention_days",
                "must be between 1 and 36500 (days)",
            );
        }
        let deployed = self.is_deployed();
        if deployed && self.webhooks.encryption_key.expose() == DEVELOPMENT_ENCRYPTION_KEY {
            return bad(
                "webhooks.encryption_key",
                "must be set to this deployment's own key in staging and production (base64 of 32 random bytes)",
            );
        }
        let production = self.environment == "production";
        if production && !self.pgcc.base_url.starts_with("https://") {
            return bad(
                "pgcc.base_url",
                "must be an https:// URL in production (the PGCC token and personal data travel on it)",
            );
        }
        let no_token = self
            .metrics
            .token
            .as_ref()
            .is_none_or(|t| t.expose().trim().is_empty());
        if deployed && no_token {
            return bad(
                "metrics.token",
                "must be set in staging and production (GET /metrics requires it as a bearer token)",
            );
        }
        if self.server.trusted_proxies().is_none() {
            return bad(
                "server.trusted_proxies",
                "must be a comma-separated list of IP addresses or CIDR ranges, e.g. 10.0.0.0/8,127.0.0.1, or none",
            );
        }
        // Behind a load balancer an empty list makes every client one address (the balancer's):
        // one flood of made-up keys then limits every company. A deployment says which it is.
        if deployed && self.server.trusted_proxies.trim().is_empty() {
            return bad(
                "server.trusted_proxies",
                "must be set in staging and production: the addresses or CIDR ranges of the proxies (load balancers) in front of this service, or none when clients connect to it directly",
            );
        }
        let signing_key = self.audit.signing_key.expose().trim();
        if deployed && signing_key.is_empty() {
            return bad(
                "auditoria.signing_key",
                "must be set in staging and production: base64 of a 32-byte Ed25519 seed (openssl rand -base64 32)",
            );
        }
        if !signing_key.is_empty()
            && application::AuditSigner::seed_from_base64(signing_key).is_err()
        {
            return bad(
                "auditoria.signing_key",
                "must be base64 of a 32-byte Ed25519 seed (openssl rand -base64 32)",
            );
        }
        let sandbox_key = self.audit.signing_key_sandbox.expose().trim();
        if deployed && sandbox_key.is_empty() {
            return bad(
                "auditoria.signing_key_sandbox",
                "must be set in staging and production: base64 of a 32-byte Ed25519 seed (openssl rand -base64 32), not the one of auditoria.signing_key",
            );
        }
        match application::AuditSigner::seed_from_base64(sandbox_key) {
            Err(_) if !sandbox_key.is_empty() => {
                return bad(
                    "auditoria.signing_key_sandbox",
                    "must be base64 of a 32-byte Ed25519 seed (openssl rand -base64 32)",
                )
            }
            Ok(seed) if application::AuditSigner::seed_from_base64(signing_key).ok() == Some(seed) => {
                return bad(
                    "auditoria.signing_key_sandbox",
                    "must not be the key of auditoria.signing_key: the sandbox's receipts must never verify as a real company's",
                )
            }
            _ => {}
        }
        if self.audit.retired().is_none() {
            return bad(
                "auditoria.retired_public_keys",
                "must be a comma-separated list of base64 32-byte Ed25519 public keys, or empty",
            );
        }
        match self.audit.witness_list() {
            None => {
                return bad(
                    "auditoria.witnesses",
                    "must be a comma-separated list of url=<http(s) URL>;key=<witness vkey, type 0x04>",
                )
            }
            Some(list) if list.is_empty() && production => {
                return bad(
                    "auditoria.witnesses",
                    "must name at least one witness in production (url=<URL>;key=<vkey>): docs/auditoria.md, \"Witnesses\"",
                )
            }
            Some(_) => {}
        }
        if self.audit.checkpoint_seconds > 86_400 {
            return bad(
                "auditoria.checkpoint_seconds",
                "must be between 0 and 86400 (seconds)",
            );
        }
        let name = self.audit.name.as_str();
        if name.is_empty()
            || name.len() > 100
            || !name.bytes().all(|b| b.is_ascii_graphic() && b != b'+')
        {
            return bad(
                "auditoria.name",
                "must be 1 to 100 visible ASCII characters without '+' (a signed note's key name)",
            );
        }
        for (key, value) in [
            (
                "rate_limit.failed_auth_network_per_second",
                self.rate_limit.failed_auth_network_per_second,
            ),
            (
                "rate_limit.failed_auth_network_burst",
                self.rate_limit.failed_auth_network_burst,
            ),
            (
                "rate_limit.failed_auth_process_per_second",
                self.rate_limit.failed_auth_process_per_second,
            ),
            (
                "rate_limit.failed_auth_process_burst",
                self.rate_limit.failed_auth_process_burst,
            ),
        ] {
            if !(1..=1_000_000).contains(&value) {
                return bad(key, "must be between 1 and 1000000");
            }
        }
        if !(8..=32).contains(&self.rate_limit.failed_auth_ipv4_prefix) {
            return bad(
                "rate_limit.failed_auth_ipv4_prefix",
                "must be between 8 and 32",
            );
        }
        if !(32..=128).contains(&self.rate_limit.failed_auth_ipv6_prefix) {
            return bad(
                "rate_limit.failed_auth_ipv6_prefix",
                "must be between 32 and 128",
            );
        }
        if self.server.body_limit_bytes == 0 {
            return bad("server.body_limit_bytes", "must be above 0");
        }
        if self.server.page_max_bytes < 1024 {
            return bad("server.page_max_bytes", "must be at least 1024 (bytes)");
        }
        // 0 would mean "no timeout" to actix for the headers; neither may be turned off.
        if !(1..=600_000).contains(&self.server.body_timeout_ms) {
            return bad(
                "server.body_timeout_ms",
                "must be between 1 and 600000 (milliseconds)",
            );
        }
        if !(1..=600_000).contains(&self.server.header_timeout_ms) {
            return bad(
                "server.header_timeout_ms",
                "must be between 1 and 600000 (milliseconds)",
            );
        }
        if !(200..=60_000).contains(&self.cache.max_silence_ms) {
            return bad(
                "cache.max_silence_ms",
                "must be between 200 and 60000 (milliseconds)",
            );
        }
        if !(1..=87_600).contains(&self.idempotency.retention_hours) {
            return bad(
                "idempotency.retention_hours",
                "must be between 1 and 87600 (ten years)",
            );
        }
        if self.workers.reconcile_grace_seconds.saturating_mul(1000) <= self.pgcc.timeout_ms {
            return bad(
                "workers.reconcile_grace_seconds",
                "must exceed the PGCC timeout (pgcc.timeout_ms), or a creation still waiting for the PGCC could be reconciled",
            );
        }
        if self.rate_limit.per_second > 0 && self.rate_limit.burst == 0 {
            return bad(
                "rate_limit.burst",
                "must be at least 1 (set rate_limit.per_second to 0 to turn rate limiting off)",
            );
        }
        if self.server.json_max_depth == 0 {
            return bad("server.json_max_depth", "must be above 0");
        }
        Ok(())
    }

    pub fn pgcc_timeout(&self) -> Duration {
        Duration::from_millis(self.pgcc.timeout_ms)
    }

    /// `database.pool_size`, or when it is 0 four connections per core (between 4 and 32): on
    /// this service's short queries more connections than that only queue inside PostgreSQL
    /// (measured in docs/performance.md), and fewer leave cores idle while one waits on I/O.
    pub fn pool_size(&self) -> u32 {
        match self.database.pool_size {
            0 => {
                let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
                u32::try_from(cores * 4).unwrap_or(32).clamp(4, 32)
            }
            n => n,
        }
    }

    pub fn checkout_timeout(&self) -> Duration {
        Duration::from_millis(self.database.checkout_timeout_ms)
    }

    /// The limits set on every database connection (the pool's and the change feed's).
    /// Staging or production: where the checks that development relaxes are enforced.
    pub fn is_deployed(&self) -> bool {
        matches!(self.environment.as_str(), "staging" | "production")
    }

    /// These settings for an operator's command (`company`, `api-key`, `audit`): connected as the
    /// owner when `database.migration_url` is set, since the runtime role writes no company
    /// (docs/security.md, "Least privilege").
    pub fn for_administration(&self) -> Settings {
        let mut settings = self.clone();
        if let Some(owner) = &self.database.migration_url {
            settings.database.url = owner.clone();
        }
        settings
    }

    pub fn session(&self) -> postgres_adapter::SessionSettings {
        postgres_adapter::SessionSettings {
            statement_timeout: Duration::from_millis(self.database.statement_timeout_ms),
            idle_in_transaction_timeout: Duration::from_millis(
                self.database.idle_in_transaction_timeout_ms,
            ),
            prepared_statements: self.database.prepared_statements,
            generic_plans: false,
        }
    }

    /// `database.replica_urls` split at commas, blanks dropped.
    pub fn replica_urls(&self) -> Vec<String> {
        self.database
            .replica_urls
            .expose()
            .split(',')
            .map(str::trim)
            .filter(|url| !url.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// Where the change feed listens: `cache.feed_url`, else `database.url`.
    pub fn feed_url(&self) -> &str {
        self.cache
            .feed_url
            .as_ref()
            .unwrap_or(&self.database.url)
            .expose()
    }
}

/// `database.url` -> `APP__DATABASE__URL`.
fn env_name(key: &str) -> String {
    format!("APP__{}", key.replace('.', "__").to_uppercase())
}
