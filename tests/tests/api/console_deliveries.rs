//! The operator's delivery log and the home page's PGCC incident (issue 38, parts 5 and 6;
//! docs/console.md): the start of each receiver's answer kept and shown escaped, the log's
//! filters read along their indexes (counted by PostgreSQL's statistics on a URL holding 10^5
//! deliveries), and a PGCC outage opened and closed on the home page.

use std::time::Duration;

use serde_json::json;
use testkit::{wait_until, Receiver};

use crate::console::{Browser, Page};
use crate::helpers::*;
use crate::lifecycle::{create, synced_with};
use crate::scopes::issue_key_with_scopes;

const WAIT: Duration = Duration::from_secs(60);

/// Registers a URL of company A taking `solicitacao.criada`; its id.
fn register(app: &TestApp, url: &str) -> String {
    app.a
        .post_json(
            "/api/webhook-urls",
            &json!({"url": url, "eventos": ["solicitacao.criada"]}),
        )
        .expect(200)
        .data()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The stored answer of the URL's first attempt, once there is one.
fn stored_answer(app: &TestApp, url_id: &str) -> Option<String> {
    let sql = format!(
        "SELECT (SELECT t.corpo_resposta FROM webhook_tentativas t JOIN webhook_entregas e \
         ON e.empresa_id = t.empresa_id AND e.id = t.entrega_id \
         WHERE e.webhook_url_id = '{url_id}' ORDER BY t.em LIMIT 1) AS v"
    );
    assert!(
        wait_until(WAIT, || app.db.text(&sql).is_some()),
        "no attempt with an answer for {url_id}"
    );
    app.db.text(&sql)
}

#[test]
fn each_attempt_keeps_the_start_of_the_receivers_answer_and_the_page_shows_it_escaped() {
    let app = synced_with(&[]);
    // markup, an ampersand, a byte that is not UTF-8 and a NUL: stored as text, shown as text
    let known = Receiver::answering_body(b"<b>canario-7f3a</b> & \xff fim\0!");
    let endless = Receiver::answering_endlessly();
    let known_id = register(&app, &known.url);
    let endless_id = register(&app, &endless.url);
    create(&app.a, ATIVO, &active_body());
    known.wait_for(1, WAIT);
    endless.wait_for(1, WAIT);

    assert_eq!(
        stored_answer(&app, &known_id).as_deref(),
        Some("<b>canario-7f3a</b> & \u{fffd} fim\u{fffd}!")
    );
    // the endless answer: its first 2,000 characters, and the sender was not held by it (a
    // status is the outcome: delivered, well within the 2 s timeout of the tests' settings)
    let endless_answer = stored_answer(&app, &endless_id).unwrap();
    assert_eq!(endless_answer, "x".repeat(2000));
    assert!(wait_until(WAIT, || app.db.scalar(&format!(
        "SELECT count(*) AS v FROM webhook_entregas e JOIN webhook_tentativas t \
         ON t.empresa_id = e.empresa_id AND t.entrega_id = e.id \
         WHERE e.webhook_url_id = '{endless_id}' AND e.status = 'entregue' \
         AND t.status_http = 200 AND t.erro IS NULL AND t.latencia_ms < 1500"
    )) == 1));

    let mut operator = Browser::new(&app.api.base_url);
    operator.sign_in(&issue_key_with_scopes(&app, &app.company_a, "webhooks"));
    let page = operator.get(&format!("/console/webhooks/{known_id}/entregas"));
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body
            .contains("<pre>&lt;b&gt;canario-7f3a&lt;/b&gt; &amp; \u{fffd} fim\u{fffd}!</pre>"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("<b>canario"), "unescaped");
    assert!(page.body.contains("Resposta do receptor"));
    let long = operator.get(&format!("/console/webhooks/{endless_id}/entregas"));
    assert!(
        long.body
            .contains(&format!("<pre>{}</pre>", "x".repeat(2000))),
        "{}",
        long.body
    );
    assert!(long.body.contains("(cortado em 2.000 caracteres)"));
    // the receiver's text is never logged
    let log = std::fs::read_to_string(&app.api.log).unwrap();
    assert!(!log.contains("canario-7f3a"), "the answer in the API's log");
    assert!(
        !log.contains(&"x".repeat(100)),
        "the answer in the API's log"
    );
}

/// Index entries and table rows read from `webhook_entregas` so far, by PostgreSQL's statistics
/// (`pg_stat_user_indexes` for every index of the table, plus its sequential reads), and the
/// scans of `indexes` (those the page may use: no other reader of the test uses them). On Citus
/// the reads are the workers', on the company's shard (`webhook_entregas_<shard id>` and its
/// indexes, named the same way): summed over every node.
fn read_so_far(app: &TestApp, indexes: &[&str]) -> (i64, i64) {
    let on_every_node = |sql: &str| -> i64 {
        if testkit::citus::on_citus() {
            app.db.scalar(&format!(
                "SELECT coalesce(sum(result::bigint), 0)::bigint AS v \
                 FROM run_command_on_all_nodes($q${sql}$q$)"
            ))
        } else {
            app.db.scalar(&format!("SELECT ({sql}) AS v"))
        }
    };
    let all = on_every_node(
        "SELECT ((SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes \
                 WHERE relname ~ '^webhook_entregas(_[0-9]+)?$') \
              + (SELECT coalesce(sum(seq_tup_read), 0) FROM pg_stat_user_tables \
                 WHERE relname ~ '^webhook_entregas(_[0-9]+)?$'))::bigint",
    );
    let scans = on_every_node(&format!(
        "SELECT coalesce(sum(idx_scan), 0)::bigint FROM pg_stat_user_indexes \
         WHERE indexrelname ~ '^({})(_[0-9]+)?$'",
        indexes.join("|")
    ));
    (all, scans)
}

/// Views `path` and answers the page and what it read of `webhook_entregas`: once the API's
/// backend has reported the view's scans of `indexes` (PostgreSQL's statistics reach the views
/// within seconds of the backend going idle), every index's entries and the table's rows.
fn view_counting(
    browser: &mut Browser,
    app: &TestApp,
    path: &str,
    indexes: &[&str],
) -> (Page, i64) {
    let (all_before, scans_before) = read_so_far(app, indexes);
    let page = browser.get(path);
    assert_eq!(page.status, 200, "{path}: {}", page.body);
    assert!(
        wait_until(WAIT, || read_so_far(app, indexes).1 > scans_before),
        "{path}: none of {indexes:?} scanned"
    );
    // anything else of that backend's report arrives with it
    std::thread::sleep(Duration::from_millis(1500));
    (page, read_so_far(app, indexes).0 - all_before)
}

/// The next page's link of a log page.
fn next_link(page: &Page) -> String {
    let at = page
        .body
        .find("Próximas 50")
        .unwrap_or_else(|| panic!("no next page: {}", page.body));
    let start = page.body[..at].rfind("href=\"").unwrap() + "href=\"".len();
    page.body[start..start + page.body[start..].find('"').unwrap()].replace("&amp;", "&")
}

#[test]
fn a_filtered_page_of_a_url_with_a_hundred_thousand_deliveries_reads_about_a_page() {
    let app = synced_with(&[]);
    let receiver = Receiver::start(&[]);
    let url = register(&app, &receiver.url);
    let a = &app.company_a;
    // 10^5 deliveries of two days ago and more (outside the 24 h figures), one in 1,000 failed and
    // one in 1,000 of `solicitacao.revogada` (never the same ones): a filter walking the URL's
    // deliveries would read about 1,000 of them for each one it shows
    let tipo = "CASE WHEN n % 1000 = 0 THEN 'solicitacao.revogada' ELSE 'solicitacao.criada' END";
    let at = "now() - interval '2 days' - n * interval '1 second'";
    // in batches: one transaction would hold the cluster's watermark (TestDb::seed_in_batches)
    app.db.seed_in_batches(100_000, |lo, hi| {
        format!(
            "INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em) \
             SELECT md5('ev' || n)::uuid, '{a}', {tipo}, '{{}}', {at} \
             FROM generate_series({lo}, {hi}) n; \
             INSERT INTO webhook_entregas (id, evento_id, webhook_url_id, empresa_id, status, \
                 tentativas, criado_em, atualizado_em, tipo_evento) \
             SELECT md5('d' || n)::uuid, md5('ev' || n)::uuid, '{url}', '{a}', \
                 CASE WHEN n % 1000 = 500 THEN 'falhou' ELSE 'entregue' END, 1, {at}, {at}, \
                 {tipo} \
             FROM generate_series({lo}, {hi}) n"
        )
    });
    // statistics for the planner after a bulk insert; VACUUM runs outside a transaction block,
    // one statement a call
    for table in ["webhook_entregas", "webhook_eventos"] {
        diesel::connection::SimpleConnection::batch_execute(
            &mut app.db.conn(),
            &format!("VACUUM ANALYZE {table}"),
        )
        .unwrap();
    }
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM webhook_entregas WHERE webhook_url_id = '{url}'"
        )),
        100_000
    );

    let mut operator = Browser::new(&app.api.base_url);
    operator.sign_in(&issue_key_with_scopes(&app, a, "webhooks"));
    let log = format!("/console/webhooks/{url}/entregas");
    // a page is 51 entries (50 and one to know there is more), plus the 24 h figures' probes
    // (none of these deliveries is in the window) and the workers' few reads meanwhile; walking
    // the period would be about 50,000
    const BOUND: i64 = 500;
    // a status's range: its index, or for `falhou` the resend's partial index, as cheap
    let by_status = &[
        "webhook_entregas_url_status_idx",
        "webhook_entregas_url_falhas_idx",
    ];
    let by_type = &["webhook_entregas_url_tipo_status_idx"];

    let (failed, read) = view_counting(
        &mut operator,
        &app,
        &format!("{log}?status=falhou"),
        by_status,
    );
    assert_eq!(failed.body.matches("selo selo-falhou").count(), 50);
    assert!(read <= BOUND, "status: {read} entries and rows read");

    // its next page starts at the cursor: bounded the same
    let next = next_link(&failed);
    assert!(next.contains("antes_id="), "{next}");
    let (second, read) = view_counting(&mut operator, &app, &next, by_status);
    assert_eq!(second.body.matches("selo selo-falhou").count(), 50);
    assert!(!second.body.contains("Próximas 50"), "100 failed in all");
    assert!(read <= BOUND, "status, page 2: {read}");

    // an event type, with no status: one range per status, merged
    let (revoked, read) = view_counting(
        &mut operator,
        &app,
        &format!("{log}?evento=solicitacao.revogada"),
        by_type,
    );
    assert_eq!(revoked.body.matches("selo selo-entregue").count(), 50);
    assert!(read <= BOUND, "event type: {read}");

    // an event type and a status no delivery has together, in a period: nothing to show, and
    // nothing walked to find it out
    let day = (chrono::Utc::now() - chrono::Duration::days(3))
        .format("%Y-%m-%d")
        .to_string();
    let (none, read) = view_counting(
        &mut operator,
        &app,
        &format!("{log}?evento=solicitacao.revogada&status=falhou&de={day}&ate={day}"),
        &[by_type[0], by_status[0], by_status[1]],
    );
    assert!(none.body.contains("Nenhuma entrega com estes filtros"));
    assert!(read <= BOUND, "event type and status: {read}");

    // values the log has no range for: the form again, the log not read
    for wrong in ["status=perdida", "evento=solicitacao.apagada", "de=ontem"] {
        let refused = operator.get(&format!("{log}?{wrong}"));
        assert_eq!(refused.status, 422, "{wrong}: {}", refused.body);
        assert!(refused.body.contains("role=\"alert\""), "{}", refused.body);
        assert!(
            !refused.body.contains("selo selo-"),
            "{wrong}: the log was read"
        );
    }
}

