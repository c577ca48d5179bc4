//! Importing consents already on the PGCC (`pgccId` lines; issue 37, part 1; docs/imports.md,
//! "Consents already on the PGCC"): confirmed with the PGCC's status call, stored with the
//! PGCC's status, never created again on the (real) simulator.

use serde_json::{json, Value};

use crate::helpers::*;
use crate::importacoes::{jsonl, line, wait_for, JSONL};

/// Creates a request on the simulator through its own contract route, as another GCC did
/// before the company moved: its PGCC id.
fn held_on_the_pgcc(app: &TestApp, cnpj: &str, template: &str, status: &str) -> String {
    let active = status == "ativo";
    let r = app.sim_admin.post_json(
        "/pgcc/v1/solicitacoes",
        &json!({
            "referenciaExterna": uuid::Uuid::new_v4(),
            "cnpjEmpresa": cnpj.replace(['.', '/', '-'], ""),
            "vinculoId": null,
            "templateId": template,
            "cpfTitular": CPF_DIGITS,
            "tipoTitular": "PessoaFisica",
            "modalidadeAcesso": "Direto",
            "cnpjAnuente": null,
            "dataExpiracaoConsentimento": "2099-12-31T23:59:59Z",
            "status": status,
            "dataTitularRespondeuConsentimento": active.then_some("2019-03-01T10:00:00Z"),
            "provaColeta": active.then_some("ficha assinada 2019")
        }),
    );
    assert_eq!(r.status, 201, "{}", r.text);
    r.json["id"].as_str().unwrap().to_owned()
}

fn with_pgcc_id(mut l: Value, pgcc_id: &str) -> Value {
    l["pgccId"] = json!(pgcc_id);
    l
}

