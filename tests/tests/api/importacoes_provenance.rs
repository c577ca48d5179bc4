//! Provenance of imported consents (issue 37, part 3; docs/imports.md, "Provenance";
//! docs/auditoria.md, "Imported consents"): the creation's log entry, the ISO 27560 record and
//! the receipt say a consent was imported (`origem`, `idExterno`, the import's id, the original
//! answer date), the list filters on `origem`, and the log still verifies.

use base64::Engine as _;
use serde_json::{json, Value};
use testkit::processes::cli;

use crate::helpers::*;
use crate::importacoes::{jsonl, line, wait_for, JSONL};
use crate::records::{check_record, ready, registro};

/// Imports an active line (`crm-1`, `crm-legado`, answered 2019-03-01) and a pending one
/// (`loja-7`, `loja-12`) for company A: the import's id and the two requests' ids.
fn imported(app: &TestApp) -> (String, String, String) {
    let mut pending = pending_body();
    pending["idExterno"] = json!("loja-7");
    pending["origem"] = json!("loja-12");
    let body = jsonl(&[line("crm-1"), pending]);
    let r = app.a.post_raw("/api/importacoes", JSONL, &body).expect(202);
    let import = r.data()["id"].as_str().unwrap().to_owned();
    let done = wait_for(app, &app.a, &import, "concluida");
    assert_eq!(done["registradas"], 2, "{done}");
    let request_of = |external: &str| {
        app.db
            .text(&format!(
                "SELECT solicitacao_id::text AS v FROM importacao_linhas WHERE id_externo = '{external}'"
            ))
            .unwrap()
    };
    (import, request_of("crm-1"), request_of("loja-7"))
}

fn creation_entry(app: &TestApp, request: &str) -> Value {
    let text = app
        .db
        .text(&format!(
            "SELECT convert_from(entrada, 'UTF8') AS v FROM auditoria_entradas \
             WHERE solicitacao_id = '{request}' ORDER BY transacao, posicao LIMIT 1"
        ))
        .expect("a creation entry");
    serde_json::from_str(&text).unwrap()
}

fn keys(entry: &Value) -> Vec<String> {
    entry.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn an_imported_consents_log_entry_record_and_receipt_say_where_it_came_from() {
    let (app, _) = ready();
    let (import, active, pending) = imported(&app);
    let (live, _) = crate::lifecycle::create(&app.a, ATIVO, &active_body());

    // the creation entry: the four keys, in the canonical order (serde_json keeps them sorted)
    let entry = creation_entry(&app, &active);
    assert_eq!(entry["origem"], "crm-legado");
    assert_eq!(entry["idExterno"], "crm-1");
    assert_eq!(entry["importacaoId"], import.as_str());
    assert_eq!(
        entry["dataTitularRespondeuConsentimento"],
        "2019-03-01T10:00:00.000000Z"
    );
    assert_eq!(keys(&entry).len(), 15, "{entry}");
    let pending_entry = creation_entry(&app, &pending);
    assert_eq!(pending_entry["origem"], "loja-12");
    assert_eq!(
        pending_entry["dataTitularRespondeuConsentimento"],
        Value::Null
    );
    // a live creation's entry is as it always was: the eleven keys
    let live_entry = creation_entry(&app, &live);
    assert_eq!(keys(&live_entry).len(), 11, "{live_entry}");
    assert!(live_entry.get("origem").is_none());

    // the record: a data source naming the import, the company's id and the origin; the
    // original answer is the ConsentGiven event's time
    let read = app.a.get(&registro(&active));
    assert_eq!(read.status, 200, "{}", read.text);
    let record = read.json.clone();
    let source = &record["dpv:hasDataSource"];
    assert_eq!(source["@id"], format!("urn:uuid:{import}"), "{record}");
    assert_eq!(source["dct:identifier"], "crm-1");
    assert_eq!(source["dct:source"], "crm-legado");
    assert_eq!(
        record["dpv:hasConsentStatus"][0]["dpv:isIndicatedAtTime"],
        "2019-03-01T10:00:00.000Z"
    );
    let live_record = app.a.get(&registro(&live)).json.clone();
    assert!(live_record.get("dpv:hasDataSource").is_none());
    check_record(&app, &active);

    // the receipt
    let jws = app
        .a
        .get(&format!("/api/solicitacao-consentimento/{active}/recibo"))
        .expect(200)
        .data()["recibo"]
        .as_str()
        .unwrap()
        .to_owned();
    let payload: Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(jws.split('.').nth(1).unwrap())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        payload["importacao"],
        json!({"id": import, "idExterno": "crm-1", "origem": "crm-legado"})
    );
    assert_eq!(
        payload["dataTitularRespondeuConsentimento"],
        "2019-03-01T10:00:00Z"
    );

    // and the log, old keys and new, still verifies
    let verified = cli(&app.db, &app.sim, &["audit", "verify"]);
    assert!(
        verified.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&verified.stdout),
        String::from_utf8_lossy(&verified.stderr)
    );
}

#[test]
fn the_list_filters_on_origem_exactly_and_within_the_company() {
    let app = TestApp::synced();
    let (_, active, pending) = imported(&app);
    crate::lifecycle::create(&app.a, ATIVO, &active_body());

    let ids = |client: &testkit::Client, query: &str| -> Vec<String> {
        let r = client
            .get(&format!("/api/solicitacao-consentimento?{query}"))
            .expect(200);
        r.data()["itens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        ids(&app.a, "origem=crm-legado"),
        std::slice::from_ref(&active)
    );
    assert_eq!(ids(&app.a, "origem=loja-12"), [pending]);
    assert_eq!(
        ids(&app.a, "origem=crm"),
        Vec::<String>::new(),
        "exact match"
    );
    assert_eq!(ids(&app.a, "origem=crm-legado&status=ativo"), [active]);
    assert_eq!(
        ids(&app.a, "origem=crm-legado&status=pendente"),
        Vec::<String>::new()
    );
    assert_eq!(ids(&app.a, "").len(), 3, "no filter: every consent");
    assert_eq!(ids(&app.b, "origem=crm-legado"), Vec::<String>::new());

    let long = "x".repeat(201);
    let r = app
        .a
        .get(&format!("/api/solicitacao-consentimento?origem={long}"))
        .expect(422);
    assert_eq!(error_fields(&r), ["origem"]);
}
