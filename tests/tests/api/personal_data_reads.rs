//! The record of who read personal data (issue 24, part 7): every answer with a full CPF or a
//! proof is recorded (key id, route template, request ids and salted hashes, time) before it is
//! sent; `GET /api/auditoria/acessos` pages it for `auditor` keys; the retention purge deletes old
//! rows. The table never holds a CPF.

use std::time::Duration;

use diesel::RunQueryDsl;
use serde_json::{json, Value};

use crate::helpers::*;
use crate::lifecycle::{create, synced_with};
use crate::scopes::key_with_scopes;

const ACESSOS: &str = "/api/auditoria/acessos";

/// The id of company `empresa`'s first key (the one `TestApp` issued).
fn first_key_id(app: &TestApp, empresa: &str) -> String {
    app.db
        .text(&format!(
            "SELECT id::text AS v FROM api_keys WHERE empresa_id = '{empresa}' \
             ORDER BY criado_em LIMIT 1"
        ))
        .unwrap()
}

/// `(api_key_id, rota, solicitacao_ids, hashes)` of every recorded read, oldest first.
fn recorded(app: &TestApp) -> Vec<(String, String, String, String)> {
    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Text)]
        api_key_id: String,
        #[diesel(sql_type = diesel::sql_types::Text)]
        rota: String,
        #[diesel(sql_type = diesel::sql_types::Text)]
        ids: String,
        #[diesel(sql_type = diesel::sql_types::Text)]
        hashes: String,
    }
    diesel::sql_query(
        "SELECT api_key_id::text AS api_key_id, rota, \
         array_to_string(solicitacao_ids, ',') AS ids, array_to_string(hashes, ',') AS hashes \
         FROM acessos_dados_pessoais ORDER BY em, id",
    )
    .load::<Row>(&mut app.db.conn())
    .unwrap()
    .into_iter()
    .map(|r| (r.api_key_id, r.rota, r.ids, r.hashes))
    .collect()
}

fn hash_of(app: &TestApp, id: &str) -> String {
    app.db
        .text(&format!(
            "SELECT hash AS v FROM solicitacoes_consentimento WHERE id = '{id}'"
        ))
        .unwrap()
}

fn itens(reply: &testkit::Reply) -> Vec<Value> {
    reply.data()["itens"].as_array().unwrap().clone()
}

#[test]
fn a_read_with_mostrar_cpf_records_the_key_the_route_template_and_the_request() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "0")]);
    let (pending, _) = create(&app.a, PENDENTE, &pending_body());
    let key_id = first_key_id(&app, &app.company_a);

    // no full CPF, no proof (a pending request has none): nothing to record
    app.a
        .get(&format!("/api/solicitacao-consentimento/{pending}"))
        .expect(200);
    app.a.get("/api/solicitacao-consentimento").expect(200);
    assert!(recorded(&app).is_empty(), "{:?}", recorded(&app));

    let read = app
        .a
        .get_with(
            &format!("/api/solicitacao-consentimento/{pending}?mostrarCpf=true"),
            &[("X-Request-Id", "leitura-com-cpf")],
        )
        .expect(200);
    assert_eq!(read.data()["cpfTitular"], CPF_DIGITS);

    assert_eq!(
        recorded(&app),
        [(
            key_id.clone(),
            "/api/solicitacao-consentimento/{id}".to_owned(),
            pending.clone(),
            hash_of(&app, &pending)
        )]
    );

    // a read of an active request carries its proof: recorded without mostrarCpf too
    let (active, _) = create(&app.a, ATIVO, &active_body());
    app.a
        .get(&format!("/api/solicitacao-consentimento/{active}"))
        .expect(200);
    // and the list page that carries that proof records the page's items
    app.a.get("/api/solicitacao-consentimento").expect(200);
    let rows = recorded(&app);
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(rows[1].2, active);
    assert_eq!(rows[2].1, "/api/solicitacao-consentimento");
    assert_eq!(rows[2].2, format!("{pending},{active}"));

    // what an auditor reads
    let auditor = key_with_scopes(&app, &app.company_a, "auditor");
    let page = auditor.get(ACESSOS).expect(200);
    let first = &itens(&page)[0];
    assert_eq!(first["apiKeyId"], key_id.as_str());
    assert_eq!(first["rota"], "/api/solicitacao-consentimento/{id}");
    assert_eq!(first["solicitacaoIds"], json!([pending]));
    assert_eq!(first["hashes"], json!([hash_of(&app, &pending)]));
    assert!(first["em"].is_string());
}

