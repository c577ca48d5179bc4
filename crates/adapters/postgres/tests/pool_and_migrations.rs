mod common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_migrations::MigrationHarness;
use domain::CompanyId;
use ports::{CompanyRepository, RepoError, UseCaseRepository};
use postgres_adapter::{
    connect, run_migrations, PgCompanyRepository, PgUseCaseRepository, PoolSettings, MIGRATIONS,
};
use testkit::TestDb;
use uuid::Uuid;

const TABLES: [&str; 5] = [
    "api_keys",
    "casos_de_uso",
    "empresas",
    "solicitacoes_consentimento",
    "webhook_urls",
];

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

fn tables(conn: &mut PgConnection) -> Vec<String> {
    diesel::sql_query(
        "SELECT table_name::text AS name FROM information_schema.tables \
         WHERE table_schema = 'public' AND table_name <> '__diesel_schema_migrations' \
         ORDER BY table_name",
    )
    .load::<Name>(conn)
    .unwrap()
    .into_iter()
    .map(|t| t.name)
    .collect()
}

/// A port where nothing listens: bound, then released.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn a_pool_pointed_at_a_closed_port_answers_unavailable_quickly() {
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", closed_port());
    let settings = PoolSettings {
        max_size: 2,
        checkout_timeout: Duration::from_millis(500),
    };
    let pool = connect(&url, &settings).expect("building the pool does not connect");
    let started = Instant::now();

    let result = PgUseCaseRepository::new(pool.clone()).list(CompanyId(Uuid::new_v4()), None);

    let elapsed = started.elapsed();
    assert!(
        matches!(result, Err(RepoError::Unavailable(_))),
        "{result:?}"
    );
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    let created = PgCompanyRepository::new(pool).create(&common::company("ACME", "112223330001"));
    assert!(
        matches!(
            created,
            Err(ports::CreateCompanyError::Repo(RepoError::Unavailable(_)))
        ),
        "{created:?}"
    );
}

#[test]
fn invalid_pool_settings_are_refused() {
    let zero_size = PoolSettings {
        max_size: 0,
        checkout_timeout: Duration::from_secs(1),
    };
    let zero_timeout = PoolSettings {
        max_size: 1,
        checkout_timeout: Duration::ZERO,
    };

    assert!(connect("postgres://localhost/x", &zero_size).is_err());
    assert!(connect("postgres://localhost/x", &zero_timeout).is_err());
}

#[test]
fn every_migration_reverts_and_applies_again() {
    let db = TestDb::new();
    let mut conn = db.conn();
    assert_eq!(tables(&mut conn), TABLES);

    let reverted = conn.revert_all_migrations(MIGRATIONS).unwrap();
    assert_eq!(reverted.len(), 5);
    assert_eq!(tables(&mut conn), Vec::<String>::new());

    let applied = conn.run_pending_migrations(MIGRATIONS).unwrap();
    assert_eq!(applied.len(), 5);
    assert_eq!(tables(&mut conn), TABLES);
}

#[test]
fn run_migrations_applies_the_pending_ones_by_name_and_then_nothing() {
    let db = TestDb::new();
    db.conn().revert_all_migrations(MIGRATIONS).unwrap();
    let pool = common::pool(&db);

    let applied = run_migrations(&pool).unwrap();
    let again = run_migrations(&pool).unwrap();

    assert_eq!(
        applied,
        [
            "2026-11-21-000001_create_empresas",
            "2026-11-21-000002_create_api_keys",
            "2026-11-21-000003_create_casos_de_uso",
            "2026-11-21-000004_create_solicitacoes_consentimento",
            "2026-11-21-000005_create_webhook_urls",
        ]
    );
    assert_eq!(again, Vec::<String>::new());
    assert_eq!(tables(&mut db.conn()), TABLES);
    let locks = diesel::sql_query(
        "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' \
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    )
    .get_result::<Count>(&mut db.conn())
    .unwrap();
    assert_eq!(locks.n, 0, "the migration lock is released");
}
