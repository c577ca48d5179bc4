//! What the in-process caches rely on: the change feed (LISTEN/NOTIFY, sent by the service's
//! writers in their transactions) tells each committed change that can make a cached value
//! stale, and nothing else; a connection
//! scope makes a request's repository calls share one pooled connection.

mod common;

use std::time::{Duration, Instant};

use common::{create_company, now, pool};
use domain::PgccUseCase;
use ports::{
    ApiKeyRecord, ApiKeyRepository, CacheChange, ChangeFeed, PgccConsentCreated, PgccConsentStatus,
    PgccError, PgccGateway, PgccNewConsent, UseCaseRepository,
};
use postgres_adapter::{
    holds_connection, PgApiKeyRepository, PgChangeFeed, PgConnectionScope, PgPool,
    PgUseCaseRepository, ReleasingPgcc,
};
use testkit::TestDb;
use uuid::Uuid;

/// Everything the feed tells within `within` (stops early once `expect` changes arrived).
fn collect(feed: &mut PgChangeFeed, expect: usize, within: Duration) -> Vec<CacheChange> {
    let deadline = Instant::now() + within;
    let mut all = Vec::new();
    while Instant::now() < deadline && all.len() < expect {
        all.extend(feed.next_changes(Duration::from_millis(100)).unwrap());
    }
    all
}

fn connected(db: &TestDb) -> PgChangeFeed {
    let mut feed = PgChangeFeed::new(db.url(), pool(db));
    assert_eq!(
        feed.next_changes(Duration::from_millis(10)).unwrap(),
        vec![CacheChange::Everything],
        "the first answer after connecting is: everything may have changed"
    );
    feed
}

fn stored_key(repo: &PgApiKeyRepository, empresa: &domain::Company) -> ApiKeyRecord {
    let record = ApiKeyRecord {
        id: Uuid::new_v4(),
        company_id: empresa.id,
        hash: format!("{:064x}", Uuid::new_v4().as_u128()),
        prefixo: "cak_0123".to_owned(),
        created_at: now(),
        scopes: domain::Scopes::DEFAULT,
    };
    repo.insert(&record).unwrap();
    record
}

#[test]
fn a_revocation_is_told_as_a_change_of_the_keys_company_and_a_last_use_is_not() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "Acme", "112223330001");
    let other = create_company(&pool, "Other", "445556660001");
    let keys = PgApiKeyRepository::new(pool.clone());
    let key = stored_key(&keys, &acme);
    stored_key(&keys, &other);
    let mut feed = connected(&db);

    // a use moves ultimo_uso_em forward: nothing cached depends on it
    assert!(keys.record_use(key.id, now(), now()).unwrap());
    assert_eq!(collect(&mut feed, 1, Duration::from_millis(300)), vec![]);

    keys.revoke(key.id, now()).unwrap();

    assert_eq!(
        collect(&mut feed, 1, Duration::from_secs(3)),
        vec![CacheChange::Company(acme.id)]
    );
}

#[test]
fn an_issued_key_is_told_and_a_rolled_back_change_is_not() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "Acme", "112223330001");
    let keys = PgApiKeyRepository::new(pool.clone());
    let mut feed = connected(&db);

    let key = stored_key(&keys, &acme);
    assert_eq!(
        collect(&mut feed, 1, Duration::from_secs(3)),
        vec![CacheChange::Company(acme.id)],
        "no process keeps refusing the new key from its memory of unknown keys"
    );
    // the same key again is refused by its unique hash: its transaction rolls back, untold
    assert!(keys.insert(&key).is_err());
    assert_eq!(collect(&mut feed, 1, Duration::from_millis(300)), vec![]);
}

