//! [`UreqWebhookSender`]: POSTs a signed webhook body to a receiver and reports what happened.

use std::io::{self, Read};
use std::time::{Duration, Instant, SystemTime};

use ports::{SendReport, WebhookSender};
use ureq::Agent;

use crate::retry_after::parse_retry_after;

/// At most this much of a receiver's answer body is read (and thrown away).
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
/// [`TargetGuard`](ports::TargetGuard) before every delivery.
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
            agent: config.into(),
        }
    }
}

impl WebhookSender for UreqWebhookSender {
    /// Never includes the answer body in the report. A status, once received, is the outcome:
    /// a failure while draining the answer body afterwards does not turn it into an error.
    fn send(&self, url: &str, headers: &[(String, String)], body: &str) -> SendReport {
        let started = Instant::now();
        let mut request = self.agent.post(url);
        for (name, value) in headers {
            request = request.header(name.as_str(), value.as_str());
        }
        match request.send(body) {
            Ok(mut response) => {
                let status = response.status().as_u16();
                let retry_after = response
                    .headers()
                    .get(ureq::http::header::RETRY_AFTER)
                    .and_then(|value| value.to_str().ok())
                    .and_then(|value| parse_retry_after(value, SystemTime::now()));
                let mut answer = response.body_mut().as_reader().take(MAX_ANSWER_BODY);
                if let Err(error) = io::copy(&mut answer, &mut io::sink()) {
                    tracing::debug!(status, %error, "webhook answer body not fully read");
                }
                SendReport {
                    status: Some(status),
                    retry_after,
                    latency: started.elapsed(),
                    error: None,
                }
            }
            Err(error) => {
                let latency = started.elapsed();
                tracing::debug!(%error, "webhook delivery got no answer");
                SendReport {
                    status: None,
                    retry_after: None,
                    latency,
                    error: Some(describe(&error, url).to_owned()),
                }
            }
        }
    }
}

/// A transport failure in a few words, for the delivery log.
fn describe(error: &ureq::Error, url: &str) -> &'static str {
    const TIMEOUT: &str = "timeout";
    const REFUSED: &str = "conexão recusada";
    const DNS: &str = "falha de DNS";
    const TLS: &str = "falha de TLS";
    match error {
        ureq::Error::Timeout(_) => TIMEOUT,
        ureq::Error::HostNotFound => DNS,
        ureq::Error::Tls(_) | ureq::Error::TlsRequired | ureq::Error::Rustls(_) => TLS,
        ureq::Error::Io(io) => match io.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => TIMEOUT,
            io::ErrorKind::ConnectionRefused => REFUSED,
            io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof => "conexão encerrada pelo receptor",
            io::ErrorKind::HostUnreachable | io::ErrorKind::NetworkUnreachable => {
                "host inacessível"
            }
            // std reports getaddrinfo failures with an uncategorized kind and this message.
            _ if io.to_string().starts_with("failed to lookup address") => DNS,
            // rustls reports handshake and record failures as InvalidData through its stream.
            io::ErrorKind::InvalidData if is_https(url) => TLS,
            _ => "falha de conexão",
        },
        ureq::Error::Protocol(_) | ureq::Error::LargeResponseHeader(..) => "resposta HTTP inválida",
        ureq::Error::BadUri(_) | ureq::Error::Http(_) => "requisição inválida",
        _ => "falha de conexão",
    }
}

fn is_https(url: &str) -> bool {
    url.trim_start()
        .get(..8)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
}
