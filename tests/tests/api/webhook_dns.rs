//! Name lookups of webhook URLs are shared per company: names of company A that never answer
//! hold at most `webhooks.dns_in_flight_per_company` (4) lookups, A's further registrations are
//! answered 429 at once, and company B registers as usual meanwhile. The URL limit and the
//! duplicate are checked before any lookup; a failed lookup is remembered for a few seconds.
//!
//! The API runs with a name server of the test's own: a private mount namespace
//! (`unshare --mount`) in which `/etc/resolv.conf` names a UDP socket this test owns on a
//! loopback address. It answers `*-hooks.test` with a public address, never answers
//! `*.buraco.test`, and says every other name does not exist. Needs root (the namespace and
//! port 53); skipped with a message otherwise.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use testkit::processes::company_with_key;
use testkit::{Api, Client, Sim, TestDb};

use crate::helpers::*;

/// The address the name server gives `*-hooks.test` (public, so the SSRF guard accepts it;
/// nothing connects to it: registration only looks the name up).
const PUBLIC: [u8; 4] = [93, 184, 215, 14];

/// A UDP name server on `127.x.y.z:53` that records the name of every query.
struct NameServer {
    address: Ipv4Addr,
    asked: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl NameServer {
    fn start() -> Option<NameServer> {
        let socket = (0..20).find_map(|_| {
            let b = *uuid::Uuid::new_v4().as_bytes();
            let address = Ipv4Addr::new(127, b[0].max(1), b[1], b[2].max(1));
            UdpSocket::bind(SocketAddr::from((address, 53)))
                .ok()
                .map(|s| (address, s))
        });
        let (address, socket) = socket?;
        socket
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log, stopped) = (asked.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 1500];
            while !stopped.load(Ordering::SeqCst) {
                let Ok((n, from)) = socket.recv_from(&mut buf) else {
                    continue;
                };
                let Some((name, qtype, question_end)) = parse_query(&buf[..n]) else {
                    continue;
                };
                log.lock().unwrap().push(name.clone());
                if name.ends_with(".buraco.test") {
                    continue; // a black hole: never answered
                }
                let answer = answer(&buf[..question_end], &name, qtype);
                let _ = socket.send_to(&answer, from);
            }
        });
        Some(NameServer {
            address,
            asked,
            stop,
        })
    }

    /// How many queries named `name`.
    fn times_asked(&self, name: &str) -> usize {
        self.asked
            .lock()
            .unwrap()
            .iter()
            .filter(|n| *n == name)
            .count()
    }

    /// Every name asked that ends with `suffix`.
    fn names_asked(&self, suffix: &str) -> BTreeSet<String> {
        self.asked
            .lock()
            .unwrap()
            .iter()
            .filter(|n| n.ends_with(suffix))
            .cloned()
            .collect()
    }
}

impl Drop for NameServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// `(name in lower case, qtype, end of the question section)` of a standard query.
fn parse_query(packet: &[u8]) -> Option<(String, u16, usize)> {
    if packet.len() < 12 || packet[2] & 0x80 != 0 {
        return None;
    }
    let mut labels = Vec::new();
    let mut i = 12;
    loop {
        let len = *packet.get(i)? as usize;
        i += 1;
        if len == 0 {
            break;
        }
        labels.push(String::from_utf8_lossy(packet.get(i..i + len)?).to_ascii_lowercase());
        i += len;
    }
    let qtype = u16::from_be_bytes([*packet.get(i)?, *packet.get(i + 1)?]);
    Some((labels.join("."), qtype, i + 4))
}

/// The answer to `query` (header and question): `PUBLIC` for an A query of a `*-hooks.test`
/// name, no record for its other types, NXDOMAIN for any other name.
fn answer(query: &[u8], name: &str, qtype: u16) -> Vec<u8> {
    let known = name.ends_with("-hooks.test");
    let with_address = known && qtype == 1;
    let mut out = Vec::with_capacity(query.len() + 16);
    out.extend_from_slice(&query[..2]); // id
    out.extend_from_slice(&[0x81, if known { 0x80 } else { 0x83 }]); // response, RD, RA, rcode
    out.extend_from_slice(&[0, 1, 0, u8::from(with_address), 0, 0, 0, 0]);
    out.extend_from_slice(&query[12..]); // the question
    if with_address {
        out.extend_from_slice(&[0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4]);
        out.extend_from_slice(&PUBLIC);
    }
    out
}

