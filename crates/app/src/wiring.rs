//! Builds the adapters from the settings and hands them to the application services.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::Context;
use application::{ObservedPgcc, Operations, Ports, ServiceSettings, Services, Workers};
use delivery_http::metrics::Metrics;
use pgcc_adapter::{PgccHttpGateway, PgccReachabilityProbe, PgccSettings as GatewaySettings};
use ports::SystemClock;
use postgres_adapter::{
    PgApiKeyRepository, PgCompanyRepository, PgConnectionScope, PgConsentRequestRepository,
    PgEventLog, PgIdempotencyRepository, PgOperationalStats, PgPool, PgReadinessProbe,
    PgRetentionRepository, PgUseCaseRepository, PgWebhookDeliveryRepository,
    PgWebhookUrlRepository, PoolSettings,
};
use webhook_adapter::{
    AesGcmSecretCipher, GuardSettings, PolicyTargetGuard, SenderSettings, UreqWebhookSender,
};

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

pub fn migrate(pool: &PgPool) -> anyhow::Result<Vec<String>> {
    postgres_adapter::run_migrations(pool).context("applying migrations")
}

pub fn services(settings: &Settings, pool: PgPool) -> anyhow::Result<Services> {
    Ok(Services::new(
        ports(settings, pool)?,
        &service_settings(settings),
    ))
}

pub fn workers(settings: &Settings, pool: PgPool) -> anyhow::Result<Workers> {
    Ok(Workers::new(
        ports(settings, pool)?,
        &service_settings(settings),
    ))
}

/// The process's metrics: one registry for the HTTP server, the PGCC decorator and the jobs.
pub fn metrics() -> Arc<Metrics> {
    static METRICS: OnceLock<Arc<Metrics>> = OnceLock::new();
    METRICS.get_or_init(|| Arc::new(Metrics::new())).clone()
}

/// Readiness probes (database and migrations, on a connection of their own: required; PGCC:
/// reported, TCP within 1 s, cached 5 s) and the gauges of `/metrics` (pool, backlogs). The
/// probes run on the watcher threads of `readiness_watch`, never in a request.
pub fn operations(settings: &Settings, pool: PgPool) -> Operations {
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
        Some(Arc::new(PgOperationalStats::new(pool))),
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
        webhook_max_urls_per_company: w.max_urls_per_company,
        retention: settings.retention.periods(),
        cache: settings.cache.service(),
        sync_period: Duration::from_secs(settings.workers.sync_seconds.max(1)),
    }
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

fn ports(settings: &Settings, pool: PgPool) -> anyhow::Result<Ports> {
    let cipher = cipher(settings)?;
    let pgcc = PgccHttpGateway::new(GatewaySettings {
        base_url: settings.pgcc.base_url.clone(),
        token: settings.pgcc.token.as_ref().map(|t| t.expose().to_owned()),
        timeout: settings.pgcc_timeout(),
    });
    Ok(Ports {
        companies: Arc::new(PgCompanyRepository::new(pool.clone())),
        api_keys: Arc::new(PgApiKeyRepository::new(pool.clone())),
        use_cases: Arc::new(PgUseCaseRepository::new(pool.clone())),
        consent_requests: Arc::new(PgConsentRequestRepository::new(pool.clone())),
        idempotency_keys: Arc::new(PgIdempotencyRepository::new(pool.clone())),
        retention: Arc::new(PgRetentionRepository::new(pool.clone())),
        webhook_urls: Arc::new(PgWebhookUrlRepository::new(pool.clone())),
        events: Arc::new(PgEventLog::new(pool.clone())),
        webhook_deliveries: Arc::new(PgWebhookDeliveryRepository::new(pool)),
        webhook_sender: Arc::new(UreqWebhookSender::new(SenderSettings {
            timeout: settings.webhooks.timeout(),
            user_agent: format!("consent-api-webhooks/{}", env!("CARGO_PKG_VERSION")),
        })),
        target_guard: Arc::new(PolicyTargetGuard::new(GuardSettings {
            require_https: settings.webhooks.require_https,
            allow_non_public: settings.webhooks.allow_non_public_targets,
            registration_dns_timeout: settings.webhooks.dns_timeout(),
            // Before a delivery the lookup is part of the attempt: bounded by its timeout.
            delivery_dns_timeout: settings.webhooks.timeout(),
        })),
        secret_cipher: Arc::new(cipher),
        // Every PGCC call counted and timed (operation, outcome) without touching business code.
        pgcc: Arc::new(ObservedPgcc::new(Arc::new(pgcc), metrics())),
        clock: Arc::new(SystemClock),
        connection_scope: Arc::new(PgConnectionScope),
    })
}
