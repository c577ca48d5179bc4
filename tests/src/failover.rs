//! A pg_auto_failover formation (a monitor and two synchronous data nodes on 127.0.0.1), run by
//! `scripts/failover-formation.sh` in a folder of its own under /var/tmp and stopped by the pids
//! it recorded when the guard is dropped (also when the test panics).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::processes::repo_root;

/// Where Debian's `pg-auto-failover-cli` (pulled in by `postgresql-15-auto-failover`) puts it.
pub const PG_AUTOCTL: &str = "/usr/bin/pg_autoctl";

/// Whether pg_auto_failover is installed. Without it a test skips with a message, except in CI
/// (`CI=true`), where it fails: `.ci/run` installs it.
pub fn available_or_skip(test: &str) -> bool {
    if Path::new(PG_AUTOCTL).exists() {
        return true;
    }
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !in_ci,
        "{PG_AUTOCTL} is missing in CI: .ci/run installs it \
         (apt-get install postgresql-15-auto-failover)"
    );
    eprintln!(
        "skipping {test}: {PG_AUTOCTL} not found (apt-get install postgresql-15-auto-failover); \
         in CI this fails instead"
    );
    false
}

/// A running formation. Its data nodes are `node1` and `node2`.
pub struct Formation {
    dir: PathBuf,
    url: String,
}

impl Formation {
    /// Creates and starts a formation; returns once one node is primary and the other its
    /// synchronous standby.
    pub fn start() -> Formation {
        let tag = &uuid::Uuid::new_v4().simple().to_string()[..12];
        // under /var/tmp: reachable by the `postgres` user the script runs it as when root
        let dir = PathBuf::from(format!("/var/tmp/consent-failover-{tag}"));
        let mut formation = Formation {
            dir,
            url: String::new(),
        };
        formation.url = formation.script(&["start"]);
        formation
    }

    /// The multi-host URL of database `consent`
    /// (`postgresql://postgres@127.0.0.1:P1,127.0.0.1:P2/consent?target_session_attrs=read-write`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The same on database `postgres`: an admin URL for [`crate::TestDb::on_cluster`].
    pub fn admin_url(&self) -> String {
        crate::db::with_database(&self.url, "postgres")
    }

    /// The data node the monitor has as primary (`node1` or `node2`).
    pub fn primary(&self) -> String {
        self.script(&["primary"])
    }

    /// The port data node `node` listens on.
    pub fn port(&self, node: &str) -> u16 {
        std::fs::read_to_string(self.dir.join(format!("{node}.port")))
            .expect("the node's port file")
            .trim()
            .parse()
            .expect("a port")
    }

    /// kill -9 of data node `node`: its keeper and its PostgreSQL, no shutdown.
    pub fn kill(&self, node: &str) {
        self.script(&["kill", node]);
    }

    /// Starts a killed node again; it rejoins as the standby of the current primary.
    pub fn rejoin(&self, node: &str) {
        self.script(&["rejoin", node]);
    }

    /// Waits for one primary and one secondary again.
    pub fn wait_healthy(&self) {
        self.script(&["wait"]);
    }

    /// `pg_autoctl perform switchover`: returns once the other node is primary.
    pub fn switchover(&self) {
        self.script(&["switchover"]);
    }

    /// The folder with every node's log (`monitor.log`, `node1.log`, `node2.log`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Runs the script; panics with its stderr and the folder of logs on failure; its stdout's
    /// last line.
    fn script(&self, args: &[&str]) -> String {
        let (command, rest) = args.split_first().expect("a command");
        let out = Command::new(repo_root().join("scripts/failover-formation.sh"))
            .arg(command)
            .arg(&self.dir)
            .args(rest)
            .output()
            .expect("run scripts/failover-formation.sh");
        assert!(
            out.status.success(),
            "failover-formation.sh {command} failed: {}{}(logs in {})",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.dir.display()
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap_or_default()
            .trim()
            .to_owned()
    }
}

impl Drop for Formation {
    fn drop(&mut self) {
        let _ = Command::new(repo_root().join("scripts/failover-formation.sh"))
            .arg("stop")
            .arg(&self.dir)
            .output();
        // kept after a failing test, for its logs
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
