//! Per-URL control (issue 14, part 6): a URL receives only the event types it chose
//! (`eventos`, at registration or with PATCH), and `testar` sends a signed `webhook.teste` at
//! once, answered and logged.

use std::time::Duration;

use serde_json::{json, Value};
use testkit::{verify_with_python, Receiver};

use crate::helpers::*;
use crate::lifecycle::{create, synced_with};

const WAIT: Duration = Duration::from_secs(30);

fn register(client: &testkit::Client, body: &Value) -> (String, String) {
    let r = client.post_json("/api/webhook-urls", body).expect(200);
    (
        r.data()["id"].as_str().unwrap().to_owned(),
        r.data()["segredo"].as_str().unwrap().to_owned(),
    )
}

fn types_received(receiver: &Receiver) -> Vec<String> {
    let mut t: Vec<String> = receiver
        .received()
        .iter()
        .map(|r| r.json()["type"].as_str().unwrap().to_owned())
        .collect();
    t.sort();
    t
}

fn listed(client: &testkit::Client, id: &str) -> Value {
    client
        .get("/api/webhook-urls")
        .expect(200)
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["id"] == id)
        .cloned()
        .unwrap()
}

fn revoke(client: &testkit::Client, id: &str) {
    client
        .post_empty(&format!("/api/solicitacao-consentimento/{id}/revogar"))
        .expect(200);
}

#[test]
fn a_url_receives_only_the_types_it_chose_and_one_without_a_choice_receives_all() {
    let app = synced_with(&[]);
    let chosen = Receiver::start(&[]);
    let all = Receiver::start(&[]);
    let (chosen_id, _) = register(
        &app.a,
        &json!({"url": chosen.url, "eventos": ["solicitacao.revogada"]}),
    );
    let (all_id, _) = register(&app.a, &json!({"url": all.url}));
    assert_eq!(
        listed(&app.a, &chosen_id)["eventos"],
        json!(["solicitacao.revogada"])
    );
    assert_eq!(listed(&app.a, &all_id)["eventos"], Value::Null);

    let (id, _) = create(&app.a, ATIVO, &active_body());
    revoke(&app.a, &id);

    all.wait_for(2, WAIT);
    chosen.wait_for(1, WAIT);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        types_received(&all),
        ["solicitacao.criada", "solicitacao.revogada"]
    );
    assert_eq!(types_received(&chosen), ["solicitacao.revogada"]);
    // no delivery was even written for the type it did not choose
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM webhook_entregas WHERE webhook_url_id = '{chosen_id}'"
        )),
        1
    );
}

#[test]
fn unknown_or_no_types_are_refused_naming_each_and_nothing_is_registered() {
    let app = synced_with(&[]);
    let r = app
        .a
        .post_json(
            "/api/webhook-urls",
            &json!({"url": "ftp://x", "eventos": ["solicitacao.criada", "solicitacao.apagada", "webhook.teste"]}),
        )
        .expect(422);
    assert_eq!(error_fields(&r), ["url", "eventos[1]", "eventos[2]"]);
    let r = app
        .a
        .post_json(
            "/api/webhook-urls",
            &json!({"url": "https://example.com/h", "eventos": []}),
        )
        .expect(422);
    assert_eq!(error_fields(&r), ["eventos"]);
    app.a
        .post_json(
            "/api/webhook-urls",
            &json!({"url": "https://example.com/h", "eventos": "solicitacao.criada"}),
        )
        .expect(400);
    assert_eq!(app.db.scalar("SELECT count(*) AS v FROM webhook_urls"), 0);
}

#[test]
fn patch_changes_the_types_from_the_next_event_and_null_brings_back_all() {
    let app = synced_with(&[]);
    let receiver = Receiver::start(&[]);
    let (id, _) = register(&app.a, &json!({"url": receiver.url}));
    let path = format!("/api/webhook-urls/{id}");

    let r = app
        .a
        .patch_json(
            &path,
            &json!({"eventos": ["solicitacao.revogada", "solicitacao.criada"]}),
        )
        .expect(200);
    // in the domain's order, as the list shows it
    assert_eq!(
        r.data()["eventos"],
        json!(["solicitacao.criada", "solicitacao.revogada"])
    );
    assert_eq!(r.data()["id"], id.as_str());
    assert_eq!(listed(&app.a, &id)["eventos"], r.data()["eventos"]);

    let r = app
        .a
        .patch_json(&path, &json!({"eventos": ["solicitacao.revogada"]}))
        .expect(200);
    assert_eq!(r.data()["eventos"], json!(["solicitacao.revogada"]));
    let (request, _) = create(&app.a, ATIVO, &active_body()); // not received
    revoke(&app.a, &request); // received
    receiver.wait_for(1, WAIT);

    let r = app
        .a
        .patch_json(&path, &json!({"eventos": null}))
        .expect(200);
    assert_eq!(r.data()["eventos"], Value::Null);
    create(&app.a, ATIVO, &active_body()); // received again
    receiver.wait_for(2, WAIT);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        types_received(&receiver),
        ["solicitacao.criada", "solicitacao.revogada"]
    );
}

