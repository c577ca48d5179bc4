use std::time::Duration;

/// Where and how to reach the PGCC.
#[derive(Clone)]
pub struct PgccSettings {
    /// Up to the host (and an optional path prefix), without `/pgcc/v1`: `http://127.0.0.1:9000`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer <token>` when present. Secret: hidden from `Debug`.
    pub token: Option<String>,
    /// Connect timeout, and the budget of a whole call (connect, send, receive headers and body).
    pub timeout: Duration,
    /// The longest `Retry-After` of the PGCC (its 408, 425, 429) passed on, in seconds
    /// (`pgcc.max_retry_after_seconds`). Bounded here, where the header is read, so every user
    /// of [`ports::PgccError::TryLater`] (the answers to the companies among them) gets the
    /// bounded value: a PGCC asking one company for a day would otherwise pause every tenant's
    /// clients for a day.
    pub max_retry_after_seconds: u64,
}

/// `pgcc.max_retry_after_seconds`'s default (config/default.toml says the same).
pub const DEFAULT_MAX_RETRY_AFTER_SECONDS: u64 = 60;

impl std::fmt::Debug for PgccSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgccSettings")
            .field("base_url", &self.base_url)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("max_retry_after_seconds", &self.max_retry_after_seconds)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_token() {
        let settings = PgccSettings {
            base_url: "http://pgcc".into(),
            token: Some("super-secret".into()),
            timeout: Duration::from_secs(5),
            max_retry_after_seconds: DEFAULT_MAX_RETRY_AFTER_SECONDS,
        };
        let shown = format!("{settings:?}");
        assert!(!shown.contains("super-secret"), "{shown}");
        assert!(shown.contains("<redacted>"));
        assert!(shown.contains("http://pgcc"));
    }
}
