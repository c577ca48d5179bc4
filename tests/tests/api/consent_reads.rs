//! Listing consent requests: filters and cursor paging.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::helpers::*;
use crate::lifecycle::{create, synced_with};

/// Every item of every page, following `proximoCursor` from the first page.
fn all_pages(client: &testkit::Client, query: &str) -> (Vec<Value>, usize) {
    let mut items = Vec::new();
    let mut pages = 0;
    let mut cursor: Option<String> = None;
    loop {
        let sep = if query.is_empty() { "" } else { "&" };
        let path = match &cursor {
            Some(c) => format!("/api/solicitacao-consentimento?{query}{sep}cursor={c}"),
            None => format!("/api/solicitacao-consentimento?{query}"),
        };
        let r = client.get(&path).expect(200);
        pages += 1;
        items.extend(r.data()["itens"].as_array().unwrap().iter().cloned());
        match r.data()["proximoCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
        assert!(pages < 1000, "paging never ends");
    }
    (items, pages)
}

#[test]
fn paging_through_1200_requests_returns_each_exactly_once_in_creation_order() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "0")]);
    let created: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    (0..300)
                        .map(|_| create(&app.a, PENDENTE, &pending_body()).0)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(created.len(), 1200);
    let expected: HashSet<&str> = created.iter().map(String::as_str).collect();

    for (limit, pages_expected) in [(500, 3), (137, 9)] {
        let (items, pages) = all_pages(&app.a, &format!("limite={limit}"));
        assert_eq!(pages, pages_expected, "limite={limit}");
        let ids: Vec<&str> = items.iter().map(|i| i["id"].as_str().unwrap()).collect();
        let unique: HashSet<&str> = ids.iter().copied().collect();
        assert_eq!(
            ids.len(),
            1200,
            "limite={limit}: none missing, none repeated"
        );
        assert_eq!(unique, expected, "limite={limit}: exactly the created ones");
        let keys: Vec<(String, String)> = items
            .iter()
            .map(|i| {
                (
                    i["criadoEm"].as_str().unwrap().to_owned(),
                    i["id"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_by(|a, b| {
            let ta = chrono::DateTime::parse_from_rfc3339(&a.0).unwrap();
            let tb = chrono::DateTime::parse_from_rfc3339(&b.0).unwrap();
            ta.cmp(&tb).then(a.1.cmp(&b.1))
        });
        assert_eq!(keys, sorted, "oldest first");
    }
    // The default page size is 50.
    let first = app.a.get("/api/solicitacao-consentimento").expect(200);
    assert_eq!(first.data()["itens"].as_array().unwrap().len(), 50);
}

#[test]
fn the_list_filters_by_status_template_cpf_and_creation_time() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "0")]);
    let (active, _) = create(&app.a, ATIVO, &active_body());
    let mut other_template = pending_body();
    other_template["casoDeUsoIdTemplate"] = json!("tpl-a-credito");
    let (pending_credit, _) = create(&app.a, PENDENTE, &other_template);
    let mut other_cpf = pending_body();
    other_cpf["cpfTitular"] = json!("111.444.777-35");
    let (pending_other_cpf, _) = create(&app.a, PENDENTE, &other_cpf);

    let ids = |query: &str| -> Vec<String> {
        all_pages(&app.a, query)
            .0
            .iter()
            .map(|i| i["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids("status=ativo"), vec![active.clone()]);
    assert_eq!(
        ids("status=pendente"),
        vec![pending_credit.clone(), pending_other_cpf.clone()]
    );
    assert_eq!(
        ids("casoDeUsoIdTemplate=tpl-a-credito"),
        vec![pending_credit.clone()]
    );
    assert_eq!(
        ids("cpfTitular=111.444.777-35"),
        vec![pending_other_cpf.clone()]
    );
    assert_eq!(
        ids(&format!("cpfTitular={CPF_DIGITS}&status=pendente")),
        vec![pending_credit.clone()]
    );

    let created_active = app
        .a
        .get(&format!("/api/solicitacao-consentimento/{active}"))
        .expect(200)
        .data()["criadoEm"]
        .as_str()
        .unwrap()
        .to_owned();
    let after = |t: &str| format!("criadoDe={}", t.replace('+', "%2B"));
    assert_eq!(
        ids(&after(&created_active)).len(),
        3,
        "criadoDe is inclusive"
    );
    let before = format!("criadoAte={}", created_active.replace('+', "%2B"));
    assert_eq!(ids(&before).len(), 0, "criadoAte is exclusive");
    assert_eq!(
        ids("criadoDe=2000-01-01T00:00:00Z&criadoAte=2000-01-02T00:00:00Z").len(),
        0
    );
}

#[test]
fn invalid_filters_are_refused_by_name() {
    let app = synced_with(&[]);
    for (query, field) in [
        ("status=aprovado", "status"),
        ("cpfTitular=123", "cpfTitular"),
        ("limite=0", "limite"),
        ("limite=501", "limite"),
        ("cursor=garbage", "cursor"),
        (
            "criadoDe=2030-01-02T00:00:00Z&criadoAte=2030-01-01T00:00:00Z",
            "criadoAte",
        ),
    ] {
        let r = app
            .a
            .get(&format!("/api/solicitacao-consentimento?{query}"))
            .expect(422);
        assert!(
            error_fields(&r).contains(&field.to_owned()),
            "{query}: {}",
            r.text
        );
    }
    app.a
        .get("/api/solicitacao-consentimento?criadoDe=ontem")
        .expect(400);
    app.a
        .get("/api/solicitacao-consentimento?limite=muitos")
        .expect(400);
    app.anonymous
        .get("/api/solicitacao-consentimento")
        .expect(401);
}

#[test]
fn reading_an_unknown_or_malformed_id_is_404() {
    let app = synced_with(&[]);
    app.a
        .get("/api/solicitacao-consentimento/7d0f7a56-6a36-4c43-9d0e-3b8c8f1b9a11")
        .expect(404);
    app.a
        .get("/api/solicitacao-consentimento/nao-e-um-id")
        .expect(404);
    app.a
        .post_empty("/api/solicitacao-consentimento/7d0f7a56-6a36-4c43-9d0e-3b8c8f1b9a11/revogar")
        .expect(404);
}

#[test]
fn a_query_parameter_that_does_not_fit_is_400_naming_that_parameter() {
    let app = TestApp::synced();
    for (path, parameter) in [
        ("/api/solicitacao-consentimento?criadoDe=ontem", "criadoDe"),
        ("/api/solicitacao-consentimento?limite=muitos", "limite"),
        (
            "/api/casos-de-uso?empresaVinculoPgccId=nao-e-uuid",
            "empresaVinculoPgccId",
        ),
    ] {
        let r = app.a.get(path).expect(400);
        let mensagem = r.json["mensagem"].as_str().unwrap();
        assert!(mensagem.contains(parameter), "{path}: {mensagem}");
        if parameter != "empresaVinculoPgccId" {
            assert!(!mensagem.contains("empresaVinculoPgccId"), "{mensagem}");
        }
    }
}

#[test]
fn the_updated_filters_list_what_changed_since_a_moment_whenever_it_was_created() {
    let app = TestApp::synced();
    let (revoked, _) = create(&app.a, ATIVO, &active_body());
    let (untouched, _) = create(&app.a, ATIVO, &active_body());
    std::thread::sleep(std::time::Duration::from_millis(50));
    let since = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    app.a
        .post_empty(&format!("/api/solicitacao-consentimento/{revoked}/revogar"))
        .expect(200);

    let page = app
        .a
        .get(&format!(
            "/api/solicitacao-consentimento?atualizadoDe={}",
            since.replace('+', "%2B")
        ))
        .expect(200);
    let ids: Vec<&str> = page.data()["itens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [revoked.as_str()], "only what changed since");
    let before = app
        .a
        .get(&format!(
            "/api/solicitacao-consentimento?atualizadoAte={}",
            since.replace('+', "%2B")
        ))
        .expect(200);
    let ids: Vec<&str> = before.data()["itens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [untouched.as_str()]);
    let refused = app
        .a
        .get("/api/solicitacao-consentimento?atualizadoDe=2026-02-01T00:00:00Z&atualizadoAte=2026-01-01T00:00:00Z")
        .expect(422);
    assert_eq!(error_fields(&refused), ["atualizadoAte"]);
    assert_eq!(
        refused.data()["erros"][0]["mensagem"],
        "atualizadoAte deve ser igual ou posterior a atualizadoDe",
        "the message names the parameters that were sent"
    );
}
