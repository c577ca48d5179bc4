//! The subject export (`POST /api/titulares/consentimentos`): every request of one subject for the
//! calling company, with history and proof, the CPF in full, paged; nothing of another company or
//! another subject; the CPF never in a URL nor a log.

use serde_json::{json, Value};

use crate::helpers::*;
use crate::lifecycle::{create, synced_with};

const EXPORT: &str = "/api/titulares/consentimentos";
const OTHER_CPF: &str = "111.444.777-35";

fn export(client: &testkit::Client, query: &str, cpf: &str) -> testkit::Reply {
    client.post_json(&format!("{EXPORT}{query}"), &json!({ "cpfTitular": cpf }))
}

#[test]
fn a_subjects_requests_come_whole_and_only_the_callers() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "0")]);
    let (active, _) = create(&app.a, ATIVO, &active_body());
    let (pending, _) = create(&app.a, PENDENTE, &pending_body());
    let mut other_subject = pending_body();
    other_subject["cpfTitular"] = json!(OTHER_CPF);
    create(&app.a, PENDENTE, &other_subject);
    // company B has a request for the same person
    let mut b_body = pending_body();
    b_body["casoDeUsoIdTemplate"] = json!("tpl-b-seguro");
    let b_created = app.b.post_json(PENDENTE, &b_body);
    assert_eq!(b_created.status, 200, "{}", b_created.text);

    // digits or formatted: the same subject
    for cpf in [CPF, CPF_DIGITS] {
        let reply = export(&app.a, "", cpf).expect(200);
        let items = reply.data()["itens"].as_array().unwrap();
        let ids: Vec<&str> = items.iter().map(|i| i["id"].as_str().unwrap()).collect();
        assert_eq!(ids, [active.as_str(), pending.as_str()], "oldest first");
        assert_eq!(reply.data()["proximoCursor"], Value::Null);
        for item in items {
            assert_eq!(item["cpfTitular"], CPF_DIGITS, "the CPF in full");
            let history = item["historico"].as_array().expect("history");
            assert_eq!(history[0]["de"], Value::Null);
            assert_eq!(history[0]["causa"], "empresa");
        }
        assert_eq!(items[0]["status"], "ativo");
        assert_eq!(items[0]["provaColeta"], "assinatura-digital:abc123");
        assert_eq!(items[1]["status"], "pendente");
    }

    // company B sees only its own request for that person
    let b_items = export(&app.b, "", CPF).expect(200);
    let b_items = b_items.data()["itens"].as_array().unwrap();
    assert_eq!(b_items.len(), 1);
    assert_ne!(b_items[0]["id"], json!(active));
    assert_ne!(b_items[0]["id"], json!(pending));
}

#[test]
fn the_export_pages_like_the_list() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "0")]);
    let created: Vec<String> = (0..5)
        .map(|_| create(&app.a, PENDENTE, &pending_body()).0)
        .collect();

    let mut seen = Vec::new();
    let mut query = "?limite=2".to_owned();
    for _ in 0..10 {
        let reply = export(&app.a, &query, CPF).expect(200);
        for item in reply.data()["itens"].as_array().unwrap() {
            seen.push(item["id"].as_str().unwrap().to_owned());
        }
        match reply.data()["proximoCursor"].as_str() {
            Some(cursor) => query = format!("?limite=2&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen, created);
}

#[test]
fn bad_input_is_refused_by_name_and_the_cpf_never_reaches_a_log_or_error() {
    let app = synced_with(&[]);
    let reply = app.a.post_json(EXPORT, &json!({})).expect(422);
    assert_eq!(error_fields(&reply), ["cpfTitular"]);

    let reply = export(&app.a, "", "529.982.247-24").expect(422);
    assert_eq!(error_fields(&reply), ["cpfTitular"]);
    assert_no_canary_cpf("the 422", &reply.text);

    let reply = export(&app.a, "?limite=0&cursor=nope", CPF).expect(422);
    assert_eq!(error_fields(&reply), ["cursor", "limite"]);

    let reply = app
        .a
        .post_json(EXPORT, &json!({"cpfTitular": CPF, "extra": 1}));
    assert_eq!(reply.status, 400, "{}", reply.text);

    let reply = app
        .anonymous
        .post_json(EXPORT, &json!({ "cpfTitular": CPF }));
    assert_eq!(reply.status, 401, "{}", reply.text);

    let reply = app.a.get(EXPORT);
    assert_eq!(reply.status, 405, "{}", reply.text);
}
