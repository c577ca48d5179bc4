//! Webhook URL limits and control end to end (issue 12, part 2): the cap per company, one
//! registration per URL (concurrent ones included), `reativar`, and no replay to a disabled URL.

use std::time::Duration;

use serde_json::json;
use testkit::{verify_with_python, wait_until, Client, Receiver};

use crate::helpers::*;
use crate::lifecycle::{create, synced_with};

const WAIT: Duration = Duration::from_secs(30);

/// Registers `url` for `client`; returns (id, secret).
fn register(client: &Client, url: &str) -> (String, String) {
    let r = client
        .post_json("/api/webhook-urls", &json!({"url": url}))
        .expect(200);
    (
        r.data()["id"].as_str().unwrap().to_owned(),
        r.data()["segredo"].as_str().unwrap().to_owned(),
    )
}

/// Rows of `webhook_urls` of the company `empresa` not removed (optionally: of this URL).
fn active_rows(app: &TestApp, empresa: &str, url: Option<&str>) -> i64 {
    let of_url = url.map_or(String::new(), |u| format!(" AND url = '{u}'"));
    app.db.scalar(&format!(
        "SELECT count(*) AS v FROM webhook_urls
         WHERE empresa_id = '{empresa}' AND removido_em IS NULL{of_url}"
    ))
}

/// Disables URL `id` as the disabling job does.
fn disable(app: &TestApp, id: &str) {
    app.db.scalar(&format!(
        "WITH d AS (UPDATE webhook_urls SET desativado_em = now() WHERE id = '{id}' RETURNING 1)
         SELECT count(*) AS v FROM d"
    ));
}

fn reativar(client: &Client, id: &str) -> testkit::Reply {
    client.post_empty(&format!("/api/webhook-urls/{id}/reativar"))
}

fn assert_failure_envelope(r: &testkit::Reply) {
    assert_eq!(r.json["sucesso"], false, "{}", r.text);
    assert_eq!(r.json["isPgccErro"], false, "{}", r.text);
    assert!(r.json["mensagem"].is_string(), "{}", r.text);
}

#[test]
fn the_eleventh_url_of_a_company_is_422_on_url_and_is_not_stored() {
    let app = TestApp::spawn();
    let mut ids = Vec::new();
    for n in 0..10 {
        ids.push(register(&app.a, &format!("https://hooks.example.com/{n}")).0);
    }
    // A disabled URL still counts: it can come back with reativar.
    disable(&app, &ids[0]);

    let r = app
        .a
        .post_json(
            "/api/webhook-urls",
            &json!({"url": "https://hooks.example.com/10"}),
        )
        .expect(422);

    assert_failure_envelope(&r);
    assert_eq!(error_fields(&r), ["url"]);
    assert_eq!(active_rows(&app, &app.company_a, None), 10);
    // Another company has its own allowance.
    register(&app.b, "https://hooks.example.com/10");
    // Removing one frees its place.
    app.a
        .delete(&format!("/api/webhook-urls/{}", ids[0]))
        .expect(200);
    register(&app.a, "https://hooks.example.com/10");
    assert_eq!(active_rows(&app, &app.company_a, None), 10);
}

#[test]
fn the_limit_follows_its_setting() {
    let app = TestApp::spawn_with(&[("APP__WEBHOOKS__MAX_URLS_PER_COMPANY", "2")]);
    register(&app.a, "https://hooks.example.com/1");
    register(&app.a, "https://hooks.example.com/2");

    let r = app
        .a
        .post_json(
            "/api/webhook-urls",
            &json!({"url": "https://hooks.example.com/3"}),
        )
        .expect(422);

    assert_eq!(error_fields(&r), ["url"]);
    assert_eq!(active_rows(&app, &app.company_a, None), 2);
}

#[test]
fn the_same_url_twice_is_409_and_only_one_row_exists() {
    let app = TestApp::spawn();
    let (first, _) = register(&app.a, "https://hooks.example.com/consent");

    // The same URL, written differently (scheme and host case, default port, fragment).
    for same in [
        "https://hooks.example.com/consent",
        "HTTPS://Hooks.Example.com:443/consent#x",
    ] {
        let r = app
            .a
            .post_json("/api/webhook-urls", &json!({"url": same}))
            .expect(409);
        assert_failure_envelope(&r);
        assert_eq!(r.json["pgccCodigoErro"], "OK");
    }

    assert_eq!(active_rows(&app, &app.company_a, None), 1);
    let listed = app.a.get("/api/webhook-urls").expect(200);
    assert_eq!(listed.data().as_array().unwrap().len(), 1);
    assert_eq!(listed.data()[0]["id"], first.as_str());
    // Not the same URL: the path's case matters to a receiver.
    register(&app.a, "https://hooks.example.com/Consent");
    // Another company may register it; and once removed, it may be registered again.
    register(&app.b, "https://hooks.example.com/consent");
    app.a
        .delete(&format!("/api/webhook-urls/{first}"))
        .expect(200);
    register(&app.a, "https://hooks.example.com/consent");
    assert_eq!(
        active_rows(
            &app,
            &app.company_a,
            Some("https://hooks.example.com/consent")
        ),
        1
    );
}

