//! Personal data: no CPF in any log line or error message. One test drives every endpoint that
//! takes a CPF (creations valid and invalid, the list filter, HashConsulta, PGCC failures) and
//! then reads its own `consent-api` and `pgcc-sim` logs; `scripts/test.sh` does the same over
//! every log of the run, with the list checked here.

use std::collections::BTreeSet;

use serde_json::json;
use testkit::Reply;

use crate::helpers::*;
use crate::lifecycle::create;

/// A third valid subject, seen only by this file.
const OTHER_CPF: &str = "390.533.447-05";
const OTHER_CPF_DIGITS: &str = "39053344705";

fn with_cpf(mut body: serde_json::Value, cpf: &str) -> serde_json::Value {
    body["cpfTitular"] = json!(cpf);
    body
}

#[test]
fn no_cpf_reaches_a_log_or_an_error_message_whatever_the_endpoint_or_the_failure() {
    let app = TestApp::spawn_with(&[
        ("APP__PGCC__TIMEOUT_MS", "500"),
        // no background PGCC call may take the faults meant for the requests below
        ("APP__WORKERS__STATUS_POLL_SECONDS", "0"),
        ("APP__WORKERS__SYNC_SECONDS", "0"),
    ]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    // Replies whose body may show a CPF only masked; the two `mostrarCpf=true` reads are the
    // only places a full CPF is answered, on purpose.
    let mut replies: Vec<(&str, Reply)> = Vec::new();

    // Creations that succeed, the CPF masked and not.
    let (active_id, _) = create(&app.a, ATIVO, &active_body());
    create(&app.a, PENDENTE, &with_cpf(pending_body(), CPF_DIGITS));
    create(&app.a, PENDENTE, &with_cpf(pending_body(), OTHER_CPF));
    create(
        &app.a,
        PENDENTE,
        &with_cpf(pending_body(), "111.444.777-35"),
    );

    // Creations refused by our rules: bad check digits, repeated digits, a template the
    // company does not have, every rule broken at once.
    for (what, body) in [
        (
            "wrong check digit",
            with_cpf(active_body(), "529.982.247-24"),
        ),
        ("wrong check digit", with_cpf(pending_body(), "39053344706")),
        ("repeated digits", with_cpf(active_body(), "111.111.111-11")),
        (
            "unknown template",
            json!({
                "casoDeUsoIdTemplate": "tpl-nao-existe",
                "cpfTitular": OTHER_CPF,
                "modalidadeAcesso": "Direto",
                "tipoTitular": "PessoaFisica",
                "dataExpiracaoConsentimento": "2099-12-31T23:59:59Z"
            }),
        ),
        (
            "every rule broken",
            json!({
                "casoDeUsoIdTemplate": "",
                "cpfTitular": "52998224724",
                "modalidadeAcesso": "Indireto",
                "tipoTitular": "PessoaJuridica",
                "dataExpiracaoConsentimento": "2001-01-01T00:00:00Z"
            }),
        ),
    ] {
        replies.push((what, app.a.post_json(PENDENTE, &body).expect(422)));
    }

    // Bodies refused before the rules: the CPF as a number, next to an unknown field, inside
    // malformed JSON.
    let mut as_number = active_body();
    as_number["cpfTitular"] = json!(52998224725u64);
    replies.push((
        "CPF as a number",
        app.a.post_json(ATIVO, &as_number).expect(400),
    ));
    let mut unknown_field = pending_body();
    unknown_field["cpf"] = json!(OTHER_CPF);
    replies.push((
        "unknown field",
        app.a.post_json(PENDENTE, &unknown_field).expect(400),
    ));
    let malformed = format!("{{\"cpfTitular\": \"{OTHER_CPF}\", \"casoDeUsoIdTemplate\": ");
    replies.push((
        "malformed JSON",
        app.a
            .post_raw(PENDENTE, "application/json", malformed.as_bytes())
            .expect(400),
    ));
    let mut other_type = pending_body();
    other_type["cpfTitular"] = json!([OTHER_CPF_DIGITS]);
    replies.push((
        "CPF in an array",
        app.a.post_json(PENDENTE, &other_type).expect(400),
    ));

    // PGCC failures while creating: refused (4xx), failed (5xx), timed out.
    app.fault(json!({"status": 409, "count": 1}));
    replies.push((
        "PGCC 409",
        app.a
            .post_json(ATIVO, &with_cpf(active_body(), OTHER_CPF))
            .expect(422),
    ));
    app.fault(json!({"status": 500, "count": 1}));
    replies.push((
        "PGCC 500",
        app.a
            .post_json(PENDENTE, &with_cpf(pending_body(), OTHER_CPF_DIGITS))
            .expect(502),
    ));
    app.fault(json!({"latencyMs": 1500, "count": 1}));
    replies.push((
        "PGCC timeout",
        app.a.post_json(PENDENTE, &pending_body()).expect(504),
    ));

    // The list filtered by CPF (digits, masked, invalid), with and without mostrarCpf.
    for query in [
        format!("cpfTitular={CPF}"),
        format!("cpfTitular={CPF_DIGITS}&status=pendente"),
        format!("cpfTitular={OTHER_CPF_DIGITS}&limite=5"),
    ] {
        let listed = app
            .a
            .get(&format!("/api/solicitacao-consentimento?{query}"))
            .expect(200);
        assert!(
            !listed.data()["itens"].as_array().unwrap().is_empty(),
            "{query}"
        );
        replies.push(("list", listed));
    }
    let shown = app
        .a
        .get(&format!(
            "/api/solicitacao-consentimento?cpfTitular={CPF_DIGITS}&mostrarCpf=true"
        ))
        .expect(200);
    assert_eq!(shown.data()["itens"][0]["cpfTitular"], CPF_DIGITS);
    for query in ["cpfTitular=529.982.247-24", "cpfTitular=11111111111"] {
        replies.push((
            "list with an invalid CPF",
            app.a
                .get(&format!("/api/solicitacao-consentimento?{query}"))
                .expect(422),
        ));
    }
    replies.push((
        "detail",
        app.a
            .get(&format!("/api/solicitacao-consentimento/{active_id}"))
            .expect(200),
    ));
    app.a
        .get(&format!(
            "/api/solicitacao-consentimento/{active_id}?mostrarCpf=true"
        ))
        .expect(200);

    // HashConsulta: a valid consent, none, an invalid CPF, then the consent by its hash.
    let found = app
        .a
        .post_json(
            "/api/hash-consulta",
            &json!({"cpfTitular": CPF, "casoDeUsoIdTemplate": "tpl-a-marketing"}),
        )
        .expect(200);
    let hash = found.data()["hash"].as_str().unwrap().to_owned();
    replies.push(("hash-consulta", found));
    replies.push((
        "hash-consulta, no consent",
        app.a
            .post_json(
                "/api/hash-consulta",
                &json!({"cpfTitular": OTHER_CPF_DIGITS, "casoDeUsoIdTemplate": "tpl-a-credito"}),
            )
            .expect(200),
    ));
    replies.push((
        "hash-consulta, invalid CPF",
        app.a
            .post_json(
                "/api/hash-consulta",
                &json!({"cpfTitular": "39053344706", "casoDeUsoIdTemplate": "tpl-a-marketing"}),
            )
            .expect(422),
    ));
    let other_company = app.b.post_json(
        "/api/hash-consulta",
        &json!({"cpfTitular": CPF, "casoDeUsoIdTemplate": "tpl-a-marketing"}),
    );
    assert!(
        [200, 404, 422].contains(&other_company.status),
        "{}",
        other_company.text
    );
    replies.push(("hash-consulta, another company", other_company));
    replies.push((
        "hash lookup",
        app.a.get(&format!("/api/hash-consulta/{hash}")).expect(200),
    ));

    // Revocation: the PGCC fails, then succeeds.
    let revoke = format!("/api/solicitacao-consentimento/{active_id}/revogar");
    app.fault(json!({"status": 503, "count": 1}));
    replies.push(("revoke, PGCC 503", app.a.post_empty(&revoke).expect(502)));
    replies.push(("revoke", app.a.post_empty(&revoke).expect(200)));
    replies.push(("revoke again", app.a.post_empty(&revoke).expect(409)));

    // Answers: masked at most.
    for (what, reply) in &replies {
        assert_no_canary_cpf(&format!("the answer to {what}"), &reply.text);
    }
    // Logs: none at all, and the log did record the failures (the check is not vacuous).
    let api_log = std::fs::read_to_string(&app.api.log).unwrap();
    assert!(api_log.contains("PGCC call failed"), "{api_log}");
    assert!(api_log.contains("/api/hash-consulta"), "{api_log}");
    assert_no_canary_cpf(&app.api.log.display().to_string(), &api_log);
    let sim_log = std::fs::read_to_string(&app.sim.log).unwrap();
    assert_no_canary_cpf(&app.sim.log.display().to_string(), &sim_log);
}

/// `tests/personal-data-canaries.txt`, as `scripts/test.sh` reads it.
fn canary_file() -> Vec<String> {
    let path = testkit::processes::repo_root().join("tests/personal-data-canaries.txt");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_canary_file_lists_exactly_the_shared_canary_cpfs() {
    let file: BTreeSet<String> = canary_file().into_iter().collect();
    let shared: BTreeSet<String> = PERSONAL_DATA_CANARIES
        .iter()
        .map(|c| c.to_string())
        .collect();

    assert_eq!(file, shared);
    for canary in &file {
        assert!(
            canary.len() == 11 && canary.bytes().all(|b| b.is_ascii_digit()),
            "{canary}: 11 digits, one per line"
        );
    }
}

/// Every CPF-shaped value in `text`: maximal runs of exactly 11 digits, and `ddd.ddd.ddd-dd`
/// (as digits).
fn cpf_shaped(text: &str) -> BTreeSet<String> {
    let bytes = text.as_bytes();
    let mut found = BTreeSet::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() || (i > 0 && bytes[i - 1].is_ascii_alphanumeric()) {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        if run == 11 {
            found.insert(text[i..i + 11].to_owned());
        }
        let masked = &bytes[i..(i + 14).min(bytes.len())];
        if masked.len() == 14
            && masked.iter().enumerate().all(|(j, b)| match j {
                3 | 7 => *b == b'.',
                11 => *b == b'-',
                _ => b.is_ascii_digit(),
            })
            && !bytes.get(i + 14).is_some_and(u8::is_ascii_digit)
        {
            found.insert(
                masked
                    .iter()
                    .filter(|b| b.is_ascii_digit())
                    .map(|b| *b as char)
                    .collect(),
            );
        }
        i += run;
    }
    found
}

#[test]
fn every_cpf_shaped_value_in_the_end_to_end_tests_is_a_canary() {
    assert_eq!(
        cpf_shaped("a 529.982.247-25 b 52998224725 c 111111111111 d 1234 x12345678901"),
        BTreeSet::from(["52998224725".to_owned()])
    );
    let dir = testkit::processes::repo_root().join("tests/tests/api");
    let shared: BTreeSet<&str> = PERSONAL_DATA_CANARIES.iter().copied().collect();
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        for cpf in cpf_shaped(&text) {
            assert!(
                shared.contains(cpf.as_str()),
                "{} uses the CPF-shaped value {cpf}: add it to PERSONAL_DATA_CANARIES \
                 (helpers.rs) and tests/personal-data-canaries.txt",
                path.display()
            );
        }
    }
    assert!(files > 5, "{files} files in {}", dir.display());
}
