//! Logs, and with `telemetry.otlp_endpoint` set, traces: the spans of the process go to an
//! OpenTelemetry collector over OTLP/HTTP (protobuf), and `traceparent` is read from requests
//! and sent on PGCC calls and webhook deliveries (docs/observability.md).
//!
//! Off (the default) the OpenTelemetry layer, its exporter and its thread do not exist, the
//! global propagator stays the no-op one, and the spans only the traces want (`DEBUG`: the
//! database statement, the PGCC call, the webhook attempt, the worker round) are disabled at
//! their call site by the log filter: a request costs what it cost before.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use tracing::Metadata;
use tracing_subscriber::filter::{filter_fn, EnvFilter};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

use crate::settings::{LogFormat, Settings, TelemetrySettings};

/// The path of the traces of OTLP/HTTP, added to an endpoint given as the collector's base URL.
const TRACES_PATH: &str = "/v1/traces";
/// The most of a collector's answer read (it is only checked for rejected spans).
const MAX_ANSWER_BYTES: u64 = 4 * 1024 * 1024;
/// How long one export may take (connect, send, answer).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// The crates whose spans are exported: ours. Spans of the libraries (none today, but a library
/// may add some) could carry what we do not control.
const OUR_CRATES: [&str; 7] = [
    "delivery_http",
    "application",
    "postgres_adapter",
    "pgcc_adapter",
    "webhook_adapter",
    "consent_api",
    "telemetry",
];

/// The tracer provider while traces are on; [`Telemetry::shutdown`] exports what is left.
#[must_use = "shut down at exit, or the last spans are lost"]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Exports the spans still queued and stops the exporter's thread (bounded by its timeout).
    pub fn shutdown(self) {
        if let Some(provider) = self.provider {
            if let Err(error) = provider.shutdown() {
                tracing::warn!(%error, "traces: the last spans could not be exported");
            }
        }
    }
}

/// Logs go to stderr (stdout carries the values scripts capture); RUST_LOG overrides the level.
/// `log.format = "json"`: one JSON object per line, with the fields of the current span
/// (`request_id`, `method`, `route`, `company_id`) under `span`; `"text"`: readable lines.
/// With `telemetry.otlp_endpoint` set, also the traces (see the module's documentation).
pub fn init(settings: &Settings) -> Telemetry {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(&settings.log.level));
    // The filter is the log's own (a per-layer filter), so that the trace spans below the log
    // level still reach the OpenTelemetry layer, and a log line's current span stays the
    // request (the trace spans are DEBUG: not shown at the usual levels).
    let logs = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let logs = match settings.log.format {
        LogFormat::Json => logs
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .with_filter(filter)
            .boxed(),
        LogFormat::Text => logs
            // Colours only on a terminal: files and log collectors get plain text.
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_filter(filter)
            .boxed(),
    };
    let mut layers: Vec<BoxedLayer> = vec![logs];
    let provider = match traces(&settings.telemetry) {
        Ok(Some((layer, provider))) => {
            layers.push(layer);
            Some(provider)
        }
        Ok(None) => None,
        Err(error) => {
            // Validated at load time; a failure here is the exporter's own: logs go on.
            eprintln!("warning: traces off: {error}");
            None
        }
    };
    tracing_subscriber::registry().with(layers).init();
    if provider.is_some() {
        tracing::info!(
            sample_ratio = settings.telemetry.sample_ratio,
            "traces exported over OTLP/HTTP"
        );
    }
    Telemetry { provider }
}

type BoxedLayer = Box<dyn Layer<tracing_subscriber::Registry> + Send + Sync>;

