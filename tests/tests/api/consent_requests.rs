use serde_json::{json, Value};

use crate::helpers::*;

#[test]
fn creating_an_active_request_stores_it_and_registers_it_on_the_pgcc() {
    let app = TestApp::synced();
    let r = app.a.post_json(ATIVO, &active_body()).expect(200);
    let id = r.data()["id"].as_str().unwrap().to_owned();
    let pgcc_id = r.data()["pgccId"].as_str().unwrap().to_owned();
    let mut keys: Vec<&str> = r
        .data()
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["id", "pgccId"]);

    let sent = app.sim_requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["id"], pgcc_id.as_str());
    assert_eq!(sent[0]["referenciaExterna"], id.as_str());
    assert_eq!(sent[0]["status"], "ativo");
    assert_eq!(
        sent[0]["cpfTitular"], CPF_DIGITS,
        "the CPF travels normalized"
    );
    assert_eq!(sent[0]["templateId"], "tpl-a-marketing");
    assert_eq!(sent[0]["vinculoId"], VINCULO_A1);
    assert_eq!(sent[0]["provaColeta"], "assinatura-digital:abc123");

    let row = |col: &str| {
        app.db.text(&format!(
            "SELECT {col}::text AS v FROM solicitacoes_consentimento WHERE id = '{id}'"
        ))
    };
    assert_eq!(row("status").as_deref(), Some("ativo"));
    assert_eq!(row("pgcc_id").as_deref(), Some(pgcc_id.as_str()));
    assert_eq!(row("empresa_id").as_deref(), Some(app.company_a.as_str()));
    assert_eq!(row("cpf_titular").as_deref(), Some(CPF_DIGITS));
}

#[test]
fn creating_a_pending_request_stores_it_pending_without_an_answer() {
    let app = TestApp::synced();
    let r = app.a.post_json(PENDENTE, &pending_body()).expect(200);
    let id = r.data()["id"].as_str().unwrap().to_owned();
    let sent = app.sim_requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["status"], "pendente");
    assert_eq!(sent[0]["provaColeta"], Value::Null);
    assert_eq!(
        app.db
            .text(&format!(
                "SELECT status AS v FROM solicitacoes_consentimento WHERE id = '{id}'"
            ))
            .as_deref(),
        Some("pendente")
    );
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM solicitacoes_consentimento WHERE id = '{id}' AND prova_coleta IS NULL AND data_titular_respondeu_consentimento IS NULL"
        )),
        1
    );
}

#[test]
fn indirect_modality_with_a_valid_alphanumeric_cnpj_is_accepted() {
    let app = TestApp::synced();
    let mut body = pending_body();
    body["modalidadeAcesso"] = json!("Indireto");
    body["cnpjAnuente"] = json!("12.abc.345/01de-35");
    app.a.post_json(PENDENTE, &body).expect(200);
    assert_eq!(app.sim_requests()[0]["cnpjAnuente"], "12ABC34501DE35");
}

#[test]
fn json_bodies_are_accepted_as_text_json_and_any_json_suffix() {
    let app = TestApp::synced();
    for ct in [
        "text/json",
        "application/vnd.consent+json",
        "application/json; charset=utf-8",
    ] {
        app.a
            .post_raw(PENDENTE, ct, pending_body().to_string().as_bytes())
            .expect(200);
    }
    assert_eq!(app.consent_rows(), 3);
}

