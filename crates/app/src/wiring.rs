//! Builds the adapters from the settings and hands them to the application services; composes
//! what crosses layers without the inner ones knowing (the request's database connection scope
//! around the HTTP layer's blocking work, the PGCC decorators). What the process shares (metrics,
//! PGCC call notes, witnesses) comes in the [`ProcessContext`]; the audit signer and the read
//! pools are built once by `serve` and `worker` and passed in.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use application::{
    AuditLog, AuditSigner, HealthTrackedPgcc, ObservedPgcc, Operations, PgccHealthJob, Ports,
    SandboxRoutedPgcc, ServiceSettings, Services, SignCheckpoints, VerifyAuditLog, Workers,
};
use delivery_console::{Console, OidcSetup};
use delivery_http::{ApiState, RequestScope};
use pgcc_adapter::{
    PgccHttpGateway, PgccReachabilityProbe, PgccSettings as GatewaySettings, SandboxPgcc,
};
use ports::{AuditLogRepository as _, PublishedKey, SystemClock};
use postgres_adapter::{
    PgAccessLog, PgApiKeyRepository, PgAuditLogRepository, PgCompanyRepository, PgConnectionScope,
    PgConsentRequestRepository, PgConsoleOidcStore, PgConsoleSearchStore, PgConsoleSessionStore,
    PgEventLog, PgEvidenceFiles, PgIdempotencyRepository, PgImportRepository, PgOperationalStats,
    PgPgccCallBudget, PgPgccHealthRepository, PgPool, PgReadinessProbe, PgRetentionRepository,
    PgSandboxRepository, PgStatusCheckSchedule, PgUseCaseRepository, PgWebhookDeliveryRepository,
    PgWebhookUrlRepository, PoolSettings, ReadPools, ReleasingPgcc, ReleasingTargetGuard,
    ReleasingWebhookSender, SessionSettings,
};
use webhook_adapter::{
    AesGcmSecretCipher, GuardSettings, PolicyTargetGuard, SenderSettings, UreqWebhookSender,
};

use crate::context::ProcessContext;
use crate::settings::Settings;

pub fn pool(settings: &Settings) -> anyhow::Result<PgPool> {
    postgres_adapter::connect(
        settings.database.url.expose(),
        &PoolSettings {
            max_size: settings.pool_size(),
            checkout_timeout: settings.checkout_timeout(),
            session: settings.session(),
        },
    )
    .context("database")
}

/// The status job's own connections (two: its one thread, and room for a slow return): the
/// same bounds as the process's pool, and every statement planned once, generically
/// (`SessionSettings::generic_plans`): the job sends the same few statements, keyed by company,
/// thousands of times a minute at 10^7 consents, and PostgreSQL's custom plans re-planned them on
/// every call (docs/scaling.md, "The status worker"). Not on Citus (`distributed`): it cannot
/// plan the job's statements over several shards generically, and plans them per call.
fn status_pool(settings: &Settings, distributed: bool) -> anyhow::Result<PgPool> {
    postgres_adapter::connect(
        settings.database.url.expose(),
        &PoolSettings {
            max_size: STATUS_POOL_SIZE,
            checkout_timeout: settings.checkout_timeout(),
            session: SessionSettings {
                generic_plans: !distributed,
                ..settings.session()
            },
        },
    )
    .context("database (status checks)")
}

/// Whether the database is distributed (Citus); unknown (the database not answering at start)
/// counts as not: one PostgreSQL node is what this service runs on unless told otherwise.
fn distributed(pool: &PgPool) -> bool {
    match postgres_adapter::is_distributed(pool) {
        Ok(citus) => {
            if citus {
                tracing::info!("the database is a Citus coordinator: the status job plans its statements per call");
            }
            citus
        }
        Err(e) => {
            tracing::warn!(error = %e, "could not tell whether the database is distributed; assumed not");
            false
        }
    }
}