/// The OpenTelemetry layer and its provider, when an endpoint is set; installs the W3C propagator.
fn traces(settings: &TelemetrySettings) -> Result<Option<(BoxedLayer, SdkTracerProvider)>, String> {
    let Some(endpoint) = settings.traces_endpoint() else {
        return Ok(None);
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(UreqClient::new())
        .with_endpoint(endpoint)
        .with_timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(|e| format!("telemetry.otlp_endpoint: {e}"))?;
    let mut resource = Resource::builder();
    // OTEL_SERVICE_NAME, when set, names the service (several deployments, one collector).
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("consent-api");
    }
    // Parent-based: a request whose caller sampled (or did not) is traced accordingly; a new
    // trace is sampled at the ratio.
    let sampler = Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(settings.sample_ratio)));
    // The batch processor exports from a thread of its own, every OTEL_BSP_SCHEDULE_DELAY
    // (5 s by default) or when a batch fills; a request never waits on the collector.
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_sampler(sampler)
        .with_resource(resource.build())
        .build();
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("consent-api"))
        // spans only: the log lines stay log lines (not copied into the spans as events). A
        // `filter_fn` answers from the metadata alone, so tracing caches it per call site.
        .with_filter(filter_fn(exported))
        .boxed();
    Ok(Some((layer, provider)))
}

/// Whether a span or event goes to the traces: our crates' spans, no event.
fn exported(metadata: &Metadata<'_>) -> bool {
    metadata.is_span()
        && OUR_CRATES
            .iter()
            .any(|krate| crate_of(metadata.target()) == *krate)
}

fn crate_of(target: &str) -> &str {
    target.split("::").next().unwrap_or(target)
}

impl TelemetrySettings {
    /// The URL the spans are POSTed to: the endpoint as the collector's base URL
    /// (`http://collector:4318`) with `/v1/traces` added, or as given when it already ends so.
    /// `None` when traces are off.
    pub fn traces_endpoint(&self) -> Option<String> {
        let endpoint = self.otlp_endpoint.trim().trim_end_matches('/');
        if endpoint.is_empty() {
            return None;
        }
        if endpoint.ends_with(TRACES_PATH) {
            Some(endpoint.to_owned())
        } else {
            Some(format!("{endpoint}{TRACES_PATH}"))
        }
    }
}

/// The exporter's HTTP client over ureq, the project's client: the exporter's own clients are
/// reqwest or hyper, a second HTTP stack (and tokio for hyper) for one POST every few seconds.
/// The batch processor calls it on its own thread (a blocking call is what that thread is for).
#[derive(Debug)]
struct UreqClient {
    agent: ureq::Agent,
}

impl UreqClient {
    fn new() -> Self {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(EXPORT_TIMEOUT))
            // the collector's status is the exporter's to read (it retries 429 and 5xx)
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            .build();
        Self {
            agent: ureq::Agent::new_with_config(config),
        }
    }

    fn send(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let request = request.map(|body| body.to_vec());
        let response = self.agent.run(request)?;
        let (parts, mut body) = response.into_parts();
        let bytes = body.with_config().limit(MAX_ANSWER_BYTES).read_to_vec()?;
        Ok(Response::from_parts(parts, Bytes::from(bytes)))
    }
}

impl HttpClient for UreqClient {
    fn send_bytes<'a, 'b>(
        &'a self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Bytes>, HttpError>> + Send + 'b>>
    where
        'a: 'b,
    {
        Box::pin(async move { self.send(request) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(given: &str) -> Option<String> {
        TelemetrySettings {
            otlp_endpoint: given.to_owned(),
            sample_ratio: 1.0,
        }
        .traces_endpoint()
    }

    #[test]
    fn the_endpoint_is_the_collectors_base_url_or_the_traces_url() {
        assert_eq!(endpoint(""), None);
        assert_eq!(endpoint("  "), None);
        assert_eq!(
            endpoint("http://collector:4318").as_deref(),
            Some("http://collector:4318/v1/traces")
        );
        assert_eq!(
            endpoint("http://collector:4318/").as_deref(),
            Some("http://collector:4318/v1/traces")
        );
        assert_eq!(
            endpoint("https://otel.example/v1/traces").as_deref(),
            Some("https://otel.example/v1/traces")
        );
    }

    #[test]
    fn only_our_spans_are_exported() {
        assert_eq!(crate_of("postgres_adapter::conn"), "postgres_adapter");
        assert_eq!(crate_of("delivery_http"), "delivery_http");
        assert!(OUR_CRATES.contains(&crate_of("pgcc_adapter::gateway")));
        assert!(!OUR_CRATES.contains(&crate_of("h2::proto")));
    }
}
