//! The edge: request bodies bounded whatever their encoding or pace, request heads bounded in
//! time (docs/decisions.md, "Resource limits and faults").

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use testkit::{Client, Reply};

use crate::helpers::*;

const HASH_CONSULTA: &str = "/api/hash-consulta";

/// A key of the right shape that no company holds: whatever the body, the key is never looked up
/// before the body is refused.
fn made_up_key() -> String {
    format!("cak_{}", "ab".repeat(32))
}

/// Asserts the refusal of an encoded body: 415 in the envelope, nothing of the PGCC.
fn assert_encoding_refused(reply: Reply, what: &str) {
    assert_eq!(reply.status, 415, "{what}: {}", reply.text);
    let reply = reply.expect(415);
    assert_eq!(reply.json["isPgccErro"], false, "{what}");
    assert_eq!(reply.json["pgccCodigoErro"], "OK", "{what}");
    assert_eq!(reply.json["data"], json!({}), "{what}");
    let mensagem = reply.json["mensagem"].as_str().unwrap_or_default();
    assert!(mensagem.contains("Content-Encoding"), "{what}: {mensagem}");
}

#[test]
fn compression_bombs_in_every_encoding_are_refused_unread_and_the_process_stays_small() {
    let app = TestApp::spawn();
    let encodings = ["gzip", "deflate", "br", "zstd"];
    let bombs: Vec<Vec<u8>> = std::thread::scope(|s| {
        let built: Vec<_> = encodings
            .iter()
            .map(|encoding| s.spawn(move || bomb(encoding)))
            .collect();
        built.into_iter().map(|b| b.join().unwrap()).collect()
    });
    for (encoding, bomb) in encodings.iter().zip(&bombs) {
        // Each would inflate 1000-fold or more: 1 GiB from at most about 1 MB.
        assert!(bomb.len() < 1_100_000, "{encoding}: {} bytes", bomb.len());
    }
    let stranger = Client::new(&app.api.base_url, Some(&made_up_key()));
    std::thread::scope(|s| {
        for (encoding, bomb) in encodings.iter().zip(&bombs) {
            let stranger = &stranger;
            s.spawn(move || {
                let reply = stranger.post_raw_with(
                    HASH_CONSULTA,
                    "application/json",
                    &[("Content-Encoding", encoding)],
                    bomb,
                );
                assert_encoding_refused(reply, encoding);
            });
        }
    });
    // A company's own key changes nothing, nor does `identity` listed after the coding.
    let reply = app.a.post_raw_with(
        HASH_CONSULTA,
        "application/json",
        &[("Content-Encoding", "gzip, identity")],
        &bombs[0],
    );
    assert_encoding_refused(reply, "gzip, identity");
    let peak = app.api.peak_rss_bytes();
    assert!(
        peak < 100 * 1024 * 1024,
        "consent-api peaked at {} MiB resident",
        peak / (1024 * 1024)
    );
    // Still serving.
    app.a.get("/api/casos-de-uso").expect(200);
}

#[test]
fn only_identity_passes_the_edge_on_every_route_before_the_key_is_looked_at() {
    let app = TestApp::spawn();
    let body = serde_json::to_vec(&json!({
        "cpfTitular": CPF,
        "casoDeUsoIdTemplate": "tpl-a-marketing"
    }))
    .unwrap();
    let baseline = app.a.post_raw(HASH_CONSULTA, "application/json", &body);
    assert_ne!(baseline.status, 415, "{}", baseline.text);
    for identity in ["identity", "IDENTITY", "Identity, identity"] {
        let reply = app.a.post_raw_with(
            HASH_CONSULTA,
            "application/json",
            &[("Content-Encoding", identity)],
            &body,
        );
        assert_eq!(reply.status, baseline.status, "{identity}: {}", reply.text);
    }
    let stranger = Client::new(&app.api.base_url, Some(&made_up_key()));
    for coding in ["gzip", "GZIP", "x-gzip", "compress", "identity, br", "zstd"] {
        let headers = [("Content-Encoding", coding)];
        let what = format!("POST {HASH_CONSULTA} with {coding}");
        assert_encoding_refused(
            app.a
                .post_raw_with(HASH_CONSULTA, "application/json", &headers, &body),
            &what,
        );
        // Before the key: no key, or one no company holds, is refused the same way.
        assert_encoding_refused(
            app.anonymous
                .post_raw_with(HASH_CONSULTA, "application/json", &headers, &body),
            &format!("{what}, no key"),
        );
        assert_encoding_refused(
            stranger.post_raw_with(HASH_CONSULTA, "application/json", &headers, &body),
            &format!("{what}, unknown key"),
        );
        // Every route, those without a body and those matching nothing included.
        for path in [
            "/api/casos-de-uso",
            "/api/webhook-urls",
            "/nao-existe",
            "/health/live",
        ] {
            assert_encoding_refused(app.a.get_with(path, &headers), &format!("GET {path}"));
        }
    }
}

