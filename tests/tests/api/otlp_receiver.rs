//! An OpenTelemetry collector for the trace tests: a tiny HTTP/1.1 server on 127.0.0.1 that takes
//! OTLP/HTTP protobuf exports (`POST /v1/traces`), decodes them with the OpenTelemetry project's
//! own protobuf types, and keeps every span. It stops when dropped.

use std::collections::HashMap;
use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use prost::Message;

/// One span as exported.
#[derive(Debug, Clone)]
pub struct ExportedSpan {
    /// Lower-case hex, as in a `traceparent`.
    pub trace_id: String,
    pub span_id: String,
    /// Empty for a root span.
    pub parent_span_id: String,
    pub name: String,
    /// Every attribute, its value as text.
    pub attributes: HashMap<String, String>,
    /// The resource's `service.name`.
    pub service: String,
}

impl ExportedSpan {
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

pub struct OtlpReceiver {
    /// The collector's base URL (what `APP__TELEMETRY__OTLP_ENDPOINT` takes).
    pub base_url: String,
    spans: Arc<Mutex<Vec<ExportedSpan>>>,
    /// Requests that were not a decodable `POST /v1/traces` (path, or why).
    pub refused: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl OtlpReceiver {
    pub fn start() -> OtlpReceiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the OTLP receiver");
        listener.set_nonblocking(true).expect("non-blocking accept");
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let spans: Arc<Mutex<Vec<ExportedSpan>>> = Arc::default();
        let refused: Arc<Mutex<Vec<String>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (spans_t, refused_t, stop_t) = (spans.clone(), refused.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop_t.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let (spans, refused) = (spans_t.clone(), refused_t.clone());
                        std::thread::spawn(move || handle(stream, &spans, &refused));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        OtlpReceiver {
            base_url,
            spans,
            refused,
            stop,
        }
    }

    pub fn spans(&self) -> Vec<ExportedSpan> {
        self.spans.lock().unwrap().clone()
    }

    /// The spans of trace `trace_id`.
    pub fn trace(&self, trace_id: &str) -> Vec<ExportedSpan> {
        self.spans()
            .into_iter()
            .filter(|s| s.trace_id == trace_id)
            .collect()
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Requests on one connection until it closes (the exporter keeps its connection alive).
fn handle(stream: TcpStream, spans: &Mutex<Vec<ExportedSpan>>, refused: &Mutex<Vec<String>>) {
    stream.set_nonblocking(false).ok();
    stream.set_read_timeout(Some(Duration::from_secs(30))).ok();
    let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
    let mut stream = stream;
    loop {
        let Some(testkit::RawRequest {
            line,
            headers,
            body,
        }) = testkit::read_request(&mut reader)
        else {
            return;
        };
        let protobuf =
            headers.get("content-type").map(String::as_str) == Some("application/x-protobuf");
        let decoded = (line.starts_with("POST /v1/traces ") && protobuf)
            .then(|| ExportTraceServiceRequest::decode(body.as_slice()).ok())
            .flatten();
        match decoded {
            Some(export) => spans.lock().unwrap().extend(flatten(export)),
            None => refused.lock().unwrap().push(line.trim().to_owned()),
        }
        // an empty ExportTraceServiceResponse: everything accepted
        let answer =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if stream.write_all(answer.as_bytes()).is_err() || stream.flush().is_err() {
            return;
        }
    }
}

fn flatten(export: ExportTraceServiceRequest) -> Vec<ExportedSpan> {
    let mut out = Vec::new();
    for resource_spans in export.resource_spans {
        let service = resource_spans
            .resource
            .iter()
            .flat_map(|r| r.attributes.iter())
            .find(|kv| kv.key == "service.name")
            .and_then(|kv| kv.value.as_ref())
            .map(|v| text(v.value.as_ref()))
            .unwrap_or_default();
        for scope_spans in resource_spans.scope_spans {
            for span in scope_spans.spans {
                out.push(ExportedSpan {
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    name: span.name,
                    attributes: span
                        .attributes
                        .into_iter()
                        .map(|kv| {
                            let value = text(kv.value.as_ref().and_then(|v| v.value.as_ref()));
                            (kv.key, value)
                        })
                        .collect(),
                    service: service.clone(),
                });
            }
        }
    }
    out
}

fn text(value: Option<&Any>) -> String {
    match value {
        Some(Any::StringValue(s)) => s.clone(),
        Some(Any::IntValue(i)) => i.to_string(),
        Some(Any::BoolValue(b)) => b.to_string(),
        Some(Any::DoubleValue(d)) => d.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
