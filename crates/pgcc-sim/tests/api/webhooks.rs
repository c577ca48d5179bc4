use serde_json::json;

use crate::helpers::{demo_sim, Client};

#[test]
fn a_webhook_posted_to_the_receiver_is_listed_with_its_signature_headers_and_body() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let (status, listed) = client.get("/_sim/webhooks");
    assert_eq!(status, 200);
    assert_eq!(listed, json!([]));

    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .into();
    let response = agent
        .post(format!("{}/_sim/webhooks", sim.base_url))
        .header("webhook-id", "msg_1")
        .header("webhook-timestamp", "1764000000")
        .header("webhook-signature", "v1,c2lnbmF0dXJl")
        .send_json(json!({"type": "solicitacao.criada", "data": {"id": "a"}}))
        .expect("post to the receiver");
    assert_eq!(response.status().as_u16(), 204);
    let (status, _) = client.post_raw("/_sim/webhooks", "not json");
    assert_eq!(status, 204);

    let (_, listed) = client.get("/_sim/webhooks");
    let listed = listed.as_array().expect("a list");
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0]["webhookId"], "msg_1");
    assert_eq!(listed[0]["webhookTimestamp"], "1764000000");
    assert_eq!(listed[0]["webhookSignature"], "v1,c2lnbmF0dXJl");
    assert_eq!(listed[0]["corpo"]["type"], "solicitacao.criada");
    assert!(listed[0]["em"].is_string());
    assert_eq!(listed[1]["webhookId"], serde_json::Value::Null);
    assert_eq!(listed[1]["corpo"], "not json");
}

#[test]
fn the_receiver_keeps_only_the_latest_hundred_deliveries() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    for i in 0..105 {
        let (status, _) = client.post("/_sim/webhooks", &json!({ "n": i }));
        assert_eq!(status, 204);
    }
    let (_, listed) = client.get("/_sim/webhooks");
    let listed = listed.as_array().expect("a list");
    assert_eq!(listed.len(), 100);
    assert_eq!(listed[0]["corpo"]["n"], 5);
    assert_eq!(listed[99]["corpo"]["n"], 104);
}
