//! The console's home page that informs (issue 38, part 6) and the operator's health of a
//! webhook URL (part 5; docs/console.md): figures checked against the rows PostgreSQL holds,
//! another company's never shown, the reads capped.

use crate::console::{register_disabled, Browser, Page};
use crate::helpers::*;
use crate::lifecycle::create;
use crate::scopes::issue_key_with_scopes;

/// Runs an UPDATE/INSERT through `scalar` (the test kit reads one value): the rows it touched.
fn change(app: &TestApp, sql: &str) -> i64 {
    app.db.scalar(&format!(
        "WITH d AS ({sql} RETURNING 1) SELECT count(*) AS v FROM d"
    ))
}

/// The figure of a status's row in the home page's table.
fn status_row(label: &str, code: &str, figure: &str) -> String {
    format!(
        "<tr><th scope=\"row\"><span class=\"selo selo-{code}\">{label}</span></th>\
         <td>{figure}</td></tr>"
    )
}

/// The figure after the `dt` that starts with `term`.
fn figure_after(page: &Page, term: &str) -> String {
    let at = page
        .body
        .find(&format!("<dt>{term}"))
        .unwrap_or_else(|| panic!("no {term}: {}", page.body));
    let rest = &page.body[at..];
    let dd = rest.find("<dd>").unwrap() + "<dd>".len();
    rest[dd..dd + rest[dd..].find("</dd>").unwrap()].to_owned()
}