/// Connections of the status job's pool, beside `database.pool_size`.
pub const STATUS_POOL_SIZE: u32 = 2;

/// The owner's pool (`database.migration_url`), for what a start does as the owner; `None`
/// when unset (one role does all: development).
pub fn owner_pool(settings: &Settings) -> anyhow::Result<Option<PgPool>> {
    let Some(url) = settings.database.migration_url.as_ref() else {
        return Ok(None);
    };
    postgres_adapter::connect(
        url.expose(),
        &PoolSettings {
            max_size: 2,
            checkout_timeout: settings.checkout_timeout(),
            session: settings.session(),
        },
    )
    .context("database (database.migration_url, the owner)")
    .map(Some)
}

/// The database made ready by the owner, as `serve`, `worker` and `migrate` start.
pub struct Prepared {
    /// The migrations applied.
    pub applied: Vec<String>,
    /// The pool the backfills run on: the owner's when `database.migration_url` is set.
    pub backfills: PgPool,
    /// The audit signers the owner built to publish their keys (`None` without an owner).
    pub signers: Option<Signers>,
}

/// The process's two audit signers: the production key, and the sandbox companies' own key
/// (docs/auditoria.md, "The sandbox's key"). Built once when the database is ready.
#[derive(Clone)]
pub struct Signers {
    /// `auditoria.signing_key`: real companies' receipts and checkpoints.
    pub production: Arc<AuditSigner>,
    /// `auditoria.signing_key_sandbox`: sandbox companies' receipts and checkpoints.
    pub sandbox: Arc<AuditSigner>,
}

/// What `serve`, `worker` and `migrate` do first, as the owner when `database.migration_url` is
/// set (docs/security.md, "Least privilege"): the migrations, the runtime role's grants and the
/// audit signing key's publication (the runtime role can write none of the keys).
pub fn prepare_database(settings: &Settings, runtime: &PgPool) -> anyhow::Result<Prepared> {
    let owner = owner_pool(settings)?;
    let applied = migrate(owner.as_ref().unwrap_or(runtime))?;
    let mut published = None;
    if let Some(owner) = &owner {
        if let Some(role) = postgres_adapter::privileges::grant_runtime_role(owner, runtime)
            .context("granting the runtime role (database.url) its privileges")?
        {
            tracing::info!(role, "runtime role granted its privileges by the owner");
        }
        let signers = Signers {
            production: audit_signer(settings, owner.clone())?,
            sandbox: sandbox_audit_signer(settings, owner.clone())?,
        };
        for signer in [&signers.production, &signers.sandbox] {
            ports::AuditLogRepository::publish_key(
                &PgAuditLogRepository::new(owner.clone()),
                &signer.published_key(),
            )
            .context("publishing the audit signing keys")?;
        }
        published = Some(signers);
    }
    Ok(Prepared {
        applied,
        backfills: owner.unwrap_or_else(|| runtime.clone()),
        signers: published,
    })
}

/// [`prepare_database`], the backfills started on their thread and the runtime role's
/// privileges checked: how `serve` and `worker` start. Returns the process's audit signer, built
/// once: the owner's that published the key, else one built now on the runtime pool.
pub fn start_database(settings: &Settings, runtime: &PgPool) -> anyhow::Result<Signers> {
    let prepared = prepare_database(settings, runtime)?;
    spawn_backfills(prepared.backfills);
    check_least_privilege(settings, runtime)?;
    match prepared.signers {
        Some(signers) => Ok(signers),
        None => Ok(Signers {
            production: audit_signer(settings, runtime.clone())?,
            sandbox: sandbox_audit_signer(settings, runtime.clone())?,
        }),
    }
}

