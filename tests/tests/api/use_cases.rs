use serde_json::json;

use crate::helpers::*;

#[test]
fn sync_then_list_answers_the_companys_use_cases_with_exactly_the_six_fields() {
    let app = TestApp::spawn();
    let before = app.a.get("/api/casos-de-uso").expect(200);
    assert_eq!(
        before.data(),
        &json!([]),
        "nothing is listed before a synchronization"
    );

    let sync = app
        .a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    assert_eq!(
        sync.data(),
        &json!({"inseridos": 3, "atualizados": 0, "removidos": 0, "total": 3})
    );

    let list = app.a.get("/api/casos-de-uso").expect(200);
    assert_eq!(list.json["pgccCodigoErro"], "OK");
    assert_eq!(list.json["isPgccErro"], false);
    let items = list.data().as_array().unwrap();
    let titles: Vec<&str> = items
        .iter()
        .map(|u| u["titulo"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "Análise de crédito",
            "Marketing por e-mail",
            "Pesquisa de satisfação"
        ]
    );
    for item in items {
        let mut keys: Vec<&str> = item
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "dataInclusao",
                "dataUltimaSincronizacaoPgcc",
                "id",
                "pgccProviderTemplateId",
                "titulo",
                "vinculoId"
            ]
        );
        assert!(item["dataUltimaSincronizacaoPgcc"].is_string());
    }
    let stored = app.db.scalar(&format!(
        "SELECT count(*) AS v FROM casos_de_uso WHERE empresa_id = '{}'",
        app.company_a
    ));
    assert_eq!(stored, 3);
}

#[test]
fn a_second_sync_updates_and_marks_use_cases_gone_from_the_pgcc_as_removed() {
    let app = TestApp::synced();
    let mut seed = seed();
    // The PGCC drops one of company A's templates and renames another.
    seed["empresas"][0]["vinculos"][0]["casosDeUso"] =
        json!([{"templateId": "tpl-a-marketing", "titulo": "Marketing por e-mail e SMS"}]);
    let r = app.sim_admin.put_json("/_sim/seed", &seed);
    assert!(r.status < 300, "{}", r.text);

    let sync = app
        .a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    assert_eq!(
        sync.data(),
        &json!({"inseridos": 0, "atualizados": 2, "removidos": 1, "total": 2})
    );
    let titles: Vec<String> = app
        .a
        .get("/api/casos-de-uso")
        .expect(200)
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["titulo"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        titles,
        ["Marketing por e-mail e SMS", "Pesquisa de satisfação"]
    );
    let removed = app
        .db
        .scalar("SELECT count(*) AS v FROM casos_de_uso WHERE removido_em IS NOT NULL");
    assert_eq!(removed, 1, "the removed use case stays stored, flagged");
}

#[test]
fn filtering_by_link_lists_only_that_links_use_cases() {
    let app = TestApp::synced();
    let r = app
        .a
        .get(&format!(
            "/api/casos-de-uso?empresaVinculoPgccId={VINCULO_A2}"
        ))
        .expect(200);
    let items = r.data().as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["vinculoId"], VINCULO_A2);
    assert_eq!(items[0]["pgccProviderTemplateId"], "tpl-a-pesquisa");

    // Another company's link filters to nothing, never to that company's rows.
    let r = app
        .a
        .get(&format!(
            "/api/casos-de-uso?empresaVinculoPgccId={VINCULO_B1}"
        ))
        .expect(200);
    assert_eq!(r.data(), &json!([]));
}

#[test]
fn a_link_filter_that_is_not_a_uuid_is_400() {
    let app = TestApp::synced();
    app.a
        .get("/api/casos-de-uso?empresaVinculoPgccId=not-a-uuid")
        .expect(400);
}

#[test]
fn the_list_answers_in_each_of_the_three_media_types_with_the_same_body() {
    let app = TestApp::synced();
    let json_reply = app
        .a
        .get_accept("/api/casos-de-uso", Some("application/json"))
        .expect(200);
    assert!(
        json_reply.content_type.starts_with("application/json"),
        "{}",
        json_reply.content_type
    );
    for media in ["text/json", "text/plain"] {
        let r = app
            .a
            .get_accept("/api/casos-de-uso", Some(media))
            .expect(200);
        assert!(
            r.content_type.starts_with(media),
            "asked {media}, got {}",
            r.content_type
        );
        assert_eq!(r.json, json_reply.json, "same JSON body as {media}");
    }
}

#[test]
fn companies_never_see_each_others_use_cases() {
    let app = TestApp::synced();
    let a: Vec<String> = app
        .a
        .get("/api/casos-de-uso")
        .expect(200)
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["pgccProviderTemplateId"].as_str().unwrap().to_owned())
        .collect();
    let b: Vec<String> = app
        .b
        .get("/api/casos-de-uso")
        .expect(200)
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["pgccProviderTemplateId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(a.len(), 3);
    assert_eq!(b, ["tpl-b-seguro"]);
}

#[test]
fn the_list_keeps_answering_from_the_stored_copy_while_the_pgcc_fails() {
    let app = TestApp::synced();
    app.fault(json!({"status": 503, "count": 1000}));
    let r = app.a.get("/api/casos-de-uso").expect(200);
    assert_eq!(r.data().as_array().unwrap().len(), 3);

    // The PGCC really is failing: a synchronization now fails and changes nothing.
    let sync = app
        .a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(502);
    assert_eq!(sync.json["isPgccErro"], true);
    assert_eq!(sync.json["pgccCodigoErro"], "ServiceUnavailable");
    assert_eq!(
        app.a
            .get("/api/casos-de-uso")
            .expect(200)
            .data()
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn the_list_does_not_wait_for_a_stalled_pgcc() {
    let app = TestApp::spawn_with(&[("APP__PGCC__TIMEOUT_MS", "1000")]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    // The next PGCC call stalls past our timeout. The list makes no PGCC call, so it answers and
    // the stall is still waiting for the sync below (no wall-clock assertion needed).
    app.fault(json!({"latencyMs": 3000, "count": 1}));
    app.a.get("/api/casos-de-uso").expect(200);
    let sync = app
        .a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(504);
    assert_eq!(sync.json["pgccCodigoErro"], "GatewayTimeout");
}

#[test]
fn a_sync_for_a_company_unknown_to_the_pgcc_is_a_pgcc_error() {
    let app = TestApp::spawn();
    let r = app
        .sim_admin
        .put_json("/_sim/seed", &json!({"empresas": []}));
    assert!(r.status < 300);
    let sync = app
        .a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(422);
    assert_eq!(sync.json["isPgccErro"], true);
    assert_eq!(sync.json["pgccCodigoErro"], "NotFound");
}
