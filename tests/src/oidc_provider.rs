//! npm's `oidc-provider` (the OpenID Certified Node implementation) as a child process, for the
//! console's sign-in tests (issue 38): `tests/oidc/provider.mjs`, the package installed by
//! `tests/oidc/install.sh` under target/. Its users and their roles are given at start; a user's
//! roles change through its stdin (as the IdP's administrator would change them), and so does
//! the lifetime of the id_tokens it issues. It exits when its stdin closes, and is killed on
//! `Drop`. It may be reached through a relay the test controls ([`crate::HttpRelay`]): the
//! issuer is then the relay's URL, and [`OidcProvider::address`] its own.

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
    /// The issuer, and the base of every endpoint: `address`, or the relay's URL it was given.
    pub issuer: String,
    /// `http://127.0.0.1:<port>`: where the provider listens.
    pub address: String,
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
        OidcProvider::start_with(client_id, client_secret, redirect_uri, users, json!({}))
    }

    /// As [`OidcProvider::start`], with `more` added to the provider's configuration
    /// (tests/oidc/provider.mjs: `post_logout_redirect_uris`, other `clients`, the `issuer` of a
    /// relay in front of it).
    pub fn start_with(
        client_id: &str,
        client_secret: &str,
        redirect_uri: &str,
        users: Value,
        more: Value,
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
        let mut config = json!({
            "modules": modules,
            "client_id": client_id,
            "client_secret": client_secret,
            "redirect_uris": [redirect_uri],
            "users": users,
        });
        if let (Some(config), Some(more)) = (config.as_object_mut(), more.as_object()) {
            config.extend(more.clone());
        }
        let issuer = config["issuer"].as_str().map(str::to_owned);
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
        let address = loop {
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
            issuer: issuer.unwrap_or_else(|| address.clone()),
            address,
        })
    }

    /// Gives user `sub` these roles from now on (its next id_token carries them).
    pub fn set_roles(&mut self, sub: &str, roles: &[&str]) {
        self.tell(
            &json!({"sub": sub, "roles": roles}),
            &format!("roles of {sub}:"),
        );
    }

    /// The id_tokens issued from now on expire `seconds` after they are issued (negative: before,
    /// as a token held back that long would have).
    pub fn set_id_token_ttl(&mut self, seconds: i64) {
        self.tell(&json!({ "id_token_ttl": seconds }), "id_token_ttl:");
    }

    /// Sends `change` to the provider and waits for the line starting with `ack`.
    fn tell(&mut self, change: &Value, ack: &str) {
        let line = format!("{change}\n");
        self.stdin
            .write_all(line.as_bytes())
            .expect("write to oidc-provider");
        self.stdin.flush().expect("flush");
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(10))
                .expect("oidc-provider acknowledged the change");
            if line.starts_with(ack) {
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