/// The runtime role's excess privileges (`postgres_adapter::privileges`): an error in staging and
/// production, a warning elsewhere.
pub fn check_least_privilege(settings: &Settings, runtime: &PgPool) -> anyhow::Result<()> {
    let findings = postgres_adapter::privileges::excess_privileges(runtime)
        .context("reading the runtime role's privileges")?;
    if findings.is_empty() {
        return Ok(());
    }
    let found = findings.join("; ");
    if settings.is_deployed() {
        anyhow::bail!(
            "the role of database.url must own nothing and write the evidence only through the owner's functions (docs/security.md, \"Least privilege\"): it {found}"
        );
    }
    tracing::warn!(
        findings = found,
        "the role of database.url has more privileges than the service needs (refused in staging and production)"
    );
    Ok(())
}

pub fn migrate(pool: &PgPool) -> anyhow::Result<Vec<String>> {
    postgres_adapter::run_migrations(pool).context("applying migrations")
}

/// Runs the backfills the migrations registered to their end, a short transaction per batch
/// (`postgres_adapter::backfills`).
pub fn backfill(pool: &PgPool) -> anyhow::Result<Vec<postgres_adapter::BackfillReport>> {
    postgres_adapter::run_pending_backfills(pool, postgres_adapter::backfills::DEFAULT_BATCH_SIZE)
        .context("running the backfills")
}

/// [`backfill`] on a thread of its own, so that `serve` and `worker` answer while a backfill
/// runs (every replica may run it: batches are taken in turn). A failure is logged and left to
/// the next start or `consent-api migrate`.
pub fn spawn_backfills(pool: PgPool) {
    let spawned = std::thread::Builder::new()
        .name("backfills".into())
        .spawn(move || {
            if let Err(e) = backfill(&pool) {
                tracing::error!(
                    error = format!("{e:#}"),
                    "backfill failed; it resumes at the next start"
                );
            }
        });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "could not start the backfill thread");
    }
}

pub fn services(
    settings: &Settings,
    context: &ProcessContext,
    pool: PgPool,
) -> anyhow::Result<Services> {
    Ok(Services::new(
        ports(settings, context, pool, None)?,
        &service_settings(settings),
    ))
}

/// The primary and the read replicas (`database.replica_urls`) of this process, with the thread
/// measuring the replicas' lag started: `serve` builds them once and shares them (clones).
pub fn read_pools(settings: &Settings, pool: &PgPool) -> anyhow::Result<ReadPools> {
    let reads = ReadPools::new(
        pool.clone(),
        &settings.replica_urls(),
        &PoolSettings {
            max_size: settings.pool_size(),
            checkout_timeout: settings.checkout_timeout(),
            session: settings.session(),
        },
        Duration::from_millis(settings.database.max_replica_lag_ms),
    )
    .context("database.replica_urls")?;
    reads.spawn_lag_probe(settings.database.url.expose(), settings.session());
    Ok(reads)
}

/// What the HTTP server runs on: the services, the idempotency keys, each request's blocking
/// work inside the database adapter's connection scope (one pooled connection per request).
/// The lists that tolerate lag are read on the replicas (`reads`, from [`read_pools`]).
pub fn api_state(
    settings: &Settings,
    context: &ProcessContext,
    pool: PgPool,
    reads: ReadPools,
    signers: Signers,
) -> anyhow::Result<ApiState> {
    let keys = Arc::new(PgIdempotencyRepository::new(pool.clone()));
    let services = Services::new(
        ports(settings, context, pool.clone(), Some(reads))?,
        &service_settings(settings),
    );
    let services = services.with_audit_log(audit_log(settings, pool, signers)?);
    Ok(ApiState::new(services, keys, Arc::new(SystemClock))
        .caching_use_case_lists(settings.cache.use_case_lists_bytes)
        .with_request_scope(Arc::new(OneConnection)))
}