/// Each broken rule alone: 422 naming exactly that field, nothing sent to the PGCC, no row.
#[test]
fn each_broken_field_rule_is_422_naming_the_field_and_changes_nothing() {
    let app = TestApp::synced();
    let cases: Vec<(&str, Value, &str)> = vec![
        (ATIVO, json!({"cpfTitular": "529.982.247-24"}), "cpfTitular"),
        (ATIVO, json!({"cpfTitular": "111.111.111-11"}), "cpfTitular"),
        (ATIVO, json!({"cpfTitular": "1234"}), "cpfTitular"),
        (
            ATIVO,
            json!({"casoDeUsoIdTemplate": "   "}),
            "casoDeUsoIdTemplate",
        ),
        (
            ATIVO,
            json!({"casoDeUsoIdTemplate": "tpl-b-seguro"}),
            "casoDeUsoIdTemplate",
        ),
        (
            ATIVO,
            json!({"casoDeUsoIdTemplate": "tpl-nao-existe"}),
            "casoDeUsoIdTemplate",
        ),
        (
            ATIVO,
            json!({"modalidadeAcesso": "Talvez"}),
            "modalidadeAcesso",
        ),
        (
            ATIVO,
            json!({"tipoTitular": "PessoaJuridica"}),
            "tipoTitular",
        ),
        (
            PENDENTE,
            json!({"dataExpiracaoConsentimento": "2001-01-01T00:00:00Z"}),
            "dataExpiracaoConsentimento",
        ),
        (
            ATIVO,
            json!({"modalidadeAcesso": "Indireto"}),
            "cnpjAnuente",
        ),
        (
            ATIVO,
            json!({"modalidadeAcesso": "Indireto", "cnpjAnuente": "11.222.333/0001-82"}),
            "cnpjAnuente",
        ),
        (
            ATIVO,
            json!({"dataTitularRespondeuConsentimento": "2098-01-01T00:00:00Z"}),
            "dataTitularRespondeuConsentimento",
        ),
        (
            ATIVO,
            json!({"dataTitularRespondeuConsentimento": null}),
            "dataTitularRespondeuConsentimento",
        ),
        (ATIVO, json!({"provaColeta": ""}), "provaColeta"),
        (ATIVO, json!({"provaColeta": null}), "provaColeta"),
        (PENDENTE, json!({"provaColeta": "x"}), "provaColeta"),
        (
            PENDENTE,
            json!({"dataTitularRespondeuConsentimento": "2026-01-10T12:00:00Z"}),
            "dataTitularRespondeuConsentimento",
        ),
        (PENDENTE, json!({"cpfTitular": null}), "cpfTitular"),
    ];
    for (path, change, field) in cases {
        let mut body = if path == ATIVO {
            active_body()
        } else {
            pending_body()
        };
        for (k, v) in change.as_object().unwrap() {
            body[k] = v.clone();
        }
        let r = app.a.post_json(path, &body).expect(422);
        assert_eq!(error_fields(&r), [field], "{path} with {change}");
        assert_eq!(r.json["isPgccErro"], false);
        assert!(
            !r.text.contains("529.982.247") && !r.text.contains("5299822472"),
            "no CPF in errors: {}",
            r.text
        );
    }
    assert!(app.sim_requests().is_empty(), "nothing reached the PGCC");
    assert_eq!(app.consent_rows(), 0);
}

#[test]
fn several_broken_rules_are_reported_together() {
    let app = TestApp::synced();
    let r = app
        .a
        .post_json(ATIVO, &json!({"modalidadeAcesso": "Indireto"}))
        .expect(422);
    let mut fields = error_fields(&r);
    fields.sort();
    assert_eq!(
        fields,
        [
            "casoDeUsoIdTemplate",
            "cnpjAnuente",
            "cpfTitular",
            "dataExpiracaoConsentimento",
            "dataTitularRespondeuConsentimento",
            "provaColeta",
            "tipoTitular"
        ]
    );
}

#[test]
fn malformed_json_wrong_types_and_unknown_fields_are_400() {
    let app = TestApp::synced();
    app.a
        .post_raw(ATIVO, "application/json", b"{\"cpfTitular\": ")
        .expect(400);
    let mut wrong_type = active_body();
    wrong_type["cpfTitular"] = json!(52998224725u64);
    let r = app.a.post_json(ATIVO, &wrong_type).expect(400);
    assert!(
        !r.text.contains("52998224725"),
        "the submitted value is not echoed: {}",
        r.text
    );
    let mut bad_date = active_body();
    bad_date["dataExpiracaoConsentimento"] = json!("amanhã");
    app.a.post_json(ATIVO, &bad_date).expect(400);
    let mut unknown = pending_body();
    unknown["campoExtra"] = json!(1);
    let r = app.a.post_json(PENDENTE, &unknown).expect(400);
    assert!(r.json["mensagem"].as_str().unwrap().contains("campoExtra"));
    assert_eq!(app.consent_rows(), 0);
}

#[test]
fn a_body_that_is_not_json_is_415() {
    let app = TestApp::synced();
    app.a
        .post_raw(ATIVO, "text/plain", active_body().to_string().as_bytes())
        .expect(415);
    app.a
        .post_raw(PENDENTE, "application/xml", b"<x/>")
        .expect(415);
    assert_eq!(app.consent_rows(), 0);
}

