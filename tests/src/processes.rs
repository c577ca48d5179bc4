//! The real binaries as child processes. Each reads its stdin and exits when it closes, so a
//! test process that dies (even by SIGKILL) takes its servers with it; `Drop` kills them too.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use crate::TestDb;

/// Where cargo put the workspace's binaries: the test executable lives in `target/<profile>/deps`.
pub fn bin_path(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: build the binaries first (`cargo build --workspace --bins`; `make test` does it)",
        path.display()
    );
    path
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

/// A folder for this test's logs (`target/e2e-logs`), kept after the run for inspection.
pub fn log_dir() -> PathBuf {
    let dir = repo_root().join("target").join("e2e-logs");
    std::fs::create_dir_all(&dir).expect("create target/e2e-logs");
    dir
}

struct Running {
    child: Child,
    _stdin: ChildStdin,
}

impl Running {
    /// Spawns `cmd` and waits for the stdout line starting with `ready_prefix`; returns the
    /// rest of that line (the base URL).
    fn spawn(mut cmd: Command, ready_prefix: &'static str, log: &Path) -> (Running, String) {
        let log_file = std::fs::File::create(log).expect("create the log file");
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file));
        let mut child = cmd.spawn().expect("start the process");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            for line in lines.by_ref().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix(ready_prefix) {
                    let _ = tx.send(rest.trim().to_owned());
                    break;
                }
            }
            // Keep draining so the child never blocks on a full pipe.
            for _ in lines {}
        });
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(url) => (
                Running {
                    child,
                    _stdin: stdin,
                },
                url,
            ),
            Err(_) => {
                let _ = child.kill();
                let log_text = std::fs::read_to_string(log).unwrap_or_default();
                panic!("{ready_prefix} never printed; its log:\n{log_text}");
            }
        }
    }
}

impl Running {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits up to `timeout` for the process to end by itself; its exit status, if it did.
    fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL: no shutdown, no flush; whatever was in flight is cut.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The PGCC simulator, seeded.
pub struct Sim {
    _process: Running,
    pub base_url: String,
    /// Its stderr.
    pub log: PathBuf,
}

impl Sim {
    pub fn start(seed: &Value) -> Sim {
        let tag = uuid::Uuid::new_v4().simple().to_string();
        let seed_path = std::env::temp_dir().join(format!("pgcc-seed-{tag}.json"));
        std::fs::write(&seed_path, serde_json::to_vec(seed).unwrap()).expect("write the seed");
        let mut cmd = Command::new(bin_path("pgcc-sim"));
        cmd.args(["--port", "0", "--exit-on-stdin-close", "--seed"])
            .arg(&seed_path);
        let log = log_dir().join(format!("pgcc-sim-{tag}.log"));
        let (process, base_url) = Running::spawn(cmd, "pgcc-sim listening on ", &log);
        Sim {
            _process: process,
            base_url,
            log,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url, path)
    }
}

/// Environment of `consent-api` for a test: profile `test`, the test's database and simulator.
fn api_env(cmd: &mut Command, db: &TestDb, sim: &Sim) {
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("APP_ENV", "test")
        .env("APP_CONFIG_DIR", repo_root().join("config"))
        // the service runs as a role that owns nothing; the owner migrates and grants
        .env("APP__DATABASE__URL", db.runtime_url())
        .env("APP__DATABASE__MIGRATION_URL", db.url())
        .env("APP__PGCC__BASE_URL", &sim.base_url)
        .env("APP__SERVER__HOST", "127.0.0.1")
        .env("APP__SERVER__PORT", "0");
}

/// `consent-api serve` against a test database and simulator.
pub struct Api {
    _process: Running,
    pub base_url: String,
    pub log: PathBuf,
}

impl Api {
    pub fn start(db: &TestDb, sim: &Sim) -> Api {
        Api::start_with(db, sim, &[])
    }

    /// With extra `APP__...` variables, e.g. `("APP__PGCC__TIMEOUT_MS", "500")`.
    pub fn start_with(db: &TestDb, sim: &Sim, env: &[(&str, &str)]) -> Api {
        Api::start_wrapped(db, sim, env, &[])
    }