/// The console's pages (mounted beside the API), their sessions and CPF searches kept in
/// PostgreSQL so that every replica serves a browser signed in (or a search made) on another; people sign in at their companies'
/// identity providers (`company oidc`) or with API keys.
pub fn console(settings: &Settings, pool: PgPool) -> anyhow::Result<Console> {
    Ok(Console::new(
        settings.console.sessions(&settings.environment),
        Arc::new(PgConsoleSessionStore::new(pool.clone())),
    )
    .with_search_store(Arc::new(PgConsoleSearchStore::new(pool.clone())))
    .with_oidc(OidcSetup {
        store: Arc::new(PgConsoleOidcStore::new(pool.clone())),
        cipher: Arc::new(cipher(settings)?),
        companies: Arc::new(PgCompanyRepository::new(pool)),
    })
    .with_witness_keys(
        settings
            .audit
            .witness_list()
            .unwrap_or_default()
            .into_iter()
            .map(|(_, key)| key.to_string())
            .collect(),
    ))
}

/// The company's identity provider for the console (`consent-api company oidc`, the owner's
/// connection): the client secret encrypted as webhook secrets are. `false`: no such company.
pub fn set_console_oidc(
    settings: &Settings,
    company: domain::CompanyId,
    issuer: &str,
    client_id: &str,
    client_secret: &str,
    roles_claim: &str,
) -> anyhow::Result<bool> {
    let cipher = cipher(settings)?;
    let store = PgConsoleOidcStore::new(pool(settings)?);
    let provider = ports::OidcProvider {
        issuer: issuer.to_owned(),
        client_id: client_id.to_owned(),
        client_secret: ports::SecretCipher::encrypt(&cipher, client_secret),
        roles_claim: roles_claim.to_owned(),
    };
    Ok(ports::ConsoleOidcStore::set_provider(
        &store,
        company,
        &provider,
        chrono::Utc::now(),
    )?)
}

/// A request's repository calls share one pooled connection ([`PgConnectionScope`]).
struct OneConnection;

impl RequestScope for OneConnection {
    fn run(&self, work: &mut dyn FnMut()) {
        PgConnectionScope.run(work)
    }
}

/// The name of the status calls' budget in `orcamento_pgcc`.
const STATUS_CALL_BUDGET: &str = "status";
/// The bucket of the imports' registrations (`importacao.pgcc_calls_per_second`): its own row,
/// so an import never spends the status checks' calls nor they its.
const IMPORT_CALL_BUDGET: &str = "importacao";

pub fn workers(
    settings: &Settings,
    context: &ProcessContext,
    pool: PgPool,
    signers: Signers,
) -> anyhow::Result<Workers> {
    let mut workers = Workers::new(
        ports(settings, context, pool.clone(), None)?,
        &service_settings(settings),
    );
    let status_pool = status_pool(settings, distributed(&pool))?;
    workers.poll_consent_statuses = workers
        .poll_consent_statuses
        .with_repositories(
            Arc::new(PgConsentRequestRepository::new(status_pool.clone())),
            Arc::new(PgStatusCheckSchedule::new(status_pool)),
        )
        .with_observer(context.metrics.clone())
        .with_integrity_incidents(
            Arc::new(PgAuditLogRepository::new(pool.clone())),
            chrono::Duration::seconds(
                settings
                    .workers
                    .reconcile_not_found_seconds
                    .min(i64::MAX as u64) as i64,
            ),
        );
    workers.sign_checkpoints = Some(
        SignCheckpoints::new(
            Arc::new(PgAuditLogRepository::new(pool.clone())),
            Arc::new(PgCompanyRepository::new(pool.clone())),
            signers.production,
            Arc::new(SystemClock),
        )
        .with_witnesses(context.witnesses.clone())
        .with_sandbox(
            signers.sandbox,
            Arc::new(PgSandboxRepository::new(pool.clone())),
        ),
    );
    // the console's CPF searches, kept in PostgreSQL (`console`): their expired rows go
    workers.purge_console_searches = Some(application::PurgeConsoleSearches::new(
        Arc::new(PgConsoleSearchStore::new(pool)),
        Arc::new(SystemClock),
    ));
    context.metrics.watch_witnesses(context.witnesses.health());
    Ok(workers)
}

