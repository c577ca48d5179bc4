//! Witnessed checkpoints (issue 36, part 3; docs/auditoria.md, "Witnesses"): `consent-api
//! witness serve` cosigns a company's checkpoints (C2SP tlog-witness), the checkpoint job keeps
//! the cosignatures in the note `GET /api/auditoria/checkpoint` serves, and when the history is
//! rewritten as the database's owner the witness answers 409, the job refuses to sign, and the
//! company's `consent-api audit monitor` fails naming both sizes. The signatures are checked
//! here with this file's own code (C2SP signed-note and tlog-cosignature).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use ed25519_dalek::{Signature, Signer as _, SigningKey, Verifier as _, VerifyingKey};
use testkit::processes::{bin_path, log_dir, repo_root};
use testkit::wait_until;

use crate::audit_log::{create_active, hash};
use crate::helpers::*;

/// The log's key (so this test can sign a checkpoint as the log would).
pub(crate) const LOG_SEED: [u8; 32] = [0x5a; 32];
const WITNESS_SEED: [u8; 32] = [0x77; 32];
pub(crate) const WITNESS_NAME: &str = "witness.test/w1";
pub(crate) const ORIGIN_A: &str = "consent-api/empresas/11222333000181";

/// A running `consent-api witness serve`.
pub(crate) struct WitnessProcess {
    child: Child,
    _stdin: ChildStdin,
    pub(crate) url: String,
    pub(crate) vkey: String,
    pub(crate) log: PathBuf,
}

impl Drop for WitnessProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn start_witness(dir: &Path) -> WitnessProcess {
    let log = dir.join("witness.log");
    let mut child = Command::new(bin_path("consent-api"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("APP_ENV", "test")
        .env("APP_CONFIG_DIR", repo_root().join("config"))
        .env("WITNESS_SIGNING_KEY", STANDARD.encode(WITNESS_SEED))
        .args([
            "witness",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--nome",
            WITNESS_NAME,
        ])
        .arg("--estado")
        .arg(dir.join("witness-state.json"))
        .arg("--logs")
        .arg(dir.join("logs"))
        .arg("--exit-on-stdin-close")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(std::fs::File::create(&log).unwrap()))
        .spawn()
        .expect("start the witness");
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let (mut url, mut vkey) = (None, None);
    while url.is_none() || vkey.is_none() {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("the witness never started: {}", read(&log)));
        if let Some(v) = line.strip_prefix("witness vkey ") {
            vkey = Some(v.trim().to_owned());
        }
        if let Some(u) = line.strip_prefix("witness listening on ") {
            url = Some(u.trim().to_owned());
        }
    }
    WitnessProcess {
        child,
        _stdin: stdin,
        url: url.unwrap(),
        vkey: vkey.unwrap(),
        log,
    }
}

pub(crate) fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// SHA-256(name || 0x0A || type || key)[:4]: a C2SP key id.
pub(crate) fn key_id(name: &str, key_type: u8, key: &[u8; 32]) -> [u8; 4] {
    let digest = hash(&[name.as_bytes(), b"\n", &[key_type], key]);
    [digest[0], digest[1], digest[2], digest[3]]
}

/// The note's text (what is signed) and its signature lines as (name, blob).
pub(crate) fn split_note(note: &str) -> (String, Vec<(String, Vec<u8>)>) {
    let (text, lines) = note.split_once("\n\n").expect("a signed note");
    let signatures = lines
        .lines()
        .map(|l| {
            let rest = l.strip_prefix("\u{2014} ").expect("a signature line");
            let (name, blob) = rest.split_once(' ').unwrap();
            (name.to_owned(), STANDARD.decode(blob).unwrap())
        })
        .collect();
    (format!("{text}\n"), signatures)
}

/// Whether the note carries a valid `cosignature/v1` of the witness key (per tlog-cosignature).
fn has_cosignature(note: &str, witness_key: &[u8; 32]) -> bool {
    cosigned_by(note, WITNESS_NAME, witness_key)
}

/// Whether the note carries a valid `cosignature/v1` line of the witness `witness_name` with
/// `witness_key` (per tlog-cosignature: key id of type 0x04, 8-byte time, Ed25519 over
/// `cosignature/v1\ntime <t>\n<checkpoint text>`).
pub(crate) fn cosigned_by(note: &str, witness_name: &str, witness_key: &[u8; 32]) -> bool {
    let (body, signatures) = split_note(note);
    let id = key_id(witness_name, 0x04, witness_key);
    signatures.iter().any(|(name, blob)| {
        if name != witness_name || blob.len() != 76 || blob[..4] != id {
            return false;
        }
        let time = u64::from_be_bytes(blob[4..12].try_into().unwrap());
        let message = format!("cosignature/v1\ntime {time}\n{body}");
        let signature = Signature::from_slice(&blob[12..]).unwrap();
        VerifyingKey::from_bytes(witness_key)
            .unwrap()
            .verify(message.as_bytes(), &signature)
            .is_ok()
    })
}

