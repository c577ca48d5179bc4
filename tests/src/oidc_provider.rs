//! npm's `oidc-provider` (the OpenID Certified Node implementation) as a child process, for the
//! console's sign-in tests (issue 38): `tests/oidc/provider.mjs`, the package installed by
//! `tests/oidc/install.sh` under target/. Its users and their roles are given at start; a user's
//! roles change through its stdin (as the IdP's administrator would change them). It exits when
//! its stdin closes, and is killed on `Drop`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::processes::{log_dir, repo_root};

pub struct OidcProvider {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    /// `http://127.0.0.1:<port>`: the issuer, and the base of every endpoint.
    pub issuer: String,
}

impl OidcProvider {
    /// Starts the provider with one client (`client_id`, `client_secret`, `redirect_uri`) and
    /// `users` (`{"<sub>": {"email": ..., "roles": [...]}}`). `None` when Node.js or npm is
    /// missing (the caller skips; with `CI=true` it panics instead).
    pub fn start(
        client_id: &str,
        client_secret: &str,
        redirect_uri: &str,
        users: Value,
    ) -> Option<OidcProvider> {
        let root = repo_root();
        let install = Command::new("bash")
            .arg(root.join("tests/oidc/install.sh"))
            .stdin(Stdio::null())
            .output();
        let modules = match install {
            Ok(out)
                if out.status.success()
                    && Command::new("node").arg("--version").output().is_ok() =>
            {
                String::from_utf8_lossy(&out.stdout).trim().to_owned()
            }
            other => {
                let why = match other {
                    Ok(out) => String::from_utf8_lossy(&out.stderr).into_owned(),
                    Err(e) => e.to_string(),
                };
                if std::env::var("CI").as_deref() == Ok("true") {
                    panic!("oidc-provider could not be installed: {why}");
                }
                eprintln!("skipped: oidc-provider could not be installed ({why})");
                return None;
            }
        };
        let config = json!({
            "modules": modules,
            "client_id": client_id,
            "client_secret": client_secret,
            "redirect_uris": [redirect_uri],
            "users": users,
        });
        let tag = uuid::Uuid::new_v4().simple().to_string();
        let log = log_dir().join(format!("oidc-provider-{tag}.log"));
        let mut child = Command::new("node")
            .arg(root.join("tests/oidc/provider.mjs"))
            .arg(config.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(
                std::fs::File::create(&log).expect("create the log file"),
            ))
            .spawn()
            .expect("start node");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let issuer = loop {
            match lines.recv_timeout(Duration::from_secs(30)) {
                Ok(line) => {
                    if let Some(url) = line.strip_prefix("oidc-provider listening on ") {
                        break url.trim().to_owned();
                    }
                }
                Err(_) => {
                    let _ = child.kill();
                    panic!(
                        "oidc-provider never started; its log:\n{}",
                        std::fs::read_to_string(&log).unwrap_or_default()
                    );
                }
            }
        };
        Some(OidcProvider {
            child,
            stdin,
            lines,
            issuer,
        })
    }

    /// Gives user `sub` these roles from now on (its next id_token carries them).
    pub fn set_roles(&mut self, sub: &str, roles: &[&str]) {
        let line = format!("{}\n", json!({"sub": sub, "roles": roles}));
        self.stdin
            .write_all(line.as_bytes())
            .expect("write to oidc-provider");
        self.stdin.flush().expect("flush");
        let ack = format!("roles of {sub}:");
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(10))
                .expect("oidc-provider acknowledged the change");
            if line.starts_with(&ack) {
                return;
            }
        }
    }
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