/// An audit signer: the configured key (`auditoria.signing_key`) or, without one (development
/// and test only: deployed profiles refuse to start), the key this database keeps, generated by
/// the first process that needed it (docs/auditoria.md, "Keys"). A process builds one
/// ([`start_database`]) and shares it.
pub fn audit_signer(settings: &Settings, pool: PgPool) -> anyhow::Result<Arc<AuditSigner>> {
    let name = settings.audit.name.as_str();
    let configured = settings.audit.signing_key.expose().trim();
    let seed = if configured.is_empty() {
        let generated = AuditSigner::random_seed();
        let key = AuditSigner::from_seed(name, generated).published_key();
        PgAuditLogRepository::new(pool)
            .development_seed(generated, &key)
            .context("keeping the development audit signing key")?
    } else {
        AuditSigner::seed_from_base64(configured).context("auditoria.signing_key")?
    };
    Ok(Arc::new(AuditSigner::from_seed(name, seed)))
}

/// A sandbox signer, as [`audit_signer`]: the configured
/// `auditoria.signing_key_sandbox` or, without one (development and test only), a sandbox key of
/// its own this database keeps (docs/auditoria.md, "The sandbox's key").
pub fn sandbox_audit_signer(settings: &Settings, pool: PgPool) -> anyhow::Result<Arc<AuditSigner>> {
    let name = settings.audit.name.as_str();
    let configured = settings.audit.signing_key_sandbox.expose().trim();
    let seed = if configured.is_empty() {
        let generated = AuditSigner::random_seed();
        let key = AuditSigner::sandbox_from_seed(name, generated).published_key();
        PgAuditLogRepository::new(pool)
            .development_seed(generated, &key)
            .context("keeping the development sandbox signing key")?
    } else {
        AuditSigner::seed_from_base64(configured).context("auditoria.signing_key_sandbox")?
    };
    Ok(Arc::new(AuditSigner::sandbox_from_seed(name, seed)))
}

/// `auditoria.retired_public_keys` with their kids under `auditoria.name`.
fn retired_keys(settings: &Settings) -> Vec<PublishedKey> {
    let name = settings.audit.name.as_str();
    settings
        .audit
        .retired()
        .unwrap_or_default()
        .into_iter()
        .map(|public_key| PublishedKey {
            kid: application::audit::signer::kid_of(name, &public_key),
            public_key,
            // retired production keys: a retired sandbox key stays published as recorded
            sandbox: false,
        })
        .collect()
}

/// The audit routes' service.
fn audit_log(settings: &Settings, pool: PgPool, signers: Signers) -> anyhow::Result<AuditLog> {
    AuditLog::new(
        Arc::new(PgAuditLogRepository::new(pool.clone())),
        Arc::new(PgConsentRequestRepository::new(pool.clone())),
        signers.production,
        retired_keys(settings),
        Arc::new(SystemClock),
    )
    .and_then(|log| log.with_sandbox(signers.sandbox, Arc::new(PgSandboxRepository::new(pool))))
    .context("publishing the audit signing keys")
}

/// `audit verify`: the stored log checked against the configured and recorded keys.
pub fn verify_audit_log(settings: &Settings, pool: PgPool) -> anyhow::Result<VerifyAuditLog> {
    let mut keys = retired_keys(settings);
    let configured = settings.audit.signing_key.expose().trim();
    if !configured.is_empty() {
        let seed = AuditSigner::seed_from_base64(configured).context("auditoria.signing_key")?;
        keys.push(AuditSigner::from_seed(&settings.audit.name, seed).published_key());
    }
    let sandbox = settings.audit.signing_key_sandbox.expose().trim();
    if !sandbox.is_empty() {
        let seed =
            AuditSigner::seed_from_base64(sandbox).context("auditoria.signing_key_sandbox")?;
        keys.push(AuditSigner::sandbox_from_seed(&settings.audit.name, seed).published_key());
    }
    Ok(VerifyAuditLog::new(
        Arc::new(PgAuditLogRepository::new(pool.clone())),
        Arc::new(PgConsentRequestRepository::new(pool.clone())),
        keys,
    )
    .with_sandboxes(Arc::new(PgSandboxRepository::new(pool))))
}

