//! `GET /pgcc/v1/solicitacoes?cnpjEmpresa=...&referenciaExterna=...`: the reconciler's question
//! "do you hold our request X?".

use pgcc_sim::{spawn_in_background, Seed};
use serde_json::json;

use crate::helpers::{demo_seed, demo_sim, new_ref, nova, Client, CNPJ};

fn busca(cnpj: &str, referencia: &str) -> String {
    format!("/pgcc/v1/solicitacoes?cnpjEmpresa={cnpj}&referenciaExterna={referencia}")
}

#[test]
fn a_request_is_found_by_its_external_reference_in_a_list_of_one() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let referencia = new_ref();
    let (_, created) = client.criar(&nova(&referencia, "tpl-abertura-conta", "pendente"));
    client.criar(&nova(&new_ref(), "tpl-abertura-conta", "pendente"));

    let (status, body) = client.get(&busca(CNPJ, &referencia));

    assert_eq!(status, 200);
    let found = body["solicitacoes"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{body}");
    assert_eq!(found[0]["id"], created["id"]);
    assert_eq!(found[0]["referenciaExterna"], referencia.as_str());
    assert_eq!(found[0]["status"], "pendente");
}

#[test]
fn a_reference_never_created_is_an_empty_list_not_an_error() {
    let sim = demo_sim();
    let client = Client::new(&sim);

    let (status, body) = client.get(&busca(CNPJ, &new_ref()));

    assert_eq!(status, 200);
    assert_eq!(body, json!({"solicitacoes": []}));
}

#[test]
fn the_reference_is_scoped_by_company_and_a_masked_cnpj_is_the_same_company() {
    let mut seed: Seed = demo_seed();
    let mut other = seed.empresas[0].clone();
    other.cnpj = "12ABC34501DE35".to_owned();
    seed.empresas.push(other);
    let sim = spawn_in_background(seed);
    let client = Client::new(&sim);
    let referencia = new_ref();
    client.criar(&nova(&referencia, "tpl-abertura-conta", "ativo"));

    let (_, ours) = client.get(&busca("11.222.333%2F0001-81", &referencia));
    let (_, theirs) = client.get(&busca("12ABC34501DE35", &referencia));

    assert_eq!(ours["solicitacoes"].as_array().unwrap().len(), 1);
    assert_eq!(theirs, json!({"solicitacoes": []}));
}

#[test]
fn missing_or_malformed_parameters_are_400_and_an_unknown_company_is_404() {
    let sim = demo_sim();
    let client = Client::new(&sim);

    for path in [
        "/pgcc/v1/solicitacoes".to_owned(),
        format!("/pgcc/v1/solicitacoes?cnpjEmpresa={CNPJ}"),
        format!("/pgcc/v1/solicitacoes?referenciaExterna={}", new_ref()),
        busca(CNPJ, "nao-e-uuid"),
        format!("{}&outro=1", busca(CNPJ, &new_ref())),
    ] {
        let (status, body) = client.get(&path);
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(body["codigo"], "BadRequest");
    }
    let (status, body) = client.get(&busca("99888777000166", &new_ref()));
    assert_eq!(status, 404, "{body}");
}

#[test]
fn faults_apply_to_the_lookup() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    client.post("/_sim/faults", &json!({"status": 503}));

    let (status, _) = client.get(&busca(CNPJ, &new_ref()));
    let (after, _) = client.get(&busca(CNPJ, &new_ref()));

    assert_eq!(status, 503);
    assert_eq!(after, 200);
}