#[test]
fn a_pgcc_id_line_is_stored_with_the_pgccs_status_and_never_created_again() {
    let app = TestApp::synced();
    let revoked = held_on_the_pgcc(&app, CNPJ_A, "tpl-a-marketing", "ativo");
    let r = app.sim_admin.post_json(
        &format!("/_sim/solicitacoes/{revoked}/revogar"),
        &json!({"motivo": "mudei de banco"}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let pending = held_on_the_pgcc(&app, CNPJ_A, "tpl-a-marketing", "pendente");
    let mut pending_line = pending_body();
    pending_line["idExterno"] = json!("legado-2");
    pending_line["origem"] = json!("gcc-anterior");
    let created_on_the_sim = app.sim_requests().len();

    let body = jsonl(&[
        with_pgcc_id(line("legado-1"), &revoked),
        with_pgcc_id(pending_line, &pending),
    ]);
    let r = app.a.post_raw("/api/importacoes", JSONL, &body).expect(202);
    assert_eq!(r.data()["validas"], 2, "{}", r.text);
    let id = r.data()["id"].as_str().unwrap().to_owned();
    let done = wait_for(&app, &app.a, &id, "concluida");
    assert_eq!(done["registradas"], 2, "{done}");
    assert_eq!(done["falhas"], 0, "{done}");

    assert_eq!(
        app.sim_requests().len(),
        created_on_the_sim,
        "the simulator received no creation for a consent it holds"
    );
    let status_of = |pgcc_id: &str| {
        app.db.text(&format!(
            "SELECT status AS v FROM solicitacoes_consentimento \
             WHERE pgcc_id = '{pgcc_id}' AND criacao = 'confirmada' AND empresa_id = '{}'",
            app.company_a
        ))
    };
    assert_eq!(status_of(&revoked).as_deref(), Some("revogado"));
    assert_eq!(status_of(&pending).as_deref(), Some("pendente"));
    // the revoked one's log is a lawful chain: its creation, then the PGCC's word
    let entries = app.db.scalar(&format!(
        "SELECT count(*) AS v FROM auditoria_entradas a JOIN solicitacoes_consentimento s \
         ON s.empresa_id = a.empresa_id AND s.id = a.solicitacao_id WHERE s.pgcc_id = '{revoked}'"
    ));
    assert_eq!(entries, 2);
    let history = app.db.text(&format!(
        "SELECT string_agg(coalesce(h.de, '-') || '>' || h.para || ':' || h.causa, ',' ORDER BY h.em, h.de NULLS FIRST) AS v \
         FROM solicitacoes_historico h JOIN solicitacoes_consentimento s \
         ON s.empresa_id = h.empresa_id AND s.id = h.solicitacao_id WHERE s.pgcc_id = '{revoked}'"
    ));
    assert_eq!(
        history.as_deref(),
        Some("->ativo:empresa,ativo>revogado:pgcc")
    );
    // the company reads it as any consent of its own
    let read = app
        .a
        .get("/api/solicitacao-consentimento?status=revogado")
        .expect(200);
    assert_eq!(
        read.data()["itens"][0]["pgccId"],
        revoked.as_str(),
        "{}",
        read.text
    );

    // the same PGCC id again, under another idExterno: a line error, no second row
    let again = jsonl(&[with_pgcc_id(line("legado-3"), &revoked)]);
    let r = app
        .a
        .post_raw("/api/importacoes", JSONL, &again)
        .expect(202);
    let second = r.data()["id"].as_str().unwrap().to_owned();
    let done = wait_for(&app, &app.a, &second, "concluida");
    assert_eq!(done["falhas"], 1, "{done}");
    let errors = app.a.get(&format!("/api/importacoes/{second}/erros"));
    assert_eq!(errors.status, 200);
    assert!(
        errors.text.contains("\"campo\":\"pgccId\""),
        "{}",
        errors.text
    );
    assert_eq!(app.consent_rows(), 2);
}

#[test]
fn an_id_unknown_to_the_pgcc_or_another_companys_is_a_line_error_on_pgcc_id() {
    let app = TestApp::synced();
    let of_b = held_on_the_pgcc(&app, CNPJ_B, "tpl-b-seguro", "pendente");
    let created_on_the_sim = app.sim_requests().len();
    let body = jsonl(&[
        with_pgcc_id(line("x-1"), "pgcc-0000000000000000000000000000dead"),
        with_pgcc_id(line("x-2"), &of_b),
    ]);
    let r = app.a.post_raw("/api/importacoes", JSONL, &body).expect(202);
    let id = r.data()["id"].as_str().unwrap().to_owned();
    let done = wait_for(&app, &app.a, &id, "concluida");
    assert_eq!(done["registradas"], 0, "{done}");
    assert_eq!(done["falhas"], 2, "{done}");

    let errors = app.a.get(&format!("/api/importacoes/{id}/erros"));
    assert_eq!(errors.status, 200, "{}", errors.text);
    let errors: Vec<Value> = errors
        .text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors.iter().all(|e| e["campo"] == "pgccId"), "{errors:?}");
    // one message for both: an import cannot tell whether another company's id exists
    assert_eq!(errors[0]["mensagem"], errors[1]["mensagem"]);
    assert_eq!(app.consent_rows(), 0);
    assert_eq!(app.sim_requests().len(), created_on_the_sim);
}

/// The same `pgccId` on two lines of one file: the later line is an error on `pgccId` naming the
/// earlier one, at validation (before, both were staged; claimed at the same moment by two
/// workers, the second was retried after every lease). The first is stored once, and nothing is
/// created on the simulator.
#[test]
fn a_pgcc_id_twice_in_one_file_is_an_error_of_the_later_line() {
    let app = TestApp::synced();
    let held = held_on_the_pgcc(&app, CNPJ_A, "tpl-a-marketing", "ativo");
    let created_on_the_sim = app.sim_requests().len();
    let body = jsonl(&[
        with_pgcc_id(line("twice-1"), &held),
        line("plain-2"),
        with_pgcc_id(line("twice-3"), &held),
    ]);
    let r = app.a.post_raw("/api/importacoes", JSONL, &body).expect(202);
    assert_eq!(r.data()["validas"], 2, "{}", r.text);
    assert_eq!(r.data()["falhas"], 1, "{}", r.text);
    let id = r.data()["id"].as_str().unwrap().to_owned();
    let errors = app.a.get(&format!("/api/importacoes/{id}/erros"));
    assert_eq!(errors.status, 200, "{}", errors.text);
    let errors: Vec<Value> = errors
        .text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["linha"], 3);
    assert_eq!(errors[0]["campo"], "pgccId");
    assert!(
        errors[0]["mensagem"].as_str().unwrap().contains("linha 1"),
        "{errors:?}"
    );
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM importacao_linhas WHERE importacao_id = '{id}'"
        )),
        2,
        "the later line is not staged"
    );
    let done = wait_for(&app, &app.a, &id, "concluida");
    assert_eq!(done["registradas"], 2, "{done}");
    assert_eq!(done["falhas"], 1, "{done}");
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM solicitacoes_consentimento WHERE pgcc_id = '{held}'"
        )),
        1
    );
    // the plain line was created; the held one was not created again
    assert_eq!(app.sim_requests().len(), created_on_the_sim + 1);
}
