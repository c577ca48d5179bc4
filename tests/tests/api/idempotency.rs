//! `Idempotency-Key` on the two creation routes: a retry with the same key and body replays the
//! first answer byte for byte and creates nothing; another body is 422, a concurrent retry 409;
//! keys are per company; no header, no change; an answer that is not final (PGCC failure or
//! timeout) is not kept, and its retry creates the consent once.

use std::time::Duration;

use serde_json::{json, Value};

use crate::helpers::*;

/// What a raw call answered: everything a byte-for-byte comparison needs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Raw {
    status: u16,
    replayed: Option<String>,
    body: Vec<u8>,
}

impl Raw {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn id(&self) -> String {
        self.json()["data"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no data.id in {}", self.text()))
            .to_owned()
    }
}

/// `POST path` with the company's key, an optional `Idempotency-Key` and these exact bytes.
fn post(base_url: &str, api_key: &str, path: &str, key: Option<&str>, body: &[u8]) -> Raw {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent();
    let mut req = agent
        .post(format!("{base_url}{path}"))
        .header("Content-Type", "application/json")
        .header("Api-Key", api_key);
    if let Some(k) = key {
        req = req.header("Idempotency-Key", k);
    }
    let mut res = req.send(body).expect("transport");
    let replayed = res
        .headers()
        .get("idempotent-replayed")
        .map(|v| v.to_str().unwrap().to_owned());
    Raw {
        status: res.status().as_u16(),
        replayed,
        body: res.body_mut().read_to_vec().unwrap(),
    }
}

fn bytes(body: &Value) -> Vec<u8> {
    serde_json::to_vec(body).unwrap()
}

impl TestApp {
    fn post_a(&self, path: &str, key: Option<&str>, body: &[u8]) -> Raw {
        post(&self.api.base_url, &self.key_a, path, key, body)
    }

