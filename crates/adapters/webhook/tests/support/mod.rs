//! A one-shot HTTP receiver on 127.0.0.1, enough to watch what the sender puts on the wire.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use ports::CheckedTarget;
use webhook_adapter::{SenderSettings, UreqWebhookSender};

pub const USER_AGENT: &str = "consent-webhooks-test/1.0";

pub fn sender(timeout: Duration) -> UreqWebhookSender {
    UreqWebhookSender::new(SenderSettings {
        timeout,
        user_agent: USER_AGENT.to_owned(),
    })
}

/// The address of an `http(s)://a.b.c.d:port/...` URL, as the guard would have accepted it.
pub fn target(url: &str) -> CheckedTarget {
    let authority = url
        .split_once("://")
        .map(|(_, rest)| rest.split('/').next().unwrap_or_default())
        .expect("a URL");
    CheckedTarget {
        addresses: vec![authority.parse().expect("an address:port authority")],
    }
}

/// One request as the receiver read it.
#[derive(Debug)]
pub struct Received {
    pub request_line: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Received {
    /// The value of header `name` (case-insensitive), if sent exactly once.
    pub fn header(&self, name: &str) -> Option<&str> {
        let mut values = self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str());
        let first = values.next();
        assert!(values.next().is_none(), "header {name} sent twice");
        first
    }
}

/// A receiver that accepts one connection, reads one request, waits `delay`, writes `response`
/// (raw bytes, status line included) and closes. Its URL is `http://127.0.0.1:<port>`.
pub struct Receiver {
    pub base_url: String,
    handle: JoinHandle<Received>,
}

impl Receiver {
    pub fn start(response: impl Into<Vec<u8>>, delay: Duration) -> Self {
        let response = response.into();
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a local port");
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let handle = thread::spawn(move || {
            let (mut stream, _) = listener.accept().expect("accept the sender");
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let received = read_request(&mut stream);
            thread::sleep(delay);
            // The sender may be gone (timeout test) or stop reading (large body test).
            let _ = stream.write_all(&response);
            let _ = stream.flush();
            received
        });
        Self { base_url, handle }
    }

    /// What the receiver read (waits for it to finish).
    pub fn received(self) -> Received {
        self.handle.join().expect("receiver thread")
    }
}

fn read_request(stream: &mut TcpStream) -> Received {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let header_end = loop {
        if let Some(at) = find(&buffer, b"\r\n\r\n") {
            break at;
        }
        let read = stream.read(&mut chunk).expect("read the request head");
        assert!(read > 0, "connection closed before the request head ended");
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8(buffer[..header_end].to_vec()).expect("UTF-8 head");
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .map(|line| {
            let (name, value) = line.split_once(':').expect("header line");
            (name.trim().to_owned(), value.trim().to_owned())
        })
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.parse().expect("numeric content-length"))
        .unwrap_or(0);
    let mut body = buffer[header_end + 4..].to_vec();
    while body.len() < length {
        let read = stream.read(&mut chunk).expect("read the request body");
        assert!(read > 0, "connection closed before the body ended");
        body.extend_from_slice(&chunk[..read]);
    }
    Received {
        request_line,
        headers,
        body,
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A canned response with an empty body and the given extra header lines.
pub fn response(status_line: &str, extra_headers: &[&str]) -> String {
    let mut text = format!("HTTP/1.1 {status_line}\r\n");
    for header in extra_headers {
        text.push_str(header);
        text.push_str("\r\n");
    }
    text.push_str("Content-Length: 0\r\nConnection: close\r\n\r\n");
    text
}