/// Whether this process may make a private mount namespace (root, unshare present).
fn namespaces_available() -> bool {
    Command::new("unshare")
        .args(["--mount", "--propagation", "private", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

/// Companies A and B and the API in a mount namespace where `/etc/resolv.conf` names `dns`.
struct DnsApp {
    _db: TestDb,
    _sim: Sim,
    _api: Api,
    a: Client,
    b: Client,
    conf: std::path::PathBuf,
}

impl DnsApp {
    fn start(dns: &NameServer, env: &[(&str, &str)]) -> DnsApp {
        let conf =
            std::env::temp_dir().join(format!("resolv-{}.conf", uuid::Uuid::new_v4().simple()));
        // One try of 30 s (glibc's longest): a black-hole lookup stays stuck well past the
        // test's steps.
        std::fs::write(
            &conf,
            format!(
                "nameserver {}\noptions timeout:30 attempts:1\n",
                dns.address
            ),
        )
        .unwrap();
        let db = TestDb::new();
        let sim = Sim::start(&seed());
        let (_, key_a) = company_with_key(&db, &sim, "Empresa A", CNPJ_A);
        let (_, key_b) = company_with_key(&db, &sim, "Empresa B", CNPJ_B);
        let wrapper: Vec<&OsStr> = vec![
            OsStr::new("unshare"),
            OsStr::new("--mount"),
            OsStr::new("--propagation"),
            OsStr::new("private"),
            OsStr::new("sh"),
            OsStr::new("-c"),
            OsStr::new("mount --bind \"$0\" /etc/resolv.conf && exec \"$@\""),
            conf.as_os_str(),
        ];
        let api = Api::start_wrapped(&db, &sim, env, &wrapper);
        DnsApp {
            a: Client::new(&api.base_url, Some(&key_a)),
            b: Client::new(&api.base_url, Some(&key_b)),
            _db: db,
            _sim: sim,
            _api: api,
            conf,
        }
    }
}

impl Drop for DnsApp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.conf);
    }
}

fn register(client: &Client, url: &str) -> testkit::Reply {
    client.post_json("/api/webhook-urls", &json!({ "url": url }))
}

#[test]
fn black_hole_names_of_one_company_hold_only_its_own_lookups_and_another_registers_meanwhile() {
    if !namespaces_available() {
        eprintln!("skipped: a private mount namespace (unshare --mount, root) is not available");
        return;
    }
    let Some(dns) = NameServer::start() else {
        eprintln!("skipped: cannot bind a UDP name server on 127.x.y.z:53 (root)");
        return;
    };
    let app = DnsApp::start(
        &dns,
        &[
            // Lookups are what this test is about: the test profile skips them otherwise.
            ("APP__WEBHOOKS__ALLOW_NON_PUBLIC_TARGETS", "false"),
            ("APP__WEBHOOKS__DNS_TIMEOUT_MS", "1000"),
            ("APP__WEBHOOKS__MAX_URLS_PER_COMPANY", "2"),
        ],
    );

    // The API looks names up through the test's name server.
    register(&app.a, "https://a-hooks.test/ok").expect(200);
    assert!(dns.times_asked("a-hooks.test") >= 1);

    // Company A registers 12 names whose name server never answers, all at once.
    let hosts: Vec<String> = (0..12).map(|n| format!("h{n}.buraco.test")).collect();
    let answers: Vec<(String, testkit::Reply)> = std::thread::scope(|s| {
        let running: Vec<_> = hosts
            .iter()
            .map(|host| {
                let a = &app.a;
                s.spawn(move || (host.clone(), register(a, &format!("https://{host}/"))))
            })
            .collect();
        running.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let mut timed_out = BTreeSet::new();
    let mut busy = 0;
    for (host, reply) in answers {
        match reply.status {
            422 => {
                let r = reply.expect(422);
                assert_eq!(r.data()["erros"][0]["campo"], "url", "{host}");
                timed_out.insert(host);
            }
            429 => {
                let r = reply.expect(429);
                assert_eq!(r.retry_after.as_deref(), Some("5"), "{host}");
                assert_eq!(r.json["isPgccErro"], false);
                assert!(
                    r.json["mensagem"].as_str().unwrap().contains("DNS"),
                    "{}",
                    r.text
                );
                busy += 1;
            }
            other => panic!("{host}: unexpected {other}: {}", reply.text),
        }
    }
    // At most 4 of A's lookups ran (the default share); the name server saw exactly those.
    assert_eq!(timed_out.len(), 4, "{timed_out:?}");
    assert_eq!(busy, 8);
    assert_eq!(dns.names_asked(".buraco.test"), timed_out);

    // A's 4 lookups are still waiting on the name server: A's next new name is refused at once
    // without being looked up...
    let refused = register(&app.a, "https://h12.buraco.test/").expect(429);
    assert_eq!(refused.retry_after.as_deref(), Some("5"));
    assert_eq!(dns.times_asked("h12.buraco.test"), 0);
    // ...while company B registers as usual, its name looked up.
    let b = register(&app.b, "https://b-hooks.test/hook").expect(200);
    assert_eq!(b.data()["url"], "https://b-hooks.test/hook");
    assert!(dns.times_asked("b-hooks.test") >= 1);

    // A's duplicate and A's limit are answered before any lookup, whatever DNS is doing.
    register(&app.a, "https://A-HOOKS.test/ok").expect(409);
    // (an address needs no lookup: A's second and last URL)
    register(&app.a, "https://93.184.215.14/a").expect(200);
    let over = register(&app.a, "https://h13.buraco.test/").expect(422);
    assert!(
        over.data()["erros"][0]["mensagem"]
            .as_str()
            .unwrap()
            .contains("máximo de 2"),
        "{}",
        over.text
    );
    assert_eq!(dns.times_asked("h13.buraco.test"), 0);

    // A name that does not exist is looked up once, then remembered for a few seconds.
    let gone = register(&app.b, "https://sumiu.test/x").expect(422);
    assert_eq!(gone.data()["erros"][0]["campo"], "url");
    let asked = dns.times_asked("sumiu.test");
    assert!(asked >= 1);
    register(&app.b, "https://sumiu.test/y").expect(422);
    assert_eq!(dns.times_asked("sumiu.test"), asked);
}
