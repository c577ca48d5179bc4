use serde_json::json;

use crate::helpers::*;

fn register(client: &testkit::Client, url: &str) -> String {
    let r = client
        .post_json("/api/webhook-urls", &json!({"url": url}))
        .expect(200);
    assert_eq!(r.data()["url"], url);
    r.data()["id"].as_str().unwrap().to_owned()
}

#[test]
fn registered_urls_are_listed_for_their_company_only() {
    let app = TestApp::spawn();
    let id = register(&app.a, "https://a.example.com/hooks");
    register(&app.b, "https://b.example.com/hooks");
    let list = app.a.get("/api/webhook-urls").expect(200);
    let items = list.data().as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["id"], id.as_str());
}

#[test]
fn deleting_a_webhook_url_soft_deletes_it_and_keeps_the_row() {
    let app = TestApp::spawn();
    let id = register(&app.a, "https://a.example.com/hooks");
    app.a.delete(&format!("/api/webhook-urls/{id}")).expect(200);

    assert_eq!(
        app.a.get("/api/webhook-urls").expect(200).data(),
        &json!([])
    );
    let kept = app.db.scalar(&format!(
        "SELECT count(*) AS v FROM webhook_urls WHERE id = '{id}' AND removido_em IS NOT NULL"
    ));
    assert_eq!(kept, 1, "the row stays, with its removal time");
}

#[test]
fn a_second_delete_is_404_and_keeps_the_first_removal_time() {
    let app = TestApp::spawn();
    let id = register(&app.a, "https://a.example.com/hooks");
    app.a.delete(&format!("/api/webhook-urls/{id}")).expect(200);
    let first = app.db.text(&format!(
        "SELECT removido_em::text AS v FROM webhook_urls WHERE id = '{id}'"
    ));
    app.a.delete(&format!("/api/webhook-urls/{id}")).expect(404);
    let second = app.db.text(&format!(
        "SELECT removido_em::text AS v FROM webhook_urls WHERE id = '{id}'"
    ));
    assert_eq!(first, second);
}

#[test]
fn deleting_another_companys_webhook_url_is_404_and_changes_nothing() {
    let app = TestApp::spawn();
    let id = register(&app.a, "https://a.example.com/hooks");
    app.b.delete(&format!("/api/webhook-urls/{id}")).expect(404);
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM webhook_urls WHERE id = '{id}' AND removido_em IS NULL"
        )),
        1
    );
    assert_eq!(
        app.a
            .get("/api/webhook-urls")
            .expect(200)
            .data()
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn deleting_an_unknown_or_malformed_id_is_404() {
    let app = TestApp::spawn();
    app.a
        .delete("/api/webhook-urls/7d0f7a56-6a36-4c43-9d0e-3b8c8f1b9a11")
        .expect(404);
    app.a.delete("/api/webhook-urls/not-a-uuid").expect(404);
}

#[test]
fn an_invalid_webhook_url_is_422_and_nothing_is_stored() {
    let app = TestApp::spawn();
    for url in [
        "ftp://example.com",
        "example.com/hook",
        "https://",
        "https://exa mple.com",
    ] {
        let r = app
            .a
            .post_json("/api/webhook-urls", &json!({"url": url}))
            .expect(422);
        assert_eq!(error_fields(&r), ["url"]);
    }
    assert_eq!(app.db.scalar("SELECT count(*) AS v FROM webhook_urls"), 0);
}

#[test]
fn webhook_routes_need_a_key() {
    let app = TestApp::spawn();
    app.anonymous.get("/api/webhook-urls").expect(401);
    app.anonymous
        .delete("/api/webhook-urls/7d0f7a56-6a36-4c43-9d0e-3b8c8f1b9a11")
        .expect(401);
    app.anonymous
        .post_json(
            "/api/webhook-urls",
            &json!({"url": "https://x.example.com"}),
        )
        .expect(401);
}