#[test]
fn the_home_page_counts_its_companys_requests_as_postgresql_holds_them() {
    let app = TestApp::synced();
    let a = &app.company_a;
    let b = &app.company_b;
    let mut active = Vec::new();
    for _ in 0..3 {
        active.push(create(&app.a, ATIVO, &active_body()).0);
    }
    let (late, _) = create(&app.a, PENDENTE, &pending_body());
    create(&app.a, PENDENTE, &pending_body());
    app.a
        .post_json(
            &format!("/api/solicitacao-consentimento/{}/revogar", active[0]),
            &serde_json::json!({"motivo": "Pedido do titular."}),
        )
        .expect(200);
    // one active consent expires in 10 days; one pending request's expiry passed (the
    // expiry job has not run yet: it is expired all the same); one has an integrity incident
    assert_eq!(
        change(
            &app,
            &format!(
                "UPDATE solicitacoes_consentimento SET data_expiracao_consentimento = \
                 now() + interval '10 days' WHERE id = '{}'",
                active[1]
            )
        ),
        1
    );
    assert_eq!(
        change(
            &app,
            &format!(
                "UPDATE solicitacoes_consentimento SET data_expiracao_consentimento = \
                 now() - interval '1 day' WHERE id = '{late}'"
            )
        ),
        1
    );
    assert_eq!(
        change(
            &app,
            &format!(
                "UPDATE solicitacoes_consentimento SET incidente_integridade_em = now() \
                 WHERE id = '{}'",
                active[2]
            )
        ),
        1
    );
    let disabled = register_disabled(&app, "https://a.example/desativada");
    change(
        &app,
        &format!(
            "UPDATE webhook_urls SET motivo_desativacao = 'falhas_sem_sucesso' \
             WHERE id = '{disabled}'"
        ),
    );
    // company B: more of everything, none of it on A's page
    for _ in 0..4 {
        let (id, _) = create(&app.b, ATIVO, &active_body_b());
        app.b
            .post_json(
                &format!("/api/solicitacao-consentimento/{id}/revogar"),
                &serde_json::json!({"motivo": "Pedido do titular."}),
            )
            .expect(200);
    }
    let b_url = app
        .b
        .post_json(
            "/api/webhook-urls",
            &serde_json::json!({"url": "https://b.example/desativada-de-b"}),
        )
        .expect(200)
        .data()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    change(
        &app,
        &format!("UPDATE webhook_urls SET desativado_em = now() WHERE id = '{b_url}'"),
    );

    // what PostgreSQL holds for A, counted here without the service
    let count = |filter: &str| {
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM solicitacoes_consentimento \
             WHERE empresa_id = '{a}' AND criacao = 'confirmada' AND {filter}"
        ))
    };
    let pending = count("status = 'pendente' AND data_expiracao_consentimento >= now()");
    let active_now = count("status = 'ativo' AND data_expiracao_consentimento >= now()");
    let expired = count(
        "(status = 'expirado' OR (status IN ('pendente', 'ativo') \
         AND data_expiracao_consentimento < now()))",
    );
    let revoked = count("status = 'revogado'");
    let expiring = count(
        "status = 'ativo' AND data_expiracao_consentimento >= now() \
         AND data_expiracao_consentimento < now() + interval '30 days'",
    );
    let incidents = count("incidente_integridade_em IS NOT NULL");
    let revocations = app.db.scalar(&format!(
        "SELECT count(*) AS v FROM solicitacoes_historico WHERE empresa_id = '{a}' \
         AND para = 'revogado' AND em >= now() - interval '7 days'"
    ));
    assert_eq!(
        (
            pending,
            active_now,
            expired,
            revoked,
            expiring,
            incidents,
            revocations
        ),
        (1, 2, 1, 1, 1, 1, 1),
        "the rows made above"
    );

    let mut dpo = Browser::new(&app.api.base_url);
    let home = dpo.sign_in(&issue_key_with_scopes(&app, a, "auditor"));
    home.assert_console_headers();
    for (label, code, n) in [
        ("Pendente", "pendente", pending),
        ("Ativo", "ativo", active_now),
        ("Recusado", "recusado", 0),
        ("Expirado", "expirado", expired),
        ("Revogado", "revogado", revoked),
    ] {
        assert!(
            home.body.contains(&status_row(label, code, &n.to_string())),
            "{label}: {}",
            home.body
        );
    }
    assert_eq!(
        figure_after(&home, "Consentimentos que expiram"),
        expiring.to_string()
    );
    assert_eq!(
        figure_after(&home, "Revogações nos últimos 7 dias"),
        revocations.to_string()
    );
    assert_eq!(
        figure_after(&home, "Incidentes de integridade"),
        incidents.to_string()
    );
    assert!(
        home.body.contains("https://a.example/desativada"),
        "{}",
        home.body
    );
    assert!(
        home.body
            .contains("todas as entregas falharam, sem nenhum sucesso"),
        "the reason by its label: {}",
        home.body
    );
    assert!(
        home.body.contains("Nenhum incidente aberto"),
        "{}",
        home.body
    );
    assert!(!home.body.contains("b.example"), "another company's URL");

    // B's DPO sees B's figures: 4 revoked, 4 revocations, no pending
    let mut dpo_b = Browser::new(&app.api.base_url);
    let home_b = dpo_b.sign_in(&issue_key_with_scopes(&app, b, "auditor"));
    assert!(
        home_b
            .body
            .contains(&status_row("Revogado", "revogado", "4")),
        "{}",
        home_b.body
    );
    assert!(home_b
        .body
        .contains(&status_row("Pendente", "pendente", "0")));
    assert_eq!(figure_after(&home_b, "Revogações nos últimos 7 dias"), "4");
    assert!(!home_b.body.contains("a.example"), "another company's URL");

    // the operator sees the disabled URL, not the request figures; a `consulta` key neither
    let mut operator = Browser::new(&app.api.base_url);
    let op_home = operator.sign_in(&issue_key_with_scopes(&app, a, "webhooks"));
    assert!(op_home.body.contains("https://a.example/desativada"));
    assert!(!op_home.body.contains("Revogações nos últimos 7 dias"));
    let mut reader = Browser::new(&app.api.base_url);
    let reader_home = reader.sign_in(&issue_key_with_scopes(&app, a, "consulta"));
    assert!(!reader_home.body.contains("Revogações nos últimos 7 dias"));
    assert!(!reader_home.body.contains("a.example/desativada"));
    assert!(reader_home.body.contains("Incidentes da PGCC"));
}

/// Company B's active-variant body (its own template).
fn active_body_b() -> serde_json::Value {
    let mut body = active_body();
    body["casoDeUsoIdTemplate"] = serde_json::json!("tpl-b-seguro");
    body
}