    fn post_b(&self, path: &str, key: Option<&str>, body: &[u8]) -> Raw {
        post(&self.api.base_url, &self.key_b, path, key, body)
    }
}

#[test]
fn the_same_key_and_body_replays_the_first_answer_byte_for_byte_and_creates_nothing_more() {
    let app = TestApp::synced();
    for (path, body) in [(ATIVO, active_body()), (PENDENTE, pending_body())] {
        let key = format!("pedido-{path}");
        let first = app.post_a(path, Some(&key), &bytes(&body));
        assert_eq!(first.status, 200, "{}", first.text());
        assert_eq!(first.replayed, None, "a first answer is not a replay");

        for _ in 0..2 {
            let again = app.post_a(path, Some(&key), &bytes(&body));
            assert_eq!(again.status, 200);
            assert_eq!(again.body, first.body, "byte for byte");
            assert_eq!(again.replayed.as_deref(), Some("true"));
        }
    }
    assert_eq!(app.sim_requests().len(), 2, "one PGCC creation per key");
    assert_eq!(app.consent_rows(), 2);
    assert_eq!(app.creation_rows("em_andamento"), 0);
}

#[test]
fn a_kept_validation_failure_is_replayed_too_and_nothing_is_created() {
    let app = TestApp::synced();
    let mut body = active_body();
    body["cpfTitular"] = json!("529.982.247-24");

    let first = app.post_a(ATIVO, Some("k-invalido"), &bytes(&body));
    let again = app.post_a(ATIVO, Some("k-invalido"), &bytes(&body));

    assert_eq!(first.status, 422, "{}", first.text());
    assert_eq!(first.json()["data"]["erros"][0]["campo"], "cpfTitular");
    assert_eq!((again.status, &again.body), (422, &first.body));
    assert_eq!(again.replayed.as_deref(), Some("true"));
    assert!(app.sim_requests().is_empty());
    assert_eq!(
        app.db
            .scalar("SELECT count(*) AS v FROM solicitacoes_consentimento"),
        0
    );
}

#[test]
fn the_same_key_with_another_body_or_route_is_422_naming_the_header_and_creates_nothing() {
    let app = TestApp::synced();
    let first = app.post_a(ATIVO, Some("k"), &bytes(&active_body()));
    assert_eq!(first.status, 200);

    let mut other = active_body();
    other["provaColeta"] = json!("outra-prova");
    // the same JSON, other bytes: a request is its bytes
    let reformatted = serde_json::to_vec_pretty(&active_body()).unwrap();
    for (path, body) in [
        (ATIVO, bytes(&other)),
        (ATIVO, reformatted),
        (PENDENTE, bytes(&active_body())),
    ] {
        let r = app.post_a(path, Some("k"), &body);
        assert_eq!(r.status, 422, "{}", r.text());
        assert_eq!(r.replayed, None);
        let erros = &r.json()["data"]["erros"];
        assert_eq!(erros[0]["campo"], "Idempotency-Key", "{}", r.text());
        assert_eq!(r.json()["isPgccErro"], false);
    }
    assert_eq!(app.sim_requests().len(), 1);
    assert_eq!(app.consent_rows(), 1);
    // the key still replays its own request
    let again = app.post_a(ATIVO, Some("k"), &bytes(&active_body()));
    assert_eq!((again.status, again.body), (200, first.body));
}

#[test]
fn a_second_request_while_the_first_is_still_running_is_409() {
    let app = TestApp::synced();
    // the first creation waits 2 s at the PGCC (under the test profile's 2 s... + margin)
    app.fault(json!({"latencyMs": 1500, "count": 1}));
    let (base, api_key) = (app.api.base_url.clone(), app.key_a.clone());
    let first = std::thread::spawn(move || {
        post(
            &base,
            &api_key,
            ATIVO,
            Some("lento"),
            &bytes(&active_body()),
        )
    });
    std::thread::sleep(Duration::from_millis(500));

    let concurrent = app.post_a(ATIVO, Some("lento"), &bytes(&active_body()));

    assert_eq!(concurrent.status, 409, "{}", concurrent.text());
    assert_eq!(concurrent.json()["sucesso"], false);
    assert_eq!(concurrent.replayed, None);
    let first = first.join().unwrap();
    assert_eq!(first.status, 200, "{}", first.text());
    let after = app.post_a(ATIVO, Some("lento"), &bytes(&active_body()));
    assert_eq!((after.status, &after.body), (200, &first.body));
    assert_eq!(after.replayed.as_deref(), Some("true"));
    assert_eq!(app.sim_requests().len(), 1);
    assert_eq!(app.consent_rows(), 1);
}

#[test]
fn different_companies_with_the_same_key_are_independent() {
    let app = TestApp::synced();
    let body_b = json!({
        "casoDeUsoIdTemplate": "tpl-b-seguro",
        "cpfTitular": CPF,
        "modalidadeAcesso": "Direto",
        "tipoTitular": "PessoaFisica",
        "dataExpiracaoConsentimento": "2099-12-31T23:59:59Z"
    });

    let a = app.post_a(PENDENTE, Some("mesma-chave"), &bytes(&pending_body()));
    let b = app.post_b(PENDENTE, Some("mesma-chave"), &bytes(&body_b));

    assert_eq!(
        (a.status, b.status),
        (200, 200),
        "{} {}",
        a.text(),
        b.text()
    );
    assert_eq!((a.replayed.as_deref(), b.replayed.as_deref()), (None, None));
    assert_ne!(a.id(), b.id());
    // each company replays its own answer
    let a2 = app.post_a(PENDENTE, Some("mesma-chave"), &bytes(&pending_body()));
    let b2 = app.post_b(PENDENTE, Some("mesma-chave"), &bytes(&body_b));
    assert_eq!((a2.body, b2.body), (a.body, b.body));
    // company B's body under company A's key is A's mismatch, not B's answer
    let crossed = app.post_a(PENDENTE, Some("mesma-chave"), &bytes(&body_b));
    assert_eq!(crossed.status, 422);
    assert_eq!(app.sim_requests().len(), 2);
}

#[test]
fn without_the_header_every_request_creates_as_before() {
    let app = TestApp::synced();

    let first = app.post_a(ATIVO, None, &bytes(&active_body()));
    let second = app.post_a(ATIVO, None, &bytes(&active_body()));

    assert_eq!((first.status, second.status), (200, 200));
    assert_ne!(first.id(), second.id());
    assert_eq!((first.replayed, second.replayed), (None, None));
    assert_eq!(app.sim_requests().len(), 2);
    assert_eq!(app.consent_rows(), 2);
    assert_eq!(
        app.db
            .scalar("SELECT count(*) AS v FROM chaves_idempotencia"),
        0
    );
}

#[test]
fn an_invalid_header_is_400_naming_it_before_anything_happens() {
    let app = TestApp::synced();
    let too_long = "k".repeat(256);
    for key in ["", "com espaço", "tab\tkey", too_long.as_str()] {
        let r = app.post_a(ATIVO, Some(key), &bytes(&active_body()));
        assert_eq!(r.status, 400, "{key:?}: {}", r.text());
        assert!(
            r.json()["mensagem"]
                .as_str()
                .unwrap()
                .contains("Idempotency-Key"),
            "{}",
            r.text()
        );
    }
    // 255 visible characters are fine
    let longest = "~".repeat(255);
    assert_eq!(
        app.post_a(ATIVO, Some(&longest), &bytes(&active_body()))
            .status,
        200
    );
    // without a usable Api-Key it is 401 first, whatever the header
    let anonymous = post(&app.api.base_url, "garbage", ATIVO, Some(""), b"{}");
    assert_eq!(anonymous.status, 401);
    assert_eq!(app.sim_requests().len(), 1);
}

#[test]
fn a_pgcc_failure_is_not_kept_and_the_retry_creates_the_consent_once() {
    let app = TestApp::synced();
    app.fault(json!({"status": 503, "count": 1}));

    let failed = app.post_a(PENDENTE, Some("retentar"), &bytes(&pending_body()));
    let retried = app.post_a(PENDENTE, Some("retentar"), &bytes(&pending_body()));
    let replayed = app.post_a(PENDENTE, Some("retentar"), &bytes(&pending_body()));

    assert_eq!(failed.status, 502, "{}", failed.text());
    assert_eq!(failed.json()["pgccCodigoErro"], "ServiceUnavailable");
    assert_eq!(retried.status, 200, "{}", retried.text());
    assert_eq!(retried.replayed, None, "the retry ran");
    assert_eq!(
        (replayed.body, replayed.replayed.as_deref()),
        (retried.body.clone(), Some("true"))
    );
    // the retry completed the first attempt's row: one row, one PGCC request, our id as its
    // external reference
    assert_eq!(
        app.db
            .scalar("SELECT count(*) AS v FROM solicitacoes_consentimento"),
        1
    );
    let sent = app.sim_requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["referenciaExterna"], retried.id().as_str());
}

