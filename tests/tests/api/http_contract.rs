use serde_json::Value;

use crate::helpers::*;

#[test]
fn a_missing_or_unknown_key_is_401_in_the_envelope() {
    let app = TestApp::synced();
    let r = app.anonymous.get("/api/casos-de-uso").expect(401);
    assert_eq!(r.json["isPgccErro"], false);
    assert_eq!(r.json["pgccCodigoErro"], "OK");
    assert!(r.json["mensagem"].is_string());
    app.a
        .with_key(Some(
            "cak_ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        ))
        .get("/api/casos-de-uso")
        .expect(401);
}

#[test]
fn unknown_routes_are_404_in_the_envelope() {
    let app = TestApp::spawn();
    app.a.get("/api/nao-existe").expect(404);
    app.anonymous.get("/").expect(404);
}

#[test]
fn a_wrong_method_is_405_with_allow() {
    let app = TestApp::spawn();
    let r = app.a.delete("/api/casos-de-uso").expect(405);
    assert_eq!(r.allow.as_deref(), Some("GET"));
    let r = app.a.get(ATIVO).expect(405);
    assert_eq!(r.allow.as_deref(), Some("POST"));
    let r = app
        .a
        .post_empty("/api/webhook-urls/7d0f7a56-6a36-4c43-9d0e-3b8c8f1b9a11")
        .expect(405);
    assert_eq!(r.allow.as_deref(), Some("DELETE, PATCH"));
}

#[test]
fn the_openapi_document_describes_every_operation_with_the_api_key_header() {
    let app = TestApp::spawn();
    let r = app.anonymous.get("/openapi.json");
    assert_eq!(r.status, 200);
    let doc = &r.json;
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    assert_eq!(doc["info"]["version"], "dev");
    for (path, method, tag) in [
        ("/api/hash-consulta", "post", "HashConsulta"),
        ("/api/hash-consulta/{hash}", "get", "HashConsulta"),
    ] {
        assert_eq!(doc["paths"][path][method]["tags"][0], tag);
    }
    let tags: Vec<&str> = doc["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tags,
        [
            "Auditoria",
            "CasosDeUso",
            "Evidencias",
            "HashConsulta",
            "Importacoes",
            "SolicitacaoConsentimento",
            "Titulares",
            "WebhookUrls",
            // the events POSTed to those URLs (the document's `webhooks` section)
            "Webhooks"
        ]
    );
    let expected = [
        ("/api/casos-de-uso", "get"),
        ("/api/casos-de-uso/sincronizar", "post"),
        ("/api/solicitacao-consentimento/criar/ativo", "post"),
        ("/api/solicitacao-consentimento/criar/pendente", "post"),
        ("/api/solicitacao-consentimento", "get"),
        ("/api/solicitacao-consentimento/{id}", "get"),
        ("/api/solicitacao-consentimento/{id}/revogar", "post"),
        ("/api/hash-consulta", "post"),
        ("/api/hash-consulta/lote", "post"),
        ("/api/hash-consulta/{hash}", "get"),
        ("/api/titulares/consentimentos", "post"),
        ("/api/webhook-urls", "get"),
        ("/api/webhook-urls", "post"),
        ("/api/webhook-urls/{webhookUrlId}", "delete"),
        ("/api/webhook-urls/{webhookUrlId}", "patch"),
        ("/api/webhook-urls/{webhookUrlId}/testar", "post"),
        (
            "/api/webhook-urls/{webhookUrlId}/rotacionar-segredo",
            "post",
        ),
        ("/api/webhook-urls/{webhookUrlId}/reativar", "post"),
        ("/api/webhook-urls/{webhookUrlId}/entregas", "get"),
        (
            "/api/webhook-urls/{webhookUrlId}/entregas/{entregaId}/reenviar",
            "post",
        ),
        ("/api/eventos", "get"),
        ("/api/auditoria/acessos", "get"),
        ("/api/importacoes", "post"),
        ("/api/importacoes/{id}", "get"),
        ("/api/importacoes/{id}/erros", "get"),
        ("/api/importacoes/{id}/cancelar", "post"),
    ];
    for (path, method) in expected {
        let op = &doc["paths"][path][method];
        assert!(op.is_object(), "{method} {path} is documented");
        let key = op["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "Api-Key")
            .unwrap();
        assert_eq!(key["in"], "header");
        assert_eq!(key["required"], true);
        assert!(op["responses"]["401"].is_object());
    }
    let list = &doc["paths"]["/api/casos-de-uso"]["get"]["responses"]["200"]["content"];
    for media in ["application/json", "text/json", "text/plain"] {
        assert!(list[media].is_object(), "list documents {media}");
    }
}

#[test]
fn the_documented_envelope_and_use_case_match_what_the_api_answers() {
    let app = TestApp::synced();
    let doc = app.anonymous.get("/openapi.json").json;
    let schemas = &doc["components"]["schemas"];
    let props = |schema: &Value| -> Vec<String> {
        let mut p: Vec<String> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        p.sort();
        p
    };
    let use_case = &schemas["CasoDeUso"];
    assert_eq!(use_case["additionalProperties"], false);
    let envelope = schemas
        .as_object()
        .unwrap()
        .iter()
        .find(|(name, _)| name.starts_with("Envelope"))
        .map(|(_, s)| s)
        .unwrap();
    assert_eq!(envelope["additionalProperties"], false);

    let answer = app.a.get("/api/casos-de-uso").expect(200).json;
    let mut answered: Vec<String> = answer.as_object().unwrap().keys().cloned().collect();
    answered.sort();
    assert_eq!(props(envelope), answered);
    let mut item: Vec<String> = answer["data"][0]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    item.sort();
    assert_eq!(props(use_case), item);
    let codes = schemas["PgccCodigoErro"]["enum"].as_array().unwrap();
    // spec 2.4's 61 names and TooEarly (425, a PGCC "try later"; docs/decisions.md)
    assert_eq!(codes.len(), 62);
    assert!(codes.contains(&serde_json::json!("TooEarly")));
}

/// `/openapi.json` and the `/docs` assets are rendered once and tagged: `If-None-Match` with the
/// tag (alone, in a list, or `*`) answers 304 with no body and the same `ETag` and
/// `Cache-Control`; another tag answers 200 with the whole document, byte for byte the same.
#[test]
fn the_openapi_document_and_the_docs_assets_answer_304_to_their_etag() {
    let app = TestApp::spawn();
    let first = app.anonymous.get("/openapi.json");
    assert_eq!(first.status, 200);
    assert!(first.json["openapi"].is_string());
    let etag = first
        .header("etag")
        .expect("ETag on /openapi.json")
        .to_owned();
    assert!(
        etag.starts_with('"') && etag.ends_with('"'),
        "a strong tag: {etag}"
    );
    assert_eq!(first.header("cache-control"), Some("no-cache"));

    for if_none_match in [etag.clone(), format!("\"other\", {etag}"), "*".to_owned()] {
        let unchanged = app
            .anonymous
            .get_with("/openapi.json", &[("If-None-Match", &if_none_match)]);
        assert_eq!(unchanged.status, 304, "{if_none_match}");
        assert!(unchanged.text.is_empty(), "no body: {}", unchanged.text);
        assert_eq!(unchanged.header("etag"), Some(etag.as_str()));
        assert_eq!(unchanged.header("cache-control"), Some("no-cache"));
    }

    let other = app
        .anonymous
        .get_with("/openapi.json", &[("If-None-Match", "\"not-this-one\"")]);
    assert_eq!(other.status, 200);
    assert_eq!(other.header("etag"), Some(etag.as_str()));
    assert_eq!(other.text, first.text, "the same bytes every time");

    for path in [
        "/docs",
        "/docs/swagger-ui.css",
        "/docs/swagger-ui-bundle.js",
    ] {
        let page = app.anonymous.get(path);
        assert_eq!(page.status, 200, "{path}");
        let tag = page.header("etag").expect("ETag on the docs").to_owned();
        let again = app.anonymous.get_with(path, &[("If-None-Match", &tag)]);
        assert_eq!(again.status, 304, "{path}");
        assert!(again.text.is_empty(), "{path}");
        assert_eq!(
            again.header("cache-control"),
            page.header("cache-control"),
            "{path}"
        );
        assert_eq!(
            app.anonymous
                .get_with(path, &[("If-None-Match", "\"stale\"")])
                .status,
            200,
            "{path}"
        );
    }
}

/// A query parameter the route does not take (a typo such as `limit` for `limite`) is 400 in the
/// envelope on every route that takes query parameters, never silently ignored.
#[test]
fn an_unknown_query_parameter_is_400_in_the_envelope() {
    let app = TestApp::spawn();
    let id = uuid::Uuid::new_v4();
    for path in [
        "/api/solicitacao-consentimento?limit=5".to_owned(),
        "/api/eventos?limite=1&x-unknown=42".to_owned(),
        format!("/api/solicitacao-consentimento/{id}?mostrarCpf=true&cpf=1"),
        format!("/api/webhook-urls/{id}/entregas?limit=5"),
    ] {
        let reply = app.a.get(&path).expect(400);
        assert_eq!(reply.json["sucesso"], false, "{path}");
    }
    let reply = app.a.post_json(
        "/api/titulares/consentimentos?limite=1&pagina=2",
        &serde_json::json!({ "cpfTitular": CPF }),
    );
    reply.expect(400);
    // the known ones still pass
    app.a.get("/api/eventos?limite=1").expect(200);
}
