//! The audit signer's choice of companies ([`AuditLogRepository::companies_with_unsigned_entries`]):
//! a company whose log has settled entries past its stored tree, in id order, and none whose
//! entries a running transaction could still precede. On one node it is one statement; on a
//! Citus coordinator a probe per company (issue 23): both must choose the same companies.

mod common;

use diesel::connection::SimpleConnection;
use domain::ConsentStatus;
use ports::AuditLogRepository;
use postgres_adapter::{PgAuditLogRepository, PgConsentRequestRepository};
use testkit::TestDb;

use common::at;
use common::consent::{pool_of, tenant, Spec};

#[test]
fn the_signer_chooses_the_same_companies_by_probe_as_on_citus_as_by_the_single_statement() {
    let db = TestDb::new();
    let pool = pool_of(&db, 4);
    let requests = PgConsentRequestRepository::new(pool.clone());
    let one_statement = PgAuditLogRepository::new(pool.clone());
    let by_probe = PgAuditLogRepository::new(pool.clone()).choosing_as_on_citus();
    let acme = tenant(&pool, "Acme", "112223330001");
    let _quiet = tenant(&pool, "Quiet", "445556660001");
    let globex = tenant(&pool, "Globex", "998887770001");
    let choose = |limit| {
        let single = one_statement
            .companies_with_unsigned_entries(limit)
            .unwrap();
        let probed = by_probe.companies_with_unsigned_entries(limit).unwrap();
        assert_eq!(probed, single, "limit {limit}");
        single
    };
    assert!(choose(10).is_empty(), "no entry anywhere yet");

    // a transaction that started before the entries holds them back: it could still write one
    // that the log orders before them
    let mut early = db.conn();
    early
        .batch_execute("BEGIN; SELECT pg_current_xact_id();")
        .unwrap();
    let created = at("2026-05-01T12:00:00Z");
    acme.create(&requests, &Spec::new(created));
    globex.create(
        &requests,
        &Spec::new(created).status(ConsentStatus::Pending),
    );
    assert!(choose(10).is_empty(), "not settled while it runs");

    early.batch_execute("COMMIT").unwrap();
    let mut expected = vec![acme.company.id, globex.company.id];
    expected.sort_by_key(|c| c.0);
    // The watermark is cluster-wide: a transaction of a test running beside this one may hold
    // the entries back a moment longer.
    let mut chosen = choose(10);
    for _ in 0..100 {
        if chosen.len() == 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        chosen = choose(10);
    }
    assert_eq!(chosen, expected, "the two with entries, in id order");
    assert_eq!(
        choose(1),
        expected[..1],
        "at most the limit, the first ones"
    );
}