/// Sends `head` on a new connection, then `trickle` one byte every `pace` from another thread,
/// and reads what the server answers until it closes the connection (or `read_for` passes).
/// Returns what was read and when the connection ended, counted from the first byte sent.
fn trickled_exchange(
    base_url: &str,
    head: &str,
    trickle: &'static [u8],
    pace: Duration,
    read_for: Duration,
) -> (String, Option<Duration>) {
    let address = base_url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(read_for)).unwrap();
    let started = Instant::now();
    stream.write_all(head.as_bytes()).unwrap();
    let mut writer = stream.try_clone().unwrap();
    std::thread::spawn(move || {
        for byte in trickle {
            std::thread::sleep(pace);
            // The server may have answered and closed: the client's writes then fail.
            if writer.write_all(std::slice::from_ref(byte)).is_err() {
                return;
            }
        }
    });
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    let ended = loop {
        match stream.read(&mut buf) {
            Ok(0) => break Some(started.elapsed()),
            Ok(n) => received.extend_from_slice(&buf[..n]),
            // A reset after the answer is a close too.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                break Some(started.elapsed())
            }
            Err(_) => break None,
        }
        if started.elapsed() > read_for {
            break None;
        }
    };
    (String::from_utf8_lossy(&received).into_owned(), ended)
}

#[test]
fn a_body_trickled_past_the_body_timeout_is_408_and_the_connection_is_closed() {
    let app = TestApp::spawn_with(&[("APP__SERVER__BODY_TIMEOUT_MS", "1000")]);
    // 60 bytes announced, one sent every 200 ms: 12 s if the server waited for them all.
    let head = format!(
        "POST {HASH_CONSULTA} HTTP/1.1\r\nHost: edge\r\nApi-Key: {}\r\n\
         Content-Type: application/json\r\nContent-Length: 60\r\n\r\n",
        app.key_a
    );
    let (answer, ended) = trickled_exchange(
        &app.api.base_url,
        &head,
        &[b' '; 60],
        Duration::from_millis(200),
        Duration::from_secs(10),
    );
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    let envelope: Value = answer
        .split_once("\r\n\r\n")
        .and_then(|(_, body)| serde_json::from_str(body).ok())
        .unwrap_or_else(|| panic!("no envelope in {answer}"));
    assert_eq!(envelope["sucesso"], false, "{envelope}");
    assert_eq!(envelope["isPgccErro"], false, "{envelope}");
    assert_eq!(envelope["pgccCodigoErro"], "OK", "{envelope}");
    assert_eq!(envelope["data"], json!({}), "{envelope}");
    let ended = ended.expect("the server kept the connection open");
    // The timeout (1 s) plus actix's linger after an early answer (1 s), with slack.
    assert!(ended < Duration::from_secs(5), "closed after {ended:?}");
    // The API still serves.
    app.a.get("/api/casos-de-uso").expect(200);
}

#[test]
fn request_headers_trickled_past_the_header_timeout_are_cut() {
    let app = TestApp::spawn_with(&[("APP__SERVER__HEADER_TIMEOUT_MS", "1000")]);
    // The head never ends: a header line one byte every 200 ms, 12 s if let run.
    let (answer, ended) = trickled_exchange(
        &app.api.base_url,
        "GET /health/live HTTP/1.1\r\nHost: edge\r\n",
        &[b'x'; 60],
        Duration::from_millis(200),
        Duration::from_secs(10),
    );
    let ended = ended.expect("the server kept the connection open");
    assert!(ended < Duration::from_secs(5), "closed after {ended:?}");
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
    // The API still serves.
    assert_eq!(app.anonymous.get("/health/live").status, 200);
}

