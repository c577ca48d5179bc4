use pgcc_sim::spawn_in_background_with_token;

use crate::helpers::{demo_seed, Client, CNPJ};

#[test]
fn with_a_token_the_contract_routes_require_it_and_admin_routes_do_not() {
    let sim = spawn_in_background_with_token(demo_seed(), Some("s3gredo".into()));
    let path = format!("/pgcc/v1/empresas/{CNPJ}/casos-de-uso");

    let (status, body) = Client::new(&sim).get(&path);
    assert_eq!(status, 401);
    assert_eq!(body["codigo"], "Unauthorized");
    assert_eq!(Client::new(&sim).with_token("errado").get(&path).0, 401);
    assert_eq!(Client::new(&sim).with_token("s3gredo").get(&path).0, 200);

    assert_eq!(Client::new(&sim).get("/_sim/health").0, 200);
    assert_eq!(Client::new(&sim).get("/_sim/solicitacoes").0, 200);
}

#[test]
fn without_a_token_any_or_no_authorization_is_accepted() {
    let sim = pgcc_sim::spawn_in_background(demo_seed());
    let path = format!("/pgcc/v1/empresas/{CNPJ}/casos-de-uso");
    assert_eq!(Client::new(&sim).get(&path).0, 200);
    assert_eq!(Client::new(&sim).with_token("qualquer").get(&path).0, 200);
}
