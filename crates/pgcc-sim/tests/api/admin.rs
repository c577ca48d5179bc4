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