    /// [`Api::start_with`], run by `wrapper` (a program and its arguments, the API's command
    /// line appended): e.g. `unshare` for a process with its own view of `/etc/resolv.conf`.
    /// The wrapper must `exec` the API, so that the process is the API's.
    pub fn start_wrapped(
        db: &TestDb,
        sim: &Sim,
        env: &[(&str, &str)],
        wrapper: &[&std::ffi::OsStr],
    ) -> Api {
        let api = bin_path("consent-api");
        let mut cmd = match wrapper.split_first() {
            Some((program, args)) => {
                let mut cmd = Command::new(program);
                cmd.args(args).arg(&api);
                cmd
            }
            None => Command::new(&api),
        };
        api_env(&mut cmd, db, sim);
        cmd.envs(env.iter().copied())
            .args(["serve", "--exit-on-stdin-close"]);
        // One log per process: a restarted API must not overwrite its predecessor's log.
        let tag = &uuid::Uuid::new_v4().simple().to_string()[..8];
        let log = log_dir().join(format!("consent-api-{}-{tag}.log", db.name()));
        let (process, base_url) = Running::spawn(cmd, "consent-api listening on ", &log);
        Api {
            _process: process,
            base_url,
            log,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url, path)
    }

    /// Kills the process with SIGKILL and waits for it to be gone.
    pub fn kill(&mut self) {
        self._process.kill();
    }

    /// The process id, e.g. to send it a signal with `kill -TERM <pid>`.
    pub fn pid(&self) -> u32 {
        self._process.pid()
    }

    /// Waits up to `timeout` for the process to exit by itself (after a signal); its exit status,
    /// or `None` if it is still running.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        self._process.wait_exit(timeout)
    }

    /// The most memory the process has held resident since it started, in bytes (`VmHWM` of
    /// `/proc/<pid>/status`: a peak, so a spike between two looks is not missed). Linux only.
    pub fn peak_rss_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("read /proc/<pid>/status (Linux)");
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM in /proc/<pid>/status");
        kib * 1024
    }
}

/// Sends `signal` (a name such as `TERM`) to process `pid` with the system's `kill`.
pub fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{signal} {pid} failed");
}

/// `consent-api worker` (background jobs alone) against a test database and simulator.
pub struct Worker {
    _process: Running,
}

impl Worker {
    pub fn start_with(db: &TestDb, sim: &Sim, env: &[(&str, &str)]) -> Worker {
        let mut cmd = Command::new(bin_path("consent-api"));
        api_env(&mut cmd, db, sim);
        cmd.envs(env.iter().copied())
            .args(["worker", "--exit-on-stdin-close"]);
        let tag = uuid::Uuid::new_v4().simple().to_string();
        let log = log_dir().join(format!("consent-worker-{}-{tag}.log", db.name()));
        let (process, _) = Running::spawn(cmd, "consent-api worker running", &log);
        Worker { _process: process }
    }

    /// The process id, e.g. to send it a signal.
    pub fn pid(&self) -> u32 {
        self._process.pid()
    }

    /// Waits up to `timeout` for the process to exit by itself; its exit status, if it did.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        self._process.wait_exit(timeout)
    }
}

/// Polls `condition` every 100 ms until it holds or `timeout` passes; returns whether it held.
/// For waiting on background work, never for asserting how fast something is.
pub fn wait_until(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if condition() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs a `consent-api` subcommand (with the test's config) and returns its output.
pub fn cli(db: &TestDb, sim: &Sim, args: &[&str]) -> Output {
    let mut cmd = Command::new(bin_path("consent-api"));
    api_env(&mut cmd, db, sim);
    cmd.args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run consent-api")
}

/// Runs a `consent-api` subcommand with extra `APP__...` variables (e.g. another database URL).
pub fn cli_with(db: &TestDb, sim: &Sim, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = Command::new(bin_path("consent-api"));
    api_env(&mut cmd, db, sim);
    cmd.envs(env.iter().copied())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run consent-api")
}

/// `company create` then `api-key issue`, through the real command line: (company id, key).
pub fn company_with_key(db: &TestDb, sim: &Sim, nome: &str, cnpj: &str) -> (String, String) {
    let out = cli(
        db,
        sim,
        &["company", "create", "--nome", nome, "--cnpj", cnpj],
    );
    assert!(
        out.status.success(),
        "company create: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = single_line(&out.stdout);
    let out = cli(db, sim, &["api-key", "issue", "--empresa", &id]);
    assert!(
        out.status.success(),
        "api-key issue: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (id, single_line(&out.stdout))
}

/// Asserts that `stdout` is exactly one line and returns it.
pub fn single_line(stdout: &[u8]) -> String {
    let text = String::from_utf8(stdout.to_vec()).expect("utf-8 output");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line on stdout, got {text:?}");
    lines[0].to_owned()
}

/// Writes `bytes` to a child's stdin; used by tests that pipe input.
pub fn write_all(stdin: &mut ChildStdin, bytes: &[u8]) {
    stdin.write_all(bytes).expect("write to stdin");
}