/// What each bomb inflates to: 1 GiB of zeros.
const BOMB_CHUNK: usize = 1 << 20;
const BOMB_CHUNKS: usize = 1024;

/// 1 GiB of zeros compressed with `encoding` (an HTTP content coding), built in about a second:
/// gzip and deflate repeat one independent deflate segment (see [`deflate_zeros`]); zstd and br
/// stream the zeros through their encoder.
fn bomb(encoding: &str) -> Vec<u8> {
    let zeros = vec![0u8; BOMB_CHUNK];
    match encoding {
        "gzip" => {
            let mut crc = flate2::Crc::new();
            let mut chunk_crc = flate2::Crc::new();
            chunk_crc.update(&zeros);
            for _ in 0..BOMB_CHUNKS {
                crc.combine(&chunk_crc);
            }
            // RFC 1952: magic, deflate, no flags, no time, max compression, unknown OS
            let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 0xff];
            out.extend(deflate_zeros());
            out.extend(crc.sum().to_le_bytes());
            out.extend(((BOMB_CHUNK * BOMB_CHUNKS) as u32).to_le_bytes());
            out
        }
        "deflate" => {
            // RFC 1950 (HTTP's "deflate" is the zlib format): 32 KiB window, best compression.
            let mut out = vec![0x78, 0xda];
            out.extend(deflate_zeros());
            // Adler-32 of n zeros: a stays 1, b adds 1 per byte.
            let b = ((BOMB_CHUNK * BOMB_CHUNKS) % 65_521) as u32;
            out.extend(((b << 16) | 1).to_be_bytes());
            out
        }
        "zstd" => {
            let mut out = Vec::new();
            let mut e = zstd::stream::write::Encoder::new(&mut out, 3).unwrap();
            for _ in 0..BOMB_CHUNKS {
                e.write_all(&zeros).unwrap();
            }
            e.finish().unwrap();
            out
        }
        "br" => {
            let mut out = Vec::new();
            {
                let mut e = brotli::CompressorWriter::new(&mut out, 1 << 16, 1, 24);
                for _ in 0..BOMB_CHUNKS {
                    e.write_all(&zeros).unwrap();
                }
            }
            out
        }
        other => panic!("no bomb for {other}"),
    }
}

/// A raw deflate stream of 1 GiB of zeros: 1 MiB of zeros compressed alone and sync-flushed (so
/// it ends byte-aligned, in a non-final block, and refers to nothing before it), repeated, then
/// an empty final block. About 1 MB: deflate cannot do better than ~1:1032.
fn deflate_zeros() -> Vec<u8> {
    let mut compress = flate2::Compress::new(flate2::Compression::best(), false);
    let mut segment = Vec::with_capacity(BOMB_CHUNK / 512);
    compress
        .compress_vec(
            &vec![0u8; BOMB_CHUNK],
            &mut segment,
            flate2::FlushCompress::Sync,
        )
        .unwrap();
    assert_eq!(
        compress.total_in(),
        BOMB_CHUNK as u64,
        "one call took it all"
    );
    let mut out = segment.repeat(BOMB_CHUNKS);
    // BFINAL = 1, fixed Huffman codes, end of block.
    out.extend([0x03, 0x00]);
    out
}

#[test]
fn the_bombs_are_what_they_claim() {
    // The first 16 MiB of each inflate to zeros: the streams are well-formed.
    for encoding in ["gzip", "deflate", "br", "zstd"] {
        let bomb = bomb(encoding);
        let mut reader: Box<dyn Read> = match encoding {
            "gzip" => Box::new(flate2::read::GzDecoder::new(&bomb[..])),
            "deflate" => Box::new(flate2::read::ZlibDecoder::new(&bomb[..])),
            "zstd" => Box::new(zstd::stream::read::Decoder::new(&bomb[..]).unwrap()),
            _ => Box::new(brotli::Decompressor::new(&bomb[..], 1 << 16)),
        };
        let mut head = vec![1u8; 16 << 20];
        reader.read_exact(&mut head).unwrap();
        assert!(head.iter().all(|b| *b == 0), "{encoding}");
    }
}
