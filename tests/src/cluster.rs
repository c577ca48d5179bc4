//! A PostgreSQL cluster of the test's own, started with `scripts/pg.sh` in a new temporary folder,
//! for the tests that crash or stop the database: doing so touches no other test. It is stopped
//! and its folder removed on drop, so also when the test panics.

use std::path::PathBuf;
use std::process::Command;

use crate::processes::repo_root;

pub struct Cluster {
    dir: PathBuf,
    admin_url: String,
    port: u16,
}

impl Cluster {
    /// Initializes and starts a cluster on a free port (a few seconds: `initdb` runs).
    pub fn start() -> Cluster {
        let tag = &uuid::Uuid::new_v4().simple().to_string()[..12];
        // Short (the server's Unix socket lives in it) and reachable by the `postgres` user that
        // runs the cluster when the tests run as root.
        let dir = std::env::temp_dir().join(format!("consent-pg-{tag}"));
        let admin_url = pg_sh(&["start", &dir.to_string_lossy()]);
        Cluster::at(dir, admin_url)
    }

    /// A streaming replica of `primary` (`scripts/pg.sh replica`: `pg_basebackup -R`), started
    /// on a free port of its own as a hot standby. Stop it before its primary (declare it
    /// after).
    pub fn replica_of(primary: &Cluster) -> Cluster {
        let tag = &uuid::Uuid::new_v4().simple().to_string()[..12];
        let dir = std::env::temp_dir().join(format!("consent-pgr-{tag}"));
        let admin_url = pg_sh(&["replica", &primary.admin_url, &dir.to_string_lossy()]);
        Cluster::at(dir, admin_url)
    }

    /// The cluster `scripts/pg.sh` started in `dir`, answering at `admin_url`.
    fn at(dir: PathBuf, admin_url: String) -> Cluster {
        let port = admin_url
            .rsplit_once(':')
            .and_then(|(_, rest)| rest.split('/').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {admin_url}"));
        Cluster {
            dir,
            admin_url,
            port,
        }
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`; the same across [`Cluster::restart`].
    pub fn admin_url(&self) -> &str {
        &self.admin_url
    }

    /// Stops it like a crash: immediate shutdown, every connection cut, no checkpoint.
    pub fn crash(&self) {
        pg_sh(&["crash", &self.dir.to_string_lossy()]);
    }

    /// Starts it again on the same port (it recovers from its WAL first).
    pub fn restart(&self) {
        let url = pg_sh(&["start", &self.dir.to_string_lossy(), &self.port.to_string()]);
        assert_eq!(url, self.admin_url, "restarted on another port");
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(repo_root().join("scripts/pg.sh"))
            .args(["stop", &self.dir.to_string_lossy()])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs `scripts/pg.sh ARGS`; panics with its stderr when it fails; returns its stdout, trimmed.
fn pg_sh(args: &[&str]) -> String {
    let out = Command::new("bash")
        .arg(repo_root().join("scripts/pg.sh"))
        .args(args)
        .output()
        .expect("run scripts/pg.sh");
    assert!(
        out.status.success(),
        "scripts/pg.sh {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