#[test]
fn a_body_over_the_limit_is_413() {
    let app = TestApp::spawn_with(&[("APP__SERVER__BODY_LIMIT_BYTES", "2048")]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let mut body = active_body();
    body["provaColeta"] = json!("x".repeat(4096));
    app.a.post_json(ATIVO, &body).expect(413);
    assert_eq!(app.consent_rows(), 0);
    assert!(app.sim_requests().is_empty());
}

#[test]
fn a_pgcc_4xx_is_422_with_the_pgcc_status_and_nothing_stored() {
    let app = TestApp::synced();
    app.fault(json!({"status": 409, "count": 1}));
    let r = app.a.post_json(ATIVO, &active_body()).expect(422);
    assert_eq!(r.json["isPgccErro"], true);
    assert_eq!(r.json["pgccCodigoErro"], "Conflict");
    assert_eq!(app.consent_rows(), 0);
    // the row stored before asking the PGCC is cancelled: the PGCC refused it
    assert_eq!(app.creation_rows("cancelada"), 1);
}

#[test]
fn a_template_removed_on_the_pgcc_since_the_last_sync_is_the_pgccs_404() {
    let app = TestApp::synced();
    let r = app
        .sim_admin
        .put_json("/_sim/seed", &json!({"empresas": []}));
    assert!(r.status < 300);
    let r = app.a.post_json(PENDENTE, &pending_body()).expect(422);
    assert_eq!(r.json["isPgccErro"], true);
    assert_eq!(r.json["pgccCodigoErro"], "NotFound");
    assert_eq!(app.consent_rows(), 0);
    assert_eq!(app.creation_rows("cancelada"), 1);
}

#[test]
fn a_pgcc_5xx_or_401_is_502_with_the_pgcc_status_and_nothing_stored() {
    let app = TestApp::synced();
    for (status, name) in [
        (503, "ServiceUnavailable"),
        (500, "InternalServerError"),
        (401, "Unauthorized"),
    ] {
        app.fault(json!({"status": status, "count": 1}));
        let r = app.a.post_json(PENDENTE, &pending_body()).expect(502);
        assert_eq!(r.json["isPgccErro"], true);
        assert_eq!(r.json["pgccCodigoErro"], name);
    }
    assert_eq!(app.consent_rows(), 0);
    // not refused, maybe not final: left for the reconciler, invisible meanwhile
    assert_eq!(app.creation_rows("em_andamento"), 3);
    // The fault was for those calls only: the next one goes through.
    app.a.post_json(PENDENTE, &pending_body()).expect(200);
    assert_eq!(app.consent_rows(), 1);
}

#[test]
fn a_pgcc_timeout_is_504_gateway_timeout_and_nothing_stored() {
    let app = TestApp::spawn_with(&[("APP__PGCC__TIMEOUT_MS", "500")]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    app.fault(json!({"latencyMs": 2000, "count": 1}));
    let r = app.a.post_json(ATIVO, &active_body()).expect(504);
    assert_eq!(r.json["isPgccErro"], true);
    assert_eq!(r.json["pgccCodigoErro"], "GatewayTimeout");
    assert_eq!(app.consent_rows(), 0);
    // the PGCC may still create it: the reconciler settles it (crash_consistency.rs)
    assert_eq!(app.creation_rows("em_andamento"), 1);
}

#[test]
fn an_unreachable_pgcc_is_502_bad_gateway() {
    let app = TestApp::synced();
    // Stop the simulator: its port now refuses connections.
    let TestApp {
        db: _db,
        sim,
        api: _api,
        a,
        ..
    } = app;
    drop(sim);
    let r = a.post_json(PENDENTE, &pending_body()).expect(502);
    assert_eq!(r.json["isPgccErro"], true);
    assert_eq!(r.json["pgccCodigoErro"], "BadGateway");
}

#[test]
fn without_a_usable_api_key_creation_is_401_whatever_the_body() {
    let app = TestApp::synced();
    app.anonymous.post_json(ATIVO, &active_body()).expect(401);
    app.anonymous
        .post_raw(ATIVO, "application/json", b"{not json")
        .expect(401);
    app.a
        .with_key(Some(
            "cak_0000000000000000000000000000000000000000000000000000000000000000",
        ))
        .post_json(PENDENTE, &pending_body())
        .expect(401);
    app.a
        .with_key(Some("garbage"))
        .post_json(PENDENTE, &pending_body())
        .expect(401);
    assert_eq!(app.consent_rows(), 0);
    assert!(app.sim_requests().is_empty());
}
