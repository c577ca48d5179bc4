//! `consent-api import --empresa <id> <file>` (issue 37, part 4; docs/imports.md, "From the
//! command line"): the real binary stages the file with the HTTP route's reader and rules, waits
//! for the running service's workers to register it on the (real) simulator, and prints a
//! summary.

use std::path::PathBuf;

use serde_json::{json, Value};
use testkit::processes::cli;

use crate::helpers::*;
use crate::importacoes::{jsonl, line};

fn file_with(name: &str, bytes: &[u8]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("{}-{name}", uuid::Uuid::new_v4()));
    std::fs::write(&path, bytes).unwrap();
    path
}

fn value_of<'a>(stdout: &'a str, name: &str) -> Option<&'a str> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
}

#[test]
fn the_cli_stages_waits_for_registration_and_summarizes() {
    let app = TestApp::synced();
    let mut bad = line("cli-3");
    bad["cpfTitular"] = json!("529.982.247-24");
    let path = file_with(
        "consents.jsonl",
        &jsonl(&[line("cli-1"), line("cli-2"), bad]),
    );
    let errors = std::env::temp_dir().join(format!("{}-erros.jsonl", uuid::Uuid::new_v4()));

    let out = cli(
        &app.db,
        &app.sim,
        &[
            "import",
            "--empresa",
            &app.company_a,
            path.to_str().unwrap(),
            "--erros",
            errors.to_str().unwrap(),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(value_of(&stdout, "status"), Some("concluida"), "{stdout}");
    assert_eq!(value_of(&stdout, "linhas"), Some("3"));
    assert_eq!(value_of(&stdout, "validas"), Some("2"));
    assert_eq!(value_of(&stdout, "registradas"), Some("2"));
    assert_eq!(value_of(&stdout, "falhas"), Some("1"));
    assert!(
        stdout.contains("erro linha 3 cpfTitular:"),
        "the first errors are shown: {stdout}"
    );
    assert_no_canary_cpf("the summary", &stdout);

    // registered on the PGCC once each, as an import of the company the API sees
    assert_eq!(app.sim_requests().len(), 2);
    assert_eq!(app.consent_rows(), 2);
    let id = value_of(&stdout, "importacao").unwrap();
    let read = app.a.get(&format!("/api/importacoes/{id}")).expect(200);
    assert_eq!(read.data()["registradas"], 2);
    app.b.get(&format!("/api/importacoes/{id}")).expect(404);

    // every error in the file asked for
    let written: Vec<Value> = std::fs::read_to_string(&errors)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(written.len(), 1);
    assert_eq!(written[0]["linha"], 3);
    assert_eq!(written[0]["campo"], "cpfTitular");
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&errors);
}

#[test]
fn a_file_the_cli_refuses_imports_nothing_and_exits_non_zero() {
    let app = TestApp::synced();
    let csv = file_with("bad.csv", b"idExterno,origem,colunaDesconhecida\nx,y,z\n");
    let out = cli(
        &app.db,
        &app.sim,
        &["import", "--empresa", &app.company_a, csv.to_str().unwrap()],
    );
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nothing was imported"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(app.db.scalar("SELECT count(*) AS v FROM importacoes"), 0);

    let jsonl_file = file_with("ok.jsonl", &jsonl(&[line("cli-9")]));
    let unknown = cli(
        &app.db,
        &app.sim,
        &[
            "import",
            "--empresa",
            &uuid::Uuid::new_v4().to_string(),
            jsonl_file.to_str().unwrap(),
        ],
    );
    assert!(!unknown.status.success());
    assert_eq!(app.db.scalar("SELECT count(*) AS v FROM importacoes"), 0);

    // --sem-esperar: staged, the summary printed at once; the workers register it after
    let out = cli(
        &app.db,
        &app.sim,
        &[
            "import",
            "--empresa",
            &app.company_a,
            "--sem-esperar",
            jsonl_file.to_str().unwrap(),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}");
    assert_eq!(value_of(&stdout, "validas"), Some("1"), "{stdout}");
    assert!(
        testkit::wait_until(std::time::Duration::from_secs(30), || app.consent_rows()
            == 1),
        "the service's workers register it"
    );
    let _ = std::fs::remove_file(&csv);
    let _ = std::fs::remove_file(&jsonl_file);
}