/// Each figure stops at 10,000 (LIMIT 10001): past it the page says "mais de 10.000", and the
/// read is the cap's, not the company's rows.
#[test]
fn a_figure_past_ten_thousand_says_more_than_ten_thousand() {
    let app = TestApp::synced();
    let (template, link) = first_use_case(&app, &app.company_a);
    diesel::connection::SimpleConnection::batch_execute(
        &mut app.db.conn(),
        &format!(
            "INSERT INTO solicitacoes_consentimento (id, empresa_id, caso_de_uso_id, \
             caso_de_uso_id_template, cpf_titular, tipo_titular, modalidade_acesso, \
             data_expiracao_consentimento, status, pgcc_id, hash, sal_hash, criado_em, \
             atualizado_em, criacao) \
         SELECT gen_random_uuid(), '{a}', '{link}', '{template}', '52998224725', 'PessoaFisica', \
             'Direto', now() + interval '1 year' + g * interval '1 minute', \
             CASE WHEN g > 20000 THEN 'pendente' ELSE 'ativo' END, 'inicio-' || g, \
             encode(sha256(g::text::bytea), 'hex'), md5(g::text), now(), now(), 'confirmada' \
         FROM generate_series(1, 70000) g",
            a = app.company_a
        ),
    )
    .unwrap();
    let mut dpo = Browser::new(&app.api.base_url);
    let home = dpo.sign_in(&issue_key_with_scopes(&app, &app.company_a, "auditor"));
    assert!(
        home.body
            .contains(&status_row("Pendente", "pendente", "mais de 10.000")),
        "{}",
        home.body
    );
    assert!(home
        .body
        .contains(&status_row("Ativo", "ativo", "mais de 10.000")));
    assert!(home.body.contains(&status_row("Recusado", "recusado", "0")));
    let mut other = Browser::new(&app.api.base_url);
    let home_b = other.sign_in(&issue_key_with_scopes(&app, &app.company_b, "auditor"));
    assert!(home_b
        .body
        .contains(&status_row("Pendente", "pendente", "0")));

    // the count reads the cap's index entries, index-only, not the company's rows (with the
    // statistics and visibility map autovacuum keeps after a bulk insert), when the matching
    // entries are many more than the cap (50,000 pending: were they about the cap, reading them
    // all in a bitmap is as cheap). Here nearly every row is the company's, so a sequential scan
    // stopped at the cap is as cheap too; among many companies' rows it is not: sequential
    // scans off, the index must serve it, reading no other status's entries (the pending ones
    // expire after 20,000 active ones).
    // VACUUM marks a page all-visible only when no running transaction could still see an older
    // version of it, and the cluster is shared with the other tests: it runs again until the
    // visibility map covers (nearly) the whole table, as autovacuum's would in time. Without it
    // the planner prices the index-only scan as heap reads, and its choice follows the load.
    let all_visible = testkit::wait_until(std::time::Duration::from_secs(120), || {
        diesel::connection::SimpleConnection::batch_execute(
            &mut app.db.conn(),
            "VACUUM ANALYZE solicitacoes_consentimento",
        )
        .unwrap();
        app.db
            .text(
                "SELECT (relallvisible >= 0.95 * relpages)::text AS v FROM pg_class \
                 WHERE relname = 'solicitacoes_consentimento'",
            )
            .as_deref()
            == Some("true")
    });
    assert!(all_visible, "VACUUM never made the table all-visible");
    diesel::connection::SimpleConnection::batch_execute(
        &mut app.db.conn(),
        "CREATE FUNCTION plano(q text) RETURNS text LANGUAGE plpgsql AS $$ \
         DECLARE r text; o text := ''; BEGIN \
         PERFORM set_config('enable_seqscan', 'off', true); \
         FOR r IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ' || q LOOP \
         o := o || r || chr(10); END LOOP; RETURN o; END $$",
    )
    .unwrap();
    let plan = app
        .db
        .text(&format!(
            "SELECT plano('SELECT count(*) FROM (SELECT 1 FROM solicitacoes_consentimento \
             WHERE empresa_id = ''{a}'' AND criacao = ''confirmada'' AND status = ''pendente'' \
             AND data_expiracao_consentimento >= now() \
             ORDER BY data_expiracao_consentimento LIMIT 10001) c') AS v",
            a = app.company_a
        ))
        .unwrap();
    assert!(
        plan.contains(
            "Index Only Scan using solicitacoes_consentimento_empresa_status_expiracao_idx"
        ) && plan.contains("Limit (actual rows=10001")
            && !plan.contains("Rows Removed"),
        "{plan}\n{:?}",
        app.db.text(
            "SELECT string_agg(indexname || ' ' || i.indisvalid::text, ', ') AS v FROM pg_indexes \
             JOIN pg_class c ON c.relname = indexname JOIN pg_index i ON i.indexrelid = c.oid \
             WHERE tablename = 'solicitacoes_consentimento'"
        )
    );
}

/// The `value` of the page's read-only secret field (shown once).
fn shown_secret(page: &Page) -> String {
    let at = page
        .body
        .find("id=\"segredo\"")
        .unwrap_or_else(|| panic!("no secret: {}", page.body));
    let rest = &page.body[at..];
    let v = rest.find("value=\"").unwrap() + "value=\"".len();
    rest[v..v + rest[v..].find('"').unwrap()].to_owned()
}

