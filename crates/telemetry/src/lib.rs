//! W3C trace context (`traceparent`) between `tracing` spans and HTTP headers, for the adapters
//! that receive or send HTTP (the API's requests, the PGCC calls, the webhook deliveries) and the
//! outbox that keeps a change's context for its later deliveries.
//!
//! Everything goes through OpenTelemetry's *global* propagator, which is a no-op until the binary
//! installs the W3C one (only with `telemetry.otlp_endpoint` set, docs/observability.md): with
//! telemetry off nothing is read from a request, nothing is written to one and nothing is stored.
//! The only header ever read or written is `traceparent` (`tracestate` and baggage are neither
//! continued nor sent: they are free text a caller chose, and would travel to the PGCC and to
//! every company's receiver).

use opentelemetry::propagation::{Extractor, Injector};
use opentelemetry::trace::TraceContextExt;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The header of W3C Trace Context that carries the trace id, the parent span id and the
/// sampled flag.
pub const TRACEPARENT: &str = "traceparent";

/// The `traceparent` of the current span: `None` with telemetry off or outside any traced span.
/// An unsampled span gives one too (flag `00`): W3C says to pass the trace on all the same, and
/// the receiver's sampler honours the flag.
pub fn current_traceparent() -> Option<String> {
    traceparent_of(&tracing::Span::current())
}

/// The `traceparent` that makes a receiver's spans children of `span`.
pub fn traceparent_of(span: &tracing::Span) -> Option<String> {
    let context = span.context();
    if !context.span().span_context().is_valid() {
        return None;
    }
    let mut carrier = OnlyTraceparent::default();
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.inject_context(&context, &mut carrier)
    });
    carrier.0
}

/// Makes `span` (not yet entered) a child of the remote span `traceparent` names, when it is a
/// valid W3C `traceparent` and telemetry is on; otherwise `span` stays where it was (a new trace
/// for a root span). Whether the parent was taken.
pub fn continue_from(span: &tracing::Span, traceparent: Option<&str>) -> bool {
    let Some(traceparent) = traceparent else {
        return false;
    };
    let carrier = OnlyTraceparent(Some(traceparent.trim().to_owned()));
    let context =
        opentelemetry::global::get_text_map_propagator(|propagator| propagator.extract(&carrier));
    if !context.span().span_context().is_valid() {
        return false;
    }
    span.set_parent(context).is_ok()
}

/// Sets an attribute of `span` in the traces only (not a `tracing` field: the log lines inside
/// the span do not show it). Nothing with telemetry off.
pub fn set_attribute(
    span: &tracing::Span,
    key: &'static str,
    value: impl Into<opentelemetry::Value>,
) {
    span.set_attribute(key, value);
}

/// A carrier that holds only `traceparent`: whatever else a propagator would read or write is
/// dropped.
#[derive(Debug, Default)]
struct OnlyTraceparent(Option<String>);

impl Extractor for OnlyTraceparent {
    fn get(&self, key: &str) -> Option<&str> {
        if key.eq_ignore_ascii_case(TRACEPARENT) {
            self.0.as_deref()
        } else {
            None
        }
    }

    fn keys(&self) -> Vec<&str> {
        self.0.iter().map(|_| TRACEPARENT).collect()
    }
}

impl Injector for OnlyTraceparent {
    fn set(&mut self, key: &str, value: String) {
        if key.eq_ignore_ascii_case(TRACEPARENT) {
            self.0 = Some(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::layer::SubscriberExt;

    const INCOMING: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn with_telemetry_off_nothing_is_read_or_written() {
        // no subscriber with the OpenTelemetry layer, the no-op global propagator
        let span = tracing::info_span!("request");
        assert!(!continue_from(&span, Some(INCOMING)));
        assert_eq!(traceparent_of(&span), None);
    }

    #[test]
    fn an_incoming_traceparent_is_continued_and_a_child_traceparent_sent() {
        opentelemetry::global::set_text_map_propagator(
            opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        );
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("request");
            assert!(continue_from(&span, Some(INCOMING)));
            let sent = traceparent_of(&span).expect("a traceparent");
            assert!(
                sent.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"),
                "{sent}"
            );
            assert!(
                !sent.contains("00f067aa0ba902b7"),
                "our own span id: {sent}"
            );
            assert!(sent.ends_with("-01"), "{sent}");

            let garbage = tracing::info_span!("request");
            assert!(!continue_from(&garbage, Some("00-not-a-trace-01")));
            let fresh = traceparent_of(&garbage).expect("a new trace");
            assert!(
                !fresh.contains("4bf92f3577b34da6a3ce929d0e0e4736"),
                "{fresh}"
            );
        });
    }
}