/// Companies told of a change of the PGCC's health per statement.
const HEALTH_ANNOUNCE_BATCH: u32 = 1000;

/// The round that adds this process's PGCC calls to the shared tallies, assesses the window
/// (`pgcc_status.window_seconds`) and tells the companies of a change: every process that calls
/// the PGCC runs one (`serve` and `worker`), whatever `workers.run_in_serve`.
pub fn pgcc_health_job(
    settings: &Settings,
    context: &ProcessContext,
    pool: PgPool,
) -> PgccHealthJob {
    PgccHealthJob {
        notes: context.pgcc_call_notes.clone(),
        health: Arc::new(PgPgccHealthRepository::new(pool)),
        clock: Arc::new(SystemClock),
        window: chrono::TimeDelta::seconds(settings.pgcc_status.window_seconds as i64),
        announce_batch: HEALTH_ANNOUNCE_BATCH,
        threshold: domain::PgccOutageThreshold {
            min_failed_calls: u64::from(settings.pgcc_status.min_failed_calls),
            min_duration: chrono::TimeDelta::seconds(
                settings.pgcc_status.min_failure_seconds as i64,
            ),
        },
    }
}

/// Readiness probes (database and migrations, on a connection of their own: required; PGCC:
/// reported, TCP within 1 s, cached 5 s) and the gauges of `/metrics` (pool, backlogs). The
/// probes run on the watcher threads of `readiness_watch`, never in a request.
pub fn operations(settings: &Settings, pool: PgPool, reads: ReadPools) -> Operations {
    let probe_timeout = settings.checkout_timeout().min(Duration::from_secs(2));
    Operations::new(
        vec![
            Arc::new(PgReadinessProbe::new(
                settings.database.url.expose(),
                probe_timeout,
                settings.session(),
            )),
            Arc::new(PgccReachabilityProbe::new(
                &settings.pgcc.base_url,
                settings.pgcc_timeout().min(Duration::from_secs(1)),
                Duration::from_secs(5),
            )),
        ],
        Some(Arc::new(PgOperationalStats::new(pool).with_reads(reads))),
        Arc::new(SystemClock),
    )
}

fn service_settings(settings: &Settings) -> ServiceSettings {
    let w = &settings.webhooks;
    ServiceSettings {
        webhook_secret_overlap: chrono::Duration::seconds(w.secret_overlap_seconds as i64),
        // Validated at load time.
        webhook_retry_schedule: w.retry_schedule().unwrap_or_default(),
        webhook_disable_after: chrono::Duration::seconds(w.disable_after_seconds as i64),
        // Sized to one attempt: the sender pool claims only what it starts at once.
        webhook_lease: chrono::Duration::from_std(w.lease())
            .unwrap_or(chrono::Duration::minutes(2)),
        idempotency_retention: settings.idempotency.retention(),
        sandbox_retention: settings.sandbox.retention(),
        webhook_max_urls_per_company: w.max_urls_per_company,
        retention: settings.retention.periods(),
        cache: settings.cache.service(),
        sync_period: Duration::from_secs(settings.workers.sync_seconds.max(1)),
        status_checks: settings.workers.status_check_policy(),
        page_max_bytes: settings.server.page_max_bytes,
        records: settings.records.service(),
        import_limits: settings.import.limits(),
        import_lease: chrono::Duration::seconds(settings.import.lease_seconds as i64),
        evidence_limits: settings.evidence.limits(),
    }
}

