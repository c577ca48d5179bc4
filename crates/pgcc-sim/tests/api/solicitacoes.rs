use serde_json::json;

use crate::helpers::{demo_sim, new_ref, nova, Client, VINCULO_1, VINCULO_2};

#[test]
fn creating_a_request_answers_201_with_a_pgcc_id_and_records_every_field() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let referencia = new_ref();
    let body = nova(&referencia, "tpl-credito-consignado", "ativo");

    let (status, created) = client.criar(&body);
    assert_eq!(status, 201);
    let id = created["id"].as_str().unwrap();
    assert!(id.starts_with("pgcc-"), "{id}");
    assert_eq!(created["status"], "ativo");
    assert_eq!(created["referenciaExterna"], referencia.as_str());

    let (status, received) = client.get("/_sim/solicitacoes");
    assert_eq!(status, 200);
    let received = received.as_array().unwrap();
    assert_eq!(received.len(), 1);
    let stored = &received[0];
    assert_eq!(stored["id"], id);
    for (key, value) in body.as_object().unwrap() {
        assert_eq!(&stored[key], value, "field {key}");
    }
}

#[test]
fn repeating_a_reference_answers_200_with_the_same_request_and_creates_nothing() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let body = nova(&new_ref(), "tpl-abertura-conta", "pendente");

    let (first_status, first) = client.criar(&body);
    let (second_status, second) = client.criar(&body);
    assert_eq!(first_status, 201);
    assert_eq!(second_status, 200);
    assert_eq!(first["id"], second["id"]);
    assert_eq!(second["status"], "pendente");

    let (_, received) = client.get("/_sim/solicitacoes");
    assert_eq!(received.as_array().unwrap().len(), 1);
}

#[test]
fn requests_are_listed_in_arrival_order() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let (_, a) = client.criar(&nova(&new_ref(), "tpl-abertura-conta", "pendente"));
    let (_, b) = client.criar(&nova(&new_ref(), "tpl-portabilidade-salario", "ativo"));
    let (_, received) = client.get("/_sim/solicitacoes");
    let ids: Vec<_> = received
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].clone())
        .collect();
    assert_eq!(ids, vec![a["id"].clone(), b["id"].clone()]);
}

#[test]
fn an_unknown_template_is_404_and_creates_nothing() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let (status, body) = client.criar(&nova(&new_ref(), "tpl-inexistente", "pendente"));
    assert_eq!(status, 404);
    assert_eq!(body["codigo"], "NotFound");
    let (_, received) = client.get("/_sim/solicitacoes");
    assert_eq!(received.as_array().unwrap().len(), 0);
}

#[test]
fn a_template_of_another_link_than_the_one_named_is_404() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let mut body = nova(&new_ref(), "tpl-credito-consignado", "pendente");
    body["vinculoId"] = json!(VINCULO_2);
    assert_eq!(client.criar(&body).0, 404);
    body["vinculoId"] = json!(VINCULO_1);
    assert_eq!(client.criar(&body).0, 201);
}

#[test]
fn an_unknown_company_is_404() {
    let sim = demo_sim();
    let mut body = nova(&new_ref(), "tpl-abertura-conta", "pendente");
    body["cnpjEmpresa"] = json!("99999999000191");
    let (status, body) = Client::new(&sim).criar(&body);
    assert_eq!(status, 404);
    assert_eq!(body["codigo"], "NotFound");
}

#[test]
fn malformed_bodies_are_400() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let (status, body) = client.post_raw("/pgcc/v1/solicitacoes", "{not json");
    assert_eq!(status, 400);
    assert_eq!(body["codigo"], "BadRequest");

    let broken: Vec<(&str, serde_json::Value)> = vec![
        ("cpfTitular", json!("123")),
        ("status", json!("revogado")),
        ("modalidadeAcesso", json!("Talvez")),
        ("dataExpiracaoConsentimento", json!("amanhã")),
        ("cnpjEmpresa", json!("123")),
        ("campoDesconhecido", json!(1)),
    ];
    for (field, value) in broken {
        let mut body = nova(&new_ref(), "tpl-abertura-conta", "pendente");
        body[field] = value;
        assert_eq!(client.criar(&body).0, 400, "{field}");
    }
    let mut active_without_proof = nova(&new_ref(), "tpl-abertura-conta", "ativo");
    active_without_proof["provaColeta"] = json!(null);
    assert_eq!(client.criar(&active_without_proof).0, 400);
    let mut indirect_without_consenter = nova(&new_ref(), "tpl-abertura-conta", "pendente");
    indirect_without_consenter["modalidadeAcesso"] = json!("Indireto");
    assert_eq!(client.criar(&indirect_without_consenter).0, 400);

    let (_, received) = client.get("/_sim/solicitacoes");
    assert_eq!(received.as_array().unwrap().len(), 0);
}

#[test]
fn a_request_is_read_by_its_pgcc_id_and_an_unknown_id_is_404() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let referencia = new_ref();
    let (_, created) = client.criar(&nova(&referencia, "tpl-abertura-conta", "pendente"));
    let id = created["id"].as_str().unwrap();

    let (status, read) = client.get(&format!("/pgcc/v1/solicitacoes/{id}"));
    assert_eq!(status, 200);
    assert_eq!(read["id"], id);
    assert_eq!(read["status"], "pendente");
    assert_eq!(read["referenciaExterna"], referencia.as_str());
    assert!(read["atualizadoEm"].is_string());

    let (status, body) = client.get("/pgcc/v1/solicitacoes/pgcc-desconhecida");
    assert_eq!(status, 404);
    assert_eq!(body["codigo"], "NotFound");
}

#[test]
fn the_company_revokes_an_active_request_and_withdraws_a_pending_one_but_nothing_else() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let (_, active) = client.criar(&nova(&new_ref(), "tpl-abertura-conta", "ativo"));
    let (_, pending) = client.criar(&nova(&new_ref(), "tpl-abertura-conta", "pendente"));
    let (_, refused) = client.criar(&nova(&new_ref(), "tpl-abertura-conta", "pendente"));
    let refused_id = refused["id"].as_str().unwrap();
    client.post_empty(&format!("/_sim/solicitacoes/{refused_id}/recusar"));

    for created in [&active, &pending] {
        let id = created["id"].as_str().unwrap();
        let (status, revoked) =
            client.post(&format!("/pgcc/v1/solicitacoes/{id}/revogar"), &json!({}));
        assert_eq!(status, 200, "{created}");
        assert_eq!(revoked["status"], "revogado");
        let (_, read) = client.get(&format!("/pgcc/v1/solicitacoes/{id}"));
        assert_eq!(read["status"], "revogado");
    }

    for id in [refused_id, active["id"].as_str().unwrap()] {
        let (status, body) =
            client.post(&format!("/pgcc/v1/solicitacoes/{id}/revogar"), &json!({}));
        assert_eq!(status, 409, "{id}");
        assert_eq!(body["codigo"], "Conflict");
    }

    let (status, _) = client.post("/pgcc/v1/solicitacoes/pgcc-nada/revogar", &json!({}));
    assert_eq!(status, 404);
}
