//! The checkpoint job against an independent tlog-witness (issue 36, part 3; docs/auditoria.md,
//! "An independent witness"): PyPI's `aics-witness` (a Python implementation of C2SP
//! tlog-witness v1.1.0, its own SQLite state and key), configured with each company's origin and
//! the log's vkey, cosigns the service's checkpoints; the cosignature in the note
//! `GET /api/auditoria/checkpoint` serves verifies with this suite's own tlog-cosignature code;
//! a larger checkpoint is cosigned too (our consistency proof accepted by another
//! implementation's verifier); and a history rewritten as the database's owner gets 409 from it
//! and no checkpoint from the job.
//!
//! `aics-witness` is found as `$AICS_WITNESS_PYTHON` (a Python that can `import aics_witness`;
//! `.ci/run` installs it into a virtualenv and sets it), else the virtualenv `.ci/run` makes under
//! `target/`, else `python3`. Without it the test prints why and skips, in CI too: a registry
//! hiccup while installing it must not fail the run (`.ci/run` says so in its output).

use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ed25519_dalek::SigningKey;
use testkit::processes::{log_dir, repo_root};
use testkit::wait_until;

use crate::audit_log::{create_active, hash};
use crate::helpers::*;
use crate::witness::{cosigned_by, hex, key_id, read, size_of, split_note};

const LOG_SEED: [u8; 32] = [0x3c; 32];
const AICS_NAME: &str = "aics.witness.test/w1";
/// aics-witness's key: its vkey's base64 holds a `+` (which our vkey parser once split on).
const AICS_SEED: [u8; 32] = [0x08; 32];
const ORIGIN_A: &str = "consent-api/empresas/11222333000181";
const ORIGIN_B: &str = "consent-api/empresas/12ABC34501DE35";
const AICS_VERSION_NOTE: &str = "pip install --ignore-requires-python aics-witness==0.1.0 \
    (it declares Python >=3.12 and runs on 3.11)";

