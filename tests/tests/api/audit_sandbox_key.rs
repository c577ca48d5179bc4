//! Issue 36, parts 3 and 4 (docs/auditoria.md, "The sandbox's key" and "Checkpoints pushed"):
//! a sandbox company's receipts and checkpoints are signed with the sandbox key, published in the
//! JWKS under its own kid and marked; a real company's with the production key only; and a URL
//! that names `auditoria.checkpoint` receives each new checkpoint of its company.

use std::process::Command;
use std::time::Duration;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use ed25519_dalek::{Signature, Verifier as _, VerifyingKey};
use serde_json::{json, Value};
use testkit::processes::{bin_path, cli, log_dir, repo_root, single_line};
use testkit::{wait_until, Client, Receiver};

use crate::audit_log::create_active;
use crate::helpers::*;
use crate::sandbox::{body, sandbox_key, TEMPLATE};

fn recibo(id: &str) -> String {
    format!("/api/solicitacao-consentimento/{id}/recibo")
}

/// The JWKS's keys by kid: (public key, `ambiente`).
fn jwks(app: &TestApp) -> Vec<(String, [u8; 32], String)> {
    let reply = app.anonymous.get("/.well-known/jwks.json");
    assert_eq!(reply.status, 200, "{}", reply.text);
    let jwks: Value = serde_json::from_str(&reply.text).unwrap();
    jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            assert_eq!(k["use"], "sig", "{k}");
            (
                k["kid"].as_str().unwrap().to_owned(),
                URL_SAFE_NO_PAD
                    .decode(k["x"].as_str().unwrap())
                    .unwrap()
                    .try_into()
                    .unwrap(),
                k["ambiente"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// A receipt's (header, payload) and whether its signature verifies with `key`.
fn open_receipt(jws: &str, key: &[u8; 32]) -> (Value, Value, bool) {
    let parts: Vec<&str> = jws.split('.').collect();
    assert_eq!(parts.len(), 3, "{jws}");
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
    let payload: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
    let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(parts[2]).unwrap()).unwrap();
    let verifies = VerifyingKey::from_bytes(key)
        .unwrap()
        .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
        .is_ok();
    (header, payload, verifies)
}

/// The key hash (4 bytes, lower-case hex: a kid) of the note's first signature line.
fn note_signer_kid(note: &str) -> String {
    let line = note
        .lines()
        .find(|l| l.starts_with('\u{2014}'))
        .unwrap_or_else(|| panic!("no signature line: {note}"));
    let blob = STANDARD.decode(line.rsplit(' ').next().unwrap()).unwrap();
    blob[..4].iter().map(|b| format!("{b:02x}")).collect()
}

fn verify_audit_py(app: &TestApp, key: &str, id: &str, sandbox: bool) -> (bool, String) {
    let mut command = Command::new("python3");
    command
        .arg(repo_root().join("scripts/verify_audit.py"))
        .args(["--url", &app.api.base_url, "--id", id])
        .env("CONSENT_API_KEY", key);
    if sandbox {
        command.arg("--sandbox");
    }
    let out = command.output().expect("python3 runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The receipt once a checkpoint covers the request (`indiceLog` set).
fn covered_receipt(client: &Client, id: &str) -> String {
    let mut jws = String::new();
    let covered = wait_until(Duration::from_secs(30), || {
        jws = client.get(&recibo(id)).expect(200).data()["recibo"]
            .as_str()
            .unwrap()
            .to_owned();
        let payload = jws.split('.').nth(1).unwrap();
        let payload: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        !payload["indiceLog"].is_null()
    });
    assert!(covered, "no checkpoint covered request {id}");
    jws
}

/// The latest checkpoint's note, as the request's proofs give it.
fn checkpoint_of(client: &Client, id: &str) -> String {
    client
        .get(&format!("/api/solicitacao-consentimento/{id}/provas"))
        .expect(200)
        .data()["checkpoint"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_sandbox_receipt_and_checkpoint_are_signed_with_the_marked_sandbox_key_and_a_real_one_with_the_production_key(
) {
    let app = TestApp::synced();
    let sandbox_api_key = sandbox_key(&app, &app.company_a);
    let sandbox = Client::new(&app.api.base_url, Some(&sandbox_api_key));
    sandbox
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let created = sandbox
        .post_json(ATIVO, &body(TEMPLATE, CPF, true))
        .expect(200);
    let sandbox_id = created.data()["id"].as_str().unwrap().to_owned();
    let real_id = create_active(&app);

    // the JWKS lists both keys, each under its own kid, the sandbox one marked
    let keys = jwks(&app);
    let production: Vec<_> = keys.iter().filter(|k| k.2 == "producao").collect();
    let sandboxes: Vec<_> = keys.iter().filter(|k| k.2 == "sandbox").collect();
    assert_eq!(production.len(), 1, "{keys:?}");
    assert_eq!(sandboxes.len(), 1, "{keys:?}");
    let (production_kid, production_key, _) = production[0].clone();
    let (sandbox_kid, sandbox_key_bytes, _) = sandboxes[0].clone();
    assert_ne!(production_kid, sandbox_kid);

    // the sandbox's receipt: the sandbox kid, says sandbox, verifies with that key only
    let jws = covered_receipt(&sandbox, &sandbox_id);
    let (header, payload, by_sandbox_key) = open_receipt(&jws, &sandbox_key_bytes);
    assert_eq!(header["kid"], sandbox_kid.as_str(), "{header}");
    assert_eq!(header["alg"], "EdDSA");
    assert_eq!(payload["ambiente"], "sandbox", "{payload}");
    assert_eq!(payload["id"], sandbox_id.as_str());
    assert!(
        by_sandbox_key,
        "the sandbox receipt verifies with the sandbox key"
    );
    let (_, _, by_production_key) = open_receipt(&jws, &production_key);
    assert!(!by_production_key, "nor with the production key");

    // the real company's receipt: the production key, says producao
    let jws = covered_receipt(&app.a, &real_id);
    let (header, payload, by_production_key) = open_receipt(&jws, &production_key);
    assert_eq!(header["kid"], production_kid.as_str(), "{header}");
    assert_eq!(payload["ambiente"], "producao", "{payload}");
    assert!(by_production_key);
    let (_, _, by_sandbox_key) = open_receipt(&jws, &sandbox_key_bytes);
    assert!(!by_sandbox_key);

    // the checkpoints likewise (the note the proofs are against)
    let sandbox_note = checkpoint_of(&sandbox, &sandbox_id);
    assert_eq!(
        note_signer_kid(&sandbox_note),
        sandbox_kid,
        "{sandbox_note}"
    );
    let real_note = checkpoint_of(&app.a, &real_id);
    assert_eq!(note_signer_kid(&real_note), production_kid, "{real_note}");

    // audit verify accepts both logs as they are
    let verified = cli(&app.db, &app.sim, &["audit", "verify"]);
    assert!(
        verified.status.success(),
        "{}{}",
        String::from_utf8_lossy(&verified.stdout),
        String::from_utf8_lossy(&verified.stderr)
    );

    // the outside verifier: a sandbox receipt is not a production one
    let (ok, stdout) = verify_audit_py(&app, &sandbox_api_key, &sandbox_id, false);
    assert!(
        !ok,
        "a sandbox receipt passed as a production one: {stdout}"
    );
    assert!(stdout.contains("not a producao key"), "{stdout}");
    let (ok, stdout) = verify_audit_py(&app, &sandbox_api_key, &sandbox_id, true);
    assert!(ok, "{stdout}");
    let (ok, stdout) = verify_audit_py(&app, &app.key_a, &real_id, true);
    assert!(!ok, "a production receipt passed as a sandbox's: {stdout}");
    let (ok, stdout) = verify_audit_py(&app, &app.key_a, &real_id, false);
    assert!(ok, "{stdout}");

    // the company's monitor: the sandbox's log holds only with --sandbox
    let sandbox_company = app
        .db
        .text(&format!(
            "SELECT id::text AS v FROM empresas WHERE sandbox_de = '{}'",
            app.company_a
        ))
        .unwrap();
    let issued = cli(
        &app.db,
        &app.sim,
        &[
            "api-key",
            "issue",
            "--empresa",
            &sandbox_company,
            "--sandbox",
            "--escopos",
            "auditor",
        ],
    );
    assert!(
        issued.status.success(),
        "{}",
        String::from_utf8_lossy(&issued.stderr)
    );
    let auditor = single_line(&issued.stdout);
    let dir = log_dir().join(format!(
        "sandbox-monitor-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("estado");
    let out = monitor(&app, &auditor, &state, false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "a sandbox's log passed as a real one's"
    );
    assert!(
        stderr.contains("no valid signature by a producao key"),
        "{stderr}"
    );
    let out = monitor(&app, &auditor, &state, true);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn monitor(
    app: &TestApp,
    key: &str,
    state: &std::path::Path,
    sandbox: bool,
) -> std::process::Output {
    let mut command = Command::new(bin_path("consent-api"));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("APP_ENV", "test")
        .env("APP_CONFIG_DIR", repo_root().join("config"))
        .env("CONSENT_API_KEY", key)
        .args(["audit", "monitor", "--url", &app.api.base_url])
        .arg("--estado")
        .arg(state)
        .stdin(std::process::Stdio::null());
    if sandbox {
        command.arg("--sandbox");
    }
    command.output().expect("run audit monitor")
}

#[test]
fn audit_verify_refuses_a_real_companys_checkpoint_signed_with_the_sandbox_key() {
    let app = TestApp::synced();
    let real_id = create_active(&app);
    covered_receipt(&app.a, &real_id);
    // a sandbox's checkpoint note, signed by the sandbox key, kept as the real company's (as the
    // owner, who holds the table): the sandbox key must not vouch for it
    let sandbox = Client::new(&app.api.base_url, Some(&sandbox_key(&app, &app.company_a)));
    sandbox
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let created = sandbox
        .post_json(ATIVO, &body(TEMPLATE, CPF, true))
        .expect(200);
    covered_receipt(&sandbox, created.data()["id"].as_str().unwrap());
    let sandbox_company = app
        .db
        .text(&format!(
            "SELECT id::text AS v FROM empresas WHERE sandbox_de = '{}'",
            app.company_a
        ))
        .unwrap();
    let sql = format!("UPDATE empresas SET sandbox_de = NULL WHERE id = '{sandbox_company}'");
    diesel::RunQueryDsl::execute(diesel::sql_query(&sql), &mut app.db.conn())
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let failed = cli(&app.db, &app.sim, &["audit", "verify"]);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(!failed.status.success(), "{stderr}");
    assert!(
        stderr.contains("signed by the sandbox key, but the company is not a sandbox"),
        "{stderr}"
    );
}

#[test]
fn a_url_naming_auditoria_checkpoint_receives_each_checkpoint_with_its_note_and_others_do_not() {
    let app = TestApp::synced();
    let checkpoints = Receiver::start(&[]);
    let everything = Receiver::start(&[]);
    app.a
        .post_json(
            "/api/webhook-urls",
            &json!({"url": checkpoints.url, "eventos": ["auditoria.checkpoint"]}),
        )
        .expect(200);
    app.a
        .post_json("/api/webhook-urls", &json!({"url": everything.url}))
        .expect(200);
    let id = create_active(&app);
    covered_receipt(&app.a, &id);

    let mut event = Value::Null;
    let delivered = wait_until(Duration::from_secs(30), || {
        event = checkpoints
            .received()
            .iter()
            .map(|r| r.json())
            .find(|v| v["type"] == "auditoria.checkpoint")
            .unwrap_or(Value::Null);
        !event.is_null()
    });
    assert!(delivered, "auditoria.checkpoint was not delivered");
    let auditor = crate::scopes::key_with_scopes(&app, &app.company_a, "auditor");
    let reply = auditor.get("/api/auditoria/checkpoint");
    assert_eq!(reply.status, 200, "{}", reply.text);
    let note = reply.text;
    let lines: Vec<&str> = note.lines().collect();
    assert_eq!(event["data"]["nota"], note.as_str(), "{event}");
    assert_eq!(event["data"]["origem"], lines[0], "{event}");
    assert_eq!(
        event["data"]["tamanho"],
        lines[1].parse::<u64>().unwrap(),
        "{event}"
    );
    assert_eq!(event["data"]["raiz"], lines[2], "{event}");
    assert_eq!(event["data"]["cossinado"], false, "no witness configured");
    assert!(
        checkpoints
            .received()
            .iter()
            .all(|r| r.json()["type"] == "auditoria.checkpoint"),
        "that URL takes only what it named"
    );

    // a URL taking every type gets the creation but never a checkpoint
    assert!(wait_until(Duration::from_secs(30), || {
        everything
            .received()
            .iter()
            .any(|r| r.json()["type"] == "solicitacao.criada")
    }));
    assert!(
        everything
            .received()
            .iter()
            .all(|r| r.json()["type"] != "auditoria.checkpoint"),
        "a URL with no eventos does not take auditoria.checkpoint"
    );
    assert_eq!(
        app.db.scalar(
            "SELECT count(*) AS v FROM webhook_eventos WHERE tipo = 'auditoria.checkpoint'"
        ),
        1,
        "one event for the one checkpoint"
    );
}
