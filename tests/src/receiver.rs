//! A webhook receiver for tests: a tiny HTTP/1.1 server on 127.0.0.1 that records every request
//! and answers from a script of statuses (then 200), with an empty body, a body of the test's, or
//! one that never ends. It stops when dropped.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    /// Header names lower-cased.
    pub headers: HashMap<String, String>,
    pub body: String,
    pub at: Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map(String::as_str).unwrap_or("")
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("the body is JSON")
    }
}

#[derive(Default)]
struct Shared {
    received: Vec<Received>,
    script: Vec<u16>,
    /// How long to wait before answering each request.
    delay: Duration,
    /// What each answer's body is.
    body: AnswerBody,
}

/// The body of the receiver's answers.
#[derive(Default, Clone)]
enum AnswerBody {
    #[default]
    Empty,
    /// These bytes, with their `Content-Length`.
    Bytes(Vec<u8>),
    /// Chunks of `x` sent until the client goes away (a receiver that streams forever).
    Endless,
}

pub struct Receiver {
    pub url: String,
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
}

impl Receiver {
    /// Answers `script` in order (e.g. `[500, 503]`), then 200 to everything.
    pub fn start(script: &[u16]) -> Receiver {
        Receiver::start_with(script, Duration::ZERO)
    }

    /// Records each request at once and answers 200 only `delay` after it arrived.
    pub fn answering_after(delay: Duration) -> Receiver {
        Receiver::start_with(&[], delay)
    }

    /// Answers every request 200 with `body` (any bytes, UTF-8 or not).
    pub fn answering_body(body: &[u8]) -> Receiver {
        Receiver::start_answering(&[], Duration::ZERO, AnswerBody::Bytes(body.to_vec()))
    }

    /// Answers every request 200 with a chunked body that never ends: chunks are sent until
    /// the client closes the connection.
    pub fn answering_endlessly() -> Receiver {
        Receiver::start_answering(&[], Duration::ZERO, AnswerBody::Endless)
    }

    fn start_with(script: &[u16], delay: Duration) -> Receiver {
        Receiver::start_answering(script, delay, AnswerBody::Empty)
    }

    fn start_answering(script: &[u16], delay: Duration, body: AnswerBody) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the receiver");
        listener.set_nonblocking(true).expect("non-blocking accept");
        let url = format!("http://{}/hooks", listener.local_addr().unwrap());
        let shared = Arc::new(Mutex::new(Shared {
            received: Vec::new(),
            script: script.iter().rev().copied().collect(),
            delay,
            body,
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (shared_t, stop_t) = (shared.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop_t.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let shared = shared_t.clone();
                        std::thread::spawn(move || handle(stream, &shared));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Receiver { url, shared, stop }
    }

    pub fn received(&self) -> Vec<Received> {
        self.shared.lock().unwrap().received.clone()
    }

    /// Waits (bounded) until at least `n` requests arrived; returns them.
    pub fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Received> {
        crate::wait_until(timeout, || self.received().len() >= n);
        self.received()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// One HTTP/1.1 request as a test's server reads it: the request line, the headers (names
/// lower-cased) and the body (`Content-Length` bytes; short when the client stopped sending).
pub struct RawRequest {
    pub line: String,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

/// The next request on `reader`; `None` when the connection closed before a request line.
pub fn read_request(reader: &mut impl BufRead) -> Option<RawRequest> {
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return None;
    }
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    let read = reader.read_exact(&mut body).is_ok();
    if !read {
        body.clear();
    }
    Some(RawRequest {
        line,
        headers,
        body,
    })
}

fn handle(stream: TcpStream, shared: &Mutex<Shared>) {
    stream.set_nonblocking(false).ok();
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
    let Some(request) = read_request(&mut reader) else {
        return;
    };
    let (headers, body) = (request.headers, request.body);
    let (status, delay, answer) = {
        let mut s = shared.lock().unwrap();
        s.received.push(Received {
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
            at: Instant::now(),
        });
        (s.script.pop().unwrap_or(200), s.delay, s.body.clone())
    };
    std::thread::sleep(delay);
    let mut stream = stream;
    match answer {
        AnswerBody::Empty => {
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
        }
        AnswerBody::Bytes(bytes) => {
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                bytes.len()
            );
            let _ = stream.write_all(&bytes);
        }
        AnswerBody::Endless => {
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
            );
            let chunk = format!("{:x}\r\n{}\r\n", 1024, "x".repeat(1024));
            // a client that stops reading without closing blocks a write: it fails then
            stream.set_write_timeout(Some(Duration::from_secs(5))).ok();
            // until the client closes (a write fails), or a minute at most
            let until = Instant::now() + Duration::from_secs(60);
            while Instant::now() < until && stream.write_all(chunk.as_bytes()).is_ok() {}
        }
    }
    let _ = stream.flush();
}

/// Verifies a Standard Webhooks signature with an implementation independent of ours: Python's
/// hmac, hashlib and base64. True when any `v1,` signature in `header` matches.
pub fn verify_with_python(
    secret: &str,
    id: &str,
    timestamp: &str,
    body: &str,
    header: &str,
) -> bool {
    let script = r#"
import base64, hashlib, hmac, os, sys
secret = base64.b64decode(os.environ["SECRET"].removeprefix("whsec_"))
content = (os.environ["MSG_ID"] + "." + os.environ["TS"] + ".").encode() + sys.stdin.buffer.read()
expected = base64.b64encode(hmac.new(secret, content, hashlib.sha256).digest()).decode()
sigs = [s.split(",", 1)[1] for s in os.environ["SIGS"].split(" ") if s.startswith("v1,")]
sys.exit(0 if any(hmac.compare_digest(expected, s) for s in sigs) else 1)
"#;
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .env("SECRET", secret)
        .env("MSG_ID", id)
        .env("TS", timestamp)
        .env("SIGS", header)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    child.wait().unwrap().success()
}

/// A receiver that accepts TCP connections and never answers: each connection is held open,
/// unread, until the receiver is dropped (as a hung server or a black-holing firewall would).
pub struct SilentReceiver {
    pub url: String,
    connections: Arc<Mutex<Vec<TcpStream>>>,
    stop: Arc<AtomicBool>,
}

impl SilentReceiver {
    pub fn start() -> SilentReceiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the silent receiver");
        listener.set_nonblocking(true).expect("non-blocking accept");
        let url = format!("http://{}/hooks", listener.local_addr().unwrap());
        let connections: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (held, stop_t) = (connections.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop_t.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => held.lock().unwrap().push(stream),
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        SilentReceiver {
            url,
            connections,
            stop,
        }
    }

    /// Connections accepted so far (each one a delivery attempt left hanging).
    pub fn accepted(&self) -> usize {
        self.connections.lock().unwrap().len()
    }
}

impl Drop for SilentReceiver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.connections.lock().unwrap().clear();
    }
}
