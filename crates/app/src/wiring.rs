//! Builds the adapters from the settings and hands them to the application services.

use std::sync::Arc;

use anyhow::Context;
use application::{Ports, Services, Workers};
use pgcc_adapter::{PgccHttpGateway, PgccSettings as GatewaySettings};
use ports::SystemClock;
use postgres_adapter::{
    PgApiKeyRepository, PgCompanyRepository, PgConsentRequestRepository, PgPool,
    PgUseCaseRepository, PgWebhookUrlRepository, PoolSettings,
};

use crate::settings::Settings;

pub fn pool(settings: &Settings) -> anyhow::Result<PgPool> {
    postgres_adapter::connect(
        settings.database.url.expose(),
        &PoolSettings {
            max_size: settings.database.pool_size,
            checkout_timeout: settings.checkout_timeout(),
        },
    )
    .context("database")
}

pub fn migrate(pool: &PgPool) -> anyhow::Result<Vec<String>> {
    postgres_adapter::run_migrations(pool).context("applying migrations")
}

pub fn services(settings: &Settings, pool: PgPool) -> Services {
    Services::new(ports(settings, pool))
}

pub fn workers(settings: &Settings, pool: PgPool) -> Workers {
    Workers::new(ports(settings, pool))
}

fn ports(settings: &Settings, pool: PgPool) -> Ports {
    let pgcc = PgccHttpGateway::new(GatewaySettings {
        base_url: settings.pgcc.base_url.clone(),
        token: settings.pgcc.token.as_ref().map(|t| t.expose().to_owned()),
        timeout: settings.pgcc_timeout(),
    });
    Ports {
        companies: Arc::new(PgCompanyRepository::new(pool.clone())),
        api_keys: Arc::new(PgApiKeyRepository::new(pool.clone())),
        use_cases: Arc::new(PgUseCaseRepository::new(pool.clone())),
        consent_requests: Arc::new(PgConsentRequestRepository::new(pool.clone())),
        webhook_urls: Arc::new(PgWebhookUrlRepository::new(pool)),
        pgcc: Arc::new(pgcc),
        clock: Arc::new(SystemClock),
    }
}
