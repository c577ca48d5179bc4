//! Evidence files (issue 37, part 5; docs/evidencias.md), end to end: the real binary, a real
//! PostgreSQL, the PGCC simulator over HTTP. A file is uploaded to a request (or to the company's
//! store first), listed, downloaded by an auditor (recorded in the access log), named in the
//! request's log (and `audit verify` still passes) and record, kept within its company, and its
//! bytes deleted by retention while its row and log entry stay.

use std::time::Duration;

use serde_json::Value;
use sha2::{Digest, Sha256};
use testkit::processes::cli;
use testkit::wait_until;

use crate::audit_log::{create_active, proofs_covering};
use crate::helpers::*;

pub(crate) fn arquivos(id: &str) -> String {
    format!("/api/solicitacao-consentimento/{id}/arquivos")
}

pub(crate) fn arquivo(id: &str, sha256: &str) -> String {
    format!("/api/solicitacao-consentimento/{id}/arquivos/{sha256}")
}

/// `n` bytes that do not repeat within a part (so a part written out of place would show).
pub(crate) fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_be_bytes()[0] ^ seed)
        .collect()
}

pub(crate) fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub(crate) fn count(app: &TestApp, sql: &str) -> i64 {
    app.db.scalar(sql)
}

fn file_rows(app: &TestApp) -> i64 {
    count(app, "SELECT count(*) AS v FROM evidencias_arquivos")
}

pub(crate) fn part_rows(app: &TestApp) -> i64 {
    count(app, "SELECT count(*) AS v FROM evidencias_partes")
}

/// The request's log entries naming a file, as their JSON.
pub(crate) fn file_entries(app: &TestApp, id: &str) -> Vec<Value> {
    let rows = app.db.text(&format!(
        "SELECT coalesce(json_agg(convert_from(entrada, 'UTF8')::json ORDER BY transacao, posicao), '[]')::text AS v \
         FROM auditoria_entradas WHERE solicitacao_id = '{id}' \
         AND convert_from(entrada, 'UTF8')::json->>'causa' = 'arquivo'"
    ));
    serde_json::from_str::<Vec<Value>>(&rows.unwrap()).unwrap()
}

#[test]
fn a_file_round_trips_through_postgresql_with_its_log_entry_access_record_and_record() {
    let (app, _) = crate::records::ready_with(&[]);
    let id = create_active(&app);
    // three parts of 256 KiB, the last short
    let pdf = bytes(600 * 1024, 7);
    let hash = sha256(&pdf);

    let put = app
        .a
        .put_raw(&arquivos(&id), "application/pdf", &pdf)
        .expect(201);
    assert_eq!(put.data()["sha256"], hash.as_str());
    assert_eq!(put.data()["tamanho"], pdf.len());
    assert_eq!(put.data()["tipo"], "application/pdf");
    assert_eq!(put.data()["bytesApagadosEm"], Value::Null);
    assert_eq!(part_rows(&app), 3);
    // the same bytes again: nothing new, 200
    app.a
        .put_raw(&arquivos(&id), "application/pdf", &pdf)
        .expect(200);
    app.a
        .put_raw(&arquivo(&id, &hash), "application/pdf", &pdf)
        .expect(200);
    assert_eq!((file_rows(&app), part_rows(&app)), (1, 3));

    let list = app.a.get(&arquivos(&id)).expect(200);
    let items = list.data()["itens"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["sha256"], hash.as_str());

    // the bytes are the auditor's: a default key gets 403
    assert_eq!(app.a.get(&arquivo(&id, &hash)).status, 403);
    let auditor = crate::scopes::key_with_scopes(&app, &app.company_a, "auditor");
    let got = auditor.get(&arquivo(&id, &hash));
    assert_eq!(got.status, 200);
    assert_eq!(got.body, pdf, "the bytes downloaded are the bytes uploaded");
    assert_eq!(got.content_type, "application/pdf");
    assert_eq!(
        got.header("content-disposition"),
        Some(format!("attachment; filename=\"{hash}.pdf\"").as_str())
    );
    assert_eq!(got.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(
        count(
            &app,
            &format!(
                "SELECT count(*) AS v FROM acessos_dados_pessoais \
                 WHERE rota = '/api/solicitacao-consentimento/{{id}}/arquivos/{{sha256}}' \
                 AND solicitacao_ids = ARRAY['{id}'::uuid]"
            )
        ),
        1,
        "the download is recorded in the access log"
    );

    // one log entry for the link, a non-move naming the file
    let entries = file_entries(&app, &id);
    assert_eq!(entries.len(), 1, "{entries:?}");
    let entry = &entries[0];
    assert_eq!(entry["arquivoSha256"], hash.as_str());
    assert_eq!(entry["arquivoTamanho"], pdf.len().to_string());
    assert_eq!(entry["arquivoTipo"], "application/pdf");
    assert_eq!(entry["statusAnterior"], "ativo");
    assert_eq!(entry["status"], "ativo");
    // signed, and the whole log still verifies
    proofs_covering(&app, &id, 2);
    let verified = cli(&app.db, &app.sim, &["audit", "verify"]);
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stderr)
    );
    // a revocation after the file still follows the chain
    app.a
        .post_json(
            &format!("/api/solicitacao-consentimento/{id}/revogar"),
            &serde_json::json!({}),
        )
        .expect(200);
    proofs_covering(&app, &id, 3);
    let verified = cli(&app.db, &app.sim, &["audit", "verify"]);
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stderr)
    );

    // the record lists the file
    let record = app.a.get_accept(
        &format!("/api/solicitacao-consentimento/{id}/registro"),
        Some("application/ld+json"),
    );
    assert_eq!(record.status, 200, "{}", record.text);
    let sources = record.json["dct:source"].as_array().unwrap();
    assert_eq!(sources.len(), 1);
    assert_eq!(sources[0]["dct:identifier"], format!("sha256:{hash}"));
    assert_eq!(sources[0]["dct:format"], "application/pdf");
    assert_eq!(
        sources[0]["dpv:hasDataVolume"]["dct:identifier"],
        format!("{} bytes", pdf.len())
    );
}

