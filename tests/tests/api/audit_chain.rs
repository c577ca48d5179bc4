//! A complete, lawful chain and the integrity incident (issue 36; docs/auditoria.md, "A lawful
//! chain" and "Integrity incidents"), end to end: real binaries, a real PostgreSQL and the PGCC
//! simulator over HTTP. The attacks are made as the test's superuser connection, as an operator
//! with SQL access would.

use std::process::Command;
use std::time::Duration;

use diesel::RunQueryDsl;
use serde_json::{json, Value};
use testkit::processes::{cli, repo_root};
use testkit::{wait_until, Receiver};

use crate::audit_log::{create_active, proofs_covering};
use crate::helpers::*;
use crate::lifecycle::{check, create, synced_with};

fn recibo(id: &str) -> String {
    format!("/api/solicitacao-consentimento/{id}/recibo")
}

fn run_sql(app: &TestApp, statements: &[String]) {
    let mut conn = app.db.conn();
    for sql in statements {
        diesel::sql_query(sql)
            .execute(&mut conn)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

fn latest_checkpoint_size(app: &TestApp) -> i64 {
    app.db.scalar(&format!(
        "SELECT coalesce(max(tamanho), 0) AS v FROM auditoria_checkpoints WHERE empresa_id = '{}'",
        app.company_a
    ))
}

#[test]
fn a_revoked_consent_brought_back_with_a_forged_entry_fails_audit_verify_and_is_never_signed() {
    let app = TestApp::synced();
    let id = create_active(&app);
    app.a
        .post_json(
            &format!("/api/solicitacao-consentimento/{id}/revogar"),
            &json!({}),
        )
        .expect(200);
    proofs_covering(&app, &id, 2);
    let ok = cli(&app.db, &app.sim, &["audit", "verify"]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(latest_checkpoint_size(&app), 2);

    // the attack of issue 36: the row revived and one entry that says so, as the same role. The
    // entry is placed after the company's last one, as the column's default places it on one
    // node; on Citus that default would be the worker's transaction id (an `INSERT ... SELECT`
    // runs on the worker: settled.rs), another count, which orders it first instead
    let after_last = app.db.scalar(&format!(
        "SELECT max(transacao) + 1 AS v FROM auditoria_entradas WHERE empresa_id = '{}'",
        app.company_a
    ));
    run_sql(
        &app,
        &[
            format!("UPDATE solicitacoes_consentimento SET status = 'ativo' WHERE id = '{id}'"),
            format!(
                "INSERT INTO auditoria_entradas (empresa_id, solicitacao_id, transacao, entrada)
SELECT s.empresa_id, s.id, {after_last}, auditoria_entrada(
    s.id, s.pgcc_id, e.cnpj, s.caso_de_uso_id_template, 'revogado', 'ativo', 'empresa', NULL,
    s.prova_coleta, s.hash, now())
FROM solicitacoes_consentimento s JOIN empresas e ON e.id = s.empresa_id
WHERE s.id = '{id}'"
            ),
        ],
    );

    let failed = cli(&app.db, &app.sim, &["audit", "verify"]);
    assert!(!failed.status.success(), "a revived consent verified");
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(stderr.contains(&id), "names the request: {stderr}");
    assert!(
        stderr.contains("illegal move revogado -> ativo"),
        "names the move: {stderr}"
    );

    // the job runs every second: a few rounds later the forged entry is still not signed, and
    // its stored tree did not take it
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(
        latest_checkpoint_size(&app),
        2,
        "the forged entry was signed"
    );
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM auditoria_folhas WHERE empresa_id = '{}'",
            app.company_a
        )),
        2
    );
    let proofs = app
        .a
        .get(&format!("/api/solicitacao-consentimento/{id}/provas"))
        .expect(200);
    assert_eq!(proofs.data()["entradas"].as_array().unwrap().len(), 2);
}

/// A confirmed row with no entry: a copy of `id`'s row under a new id (and PGCC id and hash, which
/// are unique), written as the superuser. Returns the new id.
fn copy_without_entry(app: &TestApp, id: &str) -> String {
    let new_id = "0f8d5b7e-3c1a-4f2b-9d6e-5a4b3c2d1e0f";
    run_sql(
        app,
        &[format!(
            "INSERT INTO solicitacoes_consentimento
SELECT (jsonb_populate_record(NULL::solicitacoes_consentimento, to_jsonb(s) || jsonb_build_object(
    'id', '{new_id}', 'pgcc_id', s.pgcc_id || '-copia', 'hash', md5(s.hash) || md5(s.hash),
    'hash_anterior', NULL))).*
FROM solicitacoes_consentimento s WHERE s.id = '{id}'"
        )],
    );
    new_id.to_owned()
}