/// What PostgreSQL holds of the URL's last 24 h, as the page defines it: the attempts (in the
/// window) of its deliveries created in the window, their successes and median latency.
fn figures_in_db(app: &TestApp, url: &str) -> (i64, i64, i64) {
    let window = format!(
        "FROM webhook_tentativas t JOIN webhook_entregas e \
         ON e.empresa_id = t.empresa_id AND e.id = t.entrega_id \
         WHERE e.webhook_url_id = '{url}' AND e.criado_em >= now() - interval '24 hours' \
         AND t.em >= now() - interval '24 hours'"
    );
    (
        app.db.scalar(&format!("SELECT count(*) AS v {window}")),
        app.db.scalar(&format!(
            "SELECT count(*) AS v {window} AND t.status_http BETWEEN 200 AND 299"
        )),
        app.db.scalar(&format!(
            "SELECT coalesce(percentile_disc(0.5) WITHIN GROUP (ORDER BY t.latencia_ms), -1)::bigint \
             AS v {window}"
        )),
    )
}

#[test]
fn the_operator_adds_a_url_chooses_its_events_reads_its_health_and_resends_what_failed() {
    let app = TestApp::synced();
    let a = &app.company_a;
    let receiver = testkit::Receiver::start(&[]);
    let mut operator = Browser::new(&app.api.base_url);
    let home = operator.sign_in(&issue_key_with_scopes(&app, a, "webhooks"));
    let form = operator.get("/console/webhooks/nova");
    assert_eq!(form.status, 200, "{}", form.body);
    form.assert_console_headers();

    // without the session's token: nothing registered
    let refused = operator.post(
        "/console/webhooks/nova",
        &[("url", "https://a.example/sem-token"), ("selecao", "todos")],
    );
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        app.db.scalar(
            "SELECT count(*) AS v FROM webhook_urls WHERE url = 'https://a.example/sem-token'"
        ),
        0
    );
    // a wrong URL: the form again with why, nothing registered
    let wrong = operator.post(
        "/console/webhooks/nova",
        &[
            ("csrf", &home.csrf()),
            ("url", "ftp://x"),
            ("selecao", "todos"),
        ],
    );
    assert_eq!(wrong.status, 422, "{}", wrong.body);
    assert!(wrong.body.contains("role=\"alert\""), "{}", wrong.body);

    let added = operator.post(
        "/console/webhooks/nova",
        &[
            ("csrf", &home.csrf()),
            ("url", &receiver.url),
            ("selecao", "escolhidos"),
            ("eventos", "solicitacao.criada"),
            ("eventos", "solicitacao.revogada"),
        ],
    );
    assert_eq!(added.status, 200, "{}", added.body);
    assert!(shown_secret(&added).starts_with("whsec_"), "{}", added.body);
    let id = app
        .db
        .text(&format!(
            "SELECT id::text AS v FROM webhook_urls WHERE empresa_id = '{a}' \
             AND url = '{}' AND removido_em IS NULL \
             AND eventos @> ARRAY['solicitacao.criada', 'solicitacao.revogada'] \
             AND cardinality(eventos) = 2",
            receiver.url
        ))
        .expect("the URL added through the console, with its two event types");

    // its event types changed: only creations
    let chosen = operator.post(
        &format!("/console/webhooks/{id}/eventos"),
        &[
            ("csrf", &home.csrf()),
            ("selecao", "escolhidos"),
            ("eventos", "solicitacao.criada"),
        ],
    );
    assert_eq!(chosen.status, 303, "{}", chosen.body);
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM webhook_urls WHERE id = '{id}' \
             AND eventos = ARRAY['solicitacao.criada']"
        )),
        1
    );

    for _ in 0..3 {
        create(&app.a, ATIVO, &active_body());
    }
    assert_eq!(
        receiver
            .wait_for(3, std::time::Duration::from_secs(30))
            .len(),
        3
    );
    assert!(testkit::wait_until(
        std::time::Duration::from_secs(30),
        || app.db.scalar(&format!(
            "SELECT count(*) AS v FROM webhook_entregas WHERE webhook_url_id = '{id}' \
             AND status = 'entregue'"
        )) == 3
    ));
    let page = operator.get(&format!("/console/webhooks/{id}/entregas"));
    assert_eq!(page.status, 200, "{}", page.body);
    // each delivery's request body on demand, the CPF masked in it
    assert_eq!(page.body.matches("<pre>").count(), 3, "{}", page.body);
    assert!(!page.body.contains(CPF), "the subject's CPF in the page");
    let (attempts, successes, median) = figures_in_db(&app, &id);
    assert_eq!((attempts, successes), (3, 3));
    assert!(
        page.body
            .contains(&format!("100,0% ({successes} de {attempts})")),
        "{}",
        page.body
    );
    assert!(
        page.body.contains(&format!("<dd>{median} ms</dd>")),
        "{}",
        page.body
    );
    let last = app
        .db
        .text(&format!(
            "SELECT to_char(max(entregue_em) AT TIME ZONE 'UTC', \
             'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS v FROM webhook_entregas \
             WHERE webhook_url_id = '{id}'"
        ))
        .unwrap();
    assert!(
        page.body.contains(&format!("datetime=\"{last}\"")),
        "last success {last}: {}",
        page.body
    );

    // the three deliveries failed for good, one of them two days ago
    assert_eq!(
        change(
            &app,
            &format!(
                "UPDATE webhook_entregas SET status = 'falhou', entregue_em = NULL, \
                 proxima_tentativa_em = NULL WHERE webhook_url_id = '{id}'"
            )
        ),
        3
    );
    change(
        &app,
        &format!(
            "UPDATE webhook_entregas SET criado_em = now() - interval '2 days' WHERE id = \
             (SELECT id FROM webhook_entregas WHERE webhook_url_id = '{id}' LIMIT 1)"
        ),
    );
    let failed = operator.get(&format!("/console/webhooks/{id}/entregas?status=falhou"));
    assert_eq!(failed.body.matches("selo selo-falhou").count(), 3);
    let delivered = operator.get(&format!("/console/webhooks/{id}/entregas?status=entregue"));
    assert!(delivered.body.contains("Nenhuma entrega com estes filtros"));

    // another company's operator: not found, nothing replayed
    let mut other = Browser::new(&app.api.base_url);
    let other_home = other.sign_in(&issue_key_with_scopes(&app, &app.company_b, "webhooks"));
    assert_eq!(
        other
            .get(&format!("/console/webhooks/{id}/entregas"))
            .status,
        404
    );
    let an_hour_ago = (chrono::Utc::now() - chrono::Duration::hours(1))
        .with_timezone(&chrono::FixedOffset::west_opt(3 * 3600).unwrap())
        .format("%Y-%m-%dT%H:%M")
        .to_string();
    let theirs = other.post(
        &format!("/console/webhooks/{id}/reenviar-falhas"),
        &[("csrf", &other_home.csrf()), ("desde", &an_hour_ago)],
    );
    assert_eq!(theirs.status, 404, "{}", theirs.body);
    // without the token: nothing replayed
    let no_token = operator.post(
        &format!("/console/webhooks/{id}/reenviar-falhas"),
        &[("desde", &an_hour_ago)],
    );
    assert_eq!(no_token.status, 403);
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(receiver.received().len(), 3, "nothing resent yet");

    // every failed delivery since an hour ago (Brasília time): the two of today
    let resent = operator.post(
        &format!("/console/webhooks/{id}/reenviar-falhas"),
        &[("csrf", &home.csrf()), ("desde", &an_hour_ago)],
    );
    assert_eq!(resent.status, 303, "{}", resent.body);
    let back = resent.header("location").unwrap().to_owned();
    assert!(back.ends_with("reenviadas=2"), "{back}");
    assert!(operator
        .get(&back)
        .body
        .contains("2 entregas com falha reenviadas."));
    assert_eq!(
        receiver
            .wait_for(5, std::time::Duration::from_secs(30))
            .len(),
        5
    );
    assert!(testkit::wait_until(
        std::time::Duration::from_secs(30),
        || app.db.scalar(&format!(
            "SELECT count(*) AS v FROM webhook_entregas WHERE webhook_url_id = '{id}' \
             AND status = 'entregue'"
        )) == 2
    ));
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM webhook_entregas WHERE webhook_url_id = '{id}' \
             AND status = 'falhou' AND criado_em < now() - interval '1 day'"
        )),
        1,
        "the one before the time asked stays failed"
    );
    // the auditor reads the health, without the forms
    let mut dpo = Browser::new(&app.api.base_url);
    dpo.sign_in(&issue_key_with_scopes(&app, a, "auditor"));
    let read = dpo.get(&format!("/console/webhooks/{id}/entregas"));
    assert_eq!(read.status, 200);
    assert!(read.body.contains("Saúde nas últimas 24 horas"));
    assert!(!read.body.contains("reenviar-falhas"));
    assert_eq!(dpo.get("/console/webhooks/nova").status, 403);
}
