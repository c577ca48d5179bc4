use serde_json::json;

use crate::helpers::{demo_sim, new_ref, nova, Client};

fn created_id(client: &Client, status: &str) -> String {
    let (code, body) = client.criar(&nova(&new_ref(), "tpl-abertura-conta", status));
    assert_eq!(code, 201);
    body["id"].as_str().unwrap().to_owned()
}

#[test]
fn the_subject_accepts_a_pending_request_and_its_status_becomes_active() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let id = created_id(&client, "pendente");

    let (status, body) = client.post_empty(&format!("/_sim/solicitacoes/{id}/aceitar"));
    assert_eq!(status, 200);
    assert_eq!(body["id"], id.as_str());
    assert_eq!(body["status"], "ativo");
    assert_eq!(body["templateId"], "tpl-abertura-conta");

    let (_, read) = client.get(&format!("/pgcc/v1/solicitacoes/{id}"));
    assert_eq!(read["status"], "ativo");
    let (_, received) = client.get("/_sim/solicitacoes");
    assert_eq!(received[0]["status"], "ativo");
}

#[test]
fn the_subject_refuses_a_pending_request() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let id = created_id(&client, "pendente");
    let (status, body) = client.post_empty(&format!("/_sim/solicitacoes/{id}/recusar"));
    assert_eq!(status, 200);
    assert_eq!(body["status"], "recusado");
}

#[test]
fn the_subject_revokes_an_active_request() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let id = created_id(&client, "ativo");
    let (status, body) = client.post_empty(&format!("/_sim/solicitacoes/{id}/revogar"));
    assert_eq!(status, 200);
    assert_eq!(body["status"], "revogado");
}

#[test]
fn illegal_moves_are_409_and_change_nothing() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let active = created_id(&client, "ativo");
    let pending = created_id(&client, "pendente");

    for (id, action) in [
        (&active, "aceitar"),
        (&active, "recusar"),
        (&pending, "revogar"),
    ] {
        let (status, body) = client.post_empty(&format!("/_sim/solicitacoes/{id}/{action}"));
        assert_eq!(status, 409, "{action}");
        assert_eq!(body["codigo"], "Conflict");
    }
    let (_, _) = client.post_empty(&format!("/_sim/solicitacoes/{pending}/recusar"));
    let (status, _) = client.post_empty(&format!("/_sim/solicitacoes/{pending}/aceitar"));
    assert_eq!(status, 409, "recusado is terminal");

    let (_, received) = client.get("/_sim/solicitacoes");
    assert_eq!(received[0]["status"], "ativo");
    assert_eq!(received[1]["status"], "recusado");
}

#[test]
fn a_move_keeps_the_reason_given_and_both_status_routes_report_it_until_the_next_move() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let id = created_id(&client, "pendente");
    let silent = created_id(&client, "pendente");

    let (status, body) = client.post(
        &format!("/_sim/solicitacoes/{id}/aceitar"),
        &json!({ "motivo": "quero o crédito" }),
    );
    assert_eq!(status, 200);
    assert_eq!(body["motivo"], "quero o crédito");
    let (_, read) = client.get(&format!("/pgcc/v1/solicitacoes/{id}"));
    assert_eq!(read["motivo"], "quero o crédito");

    let (status, _) = client.post(
        &format!("/_sim/solicitacoes/{id}/revogar"),
        &json!({ "motivo": "mudei de banco" }),
    );
    assert_eq!(status, 200);
    client.post_empty(&format!("/_sim/solicitacoes/{silent}/recusar"));
    let (_, batch) = client.post(
        "/pgcc/v1/solicitacoes/status",
        &json!({ "ids": [id.as_str(), silent.as_str()] }),
    );
    assert_eq!(batch["solicitacoes"][0]["status"], "revogado");
    assert_eq!(batch["solicitacoes"][0]["motivo"], "mudei de banco");
    assert_eq!(batch["solicitacoes"][1]["status"], "recusado");
    assert!(
        batch["solicitacoes"][1].get("motivo").is_none(),
        "no reason given, none reported: {batch}"
    );
}

#[test]
fn a_move_with_a_bad_body_is_400_and_changes_nothing() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let id = created_id(&client, "pendente");
    for body in [json!({ "razao": "x" }), json!({ "motivo": 5 }), json!([])] {
        let (status, _) = client.post(&format!("/_sim/solicitacoes/{id}/recusar"), &body);
        assert_eq!(status, 400, "{body}");
    }
    let (_, read) = client.get(&format!("/pgcc/v1/solicitacoes/{id}"));
    assert_eq!(read["status"], "pendente");
}

#[test]
fn moving_an_unknown_request_is_404() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    for action in ["aceitar", "recusar", "revogar"] {
        let (status, body) = client.post_empty(&format!("/_sim/solicitacoes/pgcc-nada/{action}"));
        assert_eq!(status, 404, "{action}");
        assert_eq!(body["codigo"], "NotFound");
    }
}

#[test]
fn health_answers_200() {
    let sim = demo_sim();
    assert_eq!(Client::new(&sim).get("/_sim/health").0, 200);
}
