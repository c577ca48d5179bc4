//! The PGCC's health shared by every process (issue 25, part 3): tallies added by several
//! processes, the window assessed, a change crossing OK written once however many processes see
//! it, and told to every company a bounded batch at a time, each company once.

mod common;

use chrono::TimeDelta;
use common::webhook::{deliveries_of, events_of, register};
use common::{at, create_company, pool};
use domain::{PgccCallTally, PgccHealthCode, PgccOperation, PgccOutageThreshold};
use ports::{PgccCallSecond, PgccHealthRepository};
use postgres_adapter::PgPgccHealthRepository;
use testkit::TestDb;

const NONE: PgccOutageThreshold = PgccOutageThreshold::NONE;

fn calls(
    operation: PgccOperation,
    second: &str,
    answered: u64,
    unavailable: u64,
) -> PgccCallSecond {
    PgccCallSecond {
        operation,
        second: at(second),
        tally: PgccCallTally {
            answered,
            unavailable,
        },
    }
}

#[test]
fn the_tallies_of_every_process_add_up_and_only_the_window_counts() {
    let db = TestDb::new();
    let repo = PgPgccHealthRepository::new(pool(&db));
    let t = "2026-05-01T12:00:10Z";
    // an answer before the window, failures in it, from two processes
    repo.record(
        &[calls(PgccOperation::Creation, "2026-05-01T12:00:00Z", 1, 0)],
        at("2026-05-01T11:00:00Z"),
    )
    .unwrap();
    repo.record(
        &[calls(PgccOperation::Creation, t, 0, 2)],
        at("2026-05-01T11:00:00Z"),
    )
    .unwrap();
    repo.record(
        &[calls(PgccOperation::Creation, t, 0, 1)],
        at("2026-05-01T11:00:00Z"),
    )
    .unwrap();

    let health = repo
        .assess(at("2026-05-01T12:00:05Z"), at("2026-05-01T12:00:11Z"), NONE)
        .unwrap();
    assert_eq!(health.code, PgccHealthCode::Unavailable);
    assert_eq!(health.unavailable_endpoints, ["criacao"]);
    assert_eq!(health.detection_time, at("2026-05-01T12:00:11Z"));
    assert_eq!(repo.current().unwrap(), health);
    assert_eq!(
        db.scalar("SELECT sum(indisponiveis)::bigint AS v FROM pgcc_chamadas"),
        3
    );

    // seconds before `forget_before` go
    repo.record(
        &[calls(PgccOperation::Status, "2026-05-01T12:01:00Z", 1, 0)],
        at("2026-05-01T12:00:30Z"),
    )
    .unwrap();
    assert_eq!(db.scalar("SELECT count(*) AS v FROM pgcc_chamadas"), 1);
}