#[test]
fn the_export_records_the_salted_hashes_and_the_table_never_holds_the_cpf() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "0")]);
    let (active, _) = create(&app.a, ATIVO, &active_body());
    let (pending, _) = create(&app.a, PENDENTE, &pending_body());

    app.a
        .post_json("/api/titulares/consentimentos", &json!({"cpfTitular": CPF}))
        .expect(200);
    // a subject with no consent: the read still happened
    app.a
        .post_json(
            "/api/titulares/consentimentos",
            &json!({"cpfTitular": "111.444.777-35"}),
        )
        .expect(200);

    let rows = recorded(&app);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0].1, "/api/titulares/consentimentos");
    assert_eq!(rows[0].2, format!("{active},{pending}"));
    assert_eq!(
        rows[0].3,
        format!("{},{}", hash_of(&app, &active), hash_of(&app, &pending))
    );
    assert_eq!((rows[1].2.as_str(), rows[1].3.as_str()), ("", ""));
    for cpf in cpf_forms(CPF_DIGITS)
        .into_iter()
        .chain(cpf_forms("11144477735"))
    {
        let found = app.db.scalar(&format!(
            "SELECT count(*) AS v FROM acessos_dados_pessoais a \
             WHERE row_to_json(a)::text LIKE '%{cpf}%'"
        ));
        assert_eq!(found, 0, "a CPF in the access log");
    }
}

#[test]
fn the_record_pages_by_cursor_and_filters_by_key_and_period() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "0")]);
    let (id, _) = create(&app.a, PENDENTE, &pending_body());
    let path = format!("/api/solicitacao-consentimento/{id}?mostrarCpf=true");
    for _ in 0..3 {
        app.a.get(&path).expect(200);
    }
    let key_id = first_key_id(&app, &app.company_a);
    let auditor = key_with_scopes(&app, &app.company_a, "auditor");

    let first = auditor.get(&format!("{ACESSOS}?limite=2")).expect(200);
    assert_eq!(itens(&first).len(), 2);
    let cursor = first.data()["proximoCursor"].as_str().unwrap().to_owned();
    let second = auditor
        .get(&format!("{ACESSOS}?limite=2&cursor={cursor}"))
        .expect(200);
    let rest = itens(&second);
    // the third read, then the auditor's own read of the first page
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert_eq!(rest[0]["apiKeyId"], key_id.as_str());
    assert_eq!(rest[1]["rota"], ACESSOS);
    assert_ne!(rest[1]["apiKeyId"], key_id.as_str());
    assert_eq!(second.data()["proximoCursor"], Value::Null);
    let mut seen: Vec<Value> = itens(&first)
        .into_iter()
        .chain(rest)
        .map(|i| i["id"].clone())
        .collect();
    seen.dedup();
    assert_eq!(seen.len(), 4, "no item twice");

    let by_key = auditor
        .get(&format!("{ACESSOS}?apiKeyId={key_id}"))
        .expect(200);
    assert_eq!(itens(&by_key).len(), 3);
    assert!(itens(&by_key)
        .iter()
        .all(|i| i["apiKeyId"] == key_id.as_str()));
    let future = auditor
        .get(&format!("{ACESSOS}?de=2999-01-01T00:00:00Z"))
        .expect(200);
    assert!(itens(&future).is_empty());
    let bad = auditor
        .get(&format!("{ACESSOS}?apiKeyId=x&cursor=garbage&limite=0"))
        .expect(422);
    assert_eq!(error_fields(&bad), ["apiKeyId", "cursor", "limite"]);
}

#[test]
fn another_companys_record_is_not_visible() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "0")]);
    let mut body = pending_body();
    body["casoDeUsoIdTemplate"] = json!("tpl-b-seguro");
    let b_created = app.b.post_json(PENDENTE, &body).expect(200);
    let b_id = b_created.data()["id"].as_str().unwrap().to_owned();
    app.b
        .get(&format!(
            "/api/solicitacao-consentimento/{b_id}?mostrarCpf=true"
        ))
        .expect(200);
    assert_eq!(recorded(&app).len(), 1);

    let auditor_a = key_with_scopes(&app, &app.company_a, "auditor");
    let page = auditor_a.get(ACESSOS).expect(200);
    assert!(itens(&page).is_empty(), "{}", page.text);
    let b_key = first_key_id(&app, &app.company_b);
    let filtered = auditor_a
        .get(&format!("{ACESSOS}?apiKeyId={b_key}"))
        .expect(200);
    assert!(itens(&filtered).is_empty());
}

