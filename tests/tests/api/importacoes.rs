//! Bulk import (issue 37, parts 1 and 2; docs/imports.md): files validated line by line with
//! the creation's rules, registered on the (real) simulator in the background, exactly once.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::*;

pub(crate) const JSONL: &str = "application/x-ndjson";
const CSV: &str = "text/csv";

/// A valid active line of company A, answered long ago, under `id_externo`.
pub(crate) fn line(id_externo: &str) -> Value {
    let mut l = active_body();
    l["idExterno"] = json!(id_externo);
    l["origem"] = json!("crm-legado");
    l["dataTitularRespondeuConsentimento"] = json!("2019-03-01T10:00:00Z");
    l
}

pub(crate) fn jsonl(lines: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in lines {
        out.extend(serde_json::to_vec(l).unwrap());
        out.push(b'\n');
    }
    out
}

/// Polls the import until `status`, within 60 s.
pub(crate) fn wait_for(app: &TestApp, client: &testkit::Client, id: &str, status: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = client.get(&format!("/api/importacoes/{id}")).expect(200);
        if r.data()["status"] == status {
            return r.data().clone();
        }
        assert!(
            Instant::now() < deadline,
            "import {id} never reached {status}: {}",
            r.data()
        );
        let _ = app;
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn imported_rows(app: &TestApp) -> i64 {
    app.consent_rows()
}

#[test]
fn a_jsonl_file_is_validated_answered_202_and_registered_on_the_pgcc() {
    let app = TestApp::synced();
    let mut pending = pending_body();
    pending["idExterno"] = json!("crm-2");
    pending["origem"] = json!("loja-12");
    let body = jsonl(&[line("crm-1"), pending]);
    let r = app.a.post_raw("/api/importacoes", JSONL, &body).expect(202);
    let id = r.data()["id"].as_str().unwrap().to_owned();
    assert_eq!(r.data()["linhas"], 2);
    assert_eq!(r.data()["validas"], 2);
    assert_eq!(r.data()["falhas"], 0);
    assert_eq!(
        r.header("location"),
        Some(format!("/api/importacoes/{id}").as_str())
    );

    let done = wait_for(&app, &app.a, &id, "concluida");
    assert_eq!(done["registradas"], 2);
    assert_eq!(done["falhas"], 0);
    assert!(done["fimEstimado"].is_string());

    let sent = app.sim_requests();
    assert_eq!(sent.len(), 2, "each line registered once: {sent:?}");
    let mut statuses: Vec<&str> = sent.iter().map(|s| s["status"].as_str().unwrap()).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, ["ativo", "pendente"]);
    assert_eq!(imported_rows(&app), 2);
    assert_eq!(
        app.db
            .text("SELECT data_titular_respondeu_consentimento::text AS v FROM solicitacoes_consentimento WHERE status = 'ativo'")
            .as_deref(),
        Some("2019-03-01 10:00:00+00"),
        "the original answer date is kept"
    );
    // the staged lines keep no personal data once registered
    assert_eq!(
        app.db
            .scalar("SELECT count(*) AS v FROM importacao_linhas WHERE dados IS NOT NULL"),
        0
    );
    // importacao.concluida in the feed, once settled (the feed shows an event when no older
    // transaction of the cluster is still running: on a busy cluster, a moment later)
    let deadline = Instant::now() + Duration::from_secs(30);
    let (events, items) = loop {
        let events = app
            .a
            .get("/api/eventos?tipo=importacao.concluida")
            .expect(200);
        let items = events.data()["itens"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !items.is_empty() || Instant::now() > deadline {
            break (events, items);
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(items.len(), 1, "{}", events.text);
    assert_eq!(items[0]["data"]["importacaoId"], id.as_str());
    assert_eq!(items[0]["data"]["registradas"], 2);
}

#[test]
fn a_csv_with_semicolons_and_a_bom_is_imported() {
    let app = TestApp::synced();
    let mut body = "\u{feff}idExterno;origem;casoDeUsoIdTemplate;cpfTitular;modalidadeAcesso;tipoTitular;dataExpiracaoConsentimento;dataTitularRespondeuConsentimento;provaColeta\r\n".to_owned();
    body.push_str(&format!(
        "x-1;papel;tpl-a-marketing;{CPF};Direto;PessoaFisica;2099-12-31T23:59:59Z;2020-05-05T08:00:00Z;\"ficha 12; assinada\"\r\n"
    ));
    body.push_str(&format!(
        "x-2;papel;tpl-a-credito;{CPF};Direto;PessoaFisica;2099-12-31T23:59:59Z;;\r\n"
    ));
    let r = app
        .a
        .post_raw("/api/importacoes", CSV, body.as_bytes())
        .expect(202);
    assert_eq!(r.data()["validas"], 2, "{}", r.text);
    let id = r.data()["id"].as_str().unwrap().to_owned();
    wait_for(&app, &app.a, &id, "concluida");
    let sent = app.sim_requests();
    assert_eq!(sent.len(), 2);
    assert!(sent
        .iter()
        .any(|s| s["provaColeta"] == "ficha 12; assinada" && s["templateId"] == "tpl-a-marketing"));
    assert_eq!(imported_rows(&app), 2);
}

#[test]
fn a_file_sent_twice_creates_nothing_twice() {
    let app = TestApp::synced();
    let body = jsonl(&[line("dup-1"), line("dup-2")]);
    let first = app.a.post_raw("/api/importacoes", JSONL, &body).expect(202);
    let first_id = first.data()["id"].as_str().unwrap().to_owned();
    wait_for(&app, &app.a, &first_id, "concluida");

    let second = app.a.post_raw("/api/importacoes", JSONL, &body).expect(202);
    assert_eq!(second.data()["validas"], 0);
    assert_eq!(second.data()["falhas"], 2);
    assert_eq!(second.data()["status"], "concluida");
    let id = second.data()["id"].as_str().unwrap();
    let errors = app.a.get(&format!("/api/importacoes/{id}/erros"));
    assert_eq!(errors.status, 200);
    let fields: Vec<Value> = errors
        .text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(fields.len(), 2);
    assert!(fields.iter().all(|e| e["campo"] == "idExterno"));
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        app.sim_requests().len(),
        2,
        "the second file reached no PGCC"
    );
    assert_eq!(imported_rows(&app), 2);
}

#[test]
fn every_bad_line_is_an_error_by_line_and_field_and_creates_nothing() {
    let app = TestApp::synced();
    let mut body = Vec::new();
    // 1: valid
    body.extend(serde_json::to_vec(&line("ok-1")).unwrap());
    body.push(b'\n');
    // 2: wrong CPF check digit
    let mut l = line("bad-cpf");
    l["cpfTitular"] = json!("529.982.247-24");
    body.extend(serde_json::to_vec(&l).unwrap());
    body.push(b'\n');
    // 3: unknown template
    let mut l = line("bad-tpl");
    l["casoDeUsoIdTemplate"] = json!("tpl-nao-existe");
    body.extend(serde_json::to_vec(&l).unwrap());
    body.push(b'\n');
    // 4: answer in the future
    let mut l = line("bad-date");
    l["dataTitularRespondeuConsentimento"] = json!("2098-01-01T00:00:00Z");
    body.extend(serde_json::to_vec(&l).unwrap());
    body.push(b'\n');
    // 5: idExterno of line 1 again
    body.extend(serde_json::to_vec(&line("ok-1")).unwrap());
    body.push(b'\n');
    // 6: a line of 10 MB
    body.extend(b"{\"idExterno\":\"");
    body.extend(std::iter::repeat_n(b'x', 10 * 1024 * 1024));
    body.extend(b"\"}\n");
    // 7: invalid UTF-8
    body.extend(b"{\"idExterno\":\"\xff\xfe\"}\n");
    // 8: a NUL
    body.extend(b"{\"idExterno\":\"nul\0\"}\n");
    let r = app.a.post_raw("/api/importacoes", JSONL, &body).expect(202);
    assert_eq!(r.data()["linhas"], 8, "{}", r.text);
    assert_eq!(r.data()["validas"], 1);
    assert_eq!(r.data()["falhas"], 7);
    let id = r.data()["id"].as_str().unwrap().to_owned();

    let csv = app
        .a
        .get(&format!("/api/importacoes/{id}/erros?formato=csv"));
    assert_eq!(csv.status, 200);
    assert!(
        csv.text.starts_with("linha,campo,mensagem\r\n"),
        "{}",
        csv.text
    );
    let by_line: Vec<(u64, String)> = csv
        .text
        .lines()
        .skip(1)
        .map(|l| {
            let mut parts = l.splitn(3, ',');
            (
                parts.next().unwrap().parse().unwrap(),
                parts.next().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        by_line,
        [
            (2, "cpfTitular".to_owned()),
            (3, "casoDeUsoIdTemplate".to_owned()),
            (4, "dataTitularRespondeuConsentimento".to_owned()),
            (5, "idExterno".to_owned()),
            (6, "linha".to_owned()),
            (7, "linha".to_owned()),
            (8, "linha".to_owned()),
        ]
    );
    assert_no_canary_cpf("the errors file", &csv.text);

    wait_for(&app, &app.a, &id, "concluida");
    assert_eq!(
        app.sim_requests().len(),
        1,
        "only the valid line was registered"
    );
    assert_eq!(imported_rows(&app), 1);
}

#[test]
fn a_file_whose_lines_all_fail_creates_nothing() {
    let app = TestApp::synced();
    let mut l = line("x");
    l["cpfTitular"] = json!("111.111.111-11");
    let r = app
        .a
        .post_raw("/api/importacoes", JSONL, &jsonl(&[l]))
        .expect(202);
    assert_eq!(r.data()["status"], "concluida");
    assert_eq!(r.data()["validas"], 0);
    std::thread::sleep(Duration::from_secs(2));
    assert!(app.sim_requests().is_empty());
    assert_eq!(imported_rows(&app), 0);
}

#[test]
fn a_file_over_the_line_limit_is_413_and_creates_nothing() {
    let app = TestApp::spawn_with(&[("APP__IMPORTACAO__MAX_LINHAS", "2")]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let body = jsonl(&[line("l-1"), line("l-2"), line("l-3")]);
    let r = app.a.post_raw("/api/importacoes", JSONL, &body).expect(413);
    assert_eq!(r.json["sucesso"], false);
    assert_eq!(app.db.scalar("SELECT count(*) AS v FROM importacoes"), 0);
    assert_eq!(
        app.db.scalar("SELECT count(*) AS v FROM importacao_linhas"),
        0
    );
}

#[test]
fn a_file_over_the_byte_limit_is_413_and_creates_nothing() {
    let app = TestApp::spawn_with(&[("APP__IMPORTACAO__MAX_BYTES", "1000")]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let lines: Vec<Value> = (0..20).map(|i| line(&format!("b-{i}"))).collect();
    let r = app.a.post_raw("/api/importacoes", JSONL, &jsonl(&lines));
    assert_eq!(r.status, 413, "{}", r.text);
    assert_eq!(
        app.db.scalar("SELECT count(*) AS v FROM importacao_linhas"),
        0
    );
    std::thread::sleep(Duration::from_secs(1));
    assert!(app.sim_requests().is_empty());
}

#[test]
fn a_cancelled_import_registers_no_further_line() {
    // one call a second: the import is still registering when it is cancelled
    let app = TestApp::spawn_with(&[("APP__IMPORTACAO__PGCC_CALLS_PER_SECOND", "1")]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let lines: Vec<Value> = (0..30).map(|i| line(&format!("c-{i}"))).collect();
    let r = app
        .a
        .post_raw("/api/importacoes", JSONL, &jsonl(&lines))
        .expect(202);
    let id = r.data()["id"].as_str().unwrap().to_owned();
    assert_eq!(r.data()["status"], "registrando");
    assert!(r.data()["fimEstimado"].is_string());
    let c = app
        .a
        .post_empty(&format!("/api/importacoes/{id}/cancelar"))
        .expect(200);
    assert_eq!(c.data()["status"], "cancelada");
    let registered_then = app.sim_requests().len();
    std::thread::sleep(Duration::from_secs(3));
    let registered = app.sim_requests().len();
    // a line already claimed when the cancel came may still end
    assert!(
        registered <= registered_then + 1,
        "{registered_then} then {registered}"
    );
    assert!(registered < 30);
    let status = app.a.get(&format!("/api/importacoes/{id}")).expect(200);
    assert_eq!(status.data()["status"], "cancelada");
    // cancelling again answers the same
    app.a
        .post_empty(&format!("/api/importacoes/{id}/cancelar"))
        .expect(200);
}

#[test]
fn another_company_cannot_read_or_cancel_an_import() {
    let app = TestApp::synced();
    let r = app
        .a
        .post_raw("/api/importacoes", JSONL, &jsonl(&[line("p-1")]))
        .expect(202);
    let id = r.data()["id"].as_str().unwrap();
    app.b.get(&format!("/api/importacoes/{id}")).expect(404);
    app.b
        .get(&format!("/api/importacoes/{id}/erros"))
        .expect(404);
    app.b
        .post_empty(&format!("/api/importacoes/{id}/cancelar"))
        .expect(404);
    app.a.get(&format!("/api/importacoes/{id}")).expect(200);
}

#[test]
fn a_file_neither_csv_nor_jsonl_is_415_and_an_unknown_column_400() {
    let app = TestApp::synced();
    app.a
        .post_raw("/api/importacoes", "application/json", b"{}")
        .expect(415);
    app.a
        .post_raw("/api/importacoes", CSV, b"idExterno,cpf\r\na,1\r\n")
        .expect(400);
    assert_eq!(app.db.scalar("SELECT count(*) AS v FROM importacoes"), 0);
}

#[test]
fn an_import_killed_mid_registration_resumes_and_registers_each_line_once() {
    // 4 calls a second and a 2-second lease: a kill leaves lines claimed, taken over soon
    let env = [
        ("APP__IMPORTACAO__PGCC_CALLS_PER_SECOND", "4"),
        ("APP__IMPORTACAO__LEASE_SECONDS", "2"),
    ];
    let mut app = TestApp::spawn_with(&env);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let lines: Vec<Value> = (0..24).map(|i| line(&format!("k-{i}"))).collect();
    let r = app
        .a
        .post_raw("/api/importacoes", JSONL, &jsonl(&lines))
        .expect(202);
    let id = r.data()["id"].as_str().unwrap().to_owned();
    let deadline = Instant::now() + Duration::from_secs(30);
    while app.sim_requests().len() < 3 {
        assert!(Instant::now() < deadline, "registration never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    app.restart_api(&env);
    let before = app.sim_requests().len();
    assert!(before < 24, "the kill came after the end: {before}");
    let done = wait_for(&app, &app.a, &id, "concluida");
    assert_eq!(done["registradas"], 24, "{done}");
    let sent = app.sim_requests();
    assert_eq!(sent.len(), 24, "each line once on the PGCC");
    let mut refs: Vec<&str> = sent
        .iter()
        .map(|s| s["referenciaExterna"].as_str().unwrap())
        .collect();
    refs.sort_unstable();
    refs.dedup();
    assert_eq!(refs.len(), 24);
    assert_eq!(app.consent_rows(), 24);
}

#[test]
fn the_imports_pgcc_calls_never_exceed_their_own_budget() {
    let app = TestApp::spawn_with(&[("APP__IMPORTACAO__PGCC_CALLS_PER_SECOND", "2")]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    app.b
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let lines: Vec<Value> = (0..40).map(|i| line(&format!("r-{i}"))).collect();
    let started = Instant::now();
    let r = app
        .a
        .post_raw("/api/importacoes", JSONL, &jsonl(&lines))
        .expect(202);
    let id = r.data()["id"].as_str().unwrap().to_owned();
    std::thread::sleep(Duration::from_secs(5));
    let registered = app.sim_requests().len() as f64;
    let elapsed = started.elapsed().as_secs_f64();
    // a full bucket (2) at start, then 2 a second
    assert!(
        registered <= 2.0 + 2.0 * elapsed + 1.0,
        "{registered} calls in {elapsed:.1} s at 2 a second"
    );
    // a live creation goes to the PGCC while the import's bucket is spent: it takes no token
    let mut body = pending_body();
    body["casoDeUsoIdTemplate"] = json!("tpl-b-seguro");
    app.b.post_json(PENDENTE, &body).expect(200);
    let status = app.a.get(&format!("/api/importacoes/{id}")).expect(200);
    assert_eq!(status.data()["status"], "registrando");
    assert_eq!(
        app.db
            .scalar("SELECT count(*) AS v FROM orcamento_pgcc WHERE nome = 'importacao'"),
        1,
        "the imports' own bucket"
    );
}

/// Rows PostgreSQL has read from the staged lines (sequential scans' rows and index entries), as
/// its statistics report them once every backend has flushed its counts (at most once a second,
/// when idle: read until they settle).
fn line_rows_read(app: &TestApp) -> i64 {
    let sql = "SELECT (SELECT coalesce(sum(seq_tup_read), 0) FROM pg_stat_user_tables WHERE relname = 'importacao_linhas')::bigint
 + (SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes WHERE relname = 'importacao_linhas')::bigint AS v";
    let mut last = app.db.scalar(sql);
    let mut steady = 0;
    for _ in 0..40 {
        std::thread::sleep(Duration::from_millis(500));
        let now = app.db.scalar(sql);
        steady = if now == last { steady + 1 } else { 0 };
        last = now;
        if steady >= 4 {
            break;
        }
    }
    last
}

#[test]
fn a_large_import_is_claimed_a_line_at_a_time_and_cancelled_in_the_background() {
    // `make bench-import` found both: at 10^6 staged lines a claim read every pending line (about
    // a second each: 1 line/s registered at a budget of 200), and the cancellation, clearing
    // every line in one statement, outlasted the statement timeout and failed.
    // One call a second: the file's lines stay pending while the test adds 100,000 more.
    let app = TestApp::spawn_with(&[("APP__IMPORTACAO__PGCC_CALLS_PER_SECOND", "1")]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let lines: Vec<Value> = (0..5).map(|i| line(&format!("g-{i}"))).collect();
    let r = app
        .a
        .post_raw("/api/importacoes", JSONL, &jsonl(&lines))
        .expect(202);
    let id = r.data()["id"].as_str().unwrap().to_owned();
    // 100,000 more lines of this import, made as staging makes them (the file's last line,
    // still pending: claims go in file order at one a second)
    // (in batches: one transaction would hold the cluster's watermark; TestDb::seed_in_batches)
    let added = app.db.seed_counted_in_batches(100_000, |lo, hi| {
        format!(
            "WITH novas AS (
    INSERT INTO importacao_linhas
        (empresa_id, importacao_id, linha, id_externo, origem, solicitacao_id, variante, pgcc_id, dados)
    SELECT l.empresa_id, l.importacao_id, 1000 + g, 'g-extra-' || g, l.origem,
        md5(l.importacao_id::text || g)::uuid, l.variante, l.pgcc_id, l.dados
    FROM importacao_linhas l, generate_series({lo}, {hi}) g
    WHERE l.importacao_id = '{id}' AND l.linha = {source} AND l.dados IS NOT NULL
    RETURNING 1),
conta AS (
    UPDATE importacoes SET linhas = linhas + {n}, validas = validas + {n}
    WHERE id = '{id}' AND (SELECT count(*) FROM novas) > 0)
SELECT count(*) AS v FROM novas",
            n = hi - lo + 1,
            // a batch copies the previous one's last line (claims go in file order: the file's
            // line 5 may be registered by then, never the lines after it)
            source = if lo == 1 { 5 } else { 1000 + lo - 1 }
        )
    });
    assert_eq!(added, 100_000, "the file's last line was still pending");

    // each line registered reads tens of index entries of the staged lines (the first pending
    // line's, entries of lines settled since the last vacuum), never the 10^5 pending: the claim
    // as first built read all of them, per line
    let before = line_rows_read(&app);
    let sent_before = app.sim_requests().len();
    let deadline = Instant::now() + Duration::from_secs(60);
    while app.sim_requests().len() < sent_before + 3 {
        assert!(Instant::now() < deadline, "no line was registered");
        std::thread::sleep(Duration::from_millis(200));
    }
    let registered = (app.sim_requests().len() - sent_before) as i64;
    let per_line = (line_rows_read(&app) - before) / registered;
    assert!(
        per_line <= 1_000,
        "a line registered read {per_line} rows of importacao_linhas ({registered} lines)"
    );

    // the cancellation answers at once; the lines are cleared in the background
    let c = app
        .a
        .post_empty(&format!("/api/importacoes/{id}/cancelar"))
        .expect(200);
    assert_eq!(c.data()["status"], "cancelada");
    let pending = format!(
        "SELECT count(*) AS v FROM importacao_linhas WHERE importacao_id = '{id}' AND estado = 'pendente'"
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while app.db.scalar(&pending) > 0 {
        assert!(
            Instant::now() < deadline,
            "{} lines still pending a minute after the cancellation",
            app.db.scalar(&pending)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM importacao_linhas
             WHERE importacao_id = '{id}' AND estado = 'cancelada' AND dados IS NOT NULL"
        )),
        0,
        "a cancelled line keeps no personal data"
    );
    // every line is settled: registered before the cancellation, or cancelled
    let cancelled = app.db.scalar(&format!(
        "SELECT count(*) AS v FROM importacao_linhas WHERE importacao_id = '{id}' AND estado = 'cancelada'"
    ));
    let registered = app.db.scalar(&format!(
        "SELECT count(*) AS v FROM importacao_linhas WHERE importacao_id = '{id}' AND estado = 'registrada'"
    ));
    assert!(
        cancelled + registered == 100_005 && cancelled > 90_000,
        "{cancelled} lines cancelled; by state: {:?}",
        app.db.text(&format!(
            "SELECT string_agg(estado || ' ' || n, ', ') AS v FROM (SELECT estado, count(*) AS n FROM importacao_linhas WHERE importacao_id = '{id}' GROUP BY estado) s"
        ))
    );
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM importacoes WHERE id = '{id}' AND linhas_a_limpar"
        )),
        0,
        "off the cleaner's list once cleared"
    );
    let sent = app.sim_requests().len();
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        app.sim_requests().len() <= sent + 1,
        "nothing registered after the cancellation"
    );
}

#[test]
fn a_file_that_breaks_a_limit_late_is_discarded_whole_however_many_lines_it_staged() {
    // A file refused at its last line (a 2 GiB file over `max_bytes`, or line 10^7 + 1) has
    // millions of lines staged by then, and the refusal deletes them all in one statement (the
    // lines go with their import). Under the statement timeout that delete failed: the answer
    // was an error, not the 413, and the staged lines (personal data) stayed. Here 5 * 10^5
    // lines are added by SQL while the file is being sent, against a timeout of 300 ms.
    let app = TestApp::spawn_with(&[
        ("APP__IMPORTACAO__MAX_LINHAS", "2"),
        ("APP__DATABASE__STATEMENT_TIMEOUT_MS", "300"),
    ]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let first = jsonl(&[line("d-1")]);
    let rest = jsonl(&[line("d-2"), line("d-3")]);
    let address = app.api.base_url.trim_start_matches("http://").to_owned();
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    let head = format!(
        "POST /api/importacoes HTTP/1.1\r\nHost: {address}\r\nApi-Key: {}\r\nContent-Type: {JSONL}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        app.key_a,
        first.len() + rest.len()
    );
    use std::io::{Read, Write};
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&first).unwrap();
    stream.flush().unwrap();

    // the import exists as soon as its file is being read
    let deadline = Instant::now() + Duration::from_secs(30);
    let id = loop {
        if let Some(id) = app.db.text("SELECT max(id::text) AS v FROM importacoes") {
            break id;
        }
        assert!(
            Instant::now() < deadline,
            "no import while its file is read"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // (in batches: one transaction would hold the cluster's watermark; TestDb::seed_in_batches)
    let added = app.db.seed_counted_in_batches(500_000, |lo, hi| {
        format!(
            "WITH novas AS (
    INSERT INTO importacao_linhas
        (empresa_id, importacao_id, linha, id_externo, origem, solicitacao_id, variante, dados)
    SELECT i.empresa_id, i.id, 1000 + g, 'd-extra-' || g, 'crm-legado',
        md5(i.id::text || g)::uuid, 'ativo', '{{}}'::jsonb
    FROM importacoes i, generate_series({lo}, {hi}) g
    WHERE i.id = '{id}'
    RETURNING 1)
SELECT count(*) AS v FROM novas"
        )
    });
    assert_eq!(added, 500_000);

    stream.write_all(&rest).unwrap();
    stream.flush().unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status_line = answer.lines().next().unwrap_or_default().to_owned();
    assert!(
        status_line.contains(" 413 "),
        "the file over the line limit: {status_line}"
    );
    assert!(answer.contains("\"sucesso\":false"), "{answer}");
    assert_eq!(
        app.db.scalar("SELECT count(*) AS v FROM importacao_linhas"),
        0,
        "every staged line went with the refused file"
    );
    assert_eq!(app.db.scalar("SELECT count(*) AS v FROM importacoes"), 0);
}
