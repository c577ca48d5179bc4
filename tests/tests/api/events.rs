//! `GET /api/eventos`: catching up after a webhook outage (issue 14, part 3). Each item is the
//! webhook body plus `id` = the `webhook-id` its deliveries carried.

use std::time::Duration;

use serde_json::{json, Value};
use testkit::Receiver;

use crate::helpers::*;
use crate::lifecycle::{create, synced_with};

fn itens(reply: &testkit::Reply) -> Vec<Value> {
    reply.data()["itens"].as_array().unwrap().clone()
}

/// Waits until the feed of both companies lists every event they have stored. An event is listed
/// once no transaction still running on the database could precede it (docs/decisions.md, "The
/// event feed in commit order"): the service's own transactions may hold the newest back for a
/// moment.
pub fn settle(app: &TestApp) {
    for (client, company) in [(&app.a, &app.company_a), (&app.b, &app.company_b)] {
        let stored = app.db.scalar(&format!(
            "SELECT count(*) AS v FROM webhook_eventos \
             WHERE empresa_id = '{company}' AND tipo <> 'webhook.teste'"
        ));
        let listed = || itens(&client.get("/api/eventos?limite=500").expect(200)).len() as i64;
        assert!(
            testkit::wait_until(Duration::from_secs(30), || listed() == stored),
            "the feed lists {} of {stored} events",
            listed()
        );
    }
}

/// Whether the company's feed lists the creation event of request `id`.
fn lists_creation_of(app: &TestApp, id: &str) -> bool {
    itens(&app.a.get("/api/eventos?limite=500").expect(200))
        .iter()
        .any(|i| i["type"] == "solicitacao.criada" && i["data"]["id"] == id)
}

