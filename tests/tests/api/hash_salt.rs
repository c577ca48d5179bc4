//! The salted hash (issue 14): stored hashes are migrated to the salted canonical content, the
//! unsalted one a company may have kept still names its consent, and the salt is shown only
//! beside the whole CPF.

use diesel::connection::SimpleConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use serde_json::json;

use crate::helpers::*;
use crate::lifecycle::{create, documented_hash, synced_with};

const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../migrations");
const SALT_MIGRATION: &str = "20261127001471";

fn read_whole(app: &TestApp, id: &str) -> serde_json::Value {
    app.a
        .get(&format!(
            "/api/solicitacao-consentimento/{id}?mostrarCpf=true"
        ))
        .expect(200)
        .data()
        .clone()
}

#[test]
fn a_hash_stored_before_salts_is_recomputed_salted_and_still_names_its_consent() {
    if testkit::citus::one_node_only(
        "it reverts the schema to before the salt (2026-11-27), older than the tables keyed by \
         company that Citus distributes; a database is distributed after its backfills are done \
         (docs/scaling.md)",
    ) {
        return;
    }
    let mut app = synced_with(&[]);
    let mut body = active_body();
    // every escape of the canonical content: quotes, a backslash, a newline, non-ASCII
    body["provaColeta"] = json!("aceite \"eletrônico\" \\ linha 1\nlinha 2\ttab");
    let (id, _) = create(&app.a, ATIVO, &body);
    let before = read_whole(&app, &id);
    let unsalted = documented_hash(&before, &app.company_a, &id, false);

    // back to the schema before the salt, with the hash as it was computed then
    app.api.kill();
    let mut conn = app.db.conn();
    while conn
        .applied_migrations()
        .unwrap()
        .iter()
        .any(|v| v.to_string() == SALT_MIGRATION)
    {
        conn.revert_last_migration(MIGRATIONS).unwrap();
    }
    conn.batch_execute(&format!(
        "UPDATE solicitacoes_consentimento SET hash = '{unsalted}' WHERE id = '{id}'"
    ))
    .unwrap();
    drop(conn);
    // `migrate` applies the migrations, then backfills the salt (in batches, outside them)
    let out = std::process::Command::new(testkit::processes::bin_path("consent-api"))
        .env("APP_ENV", "test")
        .env(
            "APP_CONFIG_DIR",
            testkit::processes::repo_root().join("config"),
        )
        .env("APP__DATABASE__URL", app.db.url())
        .arg("migrate")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("backfill sal_hash: "), "{err}");
    app.restart_api(&[]);

    let after = read_whole(&app, &id);
    let salt = after["salHash"].as_str().unwrap();
    assert_eq!(salt.len(), 32);
    assert_ne!(after["hash"], unsalted.as_str());
    assert_eq!(
        after["hash"].as_str().unwrap(),
        documented_hash(&after, &app.company_a, &id, true),
        "the migration writes the canonical content as the service does"
    );
    for hash in [unsalted.as_str(), after["hash"].as_str().unwrap()] {
        let found = app.a.get(&format!("/api/hash-consulta/{hash}")).expect(200);
        assert_eq!(found.data()["id"], id.as_str());
        assert_eq!(found.data()["hash"], after["hash"]);
        assert!(
            !found.text.contains(&unsalted),
            "the old hash is never shown"
        );
    }
    // another company's old hash names nothing
    app.b
        .get(&format!("/api/hash-consulta/{unsalted}"))
        .expect(404);
}

#[test]
fn each_request_draws_its_own_salt() {
    let app = synced_with(&[]);
    let (first, _) = create(&app.a, PENDENTE, &pending_body());
    let (second, _) = create(&app.a, PENDENTE, &pending_body());
    let (first, second) = (read_whole(&app, &first), read_whole(&app, &second));
    assert_ne!(first["salHash"], second["salHash"]);
    assert_ne!(first["hash"], second["hash"]);
}
