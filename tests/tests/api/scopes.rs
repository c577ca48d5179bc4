//! Keys with scopes (issue 24, part 6): a route outside a key's scopes is 403 in the envelope and
//! does nothing; a key issued without `--escopos` does everything a key did before.

use serde_json::json;
use testkit::processes::{cli, single_line};

use crate::helpers::*;
use crate::lifecycle::{create, synced_with};

/// A new key of company `empresa` holding `escopos`, through the real command line: the key.
pub fn issue_key_with_scopes(app: &TestApp, empresa: &str, escopos: &str) -> String {
    let out = cli(
        &app.db,
        &app.sim,
        &[
            "api-key",
            "issue",
            "--empresa",
            empresa,
            "--escopos",
            escopos,
        ],
    );
    assert!(
        out.status.success(),
        "api-key issue: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    single_line(&out.stdout)
}

/// A client of a new key of company `empresa` holding `escopos`.
pub fn key_with_scopes(app: &TestApp, empresa: &str, escopos: &str) -> testkit::Client {
    testkit::Client::new(
        &app.api.base_url,
        Some(&issue_key_with_scopes(app, empresa, escopos)),
    )
}

/// A 403 in the envelope naming the scopes that would grant the route.
fn assert_forbidden(reply: testkit::Reply, granted_to: &str) {
    let reply = reply.expect(403);
    assert_eq!(reply.json["sucesso"], false);
    assert_eq!(reply.json["isPgccErro"], false);
    assert_eq!(reply.json["data"], json!({}));
    let message = reply.json["mensagem"].as_str().unwrap();
    assert!(message.contains(granted_to), "{message}");
}

fn rows(app: &TestApp, table: &str) -> i64 {
    app.db.scalar(&format!("SELECT count(*) AS v FROM {table}"))
}

#[test]
fn a_consulta_key_cannot_create_nothing_is_stored_nor_sent_to_the_pgcc_but_it_can_check() {
    let app = TestApp::synced();
    let consulta = key_with_scopes(&app, &app.company_a, "consulta");

    // twice: the first resolves the key in the request's hop, the second from the key cache
    for _ in 0..2 {
        assert_forbidden(consulta.post_json(ATIVO, &active_body()), "integracao");
        assert_forbidden(consulta.post_json(PENDENTE, &pending_body()), "integracao");
    }
    assert_eq!(rows(&app, "solicitacoes_consentimento"), 0);
    assert!(app.sim_requests().is_empty(), "the PGCC was not called");
    assert_forbidden(consulta.get("/api/casos-de-uso"), "integracao, auditor");

    create(&app.a, ATIVO, &active_body());
    let check = consulta
        .post_json(
            "/api/hash-consulta",
            &json!({"cpfTitular": CPF, "casoDeUsoIdTemplate": "tpl-a-marketing"}),
        )
        .expect(200);
    assert_eq!(check.data()["valido"], true);
}

#[test]
fn a_key_known_from_memory_is_refused_before_its_body_is_read() {
    let app = TestApp::synced();
    let consulta = key_with_scopes(&app, &app.company_a, "consulta");
    let check = json!({"cpfTitular": CPF, "casoDeUsoIdTemplate": "tpl-a-marketing"});

    // Not JSON at all: a body that is read is a 400; refused from memory, it is never read. A
    // key is kept in memory once a request of it was answered while the cache's change feed is
    // alive (right after start-up, or under load, it may not be yet): so each try first makes
    // an answered request of the key.
    let refused_unread = testkit::wait_until(std::time::Duration::from_secs(30), || {
        consulta.post_json("/api/hash-consulta", &check).expect(200);
        consulta
            .post_raw(ATIVO, "application/json", b"{not json")
            .status
            == 403
    });
    assert!(refused_unread, "never refused before the body");
    assert_eq!(rows(&app, "solicitacoes_consentimento"), 0);
}

#[test]
fn an_auditor_key_cannot_write_and_reads_everything_including_the_export() {
    let app = TestApp::synced();
    let (id, _) = create(&app.a, ATIVO, &active_body());
    let auditor = key_with_scopes(&app, &app.company_a, "auditor");
    let sim_calls = app.sim_requests().len();

    assert_forbidden(auditor.post_json(ATIVO, &active_body()), "integracao");
    assert_forbidden(
        auditor.post_json(
            &format!("/api/solicitacao-consentimento/{id}/revogar"),
            &json!({"motivo": "auditoria"}),
        ),
        "integracao",
    );
    assert_forbidden(
        auditor.post_json(
            "/api/webhook-urls",
            &json!({"url": "https://example.com/hook"}),
        ),
        "webhooks",
    );
    assert_forbidden(
        auditor.post_empty("/api/casos-de-uso/sincronizar"),
        "integracao",
    );
    assert_eq!(rows(&app, "solicitacoes_consentimento"), 1);
    assert_eq!(rows(&app, "webhook_urls"), 0);
    assert_eq!(
        app.sim_requests().len(),
        sim_calls,
        "nothing sent to the PGCC"
    );
    assert_eq!(
        auditor
            .get(&format!("/api/solicitacao-consentimento/{id}"))
            .expect(200)
            .data()["status"],
        "ativo",
        "still active: the revocation did nothing"
    );

    let export = auditor
        .post_json("/api/titulares/consentimentos", &json!({"cpfTitular": CPF}))
        .expect(200);
    assert_eq!(export.data()["itens"][0]["id"], id.as_str());
    assert_eq!(export.data()["itens"][0]["cpfTitular"], CPF_DIGITS);
    for path in [
        "/api/solicitacao-consentimento",
        "/api/casos-de-uso",
        "/api/eventos",
        "/api/webhook-urls",
        "/api/auditoria/acessos",
    ] {
        auditor.get(path).expect(200);
    }
}

#[test]
fn a_webhooks_key_cannot_read_consents_but_manages_webhook_urls() {
    let app = TestApp::synced();
    let (id, _) = create(&app.a, ATIVO, &active_body());
    let webhooks = key_with_scopes(&app, &app.company_a, "webhooks");

    assert_forbidden(
        webhooks.get(&format!("/api/solicitacao-consentimento/{id}")),
        "integracao, auditor",
    );
    assert_forbidden(webhooks.get("/api/solicitacao-consentimento"), "integracao");
    assert_forbidden(
        webhooks.post_json("/api/titulares/consentimentos", &json!({"cpfTitular": CPF})),
        "integracao",
    );
    assert_forbidden(webhooks.get("/api/eventos"), "integracao");
    assert_eq!(
        rows(&app, "acessos_dados_pessoais"),
        0,
        "no read happened, none is recorded"
    );
    let listed = webhooks.get("/api/webhook-urls").expect(200);
    assert_eq!(listed.data(), &json!([]));
}

#[test]
fn a_key_issued_without_scopes_still_does_everything_a_key_did_but_the_audit_routes() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "0")]);
    // app.a's key was issued without --escopos
    let (id, _) = create(&app.a, ATIVO, &active_body());
    create(&app.a, PENDENTE, &pending_body());
    app.a
        .get(&format!(
            "/api/solicitacao-consentimento/{id}?mostrarCpf=true"
        ))
        .expect(200);
    app.a.get("/api/solicitacao-consentimento").expect(200);
    app.a.get("/api/casos-de-uso").expect(200);
    app.a.get("/api/eventos").expect(200);
    app.a.get("/api/webhook-urls").expect(200);
    app.a
        .post_json("/api/titulares/consentimentos", &json!({"cpfTitular": CPF}))
        .expect(200);
    app.a
        .post_json(
            "/api/hash-consulta",
            &json!({"cpfTitular": CPF, "casoDeUsoIdTemplate": "tpl-a-marketing"}),
        )
        .expect(200);
    app.a
        .post_json(
            &format!("/api/solicitacao-consentimento/{id}/revogar"),
            &json!({"motivo": "pedido do titular"}),
        )
        .expect(200);
    assert_forbidden(app.a.get("/api/auditoria/acessos"), "auditor");
    assert_eq!(
        app.db.text(&format!(
            "SELECT array_to_string(escopos, ',') AS v FROM api_keys WHERE empresa_id = '{}'",
            app.company_a
        )),
        Some("integracao,consulta,webhooks".to_owned())
    );
}

#[test]
fn api_key_list_shows_each_keys_scopes_and_an_unknown_scope_is_refused_storing_nothing() {
    let app = TestApp::spawn();
    key_with_scopes(&app, &app.company_a, "consulta, auditor");
    let keys_before = rows(&app, "api_keys");

    let refused = cli(
        &app.db,
        &app.sim,
        &[
            "api-key",
            "issue",
            "--empresa",
            &app.company_a,
            "--escopos",
            "integracao,admin",
        ],
    );
    assert!(!refused.status.success());
    assert!(refused.stdout.is_empty(), "no key printed");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("escopo desconhecido: \"admin\""),
        "{stderr}"
    );
    assert_eq!(rows(&app, "api_keys"), keys_before);

    let out = cli(
        &app.db,
        &app.sim,
        &["api-key", "list", "--empresa", &app.company_a],
    );
    assert!(out.status.success());
    let scopes: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            assert_eq!(cells.len(), 6, "{line}");
            cells[5].to_owned()
        })
        .collect();
    assert_eq!(scopes, ["integracao,consulta,webhooks", "consulta,auditor"]);
}