#[test]
fn a_bad_patch_is_refused_and_changes_nothing() {
    let app = synced_with(&[]);
    let (id, _) = register(
        &app.a,
        &json!({"url": "https://example.com/h", "eventos": ["solicitacao.criada"]}),
    );
    let path = format!("/api/webhook-urls/{id}");

    let r = app.a.patch_json(&path, &json!({})).expect(400);
    assert!(r.json["mensagem"].as_str().unwrap().contains("eventos"));
    app.a
        .patch_json(&path, &json!({"eventos": [], "url": "https://x"}))
        .expect(400);
    let r = app
        .a
        .patch_json(&path, &json!({"eventos": ["nada"]}))
        .expect(422);
    assert_eq!(error_fields(&r), ["eventos[0]"]);
    app.a.patch_json(&path, &json!({"eventos": []})).expect(422);
    app.a.patch_raw(&path, "text/plain", b"eventos").expect(415);

    assert_eq!(
        listed(&app.a, &id)["eventos"],
        json!(["solicitacao.criada"])
    );
}

#[test]
fn another_companys_unknown_or_removed_url_is_404_for_patch_and_test_and_nothing_is_sent() {
    let app = synced_with(&[]);
    let receiver = Receiver::start(&[]);
    let (id, _) = register(&app.a, &json!({"url": receiver.url}));
    let body = json!({"eventos": ["solicitacao.criada"]});

    app.b
        .patch_json(&format!("/api/webhook-urls/{id}"), &body)
        .expect(404);
    app.b
        .post_empty(&format!("/api/webhook-urls/{id}/testar"))
        .expect(404);
    for other in ["7d0f7a56-6a36-4c43-9d0e-3b8c8f1b9a11", "nao-e-uuid"] {
        app.a
            .patch_json(&format!("/api/webhook-urls/{other}"), &body)
            .expect(404);
        app.a
            .post_empty(&format!("/api/webhook-urls/{other}/testar"))
            .expect(404);
    }
    assert_eq!(listed(&app.a, &id)["eventos"], Value::Null);
    app.a.delete(&format!("/api/webhook-urls/{id}")).expect(200);
    app.a
        .patch_json(&format!("/api/webhook-urls/{id}"), &body)
        .expect(404);
    app.a
        .post_empty(&format!("/api/webhook-urls/{id}/testar"))
        .expect(404);

    std::thread::sleep(Duration::from_millis(300));
    assert!(receiver.received().is_empty());
    assert_eq!(
        app.db
            .scalar("SELECT count(*) AS v FROM webhook_eventos WHERE tipo = 'webhook.teste'"),
        0
    );
}

#[test]
fn a_test_is_sent_signed_at_once_answered_and_logged_like_any_delivery() {
    let app = synced_with(&[("APP__WORKERS__RUN_IN_SERVE", "false")]);
    let receiver = Receiver::start(&[]);
    let (id, secret) = register(
        &app.a,
        &json!({"url": receiver.url, "eventos": ["solicitacao.revogada"]}),
    );

    let r = app
        .a
        .post_empty(&format!("/api/webhook-urls/{id}/testar"))
        .expect(200);

    // sent by the request itself: no worker runs in this server
    assert_eq!(r.data()["statusHttp"], 200);
    assert_eq!(r.data()["erro"], Value::Null);
    assert!(r.data()["latenciaMs"].as_u64().is_some());
    let got = receiver.received();
    assert_eq!(got.len(), 1);
    let body = got[0].json();
    assert_eq!(body["type"], "webhook.teste");
    assert_eq!(body["data"], json!({"webhookUrlId": id}));
    assert_eq!(
        got[0].header("webhook-id"),
        r.data()["eventoId"].as_str().unwrap()
    );
    assert!(verify_with_python(
        &secret,
        got[0].header("webhook-id"),
        got[0].header("webhook-timestamp"),
        &got[0].body,
        got[0].header("webhook-signature"),
    ));
    let log = app
        .a
        .get(&format!("/api/webhook-urls/{id}/entregas"))
        .expect(200);
    let entry = &log.data()[0];
    assert_eq!(entry["id"], r.data()["entregaId"]);
    assert_eq!(entry["tipo"], "webhook.teste");
    assert_eq!(entry["status"], "entregue");
    assert_eq!(entry["tentativas"][0]["statusHttp"], 200);
    // not an event of the company's data
    let events = app.a.get("/api/eventos").expect(200);
    assert!(events.data()["itens"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["type"] != "webhook.teste"));
}