#[test]
fn a_confirmed_request_with_no_entry_fails_audit_verify_gets_no_receipt_and_fails_the_python_verifier(
) {
    let app = TestApp::synced();
    let id = create_active(&app);
    proofs_covering(&app, &id, 1);
    let ok = cli(&app.db, &app.sim, &["audit", "verify"]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    app.a.get(&recibo(&id)).expect(200);

    let unlogged = copy_without_entry(&app, &id);
    let failed = cli(&app.db, &app.sim, &["audit", "verify"]);
    assert!(!failed.status.success(), "a request with no entry verified");
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(
        stderr.contains(&format!("request {unlogged} is confirmed but has no entry")),
        "{stderr}"
    );

    let refused = app.a.get(&recibo(&unlogged));
    assert_eq!(refused.status, 409, "{}", refused.text);
    assert_eq!(refused.json["sucesso"], false, "{}", refused.text);
    assert!(
        refused.json["mensagem"]
            .as_str()
            .unwrap()
            .contains("não tem registro no log"),
        "{}",
        refused.text
    );

    let out = Command::new("python3")
        .arg(repo_root().join("scripts/verify_audit.py"))
        .args(["--url", &app.api.base_url, "--id", &unlogged])
        .env("CONSENT_API_KEY", &app.key_a)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "the python verifier passed: {stdout}"
    );
    assert!(stdout.contains("FAILED"), "{stdout}");
    assert!(stdout.contains("409"), "{stdout}");
}

#[test]
fn a_row_changed_outside_the_log_gets_no_receipt() {
    let app = TestApp::synced();
    let id = create_active(&app);
    app.a.get(&recibo(&id)).expect(200);
    run_sql(
        &app,
        &[format!(
            "UPDATE solicitacoes_consentimento SET status = 'revogado' WHERE id = '{id}'"
        )],
    );
    let refused = app.a.get(&recibo(&id));
    assert_eq!(refused.status, 409, "{}", refused.text);
    assert!(
        refused.json["mensagem"]
            .as_str()
            .unwrap()
            .contains("não corresponde ao seu último registro"),
        "{}",
        refused.text
    );
}

#[test]
fn a_confirmed_request_the_pgcc_forgot_becomes_an_integrity_incident_everywhere() {
    let app = synced_with(&[
        ("APP__WORKERS__STATUS_POLL_SECONDS", "1"),
        ("APP__WORKERS__ACTIVE_RECHECK_SECONDS", "1"),
        ("APP__WORKERS__RECONCILE_NOT_FOUND_SECONDS", "2"),
    ]);
    let receiver = Receiver::start(&[]);
    app.a
        .post_json(
            "/api/webhook-urls",
            &json!({"url": receiver.url, "eventos": ["auditoria.incidente"]}),
        )
        .expect(200);
    let (id, pgcc_id) = create(&app.a, ATIVO, &active_body());
    let template = active_body()["casoDeUsoIdTemplate"]
        .as_str()
        .unwrap()
        .to_owned();
    let valid = check(&app.a, &template);
    assert_eq!(valid["valido"], true, "{valid}");
    let hash = valid["hash"].as_str().unwrap().to_owned();

    // the PGCC forgets it: every status check from now on answers it unknown
    assert_eq!(
        app.sim_admin
            .delete(&format!("/_sim/solicitacoes/{pgcc_id}"))
            .status,
        204
    );
    let recorded = wait_until(Duration::from_secs(30), || {
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM solicitacoes_consentimento WHERE id = '{id}' AND incidente_integridade_em IS NOT NULL"
        )) == 1
    });
    assert!(recorded, "no integrity incident was recorded");
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT (extract(epoch FROM incidente_integridade_em - pgcc_nao_encontrada_em) >= 2)::int::bigint AS v FROM solicitacoes_consentimento WHERE id = '{id}'"
        )),
        1,
        "recorded only once 'not found' held for the window"
    );

    // HashConsulta: not valid, by subject and by hash
    let answer = check(&app.a, &template);
    assert_eq!(answer["valido"], false, "{answer}");
    let by_hash = app
        .a
        .get(&format!("/api/hash-consulta/{hash}"))
        .expect(200)
        .data()
        .clone();
    assert_eq!(by_hash["valido"], false, "{by_hash}");
    assert_eq!(by_hash["id"], id.as_str(), "{by_hash}");

    // the event, delivered
    let delivered = wait_until(Duration::from_secs(30), || {
        receiver
            .received()
            .iter()
            .any(|r| r.json()["type"] == "auditoria.incidente")
    });
    assert!(delivered, "auditoria.incidente was not delivered");
    let event: Value = receiver
        .received()
        .iter()
        .map(|r| r.json())
        .find(|v| v["type"] == "auditoria.incidente")
        .unwrap();
    assert_eq!(event["data"]["solicitacaoId"], id.as_str(), "{event}");
    assert_eq!(event["data"]["pgccId"], pgcc_id.as_str(), "{event}");
    assert!(
        !event.to_string().contains(CPF_DIGITS),
        "no personal data in the event: {event}"
    );

    // the metric
    let metrics = app.anonymous.get("/metrics").text;
    assert!(
        metrics.contains("consent_api_audit_integrity_incidents_total 1"),
        "{metrics}"
    );

    // audit verify lists it, and fails
    let verified = cli(&app.db, &app.sim, &["audit", "verify"]);
    assert!(!verified.status.success(), "an integrity incident verified");
    let stdout = String::from_utf8_lossy(&verified.stdout);
    assert!(
        stdout.contains(&format!(
            "integrity incident: company {}: request {id}",
            app.company_a
        )),
        "{stdout}\n{}",
        String::from_utf8_lossy(&verified.stderr)
    );
}
