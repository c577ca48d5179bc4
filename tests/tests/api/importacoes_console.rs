//! The imports' page of the console (issue 37, part 4; docs/imports.md, "The console's page"):
//! a file uploaded through the page's form (multipart, CSRF) is read by the API's own reader,
//! staged in PostgreSQL and registered on the (real) simulator; a wrong token, a field besides
//! the file or a second file refuse the whole form and create nothing; another company's import
//! is the 404 page.

use serde_json::json;

use crate::console::{Browser, Page};
use crate::helpers::*;
use crate::importacoes::{jsonl, line, wait_for};
use crate::scopes::issue_key_with_scopes;

const BOUNDARY: &str = "----consoleimportboundary7MA4YWxkTrZu0gW";

/// One part of a form: its name, its file name (a file part) and its bytes.
struct Part<'a> {
    name: &'a str,
    file_name: Option<&'a str>,
    bytes: &'a [u8],
}

fn multipart(parts: &[Part]) -> (String, Vec<u8>) {
    let mut body = Vec::new();
    for p in parts {
        body.extend(format!("--{BOUNDARY}\r\n").as_bytes());
        match p.file_name {
            Some(file) => body.extend(
                format!(
                    "Content-Disposition: form-data; name=\"{}\"; filename=\"{file}\"\r\n\
                     Content-Type: application/octet-stream\r\n\r\n",
                    p.name
                )
                .as_bytes(),
            ),
            None => body.extend(
                format!(
                    "Content-Disposition: form-data; name=\"{}\"\r\n\r\n",
                    p.name
                )
                .as_bytes(),
            ),
        }
        body.extend(p.bytes);
        body.extend(b"\r\n");
    }
    body.extend(format!("--{BOUNDARY}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={BOUNDARY}"), body)
}

/// Posts the upload form: the token, then the file, as the page's form sends them.
fn upload(browser: &mut Browser, csrf: &str, file_name: &str, file: &[u8]) -> Page {
    let (content_type, body) = multipart(&[
        Part {
            name: "csrf",
            file_name: None,
            bytes: csrf.as_bytes(),
        },
        Part {
            name: "arquivo",
            file_name: Some(file_name),
            bytes: file,
        },
    ]);
    browser.post_raw("/console/importacoes", &content_type, &body)
}

fn imports_of(app: &TestApp) -> i64 {
    app.db.scalar("SELECT count(*) AS v FROM importacoes")
}

fn staged_lines(app: &TestApp) -> i64 {
    app.db.scalar("SELECT count(*) AS v FROM importacao_linhas")
}

/// The page an import's id leads to after the upload (303).
fn import_id(answer: &Page) -> String {
    assert_eq!(answer.status, 303, "{}", answer.body);
    let location = answer.header("location").unwrap();
    location
        .strip_prefix("/console/importacoes/")
        .unwrap_or_else(|| panic!("{location}"))
        .to_owned()
}

