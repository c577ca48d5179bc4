//! `POST /api/hash-consulta/lote`: many HashConsulta checks in one request, one result per item
//! in the order sent, items named by index when broken, weighted against the rate limit.

use serde_json::{json, Value};

use crate::helpers::*;
use crate::lifecycle::{create, synced_with};

const LOTE: &str = "/api/hash-consulta/lote";
const SECOND_SUBJECT: &str = "111.444.777-35";

fn item(cpf: &str, template: &str) -> Value {
    json!({"cpfTitular": cpf, "casoDeUsoIdTemplate": template})
}

#[test]
fn a_batch_answers_each_item_in_order_as_the_single_check_would() {
    let app = TestApp::synced();
    let (id, _) = create(&app.a, ATIVO, &active_body());
    let itens = [
        item(CPF, "tpl-a-marketing"),
        item(SECOND_SUBJECT, "tpl-a-marketing"),
        item(CPF, "tpl-a-credito"),
        item(CPF_DIGITS, "tpl-a-marketing"),
    ];
    let r = app
        .a
        .post_json(LOTE, &json!({ "itens": itens }))
        .expect(200);
    let results = r.data()["itens"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    let single = app.a.post_json("/api/hash-consulta", &itens[0]).expect(200);
    assert_eq!(results[0], *single.data(), "the single check's shape");
    assert_eq!(results[0]["valido"], true);
    assert_eq!(results[0]["id"], id.as_str());
    assert_eq!(results[1], json!({"valido": false}));
    assert_eq!(results[2], json!({"valido": false}));
    assert_eq!(
        results[3]["id"],
        id.as_str(),
        "the CPF in digits is the same subject"
    );

    // another company asking about A's subject learns nothing
    let b = app
        .b
        .post_json(LOTE, &json!({ "itens": [itens[0].clone()] }))
        .expect(200);
    assert_eq!(b.data()["itens"], json!([{"valido": false}]));
}

#[test]
fn a_broken_item_is_named_by_its_index_and_nothing_is_answered() {
    let app = TestApp::synced();
    let r = app
        .a
        .post_json(
            LOTE,
            &json!({"itens": [
                item(CPF, "tpl-a-marketing"),
                item("529.982.247-24", "tpl-a-marketing"),
                {"cpfTitular": CPF}
            ]}),
        )
        .expect(422);
    let campos: Vec<&str> = r.data()["erros"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["campo"].as_str().unwrap())
        .collect();
    assert_eq!(
        campos,
        ["itens[1].cpfTitular", "itens[2].casoDeUsoIdTemplate"]
    );
    assert!(!r.text.contains("529.982.247-24"), "the CPF is not echoed");

    for itens in [vec![], vec![item(CPF, "tpl-a-marketing"); 501]] {
        let r = app
            .a
            .post_json(LOTE, &json!({ "itens": itens }))
            .expect(422);
        assert_eq!(r.data()["erros"][0]["campo"], "itens");
    }
    app.a
        .post_json(LOTE, &json!({"itens": [], "x": 1}))
        .expect(400);
}

#[test]
fn a_batch_counts_one_request_per_ten_items_against_the_rate_limit() {
    let app = synced_with(&[
        ("APP__RATE_LIMIT__PER_SECOND", "1"),
        ("APP__RATE_LIMIT__BURST", "60"),
    ]);
    let itens = vec![item(CPF, "tpl-a-marketing"); 500];
    let r = app
        .a
        .post_json(LOTE, &json!({ "itens": itens }))
        .expect(200);
    let remaining: u32 = r
        .header("ratelimit")
        .unwrap()
        .split(", ")
        .find_map(|part| part.strip_prefix("remaining="))
        .unwrap()
        .parse()
        .unwrap();
    // the setup's sync took 1 of the 60; 500 items cost 50 (a second may have refilled 1)
    assert!(
        (9..=10).contains(&remaining),
        "500 items cost 50 requests: {remaining} left"
    );
    let refused = app
        .a
        .post_json(LOTE, &json!({ "itens": itens }))
        .expect(429);
    assert!(refused.retry_after.is_some());
    // a batch of 10 costs what one check costs
    let small = vec![item(CPF, "tpl-a-marketing"); 10];
    app.a
        .post_json(LOTE, &json!({ "itens": small }))
        .expect(200);
}
