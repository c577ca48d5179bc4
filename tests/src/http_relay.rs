//! An HTTP relay the test controls, put in front of the OpenID Provider (issue 38: the `id_token`
//! refusals end to end): the provider is started with the relay's URL as its issuer, so the
//! service and the test's browser reach every endpoint through it. Each request is forwarded as
//! it came (one request a connection: `Connection: close` both ways) and the answer returned as
//! the provider gave it, except the token endpoint's (`POST /token`): every `id_token` it answers
//! is noted ([`HttpRelay::id_tokens`]), and the next one can be replaced by what the test makes
//! of it ([`HttpRelay::alter_next_id_token`]): the payload changed with the provider's signature
//! kept, a token the provider issued for another sign-in or another client. What the service
//! receives is then the real provider's answer but for that field.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

/// How long one exchange with the provider may take.
const TIMEOUT: Duration = Duration::from_secs(30);
/// How often the acceptor looks at the stop flag.
const TICK: Duration = Duration::from_millis(20);

type Alteration = Box<dyn FnOnce(&str) -> String + Send>;

#[derive(Default)]
struct Shared {
    upstream: Option<SocketAddr>,
    alteration: Option<Alteration>,
    id_tokens: Vec<String>,
    altered: u32,
}

pub struct HttpRelay {
    port: u16,
    shared: Arc<Mutex<Shared>>,
    stopped: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl HttpRelay {
    /// Listens on a free port of 127.0.0.1; forwards nothing until [`HttpRelay::forward_to`].
    pub fn start() -> HttpRelay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the HTTP relay");
        listener.set_nonblocking(true).expect("non-blocking accept");
        let port = listener.local_addr().expect("relay address").port();
        let shared = Arc::new(Mutex::new(Shared::default()));
        let stopped = Arc::new(AtomicBool::new(false));
        let acceptor = {
            let (shared, stopped) = (shared.clone(), stopped.clone());
            std::thread::spawn(move || accept(listener, shared, stopped))
        };
        HttpRelay {
            port,
            shared,
            stopped,
            acceptor: Some(acceptor),
        }
    }

    /// `http://127.0.0.1:<port>`: the issuer to give the provider.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Forwards to `address` (`http://host:port`, the provider's own).
    pub fn forward_to(&self, address: &str) {
        let host_port = address.trim_start_matches("http://").trim_end_matches('/');
        let addr: SocketAddr = host_port.parse().expect("an address ip:port");
        self.lock().upstream = Some(addr);
    }

    /// The next `id_token` the token endpoint answers is replaced by `alter(token)`.
    pub fn alter_next_id_token(&self, alter: impl FnOnce(&str) -> String + Send + 'static) {
        self.lock().alteration = Some(Box::new(alter));
    }

    /// How many answers were altered so far.
    pub fn altered(&self) -> u32 {
        self.lock().altered
    }

    /// Every `id_token` the token endpoint answered, oldest first, as the provider issued it.
    pub fn id_tokens(&self) -> Vec<String> {
        self.lock().id_tokens.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for HttpRelay {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

fn accept(listener: TcpListener, shared: Arc<Mutex<Shared>>, stopped: Arc<AtomicBool>) {
    while !stopped.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((client, _)) => {
                let shared = shared.clone();
                std::thread::spawn(move || {
                    let _ = relay_one(client, &shared);
                });
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(TICK),
            Err(_) => std::thread::sleep(TICK),
        }
    }
}

/// One request of `client`, forwarded; its answer, altered when it is the token endpoint's.
fn relay_one(mut client: TcpStream, shared: &Mutex<Shared>) -> std::io::Result<()> {
    client.set_nonblocking(false)?;
    client.set_read_timeout(Some(TIMEOUT))?;
    let (head, body) = read_message(&mut client, true)?;
    let request_line = head.lines().next().unwrap_or_default().to_owned();
    let is_token = request_line.starts_with("POST /token");
    let Some(upstream) = shared.lock().unwrap_or_else(|p| p.into_inner()).upstream else {
        client.write_all(
            b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        )?;
        return Ok(());
    };
    let mut server = TcpStream::connect_timeout(&upstream, TIMEOUT)?;
    server.set_read_timeout(Some(TIMEOUT))?;
    server.write_all(with_length(&head, body.len()).as_bytes())?;
    server.write_all(&body)?;
    let (answer_head, mut answer) = read_message(&mut server, false)?;
    if is_token {
        answer = altered(&answer, shared);
    }
    client.write_all(with_length(&answer_head, answer.len()).as_bytes())?;
    client.write_all(&answer)?;
    let _ = client.shutdown(Shutdown::Both);
    Ok(())
}

/// A message's head (up to the blank line, as text) and its body: `Content-Length` bytes, the
/// chunks decoded, or (an answer without either) everything until the connection closes.
fn read_message(stream: &mut TcpStream, request: bool) -> std::io::Result<(String, Vec<u8>)> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(std::io::Error::new(ErrorKind::UnexpectedEof, "no head"));
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
    let mut body = buffer[end + 4..].to_vec();
    let header = |name: &str| {
        head.lines().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_ascii_lowercase())
        })
    };
    if let Some(length) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        while body.len() < length {
            let n = stream.read(&mut chunk)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
        body.truncate(length);
    } else if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        loop {
            if let Some(decoded) = dechunked(&body) {
                body = decoded;
                break;
            }
            let n = stream.read(&mut chunk)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if !request {
        stream.read_to_end(&mut body)?;
    }
    Ok((head, body))
}

/// The body of complete chunked bytes; `None` while the last chunk has not arrived.
fn dechunked(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        let line_end = at + bytes[at..].windows(2).position(|w| w == b"\r\n")?;
        let size_text = String::from_utf8_lossy(&bytes[at..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        let data = line_end + 2;
        if size == 0 {
            return Some(out);
        }
        if bytes.len() < data + size + 2 {
            return None;
        }
        out.extend_from_slice(&bytes[data..data + size]);
        at = data + size + 2;
    }
}

/// A message's head for a body of `length` bytes (read whole, decoded, possibly altered): its
/// `Connection`, `Content-Length` and `Transfer-Encoding` headers replaced by `Content-Length`
/// and `Connection: close` (and the blank line ending it).
fn with_length(head: &str, length: usize) -> String {
    let mut out = String::new();
    for (i, line) in head.lines().enumerate() {
        let name = line.split(':').next().unwrap_or_default().trim();
        let replaced = ["connection", "content-length", "transfer-encoding"]
            .iter()
            .any(|h| name.eq_ignore_ascii_case(h));
        if i == 0 || !replaced {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out.push_str(&format!(
        "Content-Length: {length}\r\nConnection: close\r\n\r\n"
    ));
    out
}

/// The token endpoint's answer with its `id_token` noted and, when armed, replaced.
fn altered(answer: &[u8], shared: &Mutex<Shared>) -> Vec<u8> {
    let Ok(mut json) = serde_json::from_slice::<Value>(answer) else {
        return answer.to_vec();
    };
    let Some(token) = json["id_token"].as_str().map(str::to_owned) else {
        return answer.to_vec();
    };
    let mut shared = shared.lock().unwrap_or_else(|p| p.into_inner());
    shared.id_tokens.push(token.clone());
    let Some(alter) = shared.alteration.take() else {
        return answer.to_vec();
    };
    shared.altered += 1;
    json["id_token"] = Value::String(alter(&token));
    json.to_string().into_bytes()
}