#[test]
fn an_upload_through_the_page_creates_the_import_registers_its_lines_and_shows_its_errors() {
    let app = TestApp::synced();
    let mut browser = Browser::new(&app.api.base_url);
    browser.sign_in(&app.key_a);
    let list = browser.get("/console/importacoes");
    assert_eq!(list.status, 200, "{}", list.body);
    list.assert_console_headers();
    assert!(list.body.contains("Enviar um arquivo"), "{}", list.body);
    assert!(list.body.contains("enctype=\"multipart/form-data\""));

    let mut bad_cpf = line("console-2");
    bad_cpf["cpfTitular"] = json!("529.982.247-24");
    let file = jsonl(&[line("console-1"), bad_cpf]);
    let answer = upload(&mut browser, &list.csrf(), "consentimentos.jsonl", &file);
    let id = import_id(&answer);

    // the rows in PostgreSQL: the import, its staged line, its error by line and field
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM importacoes WHERE id = '{id}' AND empresa_id = '{}'",
            app.company_a
        )),
        1
    );
    assert_eq!(
        app.db
            .text(&format!(
            "SELECT linha || ':' || campo AS v FROM importacao_erros WHERE importacao_id = '{id}'"
        ))
            .as_deref(),
        Some("2:cpfTitular")
    );
    let done = wait_for(&app, &app.a, &id, "concluida");
    assert_eq!(done["linhas"], 2, "{done}");
    assert_eq!(done["registradas"], 1, "{done}");
    assert_eq!(done["falhas"], 1, "{done}");
    // the valid line registered at the simulator, once
    let sent = app.sim_requests();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["status"], "ativo");
    assert_eq!(app.consent_rows(), 1);

    // the import's page: its progress and its error by line and field, never a value
    let page = browser.get(&format!("/console/importacoes/{id}"));
    assert_eq!(page.status, 200, "{}", page.body);
    page.assert_console_headers();
    assert!(page.body.contains("Concluída"), "{}", page.body);
    assert!(page.body.contains("cpfTitular"), "{}", page.body);
    assert!(
        !page.body.contains("Cancelar a importação"),
        "ended: nothing to cancel"
    );
    for cpf in ["529.982.247-24", "52998224724", CPF, CPF_DIGITS] {
        assert!(!page.body.contains(cpf), "a CPF in the page");
    }
    // and in the list
    let list = browser.get("/console/importacoes");
    assert!(list.body.contains(&format!("/console/importacoes/{id}")));

    // every error as a file
    let (status, headers, body) = browser.get_bytes(&format!("/console/importacoes/{id}/erros"));
    assert_eq!(status, 200);
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    assert!(header("content-type").starts_with("text/csv"));
    assert_eq!(
        header("content-disposition"),
        format!("attachment; filename=\"erros-importacao-{id}.csv\"")
    );
    let csv = String::from_utf8(body).unwrap();
    assert!(
        csv.starts_with("linha,campo,mensagem\r\n2,cpfTitular,"),
        "{csv}"
    );
    assert!(!csv.contains("52998224724"));
}

#[test]
fn a_csv_uploaded_and_cancelled_from_the_page_registers_no_further_line() {
    // one call a second: the import is still registering when the button is pressed
    let app = TestApp::spawn_with(&[("APP__IMPORTACAO__PGCC_CALLS_PER_SECOND", "1")]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let mut browser = Browser::new(&app.api.base_url);
    browser.sign_in(&app.key_a);
    let mut csv = "idExterno;origem;casoDeUsoIdTemplate;cpfTitular;modalidadeAcesso;tipoTitular;dataExpiracaoConsentimento\r\n".to_owned();
    for n in 0..30 {
        csv.push_str(&format!(
            "c-{n};loja;tpl-a-marketing;{CPF};Direto;PessoaFisica;2099-12-31T23:59:59Z\r\n"
        ));
    }
    let list = browser.get("/console/importacoes");
    let answer = upload(&mut browser, &list.csrf(), "loja.CSV", csv.as_bytes());
    let id = import_id(&answer);
    let page = browser.get(&format!("/console/importacoes/{id}"));
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("Fim estimado"), "{}", page.body);
    let cancelled = browser.post(
        &format!("/console/importacoes/{id}/cancelar"),
        &[("csrf", &page.csrf())],
    );
    assert_eq!(cancelled.status, 303, "{}", cancelled.body);
    let status = app.a.get(&format!("/api/importacoes/{id}")).expect(200);
    assert_eq!(status.data()["status"], "cancelada", "{}", status.text);
    let registered = status.data()["registradas"].as_u64().unwrap();
    assert!(registered < 30, "{}", status.text);
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(
        app.sim_requests().len() as u64 <= registered + 1,
        "at most the line being registered at that instant ends after the cancellation"
    );
    // the page says so, without the button
    let page = browser.get(&format!("/console/importacoes/{id}"));
    assert!(page.body.contains("Cancelada"), "{}", page.body);
    assert!(
        !page.body.contains("Cancelar a importação"),
        "{}",
        page.body
    );
}