#[test]
fn concurrent_registrations_of_one_url_leave_one_row() {
    let app = TestApp::spawn();
    let url = "https://hooks.example.com/race";

    let statuses: Vec<u16> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let client = Client::new(&app.api.base_url, Some(&app.key_a));
                s.spawn(move || {
                    client
                        .post_json("/api/webhook-urls", &json!({"url": url}))
                        .status
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        1,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| [200, 409].contains(s)),
        "{statuses:?}"
    );
    assert_eq!(active_rows(&app, &app.company_a, Some(url)), 1);
}

#[test]
fn reativar_re_enables_a_disabled_url_with_the_same_id_and_secret_and_deliveries_flow_again() {
    let app = synced_with(&[]);
    let receiver = Receiver::start(&[]);
    let (id, secret) = register(&app.a, &receiver.url);
    create(&app.a, PENDENTE, &pending_body());
    assert_eq!(receiver.wait_for(1, WAIT).len(), 1);
    disable(&app, &id);
    create(&app.a, PENDENTE, &pending_body());
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(receiver.received().len(), 1, "a disabled URL gets nothing");

    let r = reativar(&app.a, &id).expect(200);

    assert_eq!(r.json["sucesso"], true);
    let listed = app.a.get("/api/webhook-urls").expect(200);
    assert_eq!(r.data(), &listed.data()[0], "answered as the list shows it");
    assert_eq!(r.data()["id"], id.as_str());
    assert!(r.data()["desativadaEm"].is_null(), "{}", r.text);
    assert!(
        r.data().get("segredo").is_none(),
        "the secret is never shown again"
    );
    create(&app.a, PENDENTE, &pending_body());
    let got = receiver.wait_for(2, WAIT);
    assert_eq!(got.len(), 2, "deliveries flow to it again");
    assert!(verify_with_python(
        &secret,
        got[1].header("webhook-id"),
        got[1].header("webhook-timestamp"),
        &got[1].body,
        got[1].header("webhook-signature"),
    ));
    let log = app
        .a
        .get(&format!("/api/webhook-urls/{id}/entregas"))
        .expect(200);
    assert_eq!(log.data().as_array().unwrap().len(), 2, "the same log");
    // Re-enabling an active URL changes nothing and answers it again.
    let again = reativar(&app.a, &id).expect(200);
    assert_eq!(again.data(), r.data());
}

#[test]
fn a_replay_to_a_disabled_url_is_409_and_changes_nothing() {
    let app = synced_with(&[]);
    let receiver = Receiver::start(&[]);
    let (id, _) = register(&app.a, &receiver.url);
    create(&app.a, PENDENTE, &pending_body());
    receiver.wait_for(1, WAIT);
    let delivered = wait_until(WAIT, || {
        app.a
            .get(&format!("/api/webhook-urls/{id}/entregas"))
            .expect(200)
            .data()[0]["status"]
            == "entregue"
    });
    assert!(delivered);
    let log = app
        .a
        .get(&format!("/api/webhook-urls/{id}/entregas"))
        .expect(200);
    let entrega = log.data()[0]["id"].as_str().unwrap().to_owned();
    disable(&app, &id);

    let r = app
        .a
        .post_empty(&format!(
            "/api/webhook-urls/{id}/entregas/{entrega}/reenviar"
        ))
        .expect(409);

    assert_failure_envelope(&r);
    assert_eq!(
        app.db.text(&format!(
            "SELECT status AS v FROM webhook_entregas WHERE id = '{entrega}'"
        )),
        Some("entregue".to_owned())
    );
    // Once re-enabled, the replay goes.
    reativar(&app.a, &id).expect(200);
    app.a
        .post_empty(&format!(
            "/api/webhook-urls/{id}/entregas/{entrega}/reenviar"
        ))
        .expect(200);
    assert_eq!(receiver.wait_for(2, WAIT).len(), 2);
}

#[test]
fn reativar_of_another_companys_an_unknown_or_a_removed_url_is_404_and_changes_nothing() {
    let app = TestApp::spawn();
    let (of_b, _) = register(&app.b, "https://b.example.com/hooks");
    disable(&app, &of_b);
    let (removed, _) = register(&app.a, "https://a.example.com/removed");
    disable(&app, &removed);
    app.a
        .delete(&format!("/api/webhook-urls/{removed}"))
        .expect(200);

    for id in [
        of_b.as_str(),
        removed.as_str(),
        "00000000-0000-4000-8000-000000000000",
        "not-a-uuid",
    ] {
        let r = reativar(&app.a, id).expect(404);
        assert_failure_envelope(&r);
    }

    assert!(app.b.get("/api/webhook-urls").expect(200).data()[0]["desativadaEm"].is_string());
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM webhook_urls WHERE id IN ('{of_b}', '{removed}')
             AND desativado_em IS NOT NULL AND reativado_em IS NULL"
        )),
        2
    );
    app.anonymous
        .post_empty(&format!("/api/webhook-urls/{of_b}/reativar"))
        .expect(401);
}