pub(crate) fn size_of(note: &str) -> u64 {
    note.lines().nth(1).unwrap().parse().unwrap()
}

fn monitor(app: &TestApp, key: &str, state: &Path, witness_vkey: &str) -> Output {
    Command::new(bin_path("consent-api"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("APP_ENV", "test")
        .env("APP_CONFIG_DIR", repo_root().join("config"))
        .env("CONSENT_API_KEY", key)
        .args(["audit", "monitor", "--url", &app.api.base_url])
        .arg("--estado")
        .arg(state)
        .args(["--testemunha", witness_vkey])
        .stdin(Stdio::null())
        .output()
        .expect("run audit monitor")
}

fn post_to_witness(url: &str, body: &str) -> (u16, String, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent
        .post(&format!("{url}/add-checkpoint"))
        .send(body)
        .unwrap();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let text = response.body_mut().read_to_string().unwrap();
    (response.status().as_u16(), content_type, text)
}

#[test]
fn a_witnessed_log_rewritten_as_the_owner_gets_409_from_the_witness_no_checkpoint_and_a_failing_monitor(
) {
    let dir = log_dir().join(format!(
        "witness-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    ));
    std::fs::create_dir_all(&dir).unwrap();
    // the witness knows no log yet: the service's checkpoints get 404 until its origin is added
    std::fs::write(dir.join("logs"), "# origin vkey\n").unwrap();
    let witness = start_witness(&dir);
    let witness_key = SigningKey::from_bytes(&WITNESS_SEED)
        .verifying_key()
        .to_bytes();
    let expected_vkey = format!(
        "{WITNESS_NAME}+{}+{}",
        hex(&key_id(WITNESS_NAME, 0x04, &witness_key)),
        STANDARD.encode([&[0x04u8][..], &witness_key].concat())
    );
    assert_eq!(witness.vkey, expected_vkey, "the vkey is C2SP's, type 0x04");

    let witnesses = format!("url={};key={}", witness.url, witness.vkey);
    let seed = STANDARD.encode(LOG_SEED);
    let app = TestApp::spawn_with(&[
        ("APP__AUDITORIA__WITNESSES", &witnesses),
        ("APP__AUDITORIA__SIGNING_KEY", &seed),
    ]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);

    // how a witness learns a company's origin: a line of its logs file, with the log's vkey
    // (built from the JWKS: the kid is the key id of type 0x01)
    let jwks = app.anonymous.get("/.well-known/jwks.json");
    let log_key: [u8; 32] = SigningKey::from_bytes(&LOG_SEED).verifying_key().to_bytes();
    let jwk = jwks.json["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["x"] == URL_SAFE_NO_PAD.encode(log_key))
        .unwrap_or_else(|| panic!("the configured key is published: {}", jwks.text))
        .clone();
    let kid = jwk["kid"].as_str().unwrap();
    assert_eq!(kid, hex(&key_id("consent-api", 0x01, &log_key)));
    let log_vkey = format!(
        "consent-api+{kid}+{}",
        STANDARD.encode([&[0x01u8][..], &log_key].concat())
    );
    std::fs::write(dir.join("logs"), format!("{ORIGIN_A} {log_vkey}\n")).unwrap();

    for _ in 0..4 {
        create_active(&app);
    }
    let auditor_key = crate::scopes::issue_key_with_scopes(&app, &app.company_a, "auditor");
    let auditor = testkit::Client::new(&app.api.base_url, Some(&auditor_key));
    let mut note = String::new();
    let cosigned = wait_until(Duration::from_secs(30), || {
        let reply = auditor.get("/api/auditoria/checkpoint");
        note = reply.text;
        reply.status == 200 && size_of(&note) == 4 && has_cosignature(&note, &witness_key)
    });
    assert!(
        cosigned,
        "no cosigned checkpoint of size 4: {note}\nwitness log: {}",
        read(&witness.log)
    );
    // the log's own signature is still there and verifies (signed-note, key id type 0x01)
    let (body, signatures) = split_note(&note);
    let log_id = key_id("consent-api", 0x01, &log_key);
    assert!(signatures.iter().any(|(name, blob)| {
        name == "consent-api"
            && blob[..4] == log_id
            && VerifyingKey::from_bytes(&log_key)
                .unwrap()
                .verify(body.as_bytes(), &Signature::from_slice(&blob[4..]).unwrap())
                .is_ok()
    }));

    // Go's checksum-database note package still opens the cosigned note with the log's key alone
    // (the witness's line is an unknown signature to it)
    if let Some(opened) = open_with_go_note(&note, &log_vkey) {
        assert!(
            opened.status.success(),
            "{}",
            String::from_utf8_lossy(&opened.stderr)
        );
        let stdout = String::from_utf8_lossy(&opened.stdout);
        assert!(stdout.starts_with(&body), "{stdout}");
        assert!(stdout.contains("verified consent-api\n"), "{stdout}");
        assert!(stdout.contains("unverified 1\n"), "{stdout}");
    }

    assert_eq!(
        app.a.get("/api/status").expect(200).data()["checkpointCossinado"],
        true
    );

    // the company's monitor keeps it
    let state = dir.join("monitor-checkpoint");
    let first = monitor(&app, &auditor_key, &state, &witness.vkey);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );

    // the owner (here the superuser) rewrites history: company A's last entry goes, with its
    // checkpoints and its stored tree, and the job is left to sign again
    crate::audit_log::rewrite_last_entry_as_owner(&app, &app.company_a);

    // the job signs size 3 and submits it: the witness answers 409 (it cosigned 4), the job
    // refuses to keep it
    let refused = wait_until(Duration::from_secs(30), || {
        read(&app.api.log).contains("has cosigned size 4")
    });
    assert!(
        refused,
        "the job never met the witness's refusal; its log:\n{}",
        read(&app.api.log)
    );
    assert!(read(&app.api.log).contains("not signing size 3"));
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        auditor.get("/api/auditoria/checkpoint").status,
        404,
        "no checkpoint is kept over the witness's refusal"
    );

    // the witness's answer, asked directly: size 3 after size 4 is a 409 naming 4
    let signer = SigningKey::from_bytes(&LOG_SEED);
    let text = format!("{ORIGIN_A}\n3\n{}\n", STANDARD.encode([7u8; 32]));
    let mut blob = log_id.to_vec();
    blob.extend_from_slice(&signer.sign(text.as_bytes()).to_bytes());
    let checkpoint = format!("{text}\n\u{2014} consent-api {}\n", STANDARD.encode(blob));
    let (status, content_type, answer) =
        post_to_witness(&witness.url, &format!("old 0\n\n{checkpoint}"));
    assert_eq!((status, answer.as_str()), (409, "4\n"));
    assert_eq!(content_type, "text/x.tlog.size");
    // another origin is unknown to the witness: 404
    let other = checkpoint.replace(ORIGIN_A, "consent-api/empresas/99999999000191");
    let (status, _, _) = post_to_witness(&witness.url, &format!("old 0\n\n{other}"));
    assert_eq!(status, 404);

    // without its witness (gone), the job keeps signing: size 3, uncosigned; the company's
    // monitor names both sizes
    drop(witness);
    let mut latest = String::new();
    let signed = wait_until(Duration::from_secs(30), || {
        let reply = auditor.get("/api/auditoria/checkpoint");
        latest = reply.text;
        reply.status == 200
    });
    assert!(signed, "the job stopped signing without a witness");
    assert_eq!(size_of(&latest), 3, "{latest}");
    assert!(!has_cosignature(&latest, &witness_key));
    // /api/status and a metric say the checkpoint lacks a witness
    assert_eq!(
        app.a.get("/api/status").expect(200).data()["checkpointCossinado"],
        false
    );
    let metrics = app.anonymous.get("/metrics").text;
    assert!(
        metrics.contains("consent_api_audit_last_checkpoint_unwitnessed 1"),
        "{metrics}"
    );
    let second = monitor(&app, &auditor_key, &state, &expected_vkey);
    assert!(!second.status.success());
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("size 3") && stderr.contains("size 4"),
        "the monitor names both checkpoints: {stderr}"
    );
    assert_eq!(
        size_of(&read(&state)),
        4,
        "the monitor keeps the checkpoint it trusted"
    );
}

/// `tests/go/opennote` (golang.org/x/mod/sumdb/note, Debian's copy, offline) run on `note`;
/// `None` when Go or the package is not installed (outside CI only: `.ci/run` installs them).
fn open_with_go_note(note: &str, vkey: &str) -> Option<Output> {
    let gopath = Path::new("/usr/share/gocode");
    let installed = gopath
        .join("src/golang.org/x/mod/sumdb/note/note.go")
        .exists()
        && Command::new("go").arg("version").output().is_ok();
    if !installed {
        assert!(
            std::env::var("CI").is_err(),
            "CI needs golang-go and golang-golang-x-mod-dev (.ci/run)"
        );
        eprintln!("skipping the Go note check: install golang-go and golang-golang-x-mod-dev");
        return None;
    }
    let cache = log_dir().join("go-cache");
    let mut child = Command::new("go")
        .current_dir(repo_root())
        .env("GO111MODULE", "off")
        .env("GOPATH", gopath)
        .env("GOFLAGS", "")
        .env("GOPROXY", "off")
        .env("GOCACHE", &cache)
        .args(["run", "./tests/go/opennote", vkey])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run go");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(note.as_bytes()).unwrap();
    }
    Some(child.wait_with_output().expect("go run"))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
