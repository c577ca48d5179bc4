//! Use-case versions (issue 25, part 1): a synchronization that finds a use case's title changed
//! on the PGCC makes a new version; requests record the version they were created under
//! (`versaoCasoDeUso`); `GET /api/casos-de-uso/{id}/versoes` lists the versions; the list's
//! `versaoDesatualizada=true` finds the requests under older ones; `casos-de-uso.alterado` tells
//! the company's URLs that chose it (and the feed) with the counts.

use std::time::Duration;

use serde_json::{json, Value};
use testkit::Receiver;

use crate::helpers::*;
use crate::lifecycle::{create, detail, synced_with};

const WAIT: Duration = Duration::from_secs(30);
const OTHER_CPF: &str = "111.444.777-35";
const NEW_TITLE: &str = "Marketing por e-mail e SMS";

/// The company A use case's id of `template`, as the use-case list shows it.
fn use_case_id(app: &TestApp, template: &str) -> String {
    app.a
        .get("/api/casos-de-uso")
        .expect(200)
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["pgccProviderTemplateId"] == template)
        .unwrap_or_else(|| panic!("no use case {template}"))["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The PGCC renames company A's `tpl-a-marketing`.
fn rename_marketing(app: &TestApp) {
    let mut seed = seed();
    seed["empresas"][0]["vinculos"][0]["casosDeUso"][0]["titulo"] = json!(NEW_TITLE);
    let r = app.sim_admin.put_json("/_sim/seed", &seed);
    assert!(r.status < 300, "{}", r.text);
}

fn listed_ids(app: &TestApp, query: &str) -> Vec<String> {
    let mut ids: Vec<String> = app
        .a
        .get(&format!("/api/solicitacao-consentimento{query}"))
        .expect(200)
        .data()["itens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

#[test]
fn a_changed_title_makes_a_version_the_event_counts_the_older_requests_and_the_filter_finds_them() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "0")]);
    let chosen = Receiver::start(&[]);
    let other_type = Receiver::start(&[]);
    let company_b = Receiver::start(&[]);
    app.a
        .post_json(
            "/api/webhook-urls",
            &json!({"url": chosen.url, "eventos": ["casos-de-uso.alterado"]}),
        )
        .expect(200);
    app.a
        .post_json(
            "/api/webhook-urls",
            &json!({"url": other_type.url, "eventos": ["solicitacao.revogada"]}),
        )
        .expect(200);
    app.b
        .post_json("/api/webhook-urls", &json!({"url": company_b.url}))
        .expect(200);

    // Two open requests and a revoked one under version 1 of tpl-a-marketing, one under the
    // unchanged tpl-a-credito.
    let (old_active, _) = create(&app.a, ATIVO, &active_body());
    let (old_pending, _) = create(&app.a, PENDENTE, &pending_body());
    let mut revoked_body = active_body();
    revoked_body["cpfTitular"] = json!(OTHER_CPF);
    let (old_revoked, _) = create(&app.a, ATIVO, &revoked_body);
    app.a
        .post_empty(&format!(
            "/api/solicitacao-consentimento/{old_revoked}/revogar"
        ))
        .expect(200);
    let mut credito = active_body();
    credito["casoDeUsoIdTemplate"] = json!("tpl-a-credito");
    let (unchanged, _) = create(&app.a, ATIVO, &credito);
    assert_eq!(detail(&app.a, &old_active)["versaoCasoDeUso"], 1);

    rename_marketing(&app);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let (new_active, _) = create(&app.a, ATIVO, &active_body());
    assert_eq!(detail(&app.a, &new_active)["versaoCasoDeUso"], 2);
    assert_eq!(detail(&app.a, &old_active)["versaoCasoDeUso"], 1);
    assert_eq!(detail(&app.a, &unchanged)["versaoCasoDeUso"], 1);

    // The versions, oldest first, with their fields and dates.
    let marketing = use_case_id(&app, "tpl-a-marketing");
    let versions = app
        .a
        .get(&format!("/api/casos-de-uso/{marketing}/versoes"))
        .expect(200)
        .data()
        .clone();
    let versions = versions.as_array().unwrap();
    assert_eq!(versions.len(), 2, "{versions:?}");
    assert_eq!(versions[0]["versao"], 1);
    assert_eq!(versions[0]["titulo"], "Marketing por e-mail");
    assert_eq!(versions[0]["vinculoId"], VINCULO_A1);
    assert_eq!(versions[1]["versao"], 2);
    assert_eq!(versions[1]["titulo"], NEW_TITLE);
    assert_eq!(versions[1]["outrosCampos"], json!({}));
    assert_eq!(versions[0]["fim"], versions[1]["inicio"]);
    assert!(versions[1]["inicio"].is_string());
    assert_eq!(versions[1]["fim"], Value::Null);
    assert_ne!(versions[0]["impressao"], versions[1]["impressao"]);
    // The use-case list keeps its exact shape and shows the new title.
    let list = app.a.get("/api/casos-de-uso").expect(200);
    let item = list
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["id"] == marketing.as_str())
        .unwrap()
        .clone();
    assert_eq!(item["titulo"], NEW_TITLE);
    assert_eq!(item.as_object().unwrap().len(), 6);

    // The filter: the requests under the older version, whatever their status; false or absent
    // filters nothing.
    assert_eq!(
        listed_ids(&app, "?versaoDesatualizada=true"),
        sorted(vec![
            old_active.clone(),
            old_pending.clone(),
            old_revoked.clone()
        ])
    );
    let everything = sorted(vec![
        old_active.clone(),
        old_pending.clone(),
        old_revoked,
        unchanged,
        new_active,
    ]);
    assert_eq!(listed_ids(&app, "?versaoDesatualizada=false"), everything);
    assert_eq!(listed_ids(&app, ""), everything);
    assert_eq!(
        listed_ids(&app, "?versaoDesatualizada=true&status=ativo"),
        vec![old_active]
    );
    let bad = app
        .a
        .get("/api/solicitacao-consentimento?versaoDesatualizada=talvez");
    assert_eq!(bad.status, 400, "{}", bad.text);

    // The event, to the URL that chose it and the feed, with the counts of the open requests
    // under the older version (the revoked one is not counted).
    let received = chosen.wait_for(1, WAIT);
    let body = received[0].json();
    assert_eq!(body["type"], "casos-de-uso.alterado");
    let expected = json!({
        "casoDeUsoId": marketing,
        "casoDeUsoIdTemplate": "tpl-a-marketing",
        "versaoAnterior": 1,
        "versaoNova": 2,
        "solicitacoesAtivas": 1,
        "solicitacoesPendentes": 1
    });
    assert_eq!(body["data"], expected);
    let feed = settled_feed_of_type(&app.a, "casos-de-uso.alterado", 1);
    assert_eq!(feed.len(), 1, "{feed:?}");
    assert_eq!(feed[0]["data"], expected);
    assert!(feed_of_type(&app.b, "casos-de-uso.alterado").is_empty());

    // A sync that changes nothing makes no version and no event.
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let again = app
        .a
        .get(&format!("/api/casos-de-uso/{marketing}/versoes"))
        .expect(200);
    assert_eq!(again.data().as_array().unwrap().len(), 2);
    assert_eq!(feed_of_type(&app.a, "casos-de-uso.alterado").len(), 1);

    // Only the URL that chose the type got it; company B's URL got nothing of company A.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(chosen.received().len(), 1);
    assert!(other_type
        .received()
        .iter()
        .all(|r| r.json()["type"] == "solicitacao.revogada"));
    assert!(company_b
        .received()
        .iter()
        .all(|r| r.json()["type"] != "casos-de-uso.alterado"));
}

