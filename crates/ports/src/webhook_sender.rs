use std::time::Duration;

/// What a POST to a receiver gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendReport {
    /// The receiver's status, if it answered.
    pub status: Option<u16>,
    /// Its `Retry-After`, in seconds form, if it sent one.
    pub retry_after: Option<Duration>,
    pub latency: Duration,
    /// Why no answer came (connect refused, timeout, TLS...), in a few words.
    pub error: Option<String>,
}

/// POSTs signed webhook bodies. Follows no redirects, ignores proxy variables, bounded by
/// connect/read timeouts.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait WebhookSender: Send + Sync {
    fn send(&self, url: &str, headers: &[(String, String)], body: &str) -> SendReport;
}
