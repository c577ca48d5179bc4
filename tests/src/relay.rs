//! A TCP relay the test controls, put between the service and PostgreSQL: [`Relay::pause`] stops
//! forwarding in both directions without closing or resetting anything, as a network path that
//! drops packets looks to the service (nothing answers, nothing fails); [`Relay::resume`]
//! forwards again what was held. Dropping the relay closes every connection it carries.
//! [`Relay::hold_next`] holds one message instead: the next bytes a client sends that contain a
//! given text (e.g. Citus's `COMMIT PREPARED` to a worker), until [`Relay::release`].

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often idle threads look at the pause and stop flags.
const TICK: Duration = Duration::from_millis(20);

pub struct Relay {
    port: u16,
    paused: Arc<AtomicBool>,
    stopped: Arc<AtomicBool>,
    hold: Arc<Mutex<Hold>>,
    acceptor: Option<JoinHandle<()>>,
}

/// [`Relay::hold_next`]'s state, shared by the connections' pumps.
#[derive(Default)]
struct Hold {
    /// The text whose next occurrence, client to server, is held.
    armed: Option<Vec<u8>>,
    /// Whether a read is held now.
    holding: bool,
    /// How many reads were held so far.
    held: u32,
}

impl Relay {
    /// Listens on a free port of 127.0.0.1 and relays every connection to `upstream`
    /// (`host:port`).
    pub fn start(upstream: &str) -> Relay {
        let upstream: SocketAddr = upstream
            .to_socket_addrs()
            .expect("resolve the relay's upstream")
            .next()
            .expect("an address for the relay's upstream");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the relay");
        listener.set_nonblocking(true).expect("non-blocking accept");
        let port = listener.local_addr().expect("relay address").port();
        let paused = Arc::new(AtomicBool::new(false));
        let stopped = Arc::new(AtomicBool::new(false));
        let hold = Arc::new(Mutex::new(Hold::default()));
        let acceptor = {
            let (paused, stopped, hold) = (paused.clone(), stopped.clone(), hold.clone());
            std::thread::spawn(move || accept(listener, upstream, paused, stopped, hold))
        };
        Relay {
            port,
            paused,
            stopped,
            hold,
            acceptor: Some(acceptor),
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `url` (a `postgres://` URL) with its host and port replaced by the relay's.
    pub fn url_for(&self, url: &str) -> String {
        let (scheme, rest) = url.split_once("://").expect("a URL with a scheme");
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let userinfo = authority
            .rsplit_once('@')
            .map(|(u, _)| format!("{u}@"))
            .unwrap_or_default();
        format!("{scheme}://{userinfo}127.0.0.1:{}{path}", self.port)
    }

    /// Stops forwarding: bytes stay unread in the kernel's buffers, connections stay open.
    pub fn pause(&self) {
        self.paused.store(true, Ordering::SeqCst);
    }

    /// Forwards again, what was held first.
    pub fn resume(&self) {
        self.paused.store(false, Ordering::SeqCst);
    }

    /// Holds the next read a client sends that contains `text` (whole in one read: a short
    /// message is), on whichever connection, until [`Relay::release`]; every other byte flows.
    pub fn hold_next(&self, text: &str) {
        self.hold.lock().unwrap().armed = Some(text.as_bytes().to_vec());
    }

    /// How many reads were held since the start (one per [`Relay::hold_next`] that caught one).
    pub fn held(&self) -> u32 {
        self.hold.lock().unwrap().held
    }

    /// Forwards the read held (if any), and holds nothing more.
    pub fn release(&self) {
        let mut hold = self.hold.lock().unwrap();
        hold.armed = None;
        hold.holding = false;
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// The `host:port` of a `postgres://` URL (for [`Relay::start`]).
pub fn host_port(url: &str) -> String {
    let rest = url.split_once("://").expect("a URL with a scheme").1;
    let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host_port.contains(':') {
        host_port.to_owned()
    } else {
        format!("{host_port}:5432")
    }
}

fn accept(
    listener: TcpListener,
    upstream: SocketAddr,
    paused: Arc<AtomicBool>,
    stopped: Arc<AtomicBool>,
    hold: Arc<Mutex<Hold>>,
) {
    let mut pumps = Vec::new();
    while !stopped.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((client, _)) => {
                let Ok(server) = TcpStream::connect_timeout(&upstream, Duration::from_secs(2))
                else {
                    continue;
                };
                for (from, to, upstream) in [
                    (client.try_clone(), server.try_clone(), true),
                    (server.try_clone(), client.try_clone(), false),
                ] {
                    let (Ok(from), Ok(to)) = (from, to) else {
                        continue;
                    };
                    let (paused, stopped) = (paused.clone(), stopped.clone());
                    let hold = upstream.then(|| hold.clone());
                    pumps.push(std::thread::spawn(move || {
                        pump(from, to, &paused, &stopped, hold.as_deref())
                    }));
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(TICK),
            Err(_) => std::thread::sleep(TICK),
        }
    }
    for pump in pumps {
        let _ = pump.join();
    }
}

/// Copies `from` to `to` until either side closes or the relay stops; reads nothing while paused.
/// Client to server (`hold` given), a read with the armed text waits for [`Relay::release`].
fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    paused: &AtomicBool,
    stopped: &AtomicBool,
    hold: Option<&Mutex<Hold>>,
) {
    let _ = from.set_nonblocking(false);
    let _ = from.set_read_timeout(Some(TICK));
    let mut buffer = [0u8; 16 * 1024];
    while !stopped.load(Ordering::SeqCst) {
        if paused.load(Ordering::SeqCst) {
            std::thread::sleep(TICK);
            continue;
        }
        match from.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                // read just as the pause began: held until the resume, like the rest
                while paused.load(Ordering::SeqCst) && !stopped.load(Ordering::SeqCst) {
                    std::thread::sleep(TICK);
                }
                if let Some(hold) = hold {
                    held_while_armed(hold, &buffer[..n], stopped);
                }
                if to.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}

/// Holds `read` until [`Relay::release`] (or the relay stops) when it contains the armed text;
/// the hold is disarmed by the read it catches.
fn held_while_armed(hold: &Mutex<Hold>, read: &[u8], stopped: &AtomicBool) {
    {
        let mut state = hold.lock().unwrap();
        let Some(text) = state.armed.as_deref() else {
            return;
        };
        if !read.windows(text.len()).any(|w| w == text) {
            return;
        }
        state.armed = None;
        state.holding = true;
        state.held += 1;
    }
    while hold.lock().unwrap().holding && !stopped.load(Ordering::SeqCst) {
        std::thread::sleep(TICK);
    }
}
