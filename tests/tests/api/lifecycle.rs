//! After creation: answers, refusals and revocations on the PGCC reach us through the status
//! worker; companies revoke; consents expire; HashConsulta tells at every step.

use std::time::Duration;

use serde_json::{json, Value};
use testkit::wait_until;

use crate::helpers::*;

/// Workers every second, so a test waits about a second for background work.
pub const FAST_WORKERS: &[(&str, &str)] = &[
    ("APP__WORKERS__STATUS_POLL_SECONDS", "1"),
    ("APP__WORKERS__EXPIRY_SECONDS", "1"),
];

pub fn synced_with(env: &[(&str, &str)]) -> TestApp {
    let app = TestApp::spawn_with(env);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    app.b
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    app
}

/// Creates a request; returns (our id, PGCC id).
pub fn create(client: &testkit::Client, path: &str, body: &Value) -> (String, String) {
    let r = client.post_json(path, body).expect(200);
    (
        r.data()["id"].as_str().unwrap().to_owned(),
        r.data()["pgccId"].as_str().unwrap().to_owned(),
    )
}

pub fn detail(client: &testkit::Client, id: &str) -> Value {
    client
        .get(&format!("/api/solicitacao-consentimento/{id}"))
        .expect(200)
        .data()
        .clone()
}

pub fn check(client: &testkit::Client, template: &str) -> Value {
    client
        .post_json(
            "/api/hash-consulta",
            &json!({"cpfTitular": CPF, "casoDeUsoIdTemplate": template}),
        )
        .expect(200)
        .data()
        .clone()
}

fn wait_status(app: &TestApp, id: &str, want: &str) {
    let reached = wait_until(Duration::from_secs(20), || {
        detail(&app.a, id)["status"] == want
    });
    assert!(
        reached,
        "request never became {want}: {}",
        detail(&app.a, id)
    );
}

fn sim_move(app: &TestApp, pgcc_id: &str, action: &str) {
    let r = app
        .sim_admin
        .post_empty(&format!("/_sim/solicitacoes/{pgcc_id}/{action}"));
    assert_eq!(r.status, 200, "{}", r.text);
}

fn history(v: &Value) -> Vec<(Value, String, String)> {
    v["historico"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["de"].clone(),
                h["para"].as_str().unwrap().to_owned(),
                h["causa"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_pending_request_the_subject_accepts_on_the_pgcc_becomes_active_and_valid() {
    let app = synced_with(FAST_WORKERS);
    let (id, pgcc_id) = create(&app.a, PENDENTE, &pending_body());
    assert_eq!(check(&app.a, "tpl-a-marketing"), json!({"valido": false}));

    sim_move(&app, &pgcc_id, "aceitar");
    wait_status(&app, &id, "ativo");

    let d = detail(&app.a, &id);
    assert_eq!(
        history(&d),
        [
            (Value::Null, "pendente".to_owned(), "empresa".to_owned()),
            (json!("pendente"), "ativo".to_owned(), "pgcc".to_owned())
        ]
    );
    let c = check(&app.a, "tpl-a-marketing");
    assert_eq!(c["valido"], true);
    assert_eq!(c["id"], id.as_str());
    assert_eq!(c["status"], "ativo");
    assert_eq!(c["hash"], d["hash"]);
    assert_eq!(
        c["dataExpiracaoConsentimento"],
        d["dataExpiracaoConsentimento"]
    );
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM solicitacoes_historico WHERE solicitacao_id = '{id}'"
        )),
        2
    );
}

#[test]
fn a_pending_request_the_subject_refuses_becomes_refused_and_is_never_valid() {
    let app = synced_with(FAST_WORKERS);
    let (id, pgcc_id) = create(&app.a, PENDENTE, &pending_body());
    sim_move(&app, &pgcc_id, "recusar");
    wait_status(&app, &id, "recusado");
    assert_eq!(
        history(&detail(&app.a, &id))[1],
        (json!("pendente"), "recusado".to_owned(), "pgcc".to_owned())
    );
    assert_eq!(check(&app.a, "tpl-a-marketing"), json!({"valido": false}));
    // Terminal: the company cannot revoke it.
    app.a
        .post_empty(&format!("/api/solicitacao-consentimento/{id}/revogar"))
        .expect(409);
}

