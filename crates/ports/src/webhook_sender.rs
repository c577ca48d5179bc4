use std::time::Duration;

use crate::CheckedTarget;

/// The W3C Trace Context header a delivery may carry (a delivery's `traceparent`): the sender
/// continues the trace it names and sends its own attempt's in its place.
pub const TRACEPARENT_HEADER: &str = "traceparent";

/// Why no answer came, by class: what the delivery log may say (never a host, an address or
/// an error's own text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendFailure {
    Timeout,
    Dns,
    ConnectionRefused,
    /// The receiver closed or reset the connection.
    ConnectionClosed,
    Tls,
    /// The answer was not valid HTTP.
    InvalidResponse,
    /// Any other failure to connect or send.
    Connection,
}

/// What a POST to a receiver gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendReport {
    /// The receiver's status, if it answered.
    pub status: Option<u16>,
    /// Its `Retry-After`, in seconds form, if it sent one.
    pub retry_after: Option<Duration>,
    pub latency: Duration,
    /// Why no answer came; `None` when `status` is set.
    pub error: Option<SendFailure>,
    /// The start of the answer's body: at most [`crate::RESPONSE_BODY_READ_BYTES`] bytes read,
    /// invalid UTF-8 and NUL replaced, cut at [`crate::RESPONSE_BODY_KEPT`] characters; `None`
    /// without an answer or with an empty body. The receiver's text: never logged.
    pub body: Option<String>,
}

/// POSTs signed webhook bodies. Connects only to the addresses of `target` (those the
/// [`TargetGuard`](crate::TargetGuard) accepted), follows no redirects, ignores proxy
/// variables, bounded by connect/read timeouts.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait WebhookSender: Send + Sync {
    fn send(
        &self,
        url: &str,
        target: &CheckedTarget,
        headers: &[(String, String)],
        body: &str,
    ) -> SendReport;
}