#[test]
fn a_change_by_hand_is_told_by_the_notification_the_operator_sends_with_it() {
    // no trigger tells the caches (issue 23: a database distributed by company cannot have
    // them); docs/operations.md, "Caches", gives the operator the statement to send
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "Acme", "112223330001");
    let keys = PgApiKeyRepository::new(pool.clone());
    let key = stored_key(&keys, &acme);
    let mut feed = connected(&db);

    db.scalar(&format!(
        "WITH u AS (UPDATE api_keys SET revogado_em = now() WHERE id = '{}' RETURNING 1) \
         SELECT count(*) AS v FROM u",
        key.id
    ));
    assert_eq!(
        collect(&mut feed, 1, Duration::from_millis(300)),
        vec![],
        "the SQL alone tells nothing"
    );
    db.scalar(&format!(
        "SELECT count(pg_notify('consent_api_cache', '{}')) AS v",
        acme.id.0
    ));
    db.scalar("SELECT count(pg_notify('consent_api_cache', '*')) AS v");

    assert_eq!(
        collect(&mut feed, 2, Duration::from_secs(3)),
        vec![CacheChange::Company(acme.id), CacheChange::Everything]
    );
}

#[test]
fn a_synchronization_is_told_once_for_its_company_however_many_rows_it_writes() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "Acme", "112223330001");
    let use_cases = PgUseCaseRepository::new(pool.clone());
    let items: Vec<PgccUseCase> = (0..50)
        .map(|i| PgccUseCase {
            link_id: Uuid::from_u128(7),
            template_id: format!("tpl-{i}"),
            title: format!("Caso {i}"),
            other_fields: "{}".to_owned(),
        })
        .collect();
    let mut feed = connected(&db);

    use_cases.apply_sync(acme.id, &items, now()).unwrap();

    let changes = collect(&mut feed, 2, Duration::from_millis(800));
    assert_eq!(changes, vec![CacheChange::Company(acme.id)]);
}

#[test]
fn a_feed_whose_database_is_unreachable_fails_and_answers_everything_once_connected() {
    // nothing listens on port 1
    let db = TestDb::new();
    let mut feed = PgChangeFeed::new("postgres://postgres@127.0.0.1:1/none", pool(&db));
    assert!(feed.next_changes(Duration::from_millis(10)).is_err());

    let mut feed = PgChangeFeed::new(db.url(), pool(&db));
    assert_eq!(
        feed.next_changes(Duration::from_millis(10)).unwrap(),
        vec![CacheChange::Everything]
    );
    assert_eq!(
        feed.next_changes(Duration::from_millis(10)).unwrap(),
        vec![]
    );
}

#[test]
fn repository_calls_in_a_scope_share_one_connection_until_it_closes_or_is_released() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "Acme", "112223330001");
    let use_cases = PgUseCaseRepository::new(pool.clone());
    let keys = PgApiKeyRepository::new(pool.clone());
    let in_use = || {
        let state = pool.state();
        state.connections - state.idle_connections
    };
    let backend_pids = || {
        db.scalar(
            "SELECT count(DISTINCT pid) AS v FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
    };
    assert_eq!(in_use(), 0);

    {
        let _scope = PgConnectionScope.enter();
        use_cases.list(acme.id, None).unwrap();
        assert!(holds_connection(), "kept for the next call");
        assert_eq!(in_use(), 1);
        keys.find_by_hash(&"ab".repeat(32)).unwrap();
        use_cases.find_by_template(acme.id, "tpl-1").unwrap();
        assert_eq!(in_use(), 1, "the same connection served every call");

        PgConnectionScope.release();
        assert!(!holds_connection());
        assert_eq!(in_use(), 0, "released, e.g. before a PGCC call");
        use_cases.list(acme.id, None).unwrap();
        assert_eq!(in_use(), 1, "checked out again by the next call");
    }

    assert!(!holds_connection());
    assert_eq!(in_use(), 0, "back in the pool when the scope closes");
    assert!(backend_pids() <= 2, "the pool opened at most its size");
}

/// A PGCC that notes, at each call, how many of the pool's connections are in use.
struct CountingPgcc {
    pool: PgPool,
    in_use_at_calls: std::sync::Mutex<Vec<(&'static str, u32)>>,
}

impl CountingPgcc {
    fn note(&self, operation: &'static str) {
        let state = self.pool.state();
        self.in_use_at_calls
            .lock()
            .unwrap()
            .push((operation, state.connections - state.idle_connections));
    }
}

impl PgccGateway for CountingPgcc {
    fn list_use_cases(&self, _: &domain::Cnpj) -> Result<Vec<PgccUseCase>, PgccError> {
        self.note("list_use_cases");
        Ok(Vec::new())
    }