#[test]
fn records_older_than_the_retention_are_purged() {
    let app = synced_with(&[
        ("APP__WORKERS__STATUS_POLL_SECONDS", "0"),
        ("APP__WORKERS__RETENTION_SECONDS", "1"),
        ("APP__RETENTION__ACCESS_LOG_DAYS", "1"),
    ]);
    let (id, _) = create(&app.a, PENDENTE, &pending_body());
    let path = format!("/api/solicitacao-consentimento/{id}?mostrarCpf=true");
    app.a.get(&path).expect(200);
    app.a.get(&path).expect(200);
    let aged = diesel::sql_query(
        "UPDATE acessos_dados_pessoais SET em = now() - interval '2 days' \
         WHERE id = (SELECT id FROM acessos_dados_pessoais ORDER BY em LIMIT 1)",
    )
    .execute(&mut app.db.conn())
    .unwrap();
    assert_eq!(aged, 1);

    let purged = testkit::wait_until(Duration::from_secs(20), || {
        app.db
            .scalar("SELECT count(*) AS v FROM acessos_dados_pessoais")
            == 1
    });
    assert!(purged, "the old record was not purged");
    assert_eq!(
        app.db.scalar(
            "SELECT count(*) AS v FROM acessos_dados_pessoais WHERE em > now() - interval '1 day'"
        ),
        1,
        "the young one stays"
    );
}

/// Issue 39: two reads of personal data were not recorded. The list filtered by `cpfTitular`
/// (masked CPFs, no proof: a pending request, or nothing found) reads one subject's requests,
/// and finding none tells something of the subject too; and a revocation's kept answer, which
/// carries the proof, replayed under its `Idempotency-Key` by another key of the company.
#[test]
fn a_list_by_subject_and_a_revocations_replay_by_another_key_are_recorded() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "0")]);
    let (pending, _) = create(&app.a, PENDENTE, &pending_body());
    let key_id = first_key_id(&app, &app.company_a);
    let list = "/api/solicitacao-consentimento".to_owned();

    let found = app
        .a
        .get(&format!("{list}?cpfTitular={CPF_DIGITS}&status=pendente"))
        .expect(200);
    assert_eq!(itens(&found).len(), 1);
    let none = app
        .a
        .get(&format!("{list}?cpfTitular={CPF_DIGITS}&status=recusado"))
        .expect(200);
    assert!(itens(&none).is_empty());
    assert_eq!(
        recorded(&app),
        [
            (
                key_id.clone(),
                list.clone(),
                pending.clone(),
                hash_of(&app, &pending)
            ),
            (key_id.clone(), list.clone(), String::new(), String::new()),
        ]
    );

    // a revocation (a write: not recorded), then its answer replayed to another key
    let (active, _) = create(&app.a, ATIVO, &active_body());
    let path = format!("{list}/{active}/revogar");
    let body = json!({"motivo": "Pedido do titular."});
    let first = app
        .a
        .post_json_with(&path, &body, &[("Idempotency-Key", "revogacao-39")])
        .expect(200);
    assert!(first.data()["provaColeta"].is_string(), "{}", first.text);
    assert_eq!(recorded(&app).len(), 2);
    let other = key_with_scopes(&app, &app.company_a, "integracao");
    let other_id = app
        .db
        .text(&format!(
            "SELECT id::text AS v FROM api_keys WHERE empresa_id = '{}' \
             ORDER BY criado_em DESC LIMIT 1",
            app.company_a
        ))
        .unwrap();
    assert_ne!(other_id, key_id);
    let replay = other
        .post_json_with(&path, &body, &[("Idempotency-Key", "revogacao-39")])
        .expect(200);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.data()["provaColeta"], first.data()["provaColeta"]);
    let rows = recorded(&app);
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(
        rows[2],
        (
            other_id,
            "/api/solicitacao-consentimento/{id}/revogar".to_owned(),
            active.clone(),
            hash_of(&app, &active)
        )
    );
}