#[test]
fn a_failing_test_answers_the_failure_and_is_logged_failed_not_retried() {
    let app = synced_with(&[]);
    let receiver = Receiver::start(&[500]);
    let (id, _) = register(&app.a, &json!({"url": receiver.url}));

    let r = app
        .a
        .post_empty(&format!("/api/webhook-urls/{id}/testar"))
        .expect(200);

    assert_eq!(r.data()["statusHttp"], 500);
    assert_eq!(r.data()["erro"], "resposta HTTP 500");
    let log = app
        .a
        .get(&format!("/api/webhook-urls/{id}/entregas"))
        .expect(200);
    assert_eq!(log.data()[0]["status"], "falhou");
    assert_eq!(log.data()[0]["proximaTentativaEm"], Value::Null);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(receiver.received().len(), 1, "not retried");
}

#[test]
fn a_test_to_nowhere_answers_no_status_and_the_generic_reason() {
    let app = synced_with(&[("APP__WEBHOOKS__TIMEOUT_MS", "1000")]);
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (id, _) = register(
        &app.a,
        &json!({"url": format!("http://127.0.0.1:{port}/hook")}),
    );
    let r = app
        .a
        .post_empty(&format!("/api/webhook-urls/{id}/testar"))
        .expect(200);
    assert_eq!(r.data()["statusHttp"], Value::Null);
    assert_eq!(r.data()["erro"], "conexão recusada");
    assert!(!r.text.contains("127.0.0.1"), "no address in the answer");
}

#[test]
fn a_company_has_at_most_two_tests_under_way_and_another_company_is_not_held_back() {
    let app = synced_with(&[]);
    let slow = Receiver::answering_after(Duration::from_secs(3));
    let (id, _) = register(&app.a, &json!({"url": slow.url}));
    let b_receiver = Receiver::start(&[]);
    let (b_id, _) = register(&app.b, &json!({"url": b_receiver.url}));

    let running: Vec<_> = (0..2)
        .map(|_| {
            let client = app.a.with_key(Some(&app.key_a));
            let path = format!("/api/webhook-urls/{id}/testar");
            std::thread::spawn(move || client.post_empty(&path).status)
        })
        .collect();
    assert!(testkit::wait_until(Duration::from_secs(10), || slow
        .received()
        .len()
        == 2));

    let r = app
        .a
        .post_empty(&format!("/api/webhook-urls/{id}/testar"))
        .expect(429);
    assert_eq!(r.retry_after.as_deref(), Some("1"));
    let started = std::time::Instant::now();
    app.b
        .post_empty(&format!("/api/webhook-urls/{b_id}/testar"))
        .expect(200);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "B was not held back"
    );

    for t in running {
        assert_eq!(t.join().unwrap(), 200);
    }
    assert_eq!(slow.received().len(), 2, "the refused test sent nothing");
    // slots are given back
    app.a
        .post_empty(&format!("/api/webhook-urls/{id}/testar"))
        .expect(200);
}

#[test]
fn a_test_and_the_list_answer_in_each_of_the_three_media_types() {
    let app = synced_with(&[]);
    let receiver = Receiver::start(&[]);
    let (id, _) = register(&app.a, &json!({"url": receiver.url}));
    for (accept, content_type) in [
        ("application/json", "application/json"),
        ("text/json", "text/json; charset=utf-8"),
        ("text/plain", "text/plain; charset=utf-8"),
    ] {
        let r = app
            .a
            .post_json_with(
                &format!("/api/webhook-urls/{id}/testar"),
                &json!(null),
                &[("Accept", accept)],
            )
            .expect(200);
        assert_eq!(r.content_type, content_type);
        let r = app
            .a
            .get_accept("/api/webhook-urls", Some(accept))
            .expect(200);
        assert_eq!(r.content_type, content_type);
    }
}
