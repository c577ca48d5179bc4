//! Debian's PgBouncer (`/usr/sbin/pgbouncer`) in transaction mode in front of a test cluster,
//! configured in a temporary folder of its own and killed by its pid when the guard is dropped
//! (also when the test panics).

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::processes::log_dir;

pub const PGBOUNCER: &str = "/usr/sbin/pgbouncer";

/// Whether PgBouncer is installed. Without it a test skips with a message, except in CI
/// (`CI=true`), where it fails: `.ci/run` installs it.
pub fn available_or_skip(test: &str) -> bool {
    if Path::new(PGBOUNCER).exists() {
        return true;
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !in_ci,
        "{PGBOUNCER} is missing in CI: .ci/run installs it (apt-get install pgbouncer)"
    );
    eprintln!(
        "skipping {test}: {PGBOUNCER} not found (apt-get install pgbouncer); in CI this fails instead"
    );
    false
}

pub struct PgBouncer {
    child: Child,
    dir: PathBuf,
    port: u16,
    /// Its log (stderr).
    pub log: PathBuf,
}

impl PgBouncer {
    /// Starts PgBouncer (pool_mode = transaction, trust authentication, as the test cluster) on
    /// a free 127.0.0.1 port, in front of the PostgreSQL that `database_url` points at; every
    /// database name is passed through. Returns once it accepts connections.
    pub fn start(database_url: &str) -> PgBouncer {
        let (host, pg_port) = host_and_port(database_url);
        let tag = &uuid::Uuid::new_v4().simple().to_string()[..12];
        let dir = std::env::temp_dir().join(format!("consent-pgbouncer-{tag}"));
        std::fs::create_dir_all(&dir).expect("create the PgBouncer folder");
        let port = free_port();
        let root = is_root();
        // PgBouncer refuses to run as root unless told which user to become.
        let user_line = if root { "user = postgres\n" } else { "" };
        std::fs::write(dir.join("userlist.txt"), "\"postgres\" \"\"\n").expect("write userlist");
        std::fs::write(
            dir.join("pgbouncer.ini"),
            format!(
                "[databases]\n\
                 * = host={host} port={pg_port}\n\
                 [pgbouncer]\n\
                 listen_addr = 127.0.0.1\n\
                 listen_port = {port}\n\
                 unix_socket_dir =\n\
                 auth_type = trust\n\
                 auth_file = {userlist}\n\
                 pool_mode = transaction\n\
                 max_client_conn = 200\n\
                 default_pool_size = 20\n\
                 {user_line}",
                userlist = dir.join("userlist.txt").display(),
            ),
        )
        .expect("write pgbouncer.ini");
        if root {
            // readable by `postgres` once PgBouncer has switched to it
            let _ = Command::new("chmod")
                .arg("-R")
                .arg("a+rX")
                .arg(&dir)
                .status();
        }
        let log = log_dir().join(format!("pgbouncer-{tag}.log"));
        let log_file = std::fs::File::create(&log).expect("create the PgBouncer log");
        let child = Command::new(PGBOUNCER)
            .arg(dir.join("pgbouncer.ini"))
            .stdin(Stdio::null())
            .stdout(Stdio::from(log_file.try_clone().expect("log")))
            .stderr(Stdio::from(log_file))
            .spawn()
            .expect("start pgbouncer");
        let mut bouncer = PgBouncer {
            child,
            dir,
            port,
            log,
        };
        bouncer.wait_listening();
        bouncer
    }

    fn wait_listening(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "pgbouncer exited ({status}); its log:\n{}",
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "pgbouncer never listened; its log:\n{}",
            std::fs::read_to_string(&self.log).unwrap_or_default()
        );
    }

    /// `database_url` with its host and port replaced by PgBouncer's.
    pub fn url_for(&self, database_url: &str) -> String {
        let (host, port) = host_and_port(database_url);
        database_url.replacen(
            &format!("@{host}:{port}/"),
            &format!("@127.0.0.1:{}/", self.port),
            1,
        )
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        // by its pid: the child handle is the pgbouncer process itself (it does not daemonize)
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `(host, port)` of `postgres://user@host:port/db...`.
fn host_and_port(url: &str) -> (String, u16) {
    let authority = url
        .split_once("://")
        .and_then(|(_, rest)| rest.split('/').next())
        .unwrap_or_else(|| panic!("not a postgres URL"));
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let (host, port) = host_port
        .rsplit_once(':')
        .unwrap_or_else(|| panic!("the test database URL has no port"));
    (host.to_owned(), port.parse().expect("a port number"))
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("its address").port()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}
