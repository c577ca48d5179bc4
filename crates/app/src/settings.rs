//! Typed settings: `config/default.toml` (also compiled in, so the binary runs from any folder),
//! then `config/<APP_ENV>.toml`, then `APP__SECTION__KEY` environment variables.

use std::path::PathBuf;
use std::time::Duration;

use config::{Config, Environment, File, FileFormat};
use serde::Deserialize;

use crate::secret::Secret;

const DEFAULTS: &str = include_str!("../../../config/default.toml");
pub const ENVIRONMENTS: [&str; 4] = ["development", "test", "staging", "production"];

#[derive(Debug, Clone, Deserialize)]
pub struct Settings {
    pub server: ServerSettings,
    pub database: DatabaseSettings,
    pub pgcc: PgccSettings,
    pub workers: WorkerSettings,
    pub log: LogSettings,
}

#[derive(Debug, Clone, Deserialize)]
pub struct WorkerSettings {
    pub status_poll_seconds: u64,
    pub expiry_seconds: u64,
    pub sync_seconds: u64,
    pub batch_size: u32,
    pub run_in_serve: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ServerSettings {
    pub host: String,
    pub port: u16,
    pub body_limit_bytes: usize,
    pub workers: usize,
}

#[derive(Debug, Clone, Deserialize)]
pub struct DatabaseSettings {
    pub url: Secret,
    pub pool_size: u32,
    pub checkout_timeout_ms: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PgccSettings {
    pub base_url: String,
    pub timeout_ms: u64,
    pub token: Option<Secret>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct LogSettings {
    pub level: String,
}

/// A configuration problem, reported as one line naming the key.
#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct SettingsError(String);

impl Settings {
    /// Loads the settings of `APP_ENV` (default `development`) from `APP_CONFIG_DIR`
    /// (default `config`).
    pub fn load() -> Result<Settings, SettingsError> {
        let env = std::env::var("APP_ENV").unwrap_or_else(|_| "development".to_owned());
        if !ENVIRONMENTS.contains(&env.as_str()) {
            return Err(SettingsError(format!(
                "APP_ENV: unknown environment `{env}` (expected one of {})",
                ENVIRONMENTS.join(", ")
            )));
        }
        let dir =
            PathBuf::from(std::env::var("APP_CONFIG_DIR").unwrap_or_else(|_| "config".to_owned()));
        let settings: Settings = Config::builder()
            .add_source(File::from_str(DEFAULTS, FileFormat::Toml))
            .add_source(File::from(dir.join("default.toml")).required(false))
            .add_source(File::from(dir.join(format!("{env}.toml"))).required(false))
            .add_source(
                Environment::with_prefix("APP")
                    .prefix_separator("__")
                    .separator("__")
                    .try_parsing(true),
            )
            .build()
            .and_then(Config::try_deserialize)
            .map_err(|e| SettingsError(e.to_string()))?;
        settings.validate()?;
        Ok(settings)
    }

    fn validate(&self) -> Result<(), SettingsError> {
        let bad =
            |key: &str, why: &str| Err(SettingsError(format!("{key} ({}) {why}", env_name(key))));
        let db = self.database.url.expose();
        if !(db.starts_with("postgres://") || db.starts_with("postgresql://")) {
            return bad("database.url", "must be a postgres:// URL");
        }
        if self.database.pool_size == 0 {
            return bad("database.pool_size", "must be at least 1");
        }
        if self.database.checkout_timeout_ms == 0 {
            return bad("database.checkout_timeout_ms", "must be above 0");
        }
        if !(self.pgcc.base_url.starts_with("http://")
            || self.pgcc.base_url.starts_with("https://"))
        {
            return bad("pgcc.base_url", "must be an http:// or https:// URL");
        }
        if self.pgcc.timeout_ms == 0 {
            return bad("pgcc.timeout_ms", "must be above 0");
        }
        if !(1..=500).contains(&self.workers.batch_size) {
            return bad("workers.batch_size", "must be between 1 and 500");
        }
        if self.server.body_limit_bytes == 0 {
            return bad("server.body_limit_bytes", "must be above 0");
        }
        Ok(())
    }

    pub fn pgcc_timeout(&self) -> Duration {
        Duration::from_millis(self.pgcc.timeout_ms)
    }

    pub fn checkout_timeout(&self) -> Duration {
        Duration::from_millis(self.database.checkout_timeout_ms)
    }
}

/// `database.url` -> `APP__DATABASE__URL`.
fn env_name(key: &str) -> String {
    format!("APP__{}", key.replace('.', "__").to_uppercase())
}
