use serde_json::json;

use crate::helpers::{demo_seed, demo_sim, Client, CNPJ, VINCULO_1, VINCULO_2};

#[test]
fn the_demo_seed_loads_one_company_with_two_links_and_three_use_cases() {
    let seed = demo_seed();
    assert_eq!(seed.empresas.len(), 1);
    let empresa = &seed.empresas[0];
    assert_eq!(empresa.cnpj, "11.222.333/0001-81");
    assert_eq!(empresa.vinculos.len(), 2);
    let total: usize = empresa.vinculos.iter().map(|v| v.casos_de_uso.len()).sum();
    assert_eq!(total, 3);
}

#[test]
fn loading_a_missing_seed_file_names_the_file() {
    let err = pgcc_sim::load_seed("/nonexistent/seed.json").unwrap_err();
    assert!(format!("{err:#}").contains("/nonexistent/seed.json"));
}

#[test]
fn use_cases_are_listed_by_link_for_a_masked_seed_cnpj_asked_unmasked() {
    let sim = demo_sim();
    let (status, body) = Client::new(&sim).get(&format!("/pgcc/v1/empresas/{CNPJ}/casos-de-uso"));
    assert_eq!(status, 200);
    let vinculos = body["vinculos"].as_array().unwrap();
    assert_eq!(vinculos.len(), 2);
    assert_eq!(vinculos[0]["id"], VINCULO_1);
    assert_eq!(vinculos[1]["id"], VINCULO_2);
    assert_eq!(
        vinculos[0]["casosDeUso"][0]["templateId"],
        "tpl-credito-consignado"
    );
    assert_eq!(
        vinculos[0]["casosDeUso"][0]["titulo"],
        "Análise de crédito consignado"
    );
    assert_eq!(vinculos[1]["casosDeUso"].as_array().unwrap().len(), 1);
}

#[test]
fn an_unknown_company_is_404_with_the_error_body() {
    let sim = demo_sim();
    let (status, body) = Client::new(&sim).get("/pgcc/v1/empresas/99999999000191/casos-de-uso");
    assert_eq!(status, 404);
    assert_eq!(body["codigo"], "NotFound");
    assert!(body["mensagem"].is_string());
}

#[test]
fn replacing_the_seed_at_run_time_changes_the_listing_and_keeps_the_requests() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let (status, _) = client.criar(&crate::helpers::nova(
        &crate::helpers::new_ref(),
        "tpl-abertura-conta",
        "pendente",
    ));
    assert_eq!(status, 201);

    let (status, _) = client.put(
        "/_sim/seed",
        &json!({"empresas":[{"cnpj":CNPJ,"vinculos":[{"id":VINCULO_2,"casosDeUso":[
            {"templateId":"tpl-novo","titulo":"Novo caso"}]}]}]}),
    );
    assert_eq!(status, 204);

    let (_, body) = client.get(&format!("/pgcc/v1/empresas/{CNPJ}/casos-de-uso"));
    assert_eq!(body["vinculos"].as_array().unwrap().len(), 1);
    assert_eq!(
        body["vinculos"][0]["casosDeUso"][0]["templateId"],
        "tpl-novo"
    );
    let (_, received) = client.get("/_sim/solicitacoes");
    assert_eq!(received.as_array().unwrap().len(), 1);
}

#[test]
fn a_seed_that_is_not_json_is_refused_with_400() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let (status, body) = client.put("/_sim/seed", &json!({"empresas": "nope"}));
    assert_eq!(status, 400);
    assert_eq!(body["codigo"], "BadRequest");
}

#[test]
fn a_simulator_without_seed_knows_no_company() {
    let sim = pgcc_sim::spawn_in_background(pgcc_sim::Seed::default());
    let (status, _) = Client::new(&sim).get(&format!("/pgcc/v1/empresas/{CNPJ}/casos-de-uso"));
    assert_eq!(status, 404);
}