/// Where the evidence files' bytes go: the S3-compatible bucket of `evidencias.s3_*`, or
/// PostgreSQL (docs/evidencias.md, "Storage"). Nothing is sent to the bucket here: a bucket down
/// at start fails the uploads and downloads (503), not the start.
fn evidence_store(
    settings: &Settings,
    in_postgres: Arc<PgEvidenceFiles>,
) -> anyhow::Result<Arc<dyn ports::EvidenceStore>> {
    let e = &settings.evidence;
    if !e.uses_s3() {
        return Ok(in_postgres);
    }
    let bucket = s3_adapter::S3Settings {
        endpoint: e.s3_endpoint.clone(),
        bucket: e.s3_bucket.clone(),
        region: e.s3_region.clone(),
        access_key_id: e.s3_access_key_id.clone(),
        secret_access_key: e
            .s3_secret_access_key
            .as_ref()
            .map(|s| s.expose().to_owned())
            .unwrap_or_default(),
    };
    let store = s3_adapter::S3EvidenceStore::new(&bucket)
        .context("configuration: evidencias.s3_* (APP__EVIDENCIAS__S3_*)")?;
    tracing::info!(
        bucket = %e.s3_bucket,
        endpoint = %e.s3_endpoint,
        "evidence files are kept in an S3-compatible bucket"
    );
    Ok(Arc::new(store))
}

fn cipher(settings: &Settings) -> anyhow::Result<AesGcmSecretCipher> {
    AesGcmSecretCipher::from_base64_key(settings.webhooks.encryption_key.expose())
        .context("configuration: webhooks.encryption_key (APP__WEBHOOKS__ENCRYPTION_KEY) must be base64 of 32 bytes")
}

/// Refuses to go on when `webhooks.encryption_key` does not decrypt the newest stored webhook
/// secret: started with the wrong key, the process would sign no webhook (and fail every
/// delivery) while looking healthy. One line naming the setting; never the key.
pub fn check_encryption_key(settings: &Settings, pool: PgPool) -> anyhow::Result<()> {
    let cipher = cipher(settings)?;
    match application::check_encryption_key(&PgWebhookDeliveryRepository::new(pool), &cipher) {
        Ok(()) => Ok(()),
        Err(application::KeyCheckError::Mismatch) => anyhow::bail!(
            "configuration: webhooks.encryption_key (APP__WEBHOOKS__ENCRYPTION_KEY) does not decrypt the webhook secrets stored in the database: it is not the key they were encrypted with"
        ),
        Err(application::KeyCheckError::Repo(e)) => {
            Err(anyhow::Error::new(e).context("checking webhooks.encryption_key against a stored webhook secret"))
        }
    }
}

