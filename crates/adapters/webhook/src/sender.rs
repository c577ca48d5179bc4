//! [`UreqWebhookSender`]: POSTs a signed webhook body to a receiver and reports what happened.

use std::cell::RefCell;
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime};

use ports::{CheckedTarget, SendFailure, SendReport, WebhookSender, TRACEPARENT_HEADER};
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};
use ureq::Agent;

use crate::answer_body;
use crate::retry_after::parse_retry_after;

/// At most this much of a receiver's answer body is read after the start that is kept (and
/// thrown away), so that a short answer leaves the connection reusable.
const MAX_ANSWER_BODY: u64 = 64 * 1024;

/// How the sender calls receivers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderSettings {
    /// Connect timeout, and the budget of a whole delivery (resolve, connect, TLS, send,
    /// receive the answer and read its body).
    pub timeout: Duration,
    /// The `User-Agent` sent with every delivery (empty: none).
    pub user_agent: String,
}

/// Webhook deliveries over HTTP(S) with ureq 3. One agent (and its connection pool) for the
/// life of the sender; cheap to share behind an `Arc`.
///
/// The agent follows no redirect (a 3xx is reported as the non-2xx answer it is), takes no
/// proxy from the environment, and hands every status back instead of turning 4xx/5xx into
/// errors. The target is not checked here: the caller runs the
/// [`TargetGuard`](ports::TargetGuard) before every delivery, and the agent's resolver answers
/// only the addresses the guard accepted (`PinnedResolver`): it never looks a name up again.
#[derive(Debug)]
pub struct UreqWebhookSender {
    agent: Agent,
}

impl UreqWebhookSender {
    pub fn new(settings: SenderSettings) -> Self {
        let config = Agent::config_builder()
            .timeout_connect(Some(settings.timeout))
            .timeout_global(Some(settings.timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            .user_agent(settings.user_agent)
            .build();
        Self {
            agent: Agent::with_parts(config, DefaultConnector::new(), PinnedResolver),
        }
    }
}

thread_local! {
    /// The addresses the send running on this thread may dial: ureq resolves on the calling
    /// thread, so one agent serves every sender thread, each pinned to its own target.
    static PINNED: RefCell<Vec<SocketAddr>> = const { RefCell::new(Vec::new()) };
}

/// ureq's resolver for the sender: the addresses [`UreqWebhookSender::send`] was given (those
/// the guard resolved and accepted), never a new lookup, so the connection goes where the
/// check said it may (no DNS rebinding between check and connect). No address: no connection.
#[derive(Debug)]
struct PinnedResolver;

impl Resolver for PinnedResolver {
    fn resolve(
        &self,
        _uri: &Uri,
        _config: &Config,
        _timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let mut resolved = self.empty();
        PINNED.with(|pinned| {
            for address in pinned.borrow().iter() {
                // ureq keeps at most 16 addresses; the rest are never dialled.
                if resolved.try_push(*address).is_err() {
                    break;
                }
            }
        });
        if resolved.is_empty() {
            return Err(ureq::Error::HostNotFound);
        }
        Ok(resolved)
    }
}

/// Sets this thread's pinned addresses for as long as it lives.
struct Pinned;

impl Pinned {
    fn to(target: &CheckedTarget) -> Pinned {
        PINNED.with(|pinned| *pinned.borrow_mut() = target.addresses.clone());
        Pinned
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        PINNED.with(|pinned| pinned.borrow_mut().clear());
    }
}

impl WebhookSender for UreqWebhookSender {
    /// The report keeps the start of the answer body (`answer_body::read_start`: a bounded
    /// read), never logged. A status, once received, is the outcome: a failure while reading
    /// the answer body afterwards does not turn it into an error.
    fn send(
        &self,
        url: &str,
        target: &CheckedTarget,
        headers: &[(String, String)],
        body: &str,
    ) -> SendReport {
        let _pinned = Pinned::to(target);
        let started = Instant::now();
        let mut request = self.agent.post(url);
        // Telemetry on: the attempt's own span (the caller's, a child of the change's trace)
        // is what the receiver continues, in place of the trace context it was given.
        let own_traceparent = telemetry::current_traceparent();
        for (name, value) in headers {
            if own_traceparent.is_some() && name.eq_ignore_ascii_case(TRACEPARENT_HEADER) {
                continue;
            }
            request = request.header(name.as_str(), value.as_str());
        }
        if let Some(traceparent) = own_traceparent {
            request = request.header(TRACEPARENT_HEADER, traceparent);
        }
        match request.send(body) {
            Ok(mut response) => {
                let status = response.status().as_u16();
                telemetry::set_attribute(
                    &tracing::Span::current(),
                    "http.response.status_code",
                    i64::from(status),
                );
                let retry_after = response
                    .headers()
                    .get(ureq::http::header::RETRY_AFTER)
                    .and_then(|value| value.to_str().ok())
                    .and_then(|value| parse_retry_after(value, SystemTime::now()));
                let mut answer = response.body_mut().as_reader();
                let body = answer_body::read_start(&mut answer);
                answer_body::drain(&mut answer, MAX_ANSWER_BODY);
                SendReport {
                    status: Some(status),
                    retry_after,
                    latency: started.elapsed(),
                    error: None,
                    body,
                }
            }
            Err(error) => {
                let latency = started.elapsed();
                tracing::debug!(%error, "webhook delivery got no answer");
                SendReport {
                    status: None,
                    retry_after: None,
                    latency,
                    error: Some(classify(&error, url)),
                    body: None,
                }
            }
        }
    }
}

/// The class of a transport failure (what the delivery log may say of it).
fn classify(error: &ureq::Error, url: &str) -> SendFailure {
    match error {
        ureq::Error::Timeout(_) => SendFailure::Timeout,
        ureq::Error::HostNotFound => SendFailure::Dns,
        ureq::Error::Tls(_) | ureq::Error::TlsRequired | ureq::Error::Rustls(_) => SendFailure::Tls,
        ureq::Error::Io(io) => match io.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => SendFailure::Timeout,
            io::ErrorKind::ConnectionRefused => SendFailure::ConnectionRefused,
            io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof => SendFailure::ConnectionClosed,
            // rustls reports handshake and record failures as InvalidData through its stream.
            io::ErrorKind::InvalidData if is_https(url) => SendFailure::Tls,
            _ => SendFailure::Connection,
        },
        ureq::Error::Protocol(_) | ureq::Error::LargeResponseHeader(..) => {
            SendFailure::InvalidResponse
        }
        _ => SendFailure::Connection,
    }
}

fn is_https(url: &str) -> bool {
    url.trim_start()
        .get(..8)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
}
