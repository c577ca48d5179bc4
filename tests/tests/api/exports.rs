//! `GET /api/exportacoes` (issue 37, part 6; docs/records.md, "Exports"): a period's requests
//! for scheduled pulls, a gzipped page of JSON Lines per call, the list's items or the requests'
//! ISO/IEC TS 27560 records, paged by `X-Proximo-Cursor`, recorded in the access log, the
//! company's own only.

use std::collections::BTreeSet;
use std::io::Read as _;

use serde_json::{json, Value};

use crate::helpers::*;
use crate::lifecycle::create;
use crate::records::ready_with;
use crate::scopes::key_with_scopes;

fn today() -> String {
    chrono::Utc::now().format("%Y-%m-%d").to_string()
}

/// The lines of a page: the body un-gzipped, one JSON value a line.
fn lines(reply: &testkit::Reply) -> Vec<Value> {
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.content_type, "application/octet-stream");
    let mut text = String::new();
    flate2::read::GzDecoder::new(&reply.body[..])
        .read_to_string(&mut text)
        .expect("a gzip of UTF-8 text");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a JSON value a line"))
        .collect()
}

/// Every page of the export from the first, following `X-Proximo-Cursor`.
fn every_page(client: &testkit::Client, query: &str) -> Vec<Vec<Value>> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            None => format!("/api/exportacoes?{query}"),
            Some(c) => format!(
                "/api/exportacoes?{query}&cursor={}",
                form_urlencoded::byte_serialize(c.as_bytes()).collect::<String>()
            ),
        };
        let reply = client.get(&path);
        pages.push(lines(&reply));
        cursor = reply.header("x-proximo-cursor").map(str::to_owned);
        if cursor.is_none() {
            return pages;
        }
        assert!(pages.len() < 50, "the cursor never ends");
    }
}

fn ids(pages: &[Vec<Value>], field: &str) -> Vec<String> {
    pages
        .iter()
        .flatten()
        .map(|line| line[field].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_periods_items_and_records_come_in_gzipped_pages_of_the_companys_own_requests() {
    // pages of 2,000 bytes: a few items, one or two records, a page
    let (app, _) = ready_with(&[("APP__SERVER__PAGE_MAX_BYTES", "2000")]);
    let mut made = BTreeSet::new();
    for _ in 0..5 {
        made.insert(create(&app.a, ATIVO, &active_body()).0);
    }
    let mut other = active_body();
    other["casoDeUsoIdTemplate"] = json!(first_use_case(&app, &app.company_b).0);
    let (of_b, _) = create(&app.b, ATIVO, &other);
    let auditor = key_with_scopes(&app, &app.company_a, "auditor");
    let day = today();

    let pages = every_page(&auditor, &format!("de={day}&ate={day}"));
    assert!(pages.len() > 1, "the byte bound cut the period into pages");
    let items = ids(&pages, "id");
    assert_eq!(items.len(), made.len(), "each request once: {items:?}");
    assert_eq!(items.iter().cloned().collect::<BTreeSet<_>>(), made);
    assert!(!items.contains(&of_b), "never another company's");
    for item in pages.iter().flatten() {
        let cpf = item["cpfTitular"].as_str().unwrap();
        assert!(
            cpf.contains('*'),
            "the CPF masked, as the list shows it: {cpf}"
        );
    }

    let pages = every_page(&auditor, &format!("de={day}&ate={day}&formato=registro"));
    assert!(pages.len() > 1);
    let records: Vec<&Value> = pages.iter().flatten().collect();
    assert_eq!(records.len(), made.len());
    for record in &records {
        assert!(record["@context"]
            .as_str()
            .unwrap()
            .ends_with("/contexts/consent-record-v1.jsonld"));
        assert_eq!(record["@type"], "dpv:ConsentRecord");
    }
    // each record is the one `GET .../registro` answers for its request
    let one = &records[0];
    let id = made
        .iter()
        .find(|id| one.to_string().contains(id.as_str()))
        .expect("the record names its request");
    let single: Value = serde_json::from_str(
        &app.a
            .get(&format!("/api/solicitacao-consentimento/{id}/registro"))
            .text,
    )
    .unwrap();
    assert_eq!(&single, *one);

    // every record read is in the access log, under the export's route
    let logged = app.db.scalar(
        "SELECT count(*) AS v FROM acessos_dados_pessoais a, unnest(a.solicitacao_ids) s
         WHERE a.rota = '/api/exportacoes'",
    );
    assert!(logged >= made.len() as i64, "{logged} reads logged");
}

#[test]
fn a_bad_period_or_form_is_named_and_reads_nothing_and_other_scopes_are_refused() {
    let (app, _) = ready_with(&[]);
    create(&app.a, ATIVO, &active_body());
    let auditor = key_with_scopes(&app, &app.company_a, "auditor");
    let day = today();
    for (query, field) in [
        ("ate=2026-01-01".to_owned(), "de"),
        ("de=2026-01-02&ate=2026-01-01".to_owned(), "ate"),
        ("de=2026-02-30&ate=2026-03-01".to_owned(), "de"),
        (format!("de={day}&ate={day}&formato=csv"), "formato"),
    ] {
        let reply = auditor
            .get(&format!("/api/exportacoes?{query}"))
            .expect(422);
        assert_eq!(error_fields(&reply), [field], "{query}");
    }
    let logged = app
        .db
        .scalar("SELECT count(*) AS v FROM acessos_dados_pessoais WHERE rota = '/api/exportacoes'");
    assert_eq!(logged, 0, "a refused export reads nothing");
    // the integration's key is not the auditor's
    app.a
        .get(&format!("/api/exportacoes?de={day}&ate={day}"))
        .expect(403);
}

#[test]
fn records_missing_a_mandatory_field_name_it_instead_of_a_partial_file() {
    let app = TestApp::synced();
    create(&app.a, ATIVO, &active_body());
    let auditor = key_with_scopes(&app, &app.company_a, "auditor");
    let day = today();
    let reply = auditor
        .get(&format!(
            "/api/exportacoes?de={day}&ate={day}&formato=registro"
        ))
        .expect(422);
    let fields = error_fields(&reply);
    assert!(
        fields.contains(&"controlador.nome".to_owned())
            && fields.contains(&"casoDeUso.baseLegal".to_owned()),
        "{fields:?}"
    );
    // the items need no profile
    let page = lines(&auditor.get(&format!("/api/exportacoes?de={day}&ate={day}")));
    assert_eq!(page.len(), 1);
}