#[test]
fn an_active_consent_revoked_on_the_pgcc_becomes_revoked_and_stops_being_valid() {
    let app = synced_with(FAST_WORKERS);
    let (id, pgcc_id) = create(&app.a, ATIVO, &active_body());
    assert_eq!(check(&app.a, "tpl-a-marketing")["valido"], true);
    sim_move(&app, &pgcc_id, "revogar");
    wait_status(&app, &id, "revogado");
    assert_eq!(
        history(&detail(&app.a, &id))[1],
        (json!("ativo"), "revogado".to_owned(), "pgcc".to_owned())
    );
    assert_eq!(check(&app.a, "tpl-a-marketing"), json!({"valido": false}));
}

#[test]
fn a_company_revokes_an_active_consent_on_the_pgcc_and_here() {
    let app = synced_with(FAST_WORKERS);
    let (id, pgcc_id) = create(&app.a, ATIVO, &active_body());
    assert_eq!(check(&app.a, "tpl-a-marketing")["valido"], true);

    let r = app
        .a
        .post_empty(&format!("/api/solicitacao-consentimento/{id}/revogar"))
        .expect(200);
    assert_eq!(r.data()["status"], "revogado");
    assert_eq!(
        history(r.data()).last().unwrap(),
        &(json!("ativo"), "revogado".to_owned(), "empresa".to_owned())
    );
    let at_pgcc = app
        .sim_requests()
        .into_iter()
        .find(|s| s["id"] == pgcc_id.as_str())
        .unwrap();
    assert_eq!(at_pgcc["status"], "revogado");
    assert_eq!(check(&app.a, "tpl-a-marketing"), json!({"valido": false}));
    assert_eq!(
        app.db
            .text(&format!(
                "SELECT status AS v FROM solicitacoes_consentimento WHERE id = '{id}'"
            ))
            .as_deref(),
        Some("revogado")
    );
    app.a
        .post_empty(&format!("/api/solicitacao-consentimento/{id}/revogar"))
        .expect(409);
}

#[test]
fn a_pgcc_failure_during_revocation_leaves_the_consent_as_it_was() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "0")]);
    let (id, pgcc_id) = create(&app.a, ATIVO, &active_body());
    app.fault(json!({"status": 503, "count": 1}));
    let r = app
        .a
        .post_empty(&format!("/api/solicitacao-consentimento/{id}/revogar"))
        .expect(502);
    assert_eq!(r.json["isPgccErro"], true);
    assert_eq!(r.json["pgccCodigoErro"], "ServiceUnavailable");
    assert_eq!(detail(&app.a, &id)["status"], "ativo");
    assert_eq!(history(&detail(&app.a, &id)).len(), 1);
    let at_pgcc = app
        .sim_requests()
        .into_iter()
        .find(|s| s["id"] == pgcc_id.as_str())
        .unwrap();
    assert_eq!(at_pgcc["status"], "ativo");
    assert_eq!(check(&app.a, "tpl-a-marketing")["valido"], true);
}

