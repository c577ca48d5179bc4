//! Tunables of the services, with the documented defaults; the binary overrides them from its
//! configuration.

use std::time::Duration;

/// What the services and workers let configuration decide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceSettings {
    /// How long a rotated-out webhook secret keeps signing alongside the new one.
    pub webhook_secret_overlap: chrono::Duration,
    /// The delay before each attempt of a delivery: entry `n` is the wait before attempt `n + 1`
    /// (entry 0, the first attempt, is normally 0). After the last entry's attempt fails, the
    /// delivery has failed.
    pub webhook_retry_schedule: Vec<Duration>,
    /// A URL whose deliveries all failed over this window is disabled.
    pub webhook_disable_after: chrono::Duration,
    /// Webhook URLs a company may have not removed (disabled ones included).
    pub webhook_max_urls_per_company: u32,
    /// How long the retention purge keeps final deliveries, events and cancelled creations'
    /// personal data.
    pub retention: crate::RetentionPeriods,
    /// How long a claimed delivery is held by its sender before another may claim it.
    pub webhook_lease: chrono::Duration,
    /// How long idempotency keys (and their kept answers) are kept before the purge.
    pub idempotency_retention: chrono::Duration,
    /// How long a sandbox company's data is kept before the sandbox purge
    /// (`sandbox.retention_days`).
    pub sandbox_retention: chrono::Duration,
    /// The in-process caches of the services (resolved API keys, use-case templates); the
    /// HTTP layer's rendered lists are sized by the binary.
    pub cache: CacheSettings,
    /// How often the scheduled use-case sync runs (each company is synchronized about once per
    /// period, across every process).
    pub sync_period: Duration,
    /// When the status worker checks each open request with the PGCC.
    pub status_checks: crate::StatusCheckPolicy,
    /// A paged answer's items stop at about this many bytes (`server.page_max_bytes`).
    pub page_max_bytes: usize,
    /// What the consent records state of storage, jurisdiction and withdrawal (`registro`).
    pub records: crate::RecordSettings,
    /// The bounds of an imported file (`importacao.max_bytes`, `importacao.max_linhas`).
    pub import_limits: crate::ImportLimits,
    /// How long an imported line claimed for registration is held before another worker may
    /// claim it (longer than one creation with the PGCC takes).
    pub import_lease: chrono::Duration,
    /// The bounds of an evidence file's upload (`evidencias.*`).
    pub evidence_limits: crate::EvidenceLimits,
}

/// Sizes of the in-process caches and how long they outlive a silent change feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheSettings {
    /// Off: every request reads the database.
    pub enabled: bool,
    /// Resolved API keys kept (0 = none).
    pub api_keys: u64,
    /// Caches are bypassed when the change feed has not confirmed its connection for this
    /// long: the bound on how long a revoked key can still be accepted.
    pub max_silence: Duration,
    /// Hashes of keys the database did not know, kept to refuse a repeated made-up key from
    /// memory (0 = none).
    pub unknown_api_keys: u64,
    /// How long such a hash is believed (issuing any key forgets them all at once).
    pub unknown_api_key_ttl: Duration,
    /// A resolved API key is read from the database again after this long, whatever the
    /// change feed says: a bound that holds even if the feed were wrong.
    pub api_key_ttl: Duration,
}

impl Default for CacheSettings {
    /// On; 100,000 keys; 1 s; 100,000 unknown keys for
    /// 10 s; keys read again after 60 s.
    fn default() -> Self {
        Self {
            enabled: true,
            api_keys: 100_000,
            max_silence: Duration::from_secs(1),
            unknown_api_keys: 100_000,
            unknown_api_key_ttl: Duration::from_secs(10),
            api_key_ttl: Duration::from_secs(60),
        }
    }
}

impl Default for ServiceSettings {
    /// Overlap 24 h; schedule 0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; disable after 5 days;
    /// 10 URLs per company; deliveries and events kept 30 days, cancelled creations' personal
    /// data 7 days; lease 2 min; idempotency keys kept 24 h; sandbox data 7
    /// days.
    fn default() -> Self {
        Self {
            webhook_secret_overlap: chrono::Duration::hours(24),
            webhook_retry_schedule: [0, 5, 300, 1_800, 7_200, 18_000, 36_000, 36_000]
                .into_iter()
                .map(Duration::from_secs)
                .collect(),
            webhook_disable_after: chrono::Duration::days(5),
            webhook_max_urls_per_company: 10,
            retention: crate::RetentionPeriods {
                webhook: chrono::Duration::days(30),
                cancelled: chrono::Duration::days(7),
                access_log: chrono::Duration::days(365),
                evidence: chrono::Duration::days(crate::retention::DEFAULT_EVIDENCE_DAYS),
            },
            webhook_lease: chrono::Duration::minutes(2),
            idempotency_retention: chrono::Duration::hours(24),
            sandbox_retention: chrono::Duration::days(7),
            cache: CacheSettings::default(),
            sync_period: Duration::from_secs(3600),
            status_checks: crate::StatusCheckPolicy::default(),
            page_max_bytes: crate::consent_requests::page_bytes::DEFAULT_PAGE_MAX_BYTES,
            records: crate::RecordSettings::default(),
            import_limits: crate::ImportLimits::default(),
            import_lease: chrono::Duration::minutes(2),
            evidence_limits: crate::EvidenceLimits::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_documented_ones() {
        let settings = ServiceSettings::default();

        assert_eq!(settings.webhook_secret_overlap, chrono::Duration::hours(24));
        assert_eq!(
            settings.webhook_retry_schedule,
            [
                Duration::ZERO,
                Duration::from_secs(5),
                Duration::from_secs(5 * 60),
                Duration::from_secs(30 * 60),
                Duration::from_secs(2 * 3600),
                Duration::from_secs(5 * 3600),
                Duration::from_secs(10 * 3600),
                Duration::from_secs(10 * 3600),
            ]
        );
        assert_eq!(settings.webhook_disable_after, chrono::Duration::days(5));
        assert_eq!(settings.webhook_lease, chrono::Duration::minutes(2));
        assert_eq!(settings.webhook_max_urls_per_company, 10);
        assert_eq!(settings.retention.webhook, chrono::Duration::days(30));
        assert_eq!(settings.retention.cancelled, chrono::Duration::days(7));
        assert_eq!(settings.idempotency_retention, chrono::Duration::hours(24));
    }
}