/// The `datetime` of a `<time>` for PostgreSQL's `column` of `table`, as the pages write it.
fn instant_of(app: &TestApp, column: &str, table: &str) -> String {
    app.db
        .text(&format!(
            "SELECT to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS v \
             FROM {table}"
        ))
        .unwrap()
}

#[test]
fn a_pgcc_outage_is_an_open_incident_on_the_home_page_until_the_pgcc_answers_again() {
    let app = synced_with(&[
        // a short window, so the outage and the recovery each take seconds
        ("APP__PGCC_STATUS__WINDOW_SECONDS", "3"),
        ("APP__WORKERS__STATUS_POLL_SECONDS", "0"),
        ("APP__WORKERS__RECONCILE_SECONDS", "0"),
    ]);
    // any key sees it; the DPO's figures are kept a minute, the PGCC's incident is not
    let mut reader = Browser::new(&app.api.base_url);
    let home = reader.sign_in(&issue_key_with_scopes(&app, &app.company_a, "consulta"));
    assert!(
        home.body.contains("Nenhum incidente aberto"),
        "{}",
        home.body
    );
    let mut dpo = Browser::new(&app.api.base_url);
    dpo.sign_in(&issue_key_with_scopes(&app, &app.company_a, "auditor"));
    // let the synchronizations' answers leave the window
    std::thread::sleep(Duration::from_millis(3500));

    // the outage: every PGCC call answers 503
    app.fault(json!({"status": 503, "count": 1000}));
    let failed = app.a.post_empty("/api/casos-de-uso/sincronizar");
    assert_eq!(failed.status, 502, "{}", failed.text);
    let open = |b: &mut Browser| b.get("/console").body.contains("1 incidente aberto");
    assert!(
        wait_until(WAIT, || open(&mut reader)),
        "never open: {}",
        reader.get("/console").body
    );
    let code = app.db.text("SELECT codigo AS v FROM pgcc_saude").unwrap();
    let label = match code.as_str() {
        "UNAVAILABLE" => "Indisponível",
        "PARTIAL_FAILURE" => "Falha parcial",
        other => panic!("an outage with code {other}"),
    };
    let since = instant_of(&app, "deteccao", "pgcc_saude");
    let page = reader.get("/console");
    assert!(
        page.body.contains(&format!(
            "1 incidente aberto: <strong>{label}</strong>, desde <time datetime=\"{since}\""
        )),
        "{}",
        page.body
    );
    assert!(page.body.contains("href=\"/console/pgcc\""));
    assert!(dpo.get("/console").body.contains("1 incidente aberto"));

    // back: the PGCC answers again
    let r = app.sim_admin.delete("/_sim/faults");
    assert!(r.status < 300, "{}", r.text);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    assert!(
        wait_until(WAIT, || reader
            .get("/console")
            .body
            .contains("Nenhum incidente aberto")),
        "never closed: {}",
        reader.get("/console").body
    );
    // closed when PostgreSQL's status says the PGCC came back, shown as the instant it ended
    assert_eq!(
        app.db.text("SELECT codigo AS v FROM pgcc_saude").as_deref(),
        Some("OK")
    );
    let ended = instant_of(&app, "deteccao", "pgcc_saude");
    assert!(ended >= since, "{ended} before {since}");
    let page = reader.get("/console");
    assert!(
        page.body.contains(&format!(
            "a PGCC está disponível desde <time datetime=\"{ended}\""
        )),
        "{}",
        page.body
    );
    assert!(dpo.get("/console").body.contains("Nenhum incidente aberto"));
}
