//! Every pooled connection carries the configured limits: a statement running past
//! `statement_timeout` is cancelled by PostgreSQL and answered `Unavailable` (a 503 with
//! Retry-After, not a 500); migrations are not cut by it; without prepared statements the
//! repositories work the same.

mod common;

use std::time::{Duration, Instant};

use chrono::TimeDelta;
use diesel::sql_types::Text;
use diesel::RunQueryDsl;
use domain::ConsentStatus;
use ports::{ApiKeyRepository, ConsentRequestRepository, RepoError, UseCaseRepository};
use postgres_adapter::{
    connect, run_migrations, with_conn, PgApiKeyRepository, PgConsentRequestRepository, PgPool,
    PgStatusCheckSchedule, PgUseCaseRepository, PoolSettings, SessionSettings, MIGRATIONS,
};
use testkit::TestDb;

#[derive(diesel::QueryableByName)]
struct Setting {
    #[diesel(sql_type = Text)]
    value: String,
}

fn limited_pool(db: &TestDb, statement_timeout: Duration, prepared_statements: bool) -> PgPool {
    connect(
        db.url(),
        &PoolSettings {
            max_size: 2,
            checkout_timeout: Duration::from_secs(10),
            session: SessionSettings {
                statement_timeout,
                idle_in_transaction_timeout: Duration::from_secs(7),
                prepared_statements,
                generic_plans: false,
            },
        },
    )
    .expect("build the pool")
}

fn show(pool: &PgPool, name: &'static str) -> String {
    with_conn(pool, "showing a setting", |conn| {
        diesel::sql_query(format!("SELECT current_setting('{name}') AS value"))
            .get_result::<Setting>(conn)
    })
    .unwrap()
    .value
}

#[test]
fn a_pooled_connection_has_the_configured_statement_and_idle_in_transaction_timeouts() {
    let db = TestDb::new();
    let pool = limited_pool(&db, Duration::from_millis(1500), true);

    assert_eq!(show(&pool, "statement_timeout"), "1500ms");
    assert_eq!(show(&pool, "idle_in_transaction_session_timeout"), "7s");
    let shown = with_conn(&pool, "show", |conn| {
        diesel::sql_query("SHOW statement_timeout").get_result::<StatementTimeout>(conn)
    })
    .unwrap();
    assert_eq!(shown.statement_timeout, "1500ms");
}

#[test]
fn a_pool_with_generic_plans_plans_its_statements_once_and_others_keep_postgresqls_choice() {
    let db = TestDb::new();
    let generic = connect(
        db.url(),
        &PoolSettings {
            max_size: 1,
            checkout_timeout: Duration::from_secs(10),
            session: SessionSettings {
                generic_plans: true,
                ..SessionSettings::default()
            },
        },
    )
    .unwrap();

    assert_eq!(show(&generic, "plan_cache_mode"), "force_generic_plan");
    assert_eq!(
        show(&generic, "statement_timeout"),
        "5s",
        "and the other bounds"
    );
    assert_eq!(
        show(
            &limited_pool(&db, Duration::from_secs(5), true),
            "plan_cache_mode"
        ),
        "auto"
    );
}

#[derive(diesel::QueryableByName)]
struct StatementTimeout {
    #[diesel(sql_type = Text)]
    statement_timeout: String,
}