#[test]
fn bytes_that_are_not_the_named_hash_are_422_and_nothing_is_stored() {
    let app = TestApp::synced();
    let id = create_active(&app);
    let png = bytes(1000, 3);
    let wrong = sha256(b"something else");
    let r = app
        .a
        .put_raw(&arquivo(&id, &wrong), "image/png", &png)
        .expect(422);
    assert_eq!(error_fields(&r), ["sha256"]);
    let r = app
        .a
        .put_raw(&format!("/api/arquivos/{wrong}"), "image/png", &png)
        .expect(422);
    assert_eq!(error_fields(&r), ["sha256"]);
    // not a hash at all
    app.a
        .put_raw(&arquivo(&id, "abc"), "image/png", &png)
        .expect(422);
    assert_eq!((file_rows(&app), part_rows(&app)), (0, 0));
    assert!(file_entries(&app, &id).is_empty());

    // the right hash, in upper case too: stored once
    let right = sha256(&png);
    app.a
        .put_raw(&arquivo(&id, &right.to_uppercase()), "image/png", &png)
        .expect(201);
    assert_eq!((file_rows(&app), part_rows(&app)), (1, 1));
    assert_eq!(file_entries(&app, &id).len(), 1);
}

#[test]
fn a_file_over_the_limit_is_413_and_a_type_not_listed_is_415_and_nothing_is_stored() {
    let app = TestApp::spawn_with(&[("APP__EVIDENCIAS__MAX_BYTES", "300000")]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let id = create_active(&app);
    let big = bytes(300_001, 1);
    let r = app.a.put_raw(&arquivos(&id), "video/mp4", &big).expect(413);
    assert_eq!(r.json["sucesso"], false);
    app.a
        .put_raw(
            &format!("/api/arquivos/{}", sha256(&big)),
            "video/mp4",
            &big,
        )
        .expect(413);
    app.a
        .put_raw(&arquivos(&id), "text/html", b"<script>alert(1)</script>")
        .expect(415);
    assert_eq!((file_rows(&app), part_rows(&app)), (0, 0));
    assert!(file_entries(&app, &id).is_empty());
    // at the limit it is taken
    let at = bytes(300_000, 1);
    app.a.put_raw(&arquivos(&id), "video/mp4", &at).expect(201);
    assert_eq!(file_rows(&app), 1);
}

#[test]
fn another_company_can_neither_download_nor_list_nor_link_a_file_it_did_not_upload() {
    let app = TestApp::synced();
    let id_a = create_active(&app);
    let pdf = bytes(5000, 9);
    let hash = sha256(&pdf);
    app.a
        .put_raw(&arquivos(&id_a), "application/pdf", &pdf)
        .expect(201);
    app.a
        .put_raw(&format!("/api/arquivos/{hash}"), "application/pdf", &pdf)
        .expect(200);

    let b_auditor = crate::scopes::key_with_scopes(&app, &app.company_b, "auditor");
    // A's request, through B's keys
    b_auditor.get(&arquivo(&id_a, &hash)).expect(404);
    app.b.get(&arquivos(&id_a)).expect(404);
    app.b
        .put_raw(&arquivos(&id_a), "application/pdf", &pdf)
        .expect(404);
    // B's own request, naming A's file: not B's
    let mut body_b = active_body();
    body_b["casoDeUsoIdTemplate"] = first_use_case(&app, &app.company_b).0.into();
    let id_b = app.b.post_json(ATIVO, &body_b).expect(200).data()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    b_auditor.get(&arquivo(&id_b, &hash)).expect(404);
    assert!(app.b.get(&arquivos(&id_b)).expect(200).data()["itens"]
        .as_array()
        .unwrap()
        .is_empty());
    assert!(file_entries(&app, &id_b).is_empty());
    // B uploading the same bytes gets a file of its own: two rows, two objects
    app.b
        .put_raw(&arquivos(&id_b), "application/pdf", &pdf)
        .expect(201);
    assert_eq!(file_rows(&app), 2);
    assert_eq!(
        count(
            &app,
            "SELECT count(DISTINCT objeto_id) AS v FROM evidencias_arquivos"
        ),
        2
    );
}

#[test]
fn retention_deletes_the_bytes_and_keeps_the_row_and_the_log_entry() {
    let app = TestApp::spawn_with(&[
        ("APP__RETENTION__EVIDENCE_DAYS", "0"),
        ("APP__WORKERS__RETENTION_SECONDS", "1"),
    ]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let id = create_active(&app);
    let jpeg = bytes(2000, 5);
    let hash = sha256(&jpeg);
    app.a
        .put_raw(&arquivos(&id), "image/jpeg", &jpeg)
        .expect(201);
    let auditor = crate::scopes::key_with_scopes(&app, &app.company_a, "auditor");
    // kept while the consent is open
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(auditor.get(&arquivo(&id, &hash)).status, 200);

    app.a
        .post_json(
            &format!("/api/solicitacao-consentimento/{id}/revogar"),
            &serde_json::json!({}),
        )
        .expect(200);
    let deleted = wait_until(Duration::from_secs(20), || {
        count(
            &app,
            "SELECT count(*) AS v FROM evidencias_arquivos WHERE bytes_apagados_em IS NOT NULL",
        ) == 1
    });
    assert!(deleted, "retention did not delete the bytes");
    assert_eq!(part_rows(&app), 0);
    let gone = auditor.get(&arquivo(&id, &hash)).expect(410);
    assert_eq!(gone.json["sucesso"], false);
    let list = app.a.get(&arquivos(&id)).expect(200);
    assert!(list.data()["itens"][0]["bytesApagadosEm"].is_string());
    assert_eq!(file_entries(&app, &id).len(), 1, "the log entry stays");
}

#[test]
fn an_import_line_links_the_files_uploaded_first_and_another_companys_hash_is_a_line_error() {
    let app = TestApp::synced();
    let pdf = bytes(3000, 11);
    let hash = sha256(&pdf);
    app.a
        .put_raw(&format!("/api/arquivos/{hash}"), "application/pdf", &pdf)
        .expect(201);
    // company B's file, whose hash A knows
    let others = bytes(3000, 12);
    let others_hash = sha256(&others);
    app.b
        .put_raw(
            &format!("/api/arquivos/{others_hash}"),
            "application/pdf",
            &others,
        )
        .expect(201);

    let line = |id_externo: &str, files: Value| {
        let mut l = active_body();
        l["idExterno"] = id_externo.into();
        l["origem"] = "papel".into();
        l["dataTitularRespondeuConsentimento"] = "2019-03-01T10:00:00Z".into();
        l["arquivosSha256"] = files;
        serde_json::to_vec(&l).unwrap()
    };
    let mut body = line("papel-1", serde_json::json!([hash.to_uppercase()]));
    body.push(b'\n');
    body.extend(line("papel-2", serde_json::json!([others_hash])));
    body.push(b'\n');
    let r = app
        .a
        .post_raw("/api/importacoes", "application/x-ndjson", &body)
        .expect(202);
    assert_eq!(r.data()["validas"], 1);
    assert_eq!(r.data()["falhas"], 1);
    let import = r.data()["id"].as_str().unwrap().to_owned();
    let errors = app.a.get(&format!("/api/importacoes/{import}/erros"));
    assert_eq!(errors.status, 200);
    assert!(
        errors.text.contains("\"linha\":2") && errors.text.contains("arquivosSha256[0]"),
        "{}",
        errors.text
    );

    let linked = wait_until(Duration::from_secs(60), || {
        count(&app, "SELECT count(*) AS v FROM solicitacoes_arquivos") == 1
    });
    assert!(linked, "the imported request never got its file");
    let id = app
        .db
        .text("SELECT solicitacao_id::text AS v FROM solicitacoes_arquivos")
        .unwrap();
    let items = app.a.get(&arquivos(&id)).expect(200);
    assert_eq!(items.data()["itens"][0]["sha256"], hash.as_str());
    assert_eq!(file_entries(&app, &id).len(), 1);
    // B's file stays B's alone
    assert_eq!(
        count(
            &app,
            &format!(
                "SELECT count(*) AS v FROM solicitacoes_arquivos WHERE sha256 = '{others_hash}'"
            )
        ),
        0
    );
}

#[test]
fn parts_of_uploads_cut_short_are_swept_once_two_days_old_and_nothing_else() {
    use diesel::RunQueryDsl;
    let app = TestApp::spawn_with(&[("APP__WORKERS__RETENTION_SECONDS", "1")]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let id = create_active(&app);
    // a file of three parts, named by its row: it stays, however old its parts
    let pdf = bytes(600 * 1024, 21);
    app.a
        .put_raw(&arquivos(&id), "application/pdf", &pdf)
        .expect(201);
    let company = &app.company_a;
    let mut conn = app.db.conn();
    diesel::sql_query(format!(
        "UPDATE evidencias_partes SET criado_em = now() - interval '30 days' \
         WHERE empresa_id = '{company}'"
    ))
    .execute(&mut conn)
    .unwrap();
    // the file's three parts, counted before the abandoned ones come: the purge may take
    // those at once
    assert_eq!(part_rows(&app), 3);
    // what a process killed mid-upload leaves: parts no row names, three days old; and the
    // parts of an upload an hour old (it may still be under way): kept
    let inserted = diesel::sql_query(format!(
        "INSERT INTO evidencias_partes (empresa_id, objeto_id, indice, bytes, criado_em) VALUES \
         ('{company}', '00000000-0000-4000-8000-0000000000a1', 0, '\\x0102', now() - interval '3 days'), \
         ('{company}', '00000000-0000-4000-8000-0000000000a1', 1, '\\x0304', now() - interval '3 days'), \
         ('{company}', '00000000-0000-4000-8000-0000000000b2', 0, '\\x0506', now() - interval '1 hour')"
    ))
    .execute(&mut conn)
    .unwrap();
    assert_eq!(inserted, 3);
    let swept = wait_until(Duration::from_secs(20), || {
        count(
            &app,
            "SELECT count(*) AS v FROM evidencias_partes \
             WHERE objeto_id = '00000000-0000-4000-8000-0000000000a1'",
        ) == 0
    });
    assert!(
        swept,
        "the retention purge did not delete the abandoned parts"
    );
    assert_eq!(
        count(
            &app,
            "SELECT count(*) AS v FROM evidencias_partes \
             WHERE objeto_id = '00000000-0000-4000-8000-0000000000b2'"
        ),
        1,
        "an upload younger than the bound is left alone"
    );
    assert_eq!(part_rows(&app), 4, "the file's own parts stay");
    let auditor = crate::scopes::key_with_scopes(&app, &app.company_a, "auditor");
    let got = auditor.get(&arquivo(&id, &sha256(&pdf)));
    assert_eq!(got.status, 200);
    assert_eq!(got.body, pdf);
}