    fn create_consent_request(&self, _: &PgccNewConsent) -> Result<PgccConsentCreated, PgccError> {
        self.note("create_consent_request");
        Err(PgccError::Timeout)
    }

    fn consent_statuses(&self, _: &[String]) -> Result<Vec<PgccConsentStatus>, PgccError> {
        self.note("consent_statuses");
        Ok(Vec::new())
    }

    fn revoke_consent_request(&self, _: &str) -> Result<(), PgccError> {
        self.note("revoke_consent_request");
        Err(PgccError::Rejected { status: 409 })
    }

    fn find_by_external_reference(
        &self,
        _: &domain::Cnpj,
        _: Uuid,
    ) -> Result<Option<PgccConsentCreated>, PgccError> {
        self.note("find_by_external_reference");
        Ok(None)
    }
}

#[test]
fn a_request_holds_no_connection_while_it_waits_on_the_pgcc() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "Acme", "112223330001");
    let use_cases = PgUseCaseRepository::new(pool.clone());
    let counting = std::sync::Arc::new(CountingPgcc {
        pool: pool.clone(),
        in_use_at_calls: Default::default(),
    });
    let pgcc = ReleasingPgcc::new(counting.clone());
    let in_use = || {
        let state = pool.state();
        state.connections - state.idle_connections
    };

    PgConnectionScope.run(|| {
        use_cases.list(acme.id, None).unwrap();
        assert_eq!(in_use(), 1, "the request's connection, kept between calls");
        assert!(
            pgcc.revoke_consent_request("pgcc-1").is_err(),
            "answers forwarded"
        );
        use_cases.list(acme.id, None).unwrap();
        pgcc.consent_statuses(&["pgcc-1".to_owned()]).unwrap();
        use_cases.list(acme.id, None).unwrap();
        assert!(pgcc
            .find_by_external_reference(&acme.cnpj, Uuid::nil())
            .unwrap()
            .is_none());
        assert_eq!(in_use(), 0, "and not taken again by the PGCC call");
    });

    assert_eq!(
        *counting.in_use_at_calls.lock().unwrap(),
        vec![
            ("revoke_consent_request", 0),
            ("consent_statuses", 0),
            ("find_by_external_reference", 0)
        ],
        "every PGCC call ran with the request's connection back in the pool"
    );
    // outside a scope (the background jobs) it only forwards
    pgcc.list_use_cases(&acme.cnpj).unwrap();
    assert_eq!(counting.in_use_at_calls.lock().unwrap().len(), 4);
}

#[test]
fn without_a_scope_each_call_returns_its_connection() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "Acme", "112223330001");
    let use_cases = PgUseCaseRepository::new(pool.clone());

    use_cases.list(acme.id, None).unwrap();

    let state = pool.state();
    assert_eq!(state.connections - state.idle_connections, 0);
    assert!(!holds_connection());
}

#[test]
fn a_feed_that_does_not_hear_what_the_pool_sends_fails_instead_of_trusting_the_caches() {
    // listening on one database while the pool writes to another: as LISTEN through a
    // transaction-mode pooler, the connection works and hears nothing
    let listened = TestDb::new();
    let written = TestDb::new();
    let mut feed = PgChangeFeed::new(listened.url(), pool(&written))
        .with_probe_timeout(Duration::from_millis(300));
    let started = Instant::now();

    let result = feed.next_changes(Duration::from_millis(10));

    match result {
        Err(ports::RepoError::Unavailable(e)) => {
            assert!(
                format!("{e:#}").contains("probe did not come back"),
                "{e:#}"
            )
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn probes_of_other_instances_are_not_taken_for_changes() {
    let db = TestDb::new();
    let mut feed = connected(&db);
    let mut other = connected(&db);

    // another instance's probes, and a hand-made one, arrive on the probe channel
    for _ in 0..3 {
        assert_eq!(
            other.next_changes(Duration::from_millis(10)).unwrap(),
            vec![]
        );
    }
    db.scalar("SELECT count(pg_notify('consent_api_cache_probe', 'not-a-token')) AS v");

    assert_eq!(
        collect(&mut feed, 1, Duration::from_millis(300)),
        vec![],
        "no probe is taken for a change (on the cache channel it would mean everything)"
    );
}