#[test]
fn versions_of_another_companys_or_an_unknown_use_case_are_404() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "0")]);
    let marketing = use_case_id(&app, "tpl-a-marketing");
    let own = app
        .a
        .get(&format!("/api/casos-de-uso/{marketing}/versoes"))
        .expect(200);
    let versions = own.data().as_array().unwrap();
    assert_eq!(versions.len(), 1);
    assert_eq!(versions[0]["versao"], 1);
    assert_eq!(versions[0]["fim"], Value::Null);

    for (client, path) in [
        (&app.b, format!("/api/casos-de-uso/{marketing}/versoes")),
        (
            &app.a,
            "/api/casos-de-uso/00000000-0000-4000-8000-000000000000/versoes".to_owned(),
        ),
        (&app.a, "/api/casos-de-uso/nao-e-um-id/versoes".to_owned()),
    ] {
        let r = client.get(&path);
        assert_eq!(r.status, 404, "{path}: {}", r.text);
        assert_eq!(r.json["sucesso"], false);
    }
}

#[test]
fn the_subject_export_carries_the_version_of_each_request() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "0")]);
    create(&app.a, ATIVO, &active_body());
    rename_marketing(&app);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    create(&app.a, PENDENTE, &pending_body());

    let export = app
        .a
        .post_json(
            "/api/titulares/consentimentos",
            &json!({ "cpfTitular": CPF }),
        )
        .expect(200);
    let mut versions: Vec<i64> = export.data()["itens"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", export.text))
        .iter()
        .map(|r| r["versaoCasoDeUso"].as_i64().unwrap())
        .collect();
    versions.sort_unstable();
    assert_eq!(versions, [1, 2]);
}
