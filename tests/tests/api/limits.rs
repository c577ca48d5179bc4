//! Resource limits of request bodies: nesting depth (checked on the raw bytes, before decoding).
//! The body size limit (413) is covered in http_contract.

use serde_json::json;

use crate::helpers::*;

fn nested(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn a_body_nested_deeper_than_the_limit_is_400_before_decoding() {
    let app = TestApp::spawn();
    let body = format!(r#"{{"casoDeUsoIdTemplate": {}}}"#, nested(40));
    let r = app
        .a
        .post_raw(PENDENTE, "application/json", body.as_bytes())
        .expect(400);
    let mensagem = r.json["mensagem"].as_str().unwrap();
    assert!(mensagem.contains("32 níveis"), "{mensagem}");
    assert_eq!(r.json["isPgccErro"], false);

    // Every JSON route, whatever its body type.
    let body = format!(r#"{{"url": {}}}"#, nested(40));
    app.a
        .post_raw("/api/webhook-urls", "application/json", body.as_bytes())
        .expect(400);
    // Within the limit, the decoder answers as usual (a list where text is expected: 400 too,
    // with the decoder's message).
    let body = format!(r#"{{"casoDeUsoIdTemplate": {}}}"#, nested(31));
    let r = app
        .a
        .post_raw(PENDENTE, "application/json", body.as_bytes())
        .expect(400);
    assert!(
        r.json["mensagem"]
            .as_str()
            .unwrap()
            .contains("tipo inválido"),
        "{}",
        r.text
    );
    assert_eq!(app.consent_rows(), 0);
}

#[test]
fn brackets_inside_strings_do_not_count_as_nesting() {
    let app = TestApp::synced();
    let mut body = pending_body();
    body["cnpjAnuente"] = json!("[".repeat(100));
    body["modalidadeAcesso"] = json!("Indireto");
    // Decoded, then refused by the CNPJ rule: the depth limit did not fire.
    let r = app.a.post_json(PENDENTE, &body).expect(422);
    assert_eq!(error_fields(&r), ["cnpjAnuente"]);
}

#[test]
fn a_request_without_a_key_is_401_whatever_the_depth_of_its_body() {
    let app = TestApp::spawn();
    let body = nested(1000);
    app.anonymous
        .post_raw(PENDENTE, "application/json", body.as_bytes())
        .expect(401);
}

#[test]
fn the_depth_limit_is_configurable() {
    let app = TestApp::spawn_with(&[("APP__SERVER__JSON_MAX_DEPTH", "3")]);
    let body = r#"{"casoDeUsoIdTemplate": [[["x"]]]}"#;
    let r = app
        .a
        .post_raw(PENDENTE, "application/json", body.as_bytes())
        .expect(400);
    assert!(r.json["mensagem"].as_str().unwrap().contains("3 níveis"));
    // An ordinary body (depth 1) still goes through.
    app.a.post_json(PENDENTE, &pending_body()).expect(422);
}

#[test]
fn routes_that_take_no_body_ignore_whatever_body_is_sent() {
    let app = TestApp::spawn();
    let body = nested(1000);
    app.a
        .post_raw(
            "/api/casos-de-uso/sincronizar",
            "application/json",
            body.as_bytes(),
        )
        .expect(200);
}