#[test]
fn a_transaction_left_open_on_another_database_holds_back_neither_feed_nor_checkpoint_one_here_does(
) {
    use diesel::connection::SimpleConnection;
    use diesel::Connection;
    let app = synced_with(&[]);
    // another database of the cluster (the administrator's, as another application's would be):
    // a transaction that took an id, left open for the whole test
    let mut elsewhere = diesel::PgConnection::establish(&testkit::db::admin_url()).unwrap();
    elsewhere
        .batch_execute("BEGIN; SELECT pg_current_xact_id()")
        .unwrap();
    let (id, _) = create(&app.a, ATIVO, &active_body());
    // listed, and signed into a checkpoint, while it stays open (before, the cluster's oldest
    // running id was the watermark: nothing newer was listed or signed until it ended)
    settle(&app);
    assert!(lists_creation_of(&app, &id));
    crate::audit_log::proofs_covering(&app, &id, 1);

    // this database: a transaction that took an id before the creation holds its event back
    let mut here = app.db.conn();
    here.batch_execute("BEGIN; SELECT pg_current_xact_id()")
        .unwrap();
    let (held, _) = create(&app.a, ATIVO, &active_body());
    for _ in 0..4 {
        assert!(
            !lists_creation_of(&app, &held),
            "listed while an older transaction of its database runs"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    here.batch_execute("ROLLBACK").unwrap();
    settle(&app);
    assert!(lists_creation_of(&app, &held));
    elsewhere.batch_execute("ROLLBACK").unwrap();
}

fn types(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|i| i["type"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn events_exist_without_any_webhook_url_oldest_first_each_the_webhook_body_plus_its_id() {
    let app = synced_with(&[]);
    let (active, _) = create(&app.a, ATIVO, &active_body());
    let (pending, _) = create(&app.a, PENDENTE, &pending_body());
    app.a
        .post_json(
            &format!("/api/solicitacao-consentimento/{pending}/revogar"),
            &json!({"motivo": "engano"}),
        )
        .expect(200);
    settle(&app);

    let r = app.a.get("/api/eventos").expect(200);

    let items = itens(&r);
    // the syncs of setup changed A's use cases: that event comes first
    assert_eq!(
        types(&items),
        [
            "casos-de-uso.sincronizados",
            "solicitacao.criada",
            "solicitacao.criada",
            "solicitacao.revogada"
        ]
    );
    // the last page still names where to resume, and nothing new answers no items and the same
    let cursor = r.data()["proximoCursor"].as_str().unwrap().to_owned();
    let again = app
        .a
        .get(&format!("/api/eventos?cursor={cursor}"))
        .expect(200);
    assert!(itens(&again).is_empty());
    assert_eq!(again.data()["proximoCursor"], cursor.as_str());
    for item in &items {
        let mut keys: Vec<&str> = item
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, ["data", "id", "timestamp", "type"]);
        assert!(
            !item.to_string().contains(CPF_DIGITS),
            "no full CPF: {item}"
        );
    }
    assert_eq!(items[1]["data"]["id"], active.as_str());
    assert_eq!(items[1]["data"]["cpfTitular"], "***.982.247-**");
    assert_eq!(items[3]["data"]["id"], pending.as_str());
    assert_eq!(items[3]["data"]["motivo"], "engano");
    // the ids are the rows of the outbox
    for item in &items {
        assert_eq!(
            app.db.scalar(&format!(
                "SELECT count(*) AS v FROM webhook_eventos WHERE id = '{}' AND empresa_id = '{}'",
                item["id"].as_str().unwrap(),
                app.company_a
            )),
            1
        );
    }
    // B sees only its own (its sync)
    let b = itens(&app.b.get("/api/eventos").expect(200));
    assert_eq!(types(&b), ["casos-de-uso.sincronizados"]);
    assert!(b.iter().all(|i| items.iter().all(|a| a["id"] != i["id"])));
}

#[test]
fn each_item_is_byte_for_byte_the_body_a_delivery_carried_and_its_id_the_webhook_id() {
    let app = synced_with(&[]);
    let receiver = Receiver::start(&[]);
    app.a
        .post_json("/api/webhook-urls", &json!({"url": receiver.url}))
        .expect(200);
    create(&app.a, ATIVO, &active_body());
    create(&app.a, PENDENTE, &pending_body());
    let received = receiver.wait_for(2, Duration::from_secs(30));
    settle(&app);

    let items = itens(
        &app.a
            .get("/api/eventos?tipo=solicitacao.criada")
            .expect(200),
    );

    assert_eq!(items.len(), 2);
    for delivery in &received {
        let id = delivery.header("webhook-id");
        let item = items
            .iter()
            .find(|i| i["id"] == id)
            .unwrap_or_else(|| panic!("no event {id} in {items:?}"));
        let mut body = item.clone();
        body.as_object_mut().unwrap().remove("id");
        assert_eq!(body, delivery.json(), "the same type, timestamp and data");
    }
}

#[test]
fn paging_follows_the_cursor_and_filters_narrow_by_type_and_time() {
    let app = synced_with(&[]);
    for _ in 0..5 {
        create(&app.a, ATIVO, &active_body());
    }
    settle(&app);
    let all = itens(&app.a.get("/api/eventos?limite=500").expect(200));
    assert_eq!(all.len(), 6);

    // pages of two, in order, nothing repeated or skipped
    let mut seen = Vec::new();
    let mut path = "/api/eventos?limite=2".to_owned();
    loop {
        let r = app.a.get(&path).expect(200);
        let page = itens(&r);
        assert!(page.len() <= 2);
        if page.is_empty() {
            break;
        }
        seen.extend(page);
        let cursor = r.data()["proximoCursor"]
            .as_str()
            .expect("a page with items has a cursor");
        path = format!("/api/eventos?limite=2&cursor={cursor}");
    }
    assert_eq!(seen, all);

    let only = itens(
        &app.a
            .get("/api/eventos?tipo=casos-de-uso.sincronizados")
            .expect(200),
    );
    assert_eq!(types(&only), ["casos-de-uso.sincronizados"]);

    let third = all[3]["timestamp"].as_str().unwrap();
    let since = itens(
        &app.a
            .get(&format!("/api/eventos?desde={}", third.replace('+', "%2B")))
            .expect(200),
    );
    assert_eq!(since, all[3..]);
}

#[test]
fn a_creation_confirmed_after_the_client_read_the_feed_to_its_end_comes_from_the_kept_cursor() {
    let app = synced_with(&[]);
    // received first, but the PGCC fails: the row waits, unconfirmed, and no event is written
    app.fault(json!({"status": 503}));
    let late = app
        .a
        .post_json_with(ATIVO, &active_body(), &[("Idempotency-Key", "atrasada-1")]);
    assert_eq!(late.status, 502, "{}", late.text);
    // received later, confirmed at once
    let (early, _) = create(&app.a, ATIVO, &active_body());
    settle(&app);

    // the client reads everything there is and keeps the cursor
    let mut cursor = None::<String>;
    let mut read = Vec::new();
    loop {
        let path = match &cursor {
            Some(c) => format!("/api/eventos?limite=500&cursor={c}"),
            None => "/api/eventos?limite=500".to_owned(),
        };
        let r = app.a.get(&path).expect(200);
        let page = itens(&r);
        if page.is_empty() {
            break;
        }
        read.extend(page);
        cursor = r.data()["proximoCursor"].as_str().map(str::to_owned);
    }
    // The fault above also ends in `pgcc.restabelecido`, written when the health check next
    // sees the PGCC answer: before or after this read, as fast as the database goes. Only the
    // requests' events matter here.
    let requests_only = |items: Vec<Value>| -> Vec<Value> {
        items
            .into_iter()
            .filter(|i| i["type"].as_str().unwrap().starts_with("solicitacao."))
            .collect()
    };
    let read = requests_only(read);
    assert_eq!(read.last().unwrap()["data"]["id"], early.as_str());
    let kept = cursor.expect("a cursor to resume from");

    // the retry under the same key confirms the first request now: its event is dated when the
    // request was received, before the one already read
    let retried = app
        .a
        .post_json_with(ATIVO, &active_body(), &[("Idempotency-Key", "atrasada-1")])
        .expect(200);
    let late_id = retried.data()["id"].as_str().unwrap().to_owned();
    settle(&app);

    let r = app
        .a
        .get(&format!("/api/eventos?cursor={kept}"))
        .expect(200);
    let new = requests_only(itens(&r));
    assert_eq!(types(&new), ["solicitacao.criada"], "{}", r.text);
    assert_eq!(new[0]["data"]["id"], late_id.as_str());
    assert!(
        new[0]["timestamp"].as_str().unwrap() < read.last().unwrap()["timestamp"].as_str().unwrap(),
        "dated before the event read earlier: {} / {}",
        new[0]["timestamp"],
        read.last().unwrap()["timestamp"]
    );
    // and exactly once: nothing more after it
    let next = r.data()["proximoCursor"].as_str().unwrap();
    let r = app
        .a
        .get(&format!("/api/eventos?cursor={next}"))
        .expect(200);
    let after = itens(&r);
    assert!(requests_only(after.clone()).is_empty(), "{}", r.text);
    if after.is_empty() {
        // an empty page keeps the cursor (unless the PGCC's recovery came only now)
        assert_eq!(r.data()["proximoCursor"], next);
    }
}

#[test]
fn bad_filters_are_refused_in_the_envelope_naming_each_field() {
    let app = synced_with(&[]);
    let r = app
        .a
        .get("/api/eventos?tipo=webhook.teste&limite=0&cursor=v1.x")
        .expect(422);
    assert_eq!(error_fields(&r), ["tipo", "cursor", "limite"]);
    app.a.get("/api/eventos?tipo=qualquer").expect(422);
    app.a.get("/api/eventos?limite=501").expect(422);
    app.a.get("/api/eventos?desde=ontem").expect(400);
    app.a.get("/api/eventos?limite=muitos").expect(400);
    app.anonymous.get("/api/eventos").expect(401);
    let r = app.a.post_empty("/api/eventos").expect(405);
    assert_eq!(r.allow.as_deref(), Some("GET"));
}

#[test]
fn a_cursor_from_another_companys_page_shows_nothing_of_that_company() {
    let app = synced_with(&[]);
    for _ in 0..3 {
        create(&app.a, ATIVO, &active_body());
    }
    settle(&app);
    let r = app.a.get("/api/eventos?limite=1").expect(200);
    let cursor = r.data()["proximoCursor"].as_str().unwrap().to_owned();
    let a_ids: Vec<Value> = itens(&app.a.get("/api/eventos?limite=500").expect(200))
        .into_iter()
        .map(|i| i["id"].clone())
        .collect();

    let b_page = itens(
        &app.b
            .get(&format!("/api/eventos?cursor={cursor}"))
            .expect(200),
    );
    assert!(b_page.iter().all(|i| !a_ids.contains(&i["id"])));
}

#[test]
fn the_answer_comes_in_each_of_the_three_media_types() {
    let app = synced_with(&[]);
    settle(&app);
    for (accept, content_type) in [
        ("application/json", "application/json"),
        ("text/json", "text/json; charset=utf-8"),
        ("text/plain", "text/plain; charset=utf-8"),
    ] {
        let r = app.a.get_accept("/api/eventos", Some(accept)).expect(200);
        assert_eq!(r.content_type, content_type);
        assert_eq!(itens(&r).len(), 1);
    }
}

#[test]
fn events_are_kept_as_long_as_the_webhook_retention_and_purged_after() {
    let app = synced_with(&[
        ("APP__WORKERS__RETENTION_SECONDS", "1"),
        ("APP__RETENTION__WEBHOOK_DAYS", "1"),
    ]);
    let (id, _) = create(&app.a, ATIVO, &active_body());
    // age the creation's event past the retention (and leave the sync's young)
    let aged = diesel::RunQueryDsl::execute(
        diesel::sql_query(format!(
            "UPDATE webhook_eventos SET criado_em = now() - interval '2 days' \
             WHERE payload LIKE '%{id}%'"
        )),
        &mut app.db.conn(),
    )
    .unwrap();
    assert_eq!(aged, 1);
    let purged = testkit::wait_until(Duration::from_secs(20), || {
        types(&itens(&app.a.get("/api/eventos").expect(200))) == ["casos-de-uso.sincronizados"]
    });
    assert!(purged, "the old event was not purged");
}
