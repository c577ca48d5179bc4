//! Evidence files in an S3-compatible bucket (issue 37, part 5; docs/evidencias.md, "Storage"),
//! end to end: the real binary with `APP__EVIDENCIAS__S3_*` pointing at moto's server mode on a
//! free 127.0.0.1 port (testkit::moto), a real PostgreSQL, the PGCC simulator over HTTP. The
//! bucket is read through moto's own S3 API, never through the service. Without moto installed
//! the test fails, naming the install command.

use std::time::Duration;

use serde_json::Value;
use testkit::moto::Moto;
use testkit::wait_until;

use crate::audit_log::create_active;
use crate::evidence_files::{arquivo, arquivos, bytes, count, file_entries, part_rows, sha256};
use crate::helpers::*;

const BUCKET: &str = "evidencias-teste";
/// The bucket's secret: it must appear in no log of the service.
const SECRET: &str = "s3-secret-canary-7f3a9c";

/// Company B tries to link A's file by its hash in an import line: a line error, nothing linked.
fn import_naming(app: &TestApp, client: &testkit::Client, hash: &str) -> Value {
    let mut line = active_body();
    line["casoDeUsoIdTemplate"] = first_use_case(app, &app.company_b).0.into();
    line["idExterno"] = "papel-b-1".into();
    line["origem"] = "papel".into();
    line["dataTitularRespondeuConsentimento"] = "2019-03-01T10:00:00Z".into();
    line["arquivosSha256"] = serde_json::json!([hash]);
    let mut body = serde_json::to_vec(&line).unwrap();
    body.push(b'\n');
    client
        .post_raw("/api/importacoes", "application/x-ndjson", &body)
        .expect(202)
        .data()
        .clone()
}

#[test]
fn a_file_round_trips_through_the_bucket_under_its_company_and_retention_removes_the_object() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let env = [
        ("APP__EVIDENCIAS__S3_BUCKET", BUCKET),
        ("APP__EVIDENCIAS__S3_ENDPOINT", moto.endpoint.as_str()),
        ("APP__EVIDENCIAS__S3_REGION", "us-east-1"),
        ("APP__EVIDENCIAS__S3_ACCESS_KEY_ID", "testing"),
        ("APP__EVIDENCIAS__S3_SECRET_ACCESS_KEY", SECRET),
        ("APP__RETENTION__EVIDENCE_DAYS", "0"),
        ("APP__WORKERS__RETENTION_SECONDS", "1"),
    ];
    let (app, _) = crate::records::ready_with(&env);
    let id = create_active(&app);
    // two S3 parts (5 MiB and the rest), read back in 256 KiB ranges
    let pdf = bytes(6 * 1024 * 1024 + 12_345, 31);
    let hash = sha256(&pdf);
    let key = format!("{}/{hash}", app.company_a);

    let put = app
        .a
        .put_raw(&arquivos(&id), "application/pdf", &pdf)
        .expect(201);
    assert_eq!(put.data()["sha256"], hash.as_str());
    assert_eq!(put.data()["tamanho"], pdf.len());
    // the same bytes again, by their hash: nothing new
    app.a
        .put_raw(&arquivo(&id, &hash), "application/pdf", &pdf)
        .expect(200);

    // in the bucket, under the company's prefix, and nowhere else; nothing in PostgreSQL
    assert_eq!(moto.keys(BUCKET), std::slice::from_ref(&key));
    assert!(moto.multipart_uploads(BUCKET).is_empty());
    assert_eq!(
        moto.object(BUCKET, &key).as_deref(),
        Some(pdf.as_slice()),
        "the object holds the bytes uploaded"
    );
    assert_eq!(part_rows(&app), 0);
    assert_eq!(
        app.db
            .text("SELECT armazenamento AS v FROM evidencias_arquivos")
            .as_deref(),
        Some("s3")
    );

    let list = app.a.get(&arquivos(&id)).expect(200);
    let items = list.data()["itens"].as_array().unwrap().clone();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["sha256"], hash.as_str());
    let auditor = crate::scopes::key_with_scopes(&app, &app.company_a, "auditor");
    let got = auditor.get(&arquivo(&id, &hash));
    assert_eq!(got.status, 200);
    assert_eq!(got.body.len(), pdf.len());
    assert!(
        got.body == pdf,
        "the bytes downloaded are the bytes uploaded"
    );
    assert_eq!(got.header("x-content-type-options"), Some("nosniff"));

    // the record lists the file and still validates (DPV terms, the 27560 shapes)
    crate::records::check_record(&app, &id);

    // company B: neither A's request, nor A's file through its own request, nor a link by hash
    let b_auditor = crate::scopes::key_with_scopes(&app, &app.company_b, "auditor");
    b_auditor.get(&arquivo(&id, &hash)).expect(404);
    app.b.get(&arquivos(&id)).expect(404);
    let mut body_b = active_body();
    body_b["casoDeUsoIdTemplate"] = first_use_case(&app, &app.company_b).0.into();
    let id_b = app.b.post_json(ATIVO, &body_b).expect(200).data()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    b_auditor.get(&arquivo(&id_b, &hash)).expect(404);
    let import = import_naming(&app, &app.b, &hash);
    assert_eq!(import["falhas"], 1, "{import}");
    assert_eq!(
        count(
            &app,
            &format!(
                "SELECT count(*) AS v FROM solicitacoes_arquivos WHERE empresa_id = '{}'",
                app.company_b
            )
        ),
        0
    );

    // bytes that are not the named hash: 422, and no object nor multipart upload left behind
    // (big enough for a part to have gone to the bucket before the hash was known)
    let other = bytes(5 * 1024 * 1024 + 10, 32);
    let wrong = sha256(b"not these bytes");
    let r = app
        .a
        .put_raw(&format!("/api/arquivos/{wrong}"), "image/png", &other)
        .expect(422);
    assert_eq!(error_fields(&r), ["sha256"]);
    assert_eq!(moto.keys(BUCKET), std::slice::from_ref(&key));
    assert!(moto.multipart_uploads(BUCKET).is_empty());
    assert_eq!(
        count(&app, "SELECT count(*) AS v FROM evidencias_arquivos"),
        1
    );

    // retention: kept while the consent is open; once revoked, the object goes, the row and the
    // log entry stay, and a download answers 410
    std::thread::sleep(Duration::from_secs(3));
    assert!(moto.object(BUCKET, &key).is_some());
    app.a
        .post_json(
            &format!("/api/solicitacao-consentimento/{id}/revogar"),
            &serde_json::json!({}),
        )
        .expect(200);
    let deleted = wait_until(Duration::from_secs(30), || {
        count(
            &app,
            "SELECT count(*) AS v FROM evidencias_arquivos WHERE bytes_apagados_em IS NOT NULL",
        ) == 1
            && moto.object(BUCKET, &key).is_none()
    });
    assert!(deleted, "retention did not delete the object");
    assert!(moto.keys(BUCKET).is_empty(), "{:?}", moto.keys(BUCKET));
    let gone = auditor.get(&arquivo(&id, &hash)).expect(410);
    assert_eq!(gone.json["sucesso"], false);
    let list = app.a.get(&arquivos(&id)).expect(200);
    assert!(list.data()["itens"][0]["bytesApagadosEm"].is_string());
    assert_eq!(file_entries(&app, &id).len(), 1, "the log entry stays");

    // the secret is in no log the service wrote
    let log = std::fs::read_to_string(&app.api.log).unwrap_or_default();
    assert!(!log.contains(SECRET), "the bucket's secret is in the log");
}

