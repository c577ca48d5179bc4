//! The OpenAPI document is good enough for a standard generator: `openapi-python-client`
//! (pinned in `tests/client-gen/run.sh`) generates a Python client from the live `/openapi.json`
//! without a warning, the client imports, and one call through it (GET /api/casos-de-uso with the
//! `Api-Key` header) answers the envelope with the company's use cases.
//!
//! Needs Python 3 with venv/pip; the first run installs the generator into
//! `target/client-gen/` from PyPI (about 30 s), later runs work offline.

use std::process::Command;
use std::time::Instant;

use serde_json::Value;
use testkit::processes::repo_root;

use crate::helpers::*;

#[test]
fn a_python_client_generated_from_the_openapi_document_lists_the_use_cases() {
    let app = TestApp::synced();

    let document = app.anonymous.get("/openapi.json");
    assert_eq!(document.status, 200, "{}", document.text);
    let dir = repo_root().join("target").join("client-gen");
    std::fs::create_dir_all(&dir).expect("create target/client-gen");
    let path = dir.join(format!("openapi-{}.json", app.db.name()));
    std::fs::write(&path, &document.text).expect("save /openapi.json");

    let started = Instant::now();
    let out = Command::new("bash")
        .arg(repo_root().join("tests/client-gen/run.sh"))
        .arg(&path)
        .arg(&app.api.base_url)
        .arg(&app.key_a)
        .output()
        .expect("run bash tests/client-gen/run.sh");
    let _ = std::fs::remove_file(&path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the generated client failed (exit {:?}); its output:\n{stderr}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout)
    );
    eprintln!(
        "generate + import + call: {:.1} s\n{stderr}",
        started.elapsed().as_secs_f64()
    );

    let stdout = String::from_utf8_lossy(&out.stdout);
    let answer: Value = serde_json::from_str(stdout.trim().lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("call.py printed no JSON line ({e}): {stdout}"));
    assert_eq!(answer["sucesso"], true, "{answer}");
    assert_eq!(answer["pgccCodigoErro"], "OK", "{answer}");
    assert_eq!(
        answer["templates"],
        serde_json::json!(["tpl-a-credito", "tpl-a-marketing", "tpl-a-pesquisa"]),
        "{answer}"
    );
    assert_eq!(
        answer["titulos"],
        serde_json::json!([
            "Análise de crédito",
            "Marketing por e-mail",
            "Pesquisa de satisfação"
        ]),
        "{answer}"
    );
}

/// The README walk-through through a TypeScript client: `openapi-typescript` types generated
/// from the live `/openapi.json`, `openapi-fetch` calls, compiled with `tsc --strict` (pinned in
/// `tests/client-ts/package-lock.json`; run by `tests/client-ts/run.sh`). Sync, list, create
/// active and pending, read, HashConsulta, register a URL, each answer checked here against
/// what the server stored.
#[test]
fn a_typescript_client_generated_from_the_openapi_document_runs_the_readme_walk_through() {
    let app = TestApp::spawn();

    let document = app.anonymous.get("/openapi.json");
    assert_eq!(document.status, 200, "{}", document.text);
    let dir = repo_root().join("target").join("client-ts");
    std::fs::create_dir_all(&dir).expect("create target/client-ts");
    let path = dir.join(format!("openapi-{}.json", app.db.name()));
    std::fs::write(&path, &document.text).expect("save /openapi.json");

    let started = Instant::now();
    let out = Command::new("bash")
        .arg(repo_root().join("tests/client-ts/run.sh"))
        .arg(&path)
        .arg(&app.api.base_url)
        .arg(&app.key_a)
        .output()
        .expect("run bash tests/client-ts/run.sh");
    let _ = std::fs::remove_file(&path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the TypeScript client failed (exit {:?}); its output:\n{stderr}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout)
    );
    eprintln!(
        "install + generate + tsc + walk-through: {:.1} s\n{stderr}",
        started.elapsed().as_secs_f64()
    );

    let stdout = String::from_utf8_lossy(&out.stdout);
    let answer: Value = serde_json::from_str(stdout.trim().lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("walkthrough.js printed no JSON line ({e}): {stdout}"));
    assert_eq!(answer["sincronizados"], 3, "{answer}");
    assert_eq!(
        answer["templates"],
        serde_json::json!(["tpl-a-credito", "tpl-a-marketing", "tpl-a-pesquisa"]),
        "{answer}"
    );
    assert_eq!(answer["ativa"]["status"], "ativo", "{answer}");
    assert_eq!(answer["ativa"]["historico"], 1, "{answer}");
    assert_eq!(answer["pendente"]["status"], "pendente", "{answer}");
    assert_eq!(answer["pendente"]["cpfTitular"], "11144477735", "{answer}");
    assert_eq!(answer["consulta"]["valido"], true, "{answer}");
    assert_eq!(answer["consulta"]["id"], answer["ativa"]["id"], "{answer}");
    assert_eq!(
        answer["consulta"]["porHash"], answer["ativa"]["id"],
        "{answer}"
    );
    assert_eq!(answer["webhook"]["segredo"], true, "{answer}");
    assert_eq!(answer["evento"], "solicitacao.criada", "{answer}");

    // What the client was told is what the server holds.
    let id = answer["ativa"]["id"].as_str().unwrap();
    let read = app.a.get(&format!("/api/solicitacao-consentimento/{id}"));
    assert_eq!(read.status, 200, "{}", read.text);
    assert_eq!(read.data()["status"], "ativo");
    let pending = answer["pendente"]["id"].as_str().unwrap();
    assert_eq!(
        app.a
            .get(&format!("/api/solicitacao-consentimento/{pending}"))
            .data()["modalidadeAcesso"],
        "Indireto"
    );
    let hooks = app.a.get("/api/webhook-urls");
    assert_eq!(
        hooks.data()[0]["id"],
        answer["webhook"]["id"],
        "{}",
        hooks.text
    );
    assert_eq!(app.consent_rows(), 2);
}
