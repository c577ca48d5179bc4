use testkit::processes::{bin_path, cli, single_line};
use testkit::{Sim, TestDb};

use crate::helpers::*;

#[test]
fn company_create_and_api_key_issue_print_one_value_each_and_store_only_the_keys_hash() {
    let db = TestDb::new();
    let sim = Sim::start(&seed());
    let out = cli(
        &db,
        &sim,
        &["company", "create", "--nome", "Empresa A", "--cnpj", CNPJ_A],
    );
    assert!(out.status.success());
    let id = single_line(&out.stdout);
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");
    assert_eq!(
        db.text(&format!("SELECT cnpj AS v FROM empresas WHERE id = '{id}'"))
            .as_deref(),
        Some("11222333000181")
    );

    let out = cli(&db, &sim, &["api-key", "issue", "--empresa", &id]);
    assert!(out.status.success());
    let key = single_line(&out.stdout);
    assert!(
        key.starts_with("cak_") && key.len() >= 4 + 32,
        "at least 128 random bits: {key}"
    );
    let stored = db.scalar(&format!(
        "SELECT count(*) AS v FROM api_keys WHERE empresa_id = '{id}' AND hash <> '{key}' AND position('{key}' in hash) = 0"
    ));
    assert_eq!(stored, 1, "one key, stored as a hash only");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains(&key),
        "the key is printed on stdout only"
    );

    let again = cli(&db, &sim, &["api-key", "issue", "--empresa", &id]);
    assert_ne!(single_line(&again.stdout), key, "every key is new");
}

#[test]
fn a_duplicate_or_invalid_cnpj_is_refused_with_a_clear_error() {
    let db = TestDb::new();
    let sim = Sim::start(&seed());
    assert!(cli(
        &db,
        &sim,
        &["company", "create", "--nome", "A", "--cnpj", CNPJ_A]
    )
    .status
    .success());
    let dup = cli(
        &db,
        &sim,
        &[
            "company",
            "create",
            "--nome",
            "A2",
            "--cnpj",
            "11222333000181",
        ],
    );
    assert!(!dup.status.success());
    assert!(String::from_utf8_lossy(&dup.stderr).contains("already exists"));
    let bad = cli(
        &db,
        &sim,
        &[
            "company",
            "create",
            "--nome",
            "X",
            "--cnpj",
            "11.222.333/0001-82",
        ],
    );
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cnpj"));
    assert_eq!(db.scalar("SELECT count(*) AS v FROM empresas"), 1);
}

#[test]
fn issuing_a_key_for_an_unknown_company_fails() {
    let db = TestDb::new();
    let sim = Sim::start(&seed());
    let out = cli(
        &db,
        &sim,
        &[
            "api-key",
            "issue",
            "--empresa",
            "7d0f7a56-6a36-4c43-9d0e-3b8c8f1b9a11",
        ],
    );
    assert!(!out.status.success());
    assert_eq!(db.scalar("SELECT count(*) AS v FROM api_keys"), 0);
}

#[test]
fn a_bad_config_value_stops_start_up_with_one_line_naming_the_key() {
    let out = std::process::Command::new(bin_path("consent-api"))
        .env("APP_ENV", "test")
        .env("APP__SERVER__PORT", "not-a-port")
        .arg("serve")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("server.port"), "{err}");

    let out = std::process::Command::new(bin_path("consent-api"))
        .env("APP_ENV", "test")
        .env("APP__PGCC__BASE_URL", "ftp://pgcc")
        .arg("migrate")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("APP__PGCC__BASE_URL"), "{err}");

    let out = std::process::Command::new(bin_path("consent-api"))
        .env("APP_ENV", "prod")
        .arg("migrate")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("APP_ENV"));
}

#[test]
fn migrate_applies_the_migrations_to_an_empty_database() {
    let tpl = TestDb::new();
    let sim = Sim::start(&seed());
    // An empty database next to the test one.
    let empty = format!("{}_empty", tpl.name());
    {
        use diesel::{Connection, RunQueryDsl};
        let mut admin = diesel::PgConnection::establish(&testkit::db::admin_url()).unwrap();
        diesel::sql_query(format!("CREATE DATABASE \"{empty}\""))
            .execute(&mut admin)
            .unwrap();
    }
    let url = testkit::db::with_database(tpl.url(), &empty);
    let out = std::process::Command::new(bin_path("consent-api"))
        .env("APP_ENV", "test")
        .env(
            "APP_CONFIG_DIR",
            testkit::processes::repo_root().join("config"),
        )
        .env("APP__DATABASE__URL", &url)
        .env("APP__PGCC__BASE_URL", &sim.base_url)
        .arg("migrate")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    {
        use diesel::{Connection, RunQueryDsl};
        let mut conn = diesel::PgConnection::establish(&url).unwrap();
        diesel::sql_query("SELECT 1 FROM empresas, casos_de_uso, solicitacoes_consentimento, webhook_urls, api_keys LIMIT 1")
            .execute(&mut conn)
            .unwrap();
        drop(conn);
        let mut admin = diesel::PgConnection::establish(&testkit::db::admin_url()).unwrap();
        diesel::sql_query(format!("DROP DATABASE \"{empty}\" WITH (FORCE)"))
            .execute(&mut admin)
            .unwrap();
    }
}