#[test]
fn a_creation_that_timed_out_but_reached_the_pgcc_is_not_duplicated_by_its_retry() {
    let app = TestApp::spawn_with(&[("APP__PGCC__TIMEOUT_MS", "500")]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    // the PGCC answers after our timeout, but creates the request all the same
    app.fault(json!({"latencyMs": 1200, "count": 1}));

    let timed_out = app.post_a(ATIVO, Some("lenta"), &bytes(&active_body()));
    assert_eq!(timed_out.status, 504, "{}", timed_out.text());
    assert!(testkit::wait_until(Duration::from_secs(10), || app
        .sim_requests()
        .len()
        == 1));
    let retried = app.post_a(ATIVO, Some("lenta"), &bytes(&active_body()));

    assert_eq!(retried.status, 200, "{}", retried.text());
    let sent = app.sim_requests();
    assert_eq!(
        sent.len(),
        1,
        "the PGCC answered the request it already held"
    );
    assert_eq!(sent[0]["referenciaExterna"], retried.id().as_str());
    assert_eq!(retried.json()["data"]["pgccId"], sent[0]["id"]);
    assert_eq!(app.consent_rows(), 1);
    let read = app
        .a
        .get(&format!("/api/solicitacao-consentimento/{}", retried.id()))
        .expect(200);
    assert_eq!(read.data()["pgccId"], sent[0]["id"]);
}

#[test]
fn the_openapi_document_names_the_header_and_the_409_on_both_creations() {
    let app = TestApp::spawn();
    let doc = app.anonymous.get("/openapi.json");
    assert_eq!(doc.status, 200);
    for path in [ATIVO, PENDENTE] {
        let op = &doc.json["paths"][path]["post"];
        let params = op["parameters"].as_array().unwrap();
        let header = params
            .iter()
            .find(|p| p["name"] == "Idempotency-Key")
            .unwrap_or_else(|| panic!("no Idempotency-Key on {path}"));
        assert_eq!(header["in"], "header");
        assert_eq!(header["required"], false);
        assert!(op["responses"]["409"].is_object(), "{path}");
        assert!(
            op["responses"]["200"]["headers"]["Idempotent-Replayed"].is_object(),
            "{path}"
        );
    }
}

#[test]
fn keys_older_than_the_retention_are_purged_and_then_are_new_again() {
    use diesel::RunQueryDsl;

    let app = TestApp::spawn_with(&[("APP__WORKERS__IDEMPOTENCY_PURGE_SECONDS", "1")]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let old = app.post_a(ATIVO, Some("velha"), &bytes(&active_body()));
    let recent = app.post_a(ATIVO, Some("recente"), &bytes(&active_body()));
    assert_eq!((old.status, recent.status), (200, 200));
    // the default retention is 24 h: one key is 25 h old, the other 23 h (times computed here:
    // Citus refuses `now()` in an UPDATE of a distributed table)
    for (chave, hours) in [("velha", 25), ("recente", 23)] {
        let at = (chrono::Utc::now() - chrono::Duration::hours(hours)).to_rfc3339();
        diesel::sql_query(format!(
            "UPDATE chaves_idempotencia SET criado_em = '{at}' \
             WHERE empresa_id = '{}' AND chave = '{chave}'",
            app.company_a
        ))
        .execute(&mut app.db.conn())
        .unwrap();
    }
    let count = |chave: &str| {
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM chaves_idempotencia WHERE chave = '{chave}'"
        ))
    };

    assert!(
        testkit::wait_until(Duration::from_secs(15), || count("velha") == 0),
        "the old key was not purged"
    );
    assert_eq!(count("recente"), 1);
    let again = app.post_a(ATIVO, Some("recente"), &bytes(&active_body()));
    assert_eq!(
        (again.body, again.replayed.as_deref()),
        (recent.body, Some("true"))
    );
    // a purged key is a new key: the request runs again
    let anew = app.post_a(ATIVO, Some("velha"), &bytes(&active_body()));
    assert_eq!((anew.status, anew.replayed.as_deref()), (200, None));
    assert_ne!(anew.id(), old.id());
}