/// `reads`: where the lag-tolerant lists are read (`serve`'s API); `None`: all on the primary
/// (the workers and the CLI list nothing a replica would spare the primary).
fn ports(
    settings: &Settings,
    context: &ProcessContext,
    pool: PgPool,
    reads: Option<ReadPools>,
) -> anyhow::Result<Ports> {
    let cipher = cipher(settings)?;
    let reads = reads.unwrap_or_else(|| ReadPools::primary_only(pool.clone()));
    // A use-case list cached in memory is dropped when a synchronization commits on the
    // primary; read again from a replica still behind, the old list would be cached as new
    // until the next change. With that cache on, its misses read the primary (docs/decisions.md).
    let use_case_reads = if settings.cache.enabled && settings.cache.use_case_lists_bytes > 0 {
        ReadPools::primary_only(pool.clone())
    } else {
        reads.clone()
    };
    let pgcc = PgccHttpGateway::new(GatewaySettings {
        base_url: settings.pgcc.base_url.clone(),
        token: settings.pgcc.token.as_ref().map(|t| t.expose().to_owned()),
        timeout: settings.pgcc_timeout(),
        max_retry_after_seconds: settings.pgcc.max_retry_after_seconds,
    });
    let sandboxes = Arc::new(PgSandboxRepository::new(pool.clone()));
    let evidence_files = Arc::new(PgEvidenceFiles::new(pool.clone()));
    let evidence_store = evidence_store(settings, evidence_files.clone())?;
    Ok(Ports {
        evidence_files,
        evidence_store,
        sandboxes: sandboxes.clone(),
        companies: Arc::new(PgCompanyRepository::new(pool.clone())),
        api_keys: Arc::new(PgApiKeyRepository::new(pool.clone())),
        use_cases: Arc::new(PgUseCaseRepository::new(pool.clone()).reading_from(use_case_reads)),
        consent_requests: Arc::new(
            PgConsentRequestRepository::new(pool.clone()).reading_from(reads.clone()),
        ),
        status_checks: Arc::new(PgStatusCheckSchedule::new(pool.clone())),
        status_call_budget: Arc::new(PgPgccCallBudget::new(
            pool.clone(),
            STATUS_CALL_BUDGET,
            settings.workers.pgcc_status_calls_per_second,
        )),
        import_call_budget: Arc::new(PgPgccCallBudget::new(
            pool.clone(),
            IMPORT_CALL_BUDGET,
            settings.import.pgcc_calls_per_second,
        )),
        imports: Arc::new(PgImportRepository::new(pool.clone())),
        idempotency_keys: Arc::new(PgIdempotencyRepository::new(pool.clone())),
        retention: Arc::new(PgRetentionRepository::new(pool.clone())),
        access_log: Arc::new(PgAccessLog::new(pool.clone())),
        webhook_urls: Arc::new(PgWebhookUrlRepository::new(pool.clone())),
        events: Arc::new(PgEventLog::new(pool.clone()).reading_from(reads)),
        pgcc_health: Arc::new(PgPgccHealthRepository::new(pool.clone())),
        webhook_deliveries: Arc::new(PgWebhookDeliveryRepository::new(pool)),
        // A request waiting on a receiver (testar) or a name server gives its database
        // connection back first, as for the PGCC; the background sender has none to give.
        webhook_sender: Arc::new(ReleasingWebhookSender::new(Arc::new(
            UreqWebhookSender::new(SenderSettings {
                timeout: settings.webhooks.timeout(),
                user_agent: format!("consent-api-webhooks/{}", env!("CARGO_PKG_VERSION")),
            }),
        ))),
        target_guard: Arc::new(ReleasingTargetGuard::new(Arc::new(PolicyTargetGuard::new(
            GuardSettings {
                require_https: settings.webhooks.require_https,
                allow_non_public: settings.webhooks.allow_non_public_targets,
                registration_dns_timeout: settings.webhooks.dns_timeout(),
                // Before a delivery the lookup is part of the attempt: bounded by its timeout.
                delivery_dns_timeout: settings.webhooks.timeout(),
                dns_in_flight_per_company: settings.webhooks.dns_in_flight_per_company as usize,
            },
        )))),
        secret_cipher: Arc::new(cipher),
        // Every PGCC call counted and timed (operation, outcome) without touching business
        // code, and made with the request's database connection back in the pool (a slow PGCC
        // must not hold the pool; outside a request it only forwards).
        // ... and noted by operation and outcome for the PGCC's health (`GET /api/status`).
        // A sandbox company's calls go to the PGCC simulated in process instead, past all of
        // that: they are not the PGCC's calls (docs/decisions.md, "The sandbox").
        pgcc: Arc::new(SandboxRoutedPgcc::new(
            Arc::new(ReleasingPgcc::new(Arc::new(ObservedPgcc::new(
                Arc::new(HealthTrackedPgcc::new(
                    Arc::new(pgcc),
                    context.pgcc_call_notes.clone(),
                )),
                context.metrics.clone(),
            )))),
            Arc::new(SandboxPgcc::new()),
            sandboxes,
        )),
        clock: Arc::new(SystemClock),
    })
}