#[test]
fn a_consent_past_its_expiry_is_never_reported_valid_even_before_the_worker_runs() {
    // No worker at all: only the read rules stand between the client and a stale "ativo".
    let app = synced_with(&[
        ("APP__WORKERS__STATUS_POLL_SECONDS", "0"),
        ("APP__WORKERS__EXPIRY_SECONDS", "0"),
    ]);
    let mut body = active_body();
    body["dataExpiracaoConsentimento"] =
        json!((chrono::Utc::now() + chrono::Duration::seconds(2)).to_rfc3339());
    let (id, _) = create(&app.a, ATIVO, &body);
    let hash = detail(&app.a, &id)["hash"].as_str().unwrap().to_owned();

    let expired = wait_until(Duration::from_secs(10), || {
        detail(&app.a, &id)["status"] == "expirado"
    });
    assert!(expired, "the read never reported expirado");
    assert_eq!(
        app.db
            .text(&format!(
                "SELECT status AS v FROM solicitacoes_consentimento WHERE id = '{id}'"
            ))
            .as_deref(),
        Some("ativo"),
        "nothing was stored: the read alone knew"
    );
    assert_eq!(check(&app.a, "tpl-a-marketing"), json!({"valido": false}));
    let by_hash = app.a.get(&format!("/api/hash-consulta/{hash}")).expect(200);
    assert_eq!(by_hash.data()["valido"], false);
    assert_eq!(by_hash.data()["status"], "expirado");
    let listed = app
        .a
        .get("/api/solicitacao-consentimento?status=ativo")
        .expect(200);
    assert_eq!(listed.data()["itens"], json!([]));
    let listed = app
        .a
        .get("/api/solicitacao-consentimento?status=expirado")
        .expect(200);
    assert_eq!(listed.data()["itens"].as_array().unwrap().len(), 1);
}

#[test]
fn the_expiry_worker_stores_expired_requests_with_their_history() {
    let app = synced_with(&[
        ("APP__WORKERS__STATUS_POLL_SECONDS", "0"),
        ("APP__WORKERS__EXPIRY_SECONDS", "1"),
    ]);
    let mut body = pending_body();
    body["dataExpiracaoConsentimento"] =
        json!((chrono::Utc::now() + chrono::Duration::seconds(2)).to_rfc3339());
    let (id, _) = create(&app.a, PENDENTE, &body);
    let (other, _) = create(&app.a, PENDENTE, &pending_body());
    let stored = wait_until(Duration::from_secs(20), || {
        app.db
            .text(&format!(
                "SELECT status AS v FROM solicitacoes_consentimento WHERE id = '{id}'"
            ))
            .as_deref()
            == Some("expirado")
    });
    assert!(stored, "the expiry worker never stored expirado");
    assert_eq!(
        history(&detail(&app.a, &id))[1],
        (
            json!("pendente"),
            "expirado".to_owned(),
            "expiracao".to_owned()
        )
    );
    assert_eq!(
        detail(&app.a, &other)["status"],
        "pendente",
        "an unexpired request is left alone"
    );
}