#[test]
fn a_statement_past_the_timeout_is_cancelled_and_answered_unavailable() {
    let db = TestDb::new();
    let pool = limited_pool(&db, Duration::from_millis(200), true);
    let started = Instant::now();

    let result = with_conn(&pool, "sleeping", |conn| {
        diesel::sql_query("SELECT pg_sleep(5)").execute(conn)
    });

    let elapsed = started.elapsed();
    match result {
        Err(RepoError::Unavailable(e)) => {
            assert!(format!("{e:#}").contains("statement timeout"), "{e:#}")
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    // the connection is still good for the next call
    assert_eq!(show(&pool, "statement_timeout"), "200ms");
}

#[test]
fn a_repository_call_stuck_behind_a_lock_is_unavailable_after_the_timeout() {
    let db = TestDb::new();
    let pool = limited_pool(&db, Duration::from_millis(300), true);
    let acme = common::create_company(&pool, "Acme", "112223330001");
    let keys = PgApiKeyRepository::new(pool.clone());
    let key = ports::ApiKeyRecord {
        id: uuid::Uuid::new_v4(),
        company_id: acme.id,
        hash: "ab".repeat(32),
        prefixo: "cak_0123".to_owned(),
        created_at: common::now(),
        scopes: domain::Scopes::DEFAULT,
    };
    keys.insert(&key).unwrap();
    let mut holder = db.conn();
    diesel::Connection::begin_test_transaction(&mut holder).unwrap();
    diesel::sql_query(format!(
        "SELECT 1 FROM api_keys WHERE id = '{}' FOR UPDATE",
        key.id
    ))
    .execute(&mut holder)
    .unwrap();

    let result = keys.revoke(key.id, common::now());

    assert!(
        matches!(result, Err(RepoError::Unavailable(_))),
        "{result:?}"
    );
}

/// The key of the migrations' advisory lock (migrations.rs).
const MIGRATION_LOCK_KEY: i64 = 0x636f_6e73_656e_7401;

#[test]
fn migrations_wait_past_the_statement_timeout_and_leave_the_pooled_connection_limited() {
    let db = TestDb::new();
    diesel_migrations::MigrationHarness::revert_all_migrations(&mut db.conn(), MIGRATIONS).unwrap();
    let pool = limited_pool(&db, Duration::from_millis(200), true);
    // another replica migrating: it holds the lock for 800 ms, four statement timeouts
    let mut other = db.conn();
    diesel::sql_query(format!("SELECT pg_advisory_lock({MIGRATION_LOCK_KEY})"))
        .execute(&mut other)
        .unwrap();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(800));
        diesel::sql_query(format!("SELECT pg_advisory_unlock({MIGRATION_LOCK_KEY})"))
            .execute(&mut other)
            .unwrap();
    });
    let started = Instant::now();

    let applied = run_migrations(&pool).unwrap();

    assert!(
        started.elapsed() >= Duration::from_millis(700),
        "it waited for the lock"
    );
    releaser.join().unwrap();
    let shipped = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../migrations"))
        .unwrap()
        .count();
    assert_eq!(applied.len(), shipped, "{applied:?}");
    assert_eq!(show(&pool, "statement_timeout"), "200ms");
}

#[test]
fn without_prepared_statements_the_repositories_answer_the_same() {
    let db = TestDb::new();
    let pool = limited_pool(&db, Duration::from_secs(5), false);
    let acme = common::create_company(&pool, "Acme", "112223330001");
    let use_cases = PgUseCaseRepository::new(pool.clone());

    for _ in 0..3 {
        assert_eq!(use_cases.list(acme.id, None).unwrap(), vec![]);
        assert_eq!(use_cases.find_by_template(acme.id, "tpl-1").unwrap(), None);
    }
    let named = with_conn(&pool, "counting prepared statements", |conn| {
        diesel::sql_query("SELECT count(*)::text AS value FROM pg_prepared_statements")
            .get_result::<Setting>(conn)
    })
    .unwrap();
    assert_eq!(named.value, "0", "no named statement was prepared");
}

#[test]
fn without_prepared_statements_the_hand_written_statements_run_unnamed() {
    // the statement! declarations (creation, confirmation with its event, claims, expiry) have
    // static query ids; with the statement cache off they still run, as unnamed statements
    let db = TestDb::new();
    let pool = limited_pool(&db, Duration::from_secs(5), false);
    let acme = common::consent::tenant(&pool, "Acme", "112223330001");
    let repo = PgConsentRequestRepository::new(pool.clone());
    let now = common::now();
    let spec = |status| {
        common::consent::Spec::new(now - TimeDelta::days(2))
            .status(status)
            .expira_em(now - TimeDelta::days(1))
    };

    for _ in 0..3 {
        acme.create(&repo, &spec(ConsentStatus::Active));
    }
    let pending = acme.create(&repo, &spec(ConsentStatus::Pending));
    let unfinished = acme.request(&spec(ConsentStatus::Active));
    repo.begin_creation(&unfinished, now - TimeDelta::hours(1))
        .unwrap();

    let claimed = common::consent::claim_checks(
        &PgStatusCheckSchedule::new(pool.clone()),
        10,
        now + TimeDelta::minutes(1),
        now + TimeDelta::hours(1),
    );
    let reconciled = repo
        .claim_unfinished_creations(10, now - TimeDelta::minutes(1), now)
        .unwrap();
    let expired = repo.expire_due(now, 10).unwrap();

    assert_eq!(claimed.len(), 4);
    assert_eq!(
        reconciled.iter().map(|c| c.id).collect::<Vec<_>>(),
        [unfinished.id]
    );
    assert_eq!(expired, 4);
    let stored = repo.get(acme.company.id, pending.id).unwrap().unwrap();
    assert_eq!(stored.request.status, ConsentStatus::Expired);
    assert_eq!(stored.history.len(), 2, "created, then expired");
    let named = with_conn(&pool, "counting prepared statements", |conn| {
        diesel::sql_query("SELECT count(*)::text AS value FROM pg_prepared_statements")
            .get_result::<Setting>(conn)
    })
    .unwrap();
    assert_eq!(named.value, "0", "no named statement was prepared");
}
