use std::time::{Duration, Instant};

use serde_json::json;

use crate::helpers::{demo_sim, Client, CNPJ};

fn list_path() -> String {
    format!("/pgcc/v1/empresas/{CNPJ}/casos-de-uso")
}

#[test]
fn a_status_fault_answers_the_next_n_calls_then_normal_answers_resume() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    let (status, _) = client.post("/_sim/faults", &json!({"status": 503, "count": 2}));
    assert_eq!(status, 204);

    for _ in 0..2 {
        let (status, body) = client.get(&list_path());
        assert_eq!(status, 503);
        assert_eq!(body["codigo"], "ServiceUnavailable");
        assert!(body["mensagem"].is_string());
    }
    let (status, body) = client.get(&list_path());
    assert_eq!(status, 200);
    assert!(body["vinculos"].is_array());
}

#[test]
fn admin_routes_are_never_faulty_nor_count_down_the_rule() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    client.post("/_sim/faults", &json!({"status": 500}));
    assert_eq!(client.get("/_sim/health").0, 200);
    assert_eq!(client.get("/_sim/solicitacoes").0, 200);
    assert_eq!(client.get(&list_path()).0, 500);
    assert_eq!(client.get(&list_path()).0, 200, "count defaults to 1");
}

#[test]
fn a_new_rule_replaces_the_previous_one_and_delete_clears_it() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    client.post("/_sim/faults", &json!({"status": 503, "count": 5}));
    client.post("/_sim/faults", &json!({"status": 404, "count": 5}));
    assert_eq!(client.get(&list_path()).0, 404);
    assert_eq!(client.delete("/_sim/faults").0, 204);
    assert_eq!(client.get(&list_path()).0, 200);
}

#[test]
fn a_latency_fault_delays_the_normal_answer() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    client.post("/_sim/faults", &json!({"latencyMs": 400}));

    let started = Instant::now();
    let (status, _) = client.get(&list_path());
    assert_eq!(status, 200);
    assert!(started.elapsed() >= Duration::from_millis(400));

    let started = Instant::now();
    assert_eq!(client.get(&list_path()).0, 200);
    assert!(started.elapsed() < Duration::from_millis(400));
}

#[test]
fn latency_and_status_combine() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    client.post("/_sim/faults", &json!({"latencyMs": 300, "status": 502}));
    let started = Instant::now();
    assert_eq!(client.get(&list_path()).0, 502);
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[test]
fn a_slow_call_does_not_block_the_admin_routes() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    client.post("/_sim/faults", &json!({"latencyMs": 1500}));
    let url = sim.url(&list_path());
    let slow = std::thread::spawn(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder().proxy(None).build().into();
        agent.get(url).call().map(|r| r.status().as_u16())
    });
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    assert_eq!(client.get("/_sim/health").0, 200);
    assert!(started.elapsed() < Duration::from_millis(1000));
    assert_eq!(slow.join().unwrap().unwrap(), 200);
}

#[test]
fn an_empty_or_invalid_rule_is_400() {
    let sim = demo_sim();
    let client = Client::new(&sim);
    assert_eq!(client.post("/_sim/faults", &json!({"count": 3})).0, 400);
    assert_eq!(client.post("/_sim/faults", &json!({"status": 42})).0, 400);
    assert_eq!(
        client
            .post("/_sim/faults", &json!({"status": 503, "count": 0}))
            .0,
        400
    );
    assert_eq!(client.get(&list_path()).0, 200);
}