#[test]
fn a_company_whose_expiry_batch_fails_is_skipped_and_counted_and_the_other_still_expires() {
    let app = synced_with(&[
        ("APP__WORKERS__STATUS_POLL_SECONDS", "0"),
        ("APP__WORKERS__EXPIRY_SECONDS", "1"),
        ("APP__METRICS__TOKEN", "metrics-token-e2e"),
    ]);
    // company A's requests cannot be written expirado (a constraint of its own, as a corrupt row
    // or a bad deploy would make it); company B's can
    // One statement at a time, on one connection: Citus sends a trigger's DDL to the workers as
    // the text it was given, and a text of several commands is refused there.
    // `citus.enable_unsafe_triggers`: what Citus needs to create a trigger on a distributed table
    // (distribute.sql sets it too); on one node a setting nothing reads.
    let mut conn = app.db.conn();
    for sql in [
        "SET citus.enable_unsafe_triggers = on".to_owned(),
        "CREATE FUNCTION recusa_expiracao() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN RAISE EXCEPTION 'refused for this test'; END $$"
            .to_owned(),
        format!(
            "CREATE TRIGGER recusa_expiracao BEFORE UPDATE ON solicitacoes_consentimento
             FOR EACH ROW WHEN (NEW.empresa_id = '{}' AND NEW.status = 'expirado')
             EXECUTE FUNCTION recusa_expiracao()",
            app.company_a
        ),
    ] {
        diesel::connection::SimpleConnection::batch_execute(&mut conn, &sql)
            .expect("the refusing trigger");
    }
    drop(conn);
    let soon = || {
        let mut body = pending_body();
        body["dataExpiracaoConsentimento"] =
            json!((chrono::Utc::now() + chrono::Duration::seconds(2)).to_rfc3339());
        body
    };
    let (a_id, _) = create(&app.a, PENDENTE, &soon());
    let mut b_body = soon();
    b_body["casoDeUsoIdTemplate"] = json!("tpl-b-seguro");
    let (b_id, _) = create(&app.b, PENDENTE, &b_body);

    let stored = |id: &str| {
        app.db.text(&format!(
            "SELECT status AS v FROM solicitacoes_consentimento WHERE id = '{id}'"
        ))
    };
    assert!(
        wait_until(Duration::from_secs(20), || stored(&b_id).as_deref()
            == Some("expirado")),
        "company B's request never expired beside A's failing batch"
    );
    let metrics = testkit::Client::new(&app.api.base_url, None);
    let counted = wait_until(Duration::from_secs(10), || {
        metrics
            .get_with("/metrics", &[("Authorization", "Bearer metrics-token-e2e")])
            .text
            .lines()
            .any(|l| {
                l.starts_with("consent_api_company_batch_failures_total{")
                    && l.contains("expir")
                    && !l.ends_with(" 0")
            })
    });
    assert!(counted, "A's failing batch is not counted in /metrics");
    assert_eq!(
        stored(&a_id).as_deref(),
        Some("pendente"),
        "A's request is left as it was, due again next round"
    );
    let log = std::fs::read_to_string(&app.api.log).unwrap();
    assert!(
        log.contains("failed on its own") && log.contains(&app.company_a),
        "logged with the company's id"
    );
    assert!(
        !log.contains("refused for this test"),
        "never the error's text, which may quote a row"
    );
}

