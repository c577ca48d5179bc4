//! The in-process caches seen from outside: the use-case list's ETag and 304, a list that
//! follows every synchronization (on this instance at once, on another within the change
//! feed's delay), and a key that keeps working, from memory, until it is revoked.

use std::time::Duration;

use serde_json::{json, Value};
use testkit::{wait_until, Api, Client};

use crate::helpers::*;

fn titles(reply: &testkit::Reply) -> Vec<String> {
    reply
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["titulo"].as_str().unwrap().to_owned())
        .collect()
}

/// Company A's seed with one more use case on its first link.
fn seed_with_one_more() -> Value {
    let mut seed = seed();
    seed["empresas"][0]["vinculos"][0]["casosDeUso"]
        .as_array_mut()
        .unwrap()
        .push(json!({"templateId": "tpl-a-novo", "titulo": "Novo caso"}));
    seed
}

fn replace_seed(app: &TestApp, seed: &Value) {
    let reply = app.sim_admin.put_json("/_sim/seed", seed);
    assert_eq!(reply.status, 204, "{}", reply.text);
}

#[test]
fn the_list_carries_an_etag_and_a_matching_if_none_match_is_answered_304_without_a_body() {
    let app = TestApp::synced();
    let first = app.a.get("/api/casos-de-uso").expect(200);
    let etag = first.header("etag").expect("an ETag").to_owned();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");

    for value in [etag.clone(), format!("W/{etag}"), "*".to_owned()] {
        let not_modified = app
            .a
            .get_with("/api/casos-de-uso", &[("If-None-Match", &value)]);
        assert_eq!(not_modified.status, 304, "{value}");
        assert_eq!(not_modified.text, "", "no body");
        assert_eq!(not_modified.header("etag"), Some(etag.as_str()));
    }

    let other = app
        .a
        .get_with(
            "/api/casos-de-uso",
            &[("If-None-Match", "\"something-else\"")],
        )
        .expect(200);
    assert_eq!(other.header("etag"), Some(etag.as_str()));
    assert_eq!(other.text, first.text, "the same bytes every time");

    // the tag is the company's: B's list is another list, and A's tag means nothing to it
    let b = app
        .b
        .get_with("/api/casos-de-uso", &[("If-None-Match", &etag)])
        .expect(200);
    assert_ne!(b.header("etag"), Some(etag.as_str()));
    assert_eq!(titles(&b), ["Cotação de seguro"]);
}

/// `consent_api_cache_lookups_total{cache="<cache>",result="<result>"}` from `/metrics`.
fn lookups(app: &TestApp, cache: &str, result: &str) -> u64 {
    let text = app.anonymous.get("/metrics").text;
    let series =
        format!("consent_api_cache_lookups_total{{cache=\"{cache}\",result=\"{result}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&series))
        .map_or(0, |n| n.trim().parse().unwrap())
}

#[test]
fn once_the_feed_is_up_a_repeated_list_is_answered_from_memory() {
    let app = TestApp::synced();
    let in_use = wait_until(Duration::from_secs(3), || {
        app.anonymous
            .get("/metrics")
            .text
            .contains("cache_in_use 1")
    });
    assert!(in_use, "the change feed never came up");
    // the setup's synchronizations are also told by the feed, a moment later: let them arrive,
    // or they would drop what the first request below caches
    std::thread::sleep(Duration::from_millis(300));
    let first = app.a.get("/api/casos-de-uso").expect(200);
    let (keys_before, lists_before) = (
        lookups(&app, "api_keys", "hit"),
        lookups(&app, "use_case_lists", "hit"),
    );

    for _ in 0..5 {
        let again = app.a.get("/api/casos-de-uso").expect(200);
        assert_eq!(again.text, first.text);
    }

    let keys_after = lookups(&app, "api_keys", "hit");
    assert!(
        keys_after >= keys_before + 5,
        "{keys_before} -> {keys_after}: {}",
        app.anonymous.get("/metrics").text
    );
    assert_eq!(lookups(&app, "use_case_lists", "hit"), lists_before + 5);
}

#[test]
fn a_conditional_request_still_needs_a_valid_key() {
    let app = TestApp::synced();
    let etag = app
        .a
        .get("/api/casos-de-uso")
        .expect(200)
        .header("etag")
        .unwrap()
        .to_owned();

    let anonymous = app
        .anonymous
        .get_with("/api/casos-de-uso", &[("If-None-Match", &etag)]);
    assert_eq!(anonymous.status, 401);
}

#[test]
fn a_synchronization_changes_the_list_and_its_etag_at_once_on_this_instance() {
    let app = TestApp::synced();
    let before = app.a.get("/api/casos-de-uso").expect(200);
    let old_tag = before.header("etag").unwrap().to_owned();
    // served again (from memory) before the change
    app.a.get("/api/casos-de-uso").expect(200);
    replace_seed(&app, &seed_with_one_more());

    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);

    let after = app
        .a
        .get_with("/api/casos-de-uso", &[("If-None-Match", &old_tag)])
        .expect(200);
    assert!(titles(&after).contains(&"Novo caso".to_owned()));
    assert_ne!(after.header("etag"), Some(old_tag.as_str()));
    let by_link = app
        .a
        .get(&format!(
            "/api/casos-de-uso?empresaVinculoPgccId={VINCULO_A1}"
        ))
        .expect(200);
    assert!(titles(&by_link).contains(&"Novo caso".to_owned()));
}

#[test]
fn a_synchronization_on_one_instance_reaches_the_cached_list_of_another_within_a_second() {
    let app = TestApp::synced();
    let second = Api::start(&app.db, &app.sim);
    let on_second = Client::new(&second.base_url, Some(&app.key_a));
    let cached = on_second.get("/api/casos-de-uso").expect(200);
    assert_eq!(titles(&cached).len(), 3);
    // let the second instance's feed connect, so the list really is served from its memory
    std::thread::sleep(Duration::from_millis(300));
    on_second.get("/api/casos-de-uso").expect(200);
    replace_seed(&app, &seed_with_one_more());

    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);

    let seen = wait_until(Duration::from_secs(1), || {
        titles(&on_second.get("/api/casos-de-uso").expect(200)).len() == 4
    });
    assert!(seen, "the other instance still lists the old use cases");
}

#[test]
fn a_cached_key_of_a_company_whose_row_is_removed_by_hand_stops_working() {
    // An operator removes a company's keys in SQL, telling the caches in the same transaction
    // as docs/operations.md ("Caches") says: every instance hears it.
    let app = TestApp::synced();
    app.a.get("/api/casos-de-uso").expect(200);
    std::thread::sleep(Duration::from_millis(300));
    app.a.get("/api/casos-de-uso").expect(200);

    app.db.scalar(&format!(
        "WITH d AS (DELETE FROM api_keys WHERE empresa_id = '{0}' RETURNING 1) \
         SELECT count(*) + count(pg_notify('consent_api_cache', '{0}')) AS v FROM d",
        app.company_a
    ));

    let refused = wait_until(Duration::from_secs(1), || {
        app.a.get("/api/casos-de-uso").status == 401
    });
    assert!(refused, "a deleted key still works");
    app.b.get("/api/casos-de-uso").expect(200);
}