#[test]
fn a_change_across_ok_is_written_once_and_told_to_every_company_in_batches_once_each() {
    let db = TestDb::new();
    let pool = pool(&db);
    let companies: Vec<_> = ["111111110001", "222222220001", "333333330001"]
        .iter()
        .enumerate()
        .map(|(i, cnpj)| create_company(&pool, &format!("Empresa {i}"), cnpj))
        .collect();
    for company in &companies {
        register(
            &pool,
            company,
            "https://hooks.example/x",
            at("2026-01-01T00:00:00Z"),
        );
    }
    let first = PgPgccHealthRepository::new(pool.clone());
    let second = PgPgccHealthRepository::new(pool.clone());
    let down = at("2026-05-01T12:00:10Z");
    first
        .record(
            &[calls(PgccOperation::Status, "2026-05-01T12:00:09Z", 0, 4)],
            at("2026-05-01T11:00:00Z"),
        )
        .unwrap();

    // two processes assess the same change: one transition
    let since = down - TimeDelta::seconds(60);
    assert_eq!(
        first.assess(since, down, NONE).unwrap().code,
        PgccHealthCode::Unavailable
    );
    assert_eq!(
        second
            .assess(since, down + TimeDelta::seconds(1), NONE)
            .unwrap()
            .code,
        PgccHealthCode::Unavailable
    );
    assert_eq!(db.scalar("SELECT count(*) AS v FROM pgcc_transicoes"), 1);
    assert_eq!(
        second.current().unwrap().detection_time,
        down,
        "the first detection stays"
    );

    // back: an answer in the window
    let up = at("2026-05-01T12:00:20Z");
    second
        .record(
            &[calls(PgccOperation::Status, "2026-05-01T12:00:19Z", 1, 0)],
            at("2026-05-01T11:00:00Z"),
        )
        .unwrap();
    assert_eq!(
        first.assess(since, up, NONE).unwrap().code,
        PgccHealthCode::Ok
    );
    assert_eq!(db.scalar("SELECT count(*) AS v FROM pgcc_transicoes"), 2);

    // batches of 2 companies: the first change to all three, then the second
    let now = at("2026-05-01T12:00:30Z");
    let told: Vec<u32> = (0..5).map(|_| first.announce(2, now).unwrap()).collect();
    assert_eq!(told, [2, 1, 2, 1, 0]);
    for (tipo, code) in [
        ("pgcc.indisponivel", "UNAVAILABLE"),
        ("pgcc.restabelecido", "OK"),
    ] {
        let events = events_of(&db, tipo);
        let mut told_to: Vec<_> = events.iter().map(|e| e.empresa_id).collect();
        told_to.sort();
        let mut expected: Vec<_> = companies.iter().map(|c| c.id.0).collect();
        expected.sort();
        assert_eq!(told_to, expected, "{tipo}: each company once");
        for event in &events {
            let body: serde_json::Value = serde_json::from_str(&event.payload).unwrap();
            assert_eq!(body["type"], tipo);
            assert_eq!(body["data"]["code"], code);
            assert_eq!(
                deliveries_of(&db, event.id).len(),
                1,
                "to the company's URL"
            );
        }
    }
    assert_eq!(
        db.scalar("SELECT count(*) AS v FROM pgcc_transicoes WHERE concluida_em IS NULL"),
        0
    );
}

/// Issue 39: one failed call in a quiet window flipped every company's status and sent
/// `pgcc.indisponivel` and then `pgcc.restabelecido` to every company. Past the threshold only
/// (3 failed calls, the first 20 s old) does an operation leave OK; once out, it stays out on the
/// plain rule until a call of it is answered.
#[test]
fn one_failed_call_is_no_outage_and_enough_failures_for_long_enough_are_one_told_once() {
    let db = TestDb::new();
    let repo = PgPgccHealthRepository::new(pool(&db));
    let threshold = PgccOutageThreshold {
        min_failed_calls: 3,
        min_duration: TimeDelta::seconds(20),
    };
    let keep = at("2026-05-01T11:00:00Z");
    let assess = |now: &str| {
        let now = at(now);
        repo.assess(now - TimeDelta::seconds(60), now, threshold)
            .unwrap()
    };
    // one timeout, alone in the window, however long ago
    repo.record(
        &[calls(PgccOperation::Status, "2026-05-01T12:00:00Z", 0, 1)],
        keep,
    )
    .unwrap();
    assert_eq!(assess("2026-05-01T12:00:30Z").code, PgccHealthCode::Ok);
    // three, but the first only 10 s old
    repo.record(
        &[calls(PgccOperation::Creation, "2026-05-01T12:00:20Z", 0, 3)],
        keep,
    )
    .unwrap();
    assert_eq!(assess("2026-05-01T12:00:30Z").code, PgccHealthCode::Ok);
    assert_eq!(db.scalar("SELECT count(*) AS v FROM pgcc_transicoes"), 0);
    // twenty seconds on, still failing: an outage of the creation only, told once
    let down = assess("2026-05-01T12:00:40Z");
    assert_eq!(down.code, PgccHealthCode::Unavailable);
    assert_eq!(down.unavailable_endpoints, ["criacao"]);
    assert_eq!(db.scalar("SELECT count(*) AS v FROM pgcc_transicoes"), 1);
    // the status operation's single failure still does not count: the creation stays out alone
    assert_eq!(
        assess("2026-05-01T12:00:41Z").unavailable_endpoints,
        ["criacao"]
    );
    // an answer brings it back, told once
    repo.record(
        &[calls(PgccOperation::Creation, "2026-05-01T12:00:45Z", 1, 0)],
        keep,
    )
    .unwrap();
    assert_eq!(assess("2026-05-01T12:00:46Z").code, PgccHealthCode::Ok);
    assert_eq!(db.scalar("SELECT count(*) AS v FROM pgcc_transicoes"), 2);
}
