//! `POST /pgcc/v1/solicitacoes/status`, the counts of `/_sim/status-consultas` and expiry at read
//! time.

use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use serde_json::{json, Value};

use crate::helpers::{demo_sim, new_ref, nova, Client};

const STATUS: &str = "/pgcc/v1/solicitacoes/status";

fn created_id(client: &Client, status: &str) -> String {
    created_id_expiring(client, status, "2030-01-01T00:00:00Z")
}

fn created_id_expiring(client: &Client, status: &str, expiry: &str) -> String {
    let mut body = nova(&new_ref(), "tpl-abertura-conta", status);
    body["dataExpiracaoConsentimento"] = json!(expiry);
    let (code, created) = client.criar(&body);
    assert_eq!(code, 201, "{created}");
    created["id"].as_str().unwrap().to_owned()
}

fn ask(client: &Client, ids: &[&str]) -> (u16, Value) {
    client.post(STATUS, &json!({ "ids": ids }))
}

/// `(id, status)` of each answered request, in the answer's order.
fn statuses(body: &Value) -> Vec<(String, String)> {
    body["solicitacoes"]
        .as_array()
        .unwrap_or_else(|| panic!("no solicitacoes in {body}"))
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_owned(),
                s["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn pair(id: &str, status: &str) -> (String, String) {
    (id.to_owned(), status.to_owned())
}

#[test]
fn the_batch_answers_the_known_ids_in_the_order_asked_with_their_current_status() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let accepted = created_id(&client, "pendente");
    let refused = created_id(&client, "pendente");
    let revoked = created_id(&client, "ativo");
    let pending = created_id(&client, "pendente");
    for (id, action) in [
        (&accepted, "aceitar"),
        (&refused, "recusar"),
        (&revoked, "revogar"),
    ] {
        let path = format!("/_sim/solicitacoes/{id}/{action}");
        assert_eq!(client.post_empty(&path).0, 200, "{action}");
    }

    let (status, body) = ask(
        &client,
        &[&pending, "pgcc-desconhecida", &revoked, &accepted, &refused],
    );

    assert_eq!(status, 200);
    assert_eq!(
        statuses(&body),
        vec![
            pair(&pending, "pendente"),
            pair(&revoked, "revogado"),
            pair(&accepted, "ativo"),
            pair(&refused, "recusado"),
        ]
    );
    let first = body["solicitacoes"][0].as_object().unwrap();
    let mut keys: Vec<_> = first.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["atualizadoEm", "cnpjEmpresa", "id", "status"]);
    // the company the request was created for, as the creation named it
    assert_eq!(first["cnpjEmpresa"].as_str().map(str::len), Some(14));
}

#[test]
fn only_unknown_ids_answer_an_empty_list() {
    let sim = demo_sim();
    let (status, body) = ask(&Client::new(&sim), &["pgcc-a", "pgcc-b"]);
    assert_eq!(status, 200);
    assert_eq!(body, json!({ "solicitacoes": [] }));
}

#[test]
fn a_repeated_id_is_answered_once_at_its_first_place() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let a = created_id(&client, "pendente");
    let b = created_id(&client, "ativo");
    let (_, body) = ask(&client, &[&b, &a, &b]);
    assert_eq!(
        statuses(&body),
        vec![pair(&b, "ativo"), pair(&a, "pendente")]
    );
}

#[test]
fn zero_or_more_than_500_ids_or_a_malformed_body_is_400_and_counts_nothing() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let ids = |n: usize| (0..n).map(|i| format!("pgcc-{i}")).collect::<Vec<_>>();

    for body in [
        json!({ "ids": [] }),
        json!({ "ids": ids(501) }),
        json!({}),
        json!({ "ids": "pgcc-1" }),
        json!({ "ids": [1, 2] }),
        json!({ "ids": ["pgcc-1"], "extra": true }),
    ] {
        let (status, answer) = client.post(STATUS, &body);
        assert_eq!(status, 400, "{body}");
        assert_eq!(answer["codigo"], "BadRequest");
    }
    assert_eq!(client.post_raw(STATUS, "{not json").0, 400);
    assert_eq!(client.get("/_sim/status-consultas"), (200, json!({})));

    let (status, body) = client.post(STATUS, &json!({ "ids": ids(500) }));
    assert_eq!(status, 200);
    assert_eq!(body, json!({ "solicitacoes": [] }));
}

#[test]
fn each_call_counts_each_distinct_id_asked_known_or_not() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let known = created_id(&client, "pendente");

    ask(&client, &[&known, "pgcc-x"]);
    ask(&client, &[&known, &known]);
    // reading one request is not the batch status route
    client.get(&format!("/pgcc/v1/solicitacoes/{known}"));

    let (status, counts) = client.get("/_sim/status-consultas");
    assert_eq!(status, 200);
    assert_eq!(counts, json!({ known.as_str(): 2, "pgcc-x": 1 }));
}