#[test]
fn a_bad_csrf_token_a_second_file_or_another_field_is_refused_and_creates_nothing() {
    let app = TestApp::synced();
    let mut browser = Browser::new(&app.api.base_url);
    browser.sign_in(&app.key_a);
    let csrf = browser.get("/console/importacoes").csrf();
    let file = jsonl(&[line("nada-1")]);

    // a wrong token: 403, the file never read
    let wrong = upload(&mut browser, "0000", "a.jsonl", &file);
    assert_eq!(wrong.status, 403, "{}", wrong.body);
    // the file before the token
    let (content_type, body) = multipart(&[
        Part {
            name: "arquivo",
            file_name: Some("a.jsonl"),
            bytes: &file,
        },
        Part {
            name: "csrf",
            file_name: None,
            bytes: csrf.as_bytes(),
        },
    ]);
    let first = browser.post_raw("/console/importacoes", &content_type, &body);
    assert_eq!(first.status, 400, "{}", first.body);
    // a second file after the first: the first was read and staged, then dropped
    let (content_type, body) = multipart(&[
        Part {
            name: "csrf",
            file_name: None,
            bytes: csrf.as_bytes(),
        },
        Part {
            name: "arquivo",
            file_name: Some("a.jsonl"),
            bytes: &file,
        },
        Part {
            name: "arquivo",
            file_name: Some("b.jsonl"),
            bytes: &jsonl(&[line("nada-2")]),
        },
    ]);
    let second = browser.post_raw("/console/importacoes", &content_type, &body);
    assert_eq!(second.status, 400, "{}", second.body);
    assert!(second.body.contains("um só arquivo"), "{}", second.body);
    // a field that is not the file
    let (content_type, body) = multipart(&[
        Part {
            name: "csrf",
            file_name: None,
            bytes: csrf.as_bytes(),
        },
        Part {
            name: "formato",
            file_name: None,
            bytes: b"jsonl",
        },
    ]);
    let other = browser.post_raw("/console/importacoes", &content_type, &body);
    assert_eq!(other.status, 400, "{}", other.body);
    // a file that is neither CSV nor JSON Lines
    let pdf = upload(&mut browser, &csrf, "contrato.pdf", b"%PDF-1.7");
    assert_eq!(pdf.status, 415, "{}", pdf.body);
    // not signed in: the sign-in page, nothing read
    let mut stranger = Browser::new(&app.api.base_url);
    let anonymous = upload(&mut stranger, &csrf, "a.jsonl", &file);
    assert_eq!(anonymous.status, 401, "{}", anonymous.body);

    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(imports_of(&app), 0, "no import stays");
    assert_eq!(staged_lines(&app), 0);
    assert_eq!(
        app.db.scalar("SELECT count(*) AS v FROM importacao_erros"),
        0
    );
    assert!(app.sim_requests().is_empty());
    assert_eq!(app.consent_rows(), 0);
}

#[test]
fn another_companys_import_is_the_404_page_and_who_may_import_is_integracao() {
    let app = TestApp::synced();
    let r = app
        .a
        .post_raw(
            "/api/importacoes",
            crate::importacoes::JSONL,
            &jsonl(&[line("a-1")]),
        )
        .expect(202);
    let id = r.data()["id"].as_str().unwrap().to_owned();

    let mut b = Browser::new(&app.api.base_url);
    b.sign_in(&app.key_b);
    for path in [
        format!("/console/importacoes/{id}"),
        format!("/console/importacoes/{id}/erros"),
        format!("/console/importacoes?antes={id}"),
        "/console/importacoes/nao-e-um-uuid".to_owned(),
    ] {
        let page = b.get(&path);
        assert_eq!(page.status, 404, "{path}: {}", page.body);
        assert!(page.body.contains("Não encontrado"), "{}", page.body);
    }
    let csrf = b.get("/console/importacoes").csrf();
    let cancel = b.post(
        &format!("/console/importacoes/{id}/cancelar"),
        &[("csrf", &csrf)],
    );
    assert_eq!(cancel.status, 404, "{}", cancel.body);
    assert_ne!(
        app.db
            .text(&format!(
                "SELECT status AS v FROM importacoes WHERE id = '{id}'"
            ))
            .as_deref(),
        Some("cancelada"),
        "another company's cancel changed nothing"
    );
    // B's list does not show A's import
    assert!(!b.get("/console/importacoes").body.contains(&id));

    // the DPO reads the page without the form; a consulta key is refused
    let mut dpo = Browser::new(&app.api.base_url);
    dpo.sign_in(&issue_key_with_scopes(&app, &app.company_a, "auditor"));
    let list = dpo.get("/console/importacoes");
    assert_eq!(list.status, 200, "{}", list.body);
    assert!(list.body.contains(&id));
    assert!(!list.body.contains("Enviar um arquivo"), "{}", list.body);
    let mut consulta = Browser::new(&app.api.base_url);
    consulta.sign_in(&issue_key_with_scopes(&app, &app.company_a, "consulta"));
    assert_eq!(consulta.get("/console/importacoes").status, 403);
}