/// `consent-api config check` with exactly `env` (and the config folder).
fn config_check(env: &[(&str, &str)]) -> std::process::Output {
    std::process::Command::new(testkit::processes::bin_path("consent-api"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env(
            "APP_CONFIG_DIR",
            testkit::processes::repo_root().join("config"),
        )
        .env("APP_ENV", "test")
        .envs(env.iter().copied())
        .args(["config", "check"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run consent-api")
}

#[test]
fn config_check_validates_the_bucket_settings_and_never_shows_the_secret() {
    let all = [
        ("APP__EVIDENCIAS__S3_BUCKET", "evidencias"),
        (
            "APP__EVIDENCIAS__S3_ENDPOINT",
            "https://s3.sa-east-1.amazonaws.com",
        ),
        ("APP__EVIDENCIAS__S3_REGION", "sa-east-1"),
        ("APP__EVIDENCIAS__S3_ACCESS_KEY_ID", "AKIAEXAMPLE"),
        ("APP__EVIDENCIAS__S3_SECRET_ACCESS_KEY", SECRET),
    ];
    let out = config_check(&all);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("s3_secret_access_key = \"<hidden>\""),
        "{stdout}"
    );
    assert!(!stdout.contains(SECRET) && !stderr.contains(SECRET));
    assert!(
        stderr.contains("files kept in the bucket evidencias"),
        "{stderr}"
    );

    // all or none; plain HTTP only to this host
    let bucket_only = config_check(&all[..1]);
    let plain_remote = config_check(&[
        all[0],
        ("APP__EVIDENCIAS__S3_ENDPOINT", "http://s3.example"),
        all[2],
        all[3],
        all[4],
    ]);
    for refused in [bucket_only, plain_remote] {
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(!refused.status.success(), "accepted: {stderr}");
        assert!(stderr.contains("evidencias.s3_*"), "{stderr}");
        assert!(!stderr.contains(SECRET));
    }
}