#[test]
fn counts_survive_a_seed_change_and_delete_resets_them() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    ask(&client, &["pgcc-1"]);

    let (status, _) = client.put("/_sim/seed", &json!({ "empresas": [] }));
    assert_eq!(status, 204);
    assert_eq!(
        client.get("/_sim/status-consultas").1,
        json!({ "pgcc-1": 1 })
    );

    assert_eq!(client.delete("/_sim/status-consultas").0, 204);
    assert_eq!(client.get("/_sim/status-consultas"), (200, json!({})));
    ask(&client, &["pgcc-1"]);
    assert_eq!(
        client.get("/_sim/status-consultas").1,
        json!({ "pgcc-1": 1 })
    );
}

#[test]
fn faults_apply_to_the_batch_route_but_not_to_the_counts_and_a_faulty_call_counts_nothing() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    client.post("/_sim/faults", &json!({ "status": 503 }));

    assert_eq!(client.get("/_sim/status-consultas"), (200, json!({})));
    assert_eq!(client.delete("/_sim/status-consultas").0, 204);
    let (status, body) = ask(&client, &["pgcc-1"]);
    assert_eq!(status, 503, "the admin calls did not use the rule up");
    assert_eq!(body["codigo"], "ServiceUnavailable");
    assert_eq!(client.get("/_sim/status-consultas").1, json!({}));

    assert_eq!(ask(&client, &["pgcc-1"]).0, 200);
}

#[test]
fn faults_apply_to_the_revoke_route() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let id = created_id(&client, "ativo");
    client.post("/_sim/faults", &json!({ "status": 503 }));
    let path = format!("/pgcc/v1/solicitacoes/{id}/revogar");
    assert_eq!(client.post_empty(&path).0, 503);
    assert_eq!(client.post_empty(&path).1["status"], "revogado");
}

#[test]
fn a_past_expiry_reads_expirado_on_both_status_routes_while_the_stored_status_stays() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let expiry = "2020-01-01T00:00:00Z";
    let active = created_id_expiring(&client, "ativo", expiry);
    let pending = created_id_expiring(&client, "pendente", expiry);
    let live = created_id(&client, "ativo");

    for id in [&active, &pending] {
        let (status, read) = client.get(&format!("/pgcc/v1/solicitacoes/{id}"));
        assert_eq!(status, 200);
        assert_eq!(read["status"], "expirado");
    }
    let (_, body) = ask(&client, &[&active, &pending, &live]);
    assert_eq!(
        statuses(&body),
        vec![
            pair(&active, "expirado"),
            pair(&pending, "expirado"),
            pair(&live, "ativo"),
        ]
    );

    let (_, received) = client.get("/_sim/solicitacoes");
    assert_eq!(received[0]["status"], "ativo", "stored status unchanged");
    assert_eq!(received[1]["status"], "pendente", "stored status unchanged");
}

#[test]
fn an_expired_request_cannot_be_revoked_accepted_or_refused() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let expiry = "2020-01-01T00:00:00Z";
    let active = created_id_expiring(&client, "ativo", expiry);
    let pending = created_id_expiring(&client, "pendente", expiry);

    let (status, body) = client.post_empty(&format!("/pgcc/v1/solicitacoes/{active}/revogar"));
    assert_eq!(status, 409);
    assert_eq!(body["codigo"], "Conflict");
    assert_eq!(
        client
            .post_empty(&format!("/_sim/solicitacoes/{active}/revogar"))
            .0,
        409
    );
    for action in ["aceitar", "recusar"] {
        let path = format!("/_sim/solicitacoes/{pending}/{action}");
        assert_eq!(client.post_empty(&path).0, 409, "{action}");
    }
}

#[test]
fn expiry_is_computed_at_read_time() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let expiry_text = (Utc::now() + chrono::Duration::milliseconds(1500))
        .to_rfc3339_opts(SecondsFormat::Millis, true);
    let expiry = chrono::DateTime::parse_from_rfc3339(&expiry_text).unwrap();
    let id = created_id_expiring(&client, "pendente", &expiry_text);

    let (_, body) = ask(&client, &[&id]);
    assert_eq!(statuses(&body), vec![pair(&id, "pendente")]);
    assert_eq!(
        client.get(&format!("/pgcc/v1/solicitacoes/{id}")).1["status"],
        "pendente"
    );

    let wait = (expiry.with_timezone(&Utc) - Utc::now())
        .to_std()
        .unwrap_or_default();
    std::thread::sleep(wait + Duration::from_millis(100));

    let (_, body) = ask(&client, &[&id]);
    assert_eq!(statuses(&body), vec![pair(&id, "expirado")]);
    assert_eq!(
        body["solicitacoes"][0]["atualizadoEm"]
            .as_str()
            .map(|t| chrono::DateTime::parse_from_rfc3339(t).unwrap()),
        Some(expiry),
        "an expired request was last updated at its expiry"
    );
    assert_eq!(
        client.get(&format!("/pgcc/v1/solicitacoes/{id}")).1["status"],
        "expirado"
    );
}

#[test]
fn the_batch_route_requires_the_token_when_there_is_one() {
    let sim =
        pgcc_sim::spawn_in_background_with_token(crate::helpers::demo_seed(), Some("tk".into()));
    let body = json!({ "ids": ["pgcc-1"] });
    assert_eq!(Client::new(&sim).post(STATUS, &body).0, 401);
    assert_eq!(
        Client::new(&sim).with_token("tk").post(STATUS, &body).0,
        200
    );
}