/// An independent implementation of docs/hash-consulta.md over a read with `mostrarCpf=true`
/// (serde_json's map sorts keys, `sha256sum` hashes); `salted: false` is the content before
/// salts were added.
pub fn documented_hash(d: &Value, company: &str, id: &str, salted: bool) -> String {
    let instant = |v: &Value| {
        v.as_str().map(|text| {
            chrono::DateTime::parse_from_rfc3339(text)
                .unwrap()
                .with_timezone(&chrono::Utc)
                .format("%Y-%m-%dT%H:%M:%S%.6fZ")
                .to_string()
        })
    };
    let mut canonical = json!({
        "casoDeUsoIdTemplate": d["casoDeUsoIdTemplate"],
        "cnpjAnuente": d["cnpjAnuente"],
        "cpfTitular": d["cpfTitular"],
        "criadoEm": instant(&d["criadoEm"]),
        "dataExpiracaoConsentimento": instant(&d["dataExpiracaoConsentimento"]),
        "dataTitularRespondeuConsentimento": instant(&d["dataTitularRespondeuConsentimento"]),
        "empresaId": company,
        "id": id,
        "modalidadeAcesso": d["modalidadeAcesso"],
        "provaColeta": d["provaColeta"],
        "tipoTitular": d["tipoTitular"],
    });
    if salted {
        canonical["sal"] = d["salHash"].clone();
    }
    let canonical = canonical.to_string();
    let mut sha = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(sha.stdin.as_mut().unwrap(), canonical.as_bytes()).unwrap();
    let out = sha.wait_with_output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

#[test]
fn the_hash_names_the_consent_and_is_the_sha256_of_its_documented_canonical_content() {
    let app = synced_with(&[]);
    let (id, _) = create(&app.a, ATIVO, &active_body());
    let d = app
        .a
        .get(&format!(
            "/api/solicitacao-consentimento/{id}?mostrarCpf=true"
        ))
        .expect(200)
        .data()
        .clone();
    let hash = d["hash"].as_str().unwrap();
    assert_eq!(hash.len(), 64);

    assert_eq!(
        d["cpfTitular"], CPF_DIGITS,
        "mostrarCpf=true shows the whole CPF"
    );
    let salt = d["salHash"]
        .as_str()
        .expect("the salt beside the whole CPF");
    assert_eq!(salt.len(), 32);
    assert_eq!(hash, documented_hash(&d, &app.company_a, &id, true));

    // the salt travels only with the whole CPF: a masked read shows the hash without it
    let masked = detail(&app.a, &id);
    assert_eq!(masked["hash"], hash);
    assert!(masked.get("salHash").is_none(), "{masked}");
    assert!(!masked.to_string().contains(salt));

    let by_hash = app.a.get(&format!("/api/hash-consulta/{hash}")).expect(200);
    assert_eq!(by_hash.data()["id"], id.as_str());
    assert_eq!(by_hash.data()["valido"], true);
    app.a
        .get(&format!("/api/hash-consulta/{}", "0".repeat(64)))
        .expect(404);
    app.a.get("/api/hash-consulta/not-a-hash").expect(404);
}

#[test]
fn hash_consulta_validates_its_input() {
    let app = synced_with(&[]);
    let r = app
        .a
        .post_json(
            "/api/hash-consulta",
            &json!({"cpfTitular": "123", "casoDeUsoIdTemplate": ""}),
        )
        .expect(422);
    let mut fields = error_fields(&r);
    fields.sort();
    assert_eq!(fields, ["casoDeUsoIdTemplate", "cpfTitular"]);
    app.a
        .post_json("/api/hash-consulta", &json!({"cpf": CPF}))
        .expect(400);
    app.anonymous
        .post_json(
            "/api/hash-consulta",
            &json!({"cpfTitular": CPF, "casoDeUsoIdTemplate": "x"}),
        )
        .expect(401);
}

#[test]
fn reads_mask_the_cpf_unless_asked() {
    let app = synced_with(&[]);
    let (id, _) = create(&app.a, ATIVO, &active_body());
    assert_eq!(detail(&app.a, &id)["cpfTitular"], "***.982.247-**");
    let listed = app.a.get("/api/solicitacao-consentimento").expect(200);
    assert_eq!(listed.data()["itens"][0]["cpfTitular"], "***.982.247-**");
    let listed = app
        .a
        .get("/api/solicitacao-consentimento?mostrarCpf=true")
        .expect(200);
    assert_eq!(listed.data()["itens"][0]["cpfTitular"], CPF_DIGITS);
}

#[test]
fn companies_never_see_or_touch_each_others_consents() {
    let app = synced_with(&[]);
    let (id, _) = create(&app.a, ATIVO, &active_body());
    let hash = detail(&app.a, &id)["hash"].as_str().unwrap().to_owned();

    app.b
        .get(&format!("/api/solicitacao-consentimento/{id}"))
        .expect(404);
    app.b
        .post_empty(&format!("/api/solicitacao-consentimento/{id}/revogar"))
        .expect(404);
    app.b.get(&format!("/api/hash-consulta/{hash}")).expect(404);
    assert_eq!(check(&app.b, "tpl-a-marketing"), json!({"valido": false}));
    assert_eq!(
        app.b
            .get("/api/solicitacao-consentimento")
            .expect(200)
            .data()["itens"],
        json!([])
    );
    assert_eq!(
        app.b
            .get(&format!(
                "/api/solicitacao-consentimento?cpfTitular={CPF_DIGITS}"
            ))
            .expect(200)
            .data()["itens"],
        json!([])
    );
    assert_eq!(
        detail(&app.a, &id)["status"],
        "ativo",
        "A's consent is untouched"
    );
    assert_eq!(check(&app.a, "tpl-a-marketing")["valido"], true);
}