/// A Python that can `import aics_witness`, or why there is none.
fn aics_python() -> Result<PathBuf, String> {
    let imports = |python: &Path| {
        Command::new(python)
            .args(["-c", "import aics_witness"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if let Some(python) = std::env::var_os("AICS_WITNESS_PYTHON") {
        let python = PathBuf::from(python);
        // set on purpose (as .ci/run does once the install worked): a Python that cannot import
        // it is a broken set-up, not a missing tool
        assert!(
            imports(&python),
            "AICS_WITNESS_PYTHON={} cannot import aics_witness",
            python.display()
        );
        return Ok(python);
    }
    let ci_venv = repo_root().join("target/aics-witness-0.1.0/bin/python");
    for python in [ci_venv, PathBuf::from("python3")] {
        if imports(&python) {
            return Ok(python);
        }
    }
    Err(format!(
        "no Python with aics_witness: set AICS_WITNESS_PYTHON, or {AICS_VERSION_NOTE}"
    ))
}

/// A running `aics-witness serve`: killed by its pid when dropped, and it exits by itself when
/// the test process goes away (its stdin closes).
struct AicsWitness {
    child: Child,
    _stdin: ChildStdin,
    python: PathBuf,
    config: PathBuf,
    url: String,
    vkey: String,
    log: PathBuf,
}

impl Drop for AicsWitness {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl AicsWitness {
    fn cli(python: &Path, config: &Path, args: &[&str]) -> String {
        let output = Command::new(python)
            .env("WITNESS_SEED_HEX", hex(&AICS_SEED))
            .args(["-m", "aics_witness"])
            .args(args)
            .arg("--config")
            .arg(config)
            .stdin(Stdio::null())
            .output()
            .expect("run aics-witness");
        assert!(
            output.status.success(),
            "aics-witness {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// `init` (its own name and key, in `dir`), `add-log` of each origin with `log_vkey`, then
    /// `serve` on a free port of 127.0.0.1.
    fn start(python: PathBuf, dir: &Path, origins: &[&str], log_vkey: &str) -> AicsWitness {
        let config = dir.join("witness.json");
        // a seed of ours (`--new-database`: the witness counts a seed from the environment as
        // an existing identity), so the vkey it prints can be checked against our encoding
        let init = Self::cli(
            &python,
            &config,
            &["init", "--new-database", "--name", AICS_NAME],
        );
        let vkey = init
            .lines()
            .last()
            .expect("init prints the vkey")
            .to_owned();
        for origin in origins {
            Self::cli(
                &python,
                &config,
                &["add-log", "--origin", origin, "--vkey", log_vkey],
            );
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let log = dir.join("aics-witness.log");
        // the witness's own `main`, with a thread that ends the process when stdin closes (the
        // test died): no orphan is left listening
        let script = "import os, sys, threading\n\
            from aics_witness.cli import main\n\
            threading.Thread(target=lambda: (sys.stdin.buffer.read(), os._exit(0)), daemon=True).start()\n\
            sys.exit(main(sys.argv[1:]))\n";
        let mut child = Command::new(&python)
            .env("WITNESS_SEED_HEX", hex(&AICS_SEED))
            .args(["-c", script, "serve", "--listen"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("--config")
            .arg(&config)
            .stdin(Stdio::piped())
            .stdout(Stdio::from(std::fs::File::create(&log).unwrap()))
            .stderr(Stdio::from(
                std::fs::OpenOptions::new().append(true).open(&log).unwrap(),
            ))
            .spawn()
            .expect("start aics-witness serve");
        let stdin = child.stdin.take().unwrap();
        let url = format!("http://127.0.0.1:{port}");
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(2)))
            .build()
            .into();
        let up = wait_until(Duration::from_secs(30), || {
            if child.try_wait().ok().flatten().is_some() {
                panic!("aics-witness serve exited: {}", read(&log));
            }
            agent
                .get(&format!("{url}/healthz"))
                .call()
                .is_ok_and(|r| r.status().as_u16() == 200)
        });
        assert!(up, "aics-witness never answered /healthz: {}", read(&log));
        AicsWitness {
            child,
            _stdin: stdin,
            python,
            config,
            url,
            vkey,
            log,
        }
    }

    /// `status --json`: the size the witness holds for `origin` (None when nothing cosigned).
    fn size_held(&self, origin: &str) -> Option<u64> {
        let status: serde_json::Value = serde_json::from_str(&Self::cli(
            &self.python,
            &self.config,
            &["status", "--json"],
        ))
        .expect("status --json");
        status["logs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["origin"] == origin)
            .and_then(|l| l["size"].as_u64())
    }

    /// The spec's monitoring endpoint: the latest checkpoint it cosigned for `origin`.
    fn monitored(&self, origin: &str) -> (u16, String) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let path = hex(&hash(&[origin.as_bytes()]));
        let mut response = agent
            .get(&format!("{}/{path}/checkpoint", self.url))
            .call()
            .unwrap();
        let text = response.body_mut().read_to_string().unwrap();
        (response.status().as_u16(), text)
    }
}

/// The witness key inside a vkey `name+id+base64(0x04 || key)`, checked against its key id.
fn witness_key(vkey: &str) -> [u8; 32] {
    let mut parts = vkey.splitn(3, '+');
    let (name, id, key) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    assert_eq!(name, AICS_NAME, "{vkey}");
    let bytes = STANDARD.decode(key).unwrap();
    assert_eq!(bytes.len(), 33, "{vkey}");
    assert_eq!(bytes[0], 0x04, "a cosignature/v1 key: {vkey}");
    let key: [u8; 32] = bytes[1..].try_into().unwrap();
    assert_eq!(id, hex(&key_id(AICS_NAME, 0x04, &key)), "{vkey}");
    key
}

#[test]
fn an_independent_witness_aics_witness_cosigns_the_checkpoints_and_refuses_a_rewritten_history() {
    let python = match aics_python() {
        Ok(python) => python,
        Err(why) => {
            eprintln!("skipping the independent witness test: {why}");
            return;
        }
    };
    let dir = log_dir().join(format!(
        "aics-witness-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    ));
    std::fs::create_dir_all(&dir).unwrap();

    // the log's vkey (signed-note, type 0x01), as the operator gives it to a witness
    let log_key = SigningKey::from_bytes(&LOG_SEED).verifying_key().to_bytes();
    let log_vkey = format!(
        "consent-api+{}+{}",
        hex(&key_id("consent-api", 0x01, &log_key)),
        STANDARD.encode([&[0x01u8][..], &log_key].concat())
    );
    let witness = AicsWitness::start(python, &dir, &[ORIGIN_A, ORIGIN_B], &log_vkey);
    let aics_key = witness_key(&witness.vkey);
    assert_eq!(
        aics_key,
        SigningKey::from_bytes(&AICS_SEED)
            .verifying_key()
            .to_bytes()
    );
    assert!(
        witness.vkey.matches('+').count() > 2,
        "the seed is chosen so the vkey's base64 holds a '+': {}",
        witness.vkey
    );

    let witnesses = format!("url={};key={}", witness.url, witness.vkey);
    let seed = STANDARD.encode(LOG_SEED);
    let app = TestApp::spawn_with(&[
        ("APP__AUDITORIA__WITNESSES", &witnesses),
        ("APP__AUDITORIA__SIGNING_KEY", &seed),
    ]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let auditor_key = crate::scopes::issue_key_with_scopes(&app, &app.company_a, "auditor");
    let auditor = testkit::Client::new(&app.api.base_url, Some(&auditor_key));
    let cosigned_at = |size: u64| {
        let mut note = String::new();
        let cosigned = wait_until(Duration::from_secs(30), || {
            let reply = auditor.get("/api/auditoria/checkpoint");
            note = reply.text;
            reply.status == 200
                && size_of(&note) == size
                && cosigned_by(&note, AICS_NAME, &aics_key)
        });
        assert!(
            cosigned,
            "no checkpoint of size {size} cosigned by aics-witness: {note}\n\
             aics-witness log:\n{}\nservice log:\n{}",
            read(&witness.log),
            read(&app.api.log)
        );
        note
    };

    for _ in 0..3 {
        create_active(&app);
    }
    let first = cosigned_at(3);
    assert_eq!(witness.size_held(ORIGIN_A), Some(3));
    // the log's own signature is still the note's first line
    let (body, signatures) = split_note(&first);
    assert!(body.starts_with(&format!("{ORIGIN_A}\n3\n")), "{first}");
    assert_eq!(signatures[0].0, "consent-api", "{first}");

    // more entries: a larger checkpoint, with the consistency proof from 3, is cosigned too
    for _ in 0..2 {
        create_active(&app);
    }
    let second = cosigned_at(5);
    assert_eq!(witness.size_held(ORIGIN_A), Some(5));
    // the witness's monitoring endpoint serves the same checkpoint text
    let (status, monitored) = witness.monitored(ORIGIN_A);
    assert_eq!(status, 200, "{monitored}");
    assert_eq!(split_note(&monitored).0, split_note(&second).0);
    assert!(cosigned_by(&monitored, AICS_NAME, &aics_key), "{monitored}");
    assert_eq!(
        app.a.get("/api/status").expect(200).data()["checkpointCossinado"],
        true
    );

    // the owner (here the superuser) rewrites history: company A's last entry goes, with its
    // checkpoints and its stored tree, and the job is left to sign size 4
    crate::audit_log::rewrite_last_entry_as_owner(&app, &app.company_a);

    // aics-witness answers 409 naming 5; the job refuses to keep size 4
    let refused = wait_until(Duration::from_secs(30), || {
        read(&app.api.log).contains("has cosigned size 5")
    });
    assert!(
        refused,
        "the job never met aics-witness's refusal; its log:\n{}\naics-witness log:\n{}",
        read(&app.api.log),
        read(&witness.log)
    );
    assert!(read(&app.api.log).contains("not signing size 4"));
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        auditor.get("/api/auditoria/checkpoint").status,
        404,
        "no checkpoint is kept over the witness's refusal"
    );
    assert_eq!(witness.size_held(ORIGIN_A), Some(5), "the witness kept 5");
}
