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
}

impl std::fmt::Debug for PgccSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgccSettings")
            .field("base_url", &self.base_url)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
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
        };
        let shown = format!("{settings:?}");
        assert!(!shown.contains("super-secret"), "{shown}");
        assert!(shown.contains("<redacted>"));
        assert!(shown.contains("http://pgcc"));
    }
}
