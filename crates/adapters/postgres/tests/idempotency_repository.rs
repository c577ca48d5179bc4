//! [`PgIdempotencyRepository`]: taking a key, replaying its kept answer, refusing another request
//! or a concurrent one, taking over a released or expired key, and purging old keys.

mod common;

use std::sync::{Arc, Barrier};
use std::thread;

use chrono::{DateTime, TimeDelta, Utc};
use common::consent::pool_of;
use common::{at, create_company};
use diesel::prelude::*;
use domain::{Company, CompanyId};
use ports::{IdempotencyBegin, IdempotencyClaim, IdempotencyRepository, StoredOutcome};
use postgres_adapter::schema::chaves_idempotencia as ci;
use postgres_adapter::PgIdempotencyRepository;
use testkit::TestDb;
use uuid::Uuid;

fn t0() -> DateTime<Utc> {
    at("2026-05-01T12:00:00Z")
}

fn fingerprint(n: u8) -> String {
    format!("{n:02x}").repeat(32)
}

fn claim(empresa: CompanyId, chave: &str, impressao: &str, now: DateTime<Utc>) -> IdempotencyClaim {
    IdempotencyClaim {
        empresa,
        chave: chave.to_owned(),
        impressao: impressao.to_owned(),
        recurso_id: Uuid::new_v4(),
        dono: Uuid::new_v4(),
        now,
        lease_until: now + TimeDelta::seconds(60),
    }
}

fn answer(status: u16, body: &[u8]) -> StoredOutcome {
    StoredOutcome {
        status,
        body: body.to_vec(),
    }
}

struct World {
    db: TestDb,
    repo: PgIdempotencyRepository,
    acme: Company,
    globex: Company,
}

fn world() -> World {
    let db = TestDb::new();
    let pool = pool_of(&db, 8);
    let acme = create_company(&pool, "ACME", "112223330001");
    let globex = create_company(&pool, "Globex", "445556660001");
    World {
        repo: PgIdempotencyRepository::new(pool),
        db,
        acme,
        globex,
    }
}

fn keys(db: &TestDb) -> Vec<(Uuid, String, String)> {
    ci::table
        .order((ci::empresa_id, ci::chave))
        .select((ci::empresa_id, ci::chave, ci::estado))
        .load(&mut db.conn())
        .unwrap()
}

#[test]
fn a_new_key_runs_under_the_resource_id_it_reserves() {
    let w = world();
    let first = claim(w.acme.id, "pedido-1", &fingerprint(1), t0());

    let begun = w.repo.begin(&first).unwrap();

    assert_eq!(
        begun,
        IdempotencyBegin::Run {
            recurso_id: first.recurso_id
        }
    );
    assert_eq!(
        keys(&w.db),
        [(
            w.acme.id.0,
            "pedido-1".to_owned(),
            "em_andamento".to_owned()
        )]
    );
}

#[test]
fn while_it_runs_the_same_request_is_in_progress_and_another_request_a_mismatch() {
    let w = world();
    w.repo
        .begin(&claim(w.acme.id, "k", &fingerprint(1), t0()))
        .unwrap();
    let soon = t0() + TimeDelta::seconds(5);

    let same = w
        .repo
        .begin(&claim(w.acme.id, "k", &fingerprint(1), soon))
        .unwrap();
    let other = w
        .repo
        .begin(&claim(w.acme.id, "k", &fingerprint(2), soon))
        .unwrap();

    assert_eq!(same, IdempotencyBegin::InProgress);
    assert_eq!(other, IdempotencyBegin::Mismatch);
}

#[test]
fn a_completed_key_replays_its_answer_byte_for_byte_and_refuses_another_request() {
    let w = world();
    let first = claim(w.acme.id, "k", &fingerprint(1), t0());
    w.repo.begin(&first).unwrap();
    // any bytes: the answer is kept as sent, not as text
    let body = b"{\"sucesso\":true,\"data\":\"\xc3\xa7\"}\n\x00\xff".to_vec();

    let completed = w
        .repo
        .complete(w.acme.id, "k", first.dono, &answer(200, &body), t0())
        .unwrap();
    let replay = w
        .repo
        .begin(&claim(
            w.acme.id,
            "k",
            &fingerprint(1),
            t0() + TimeDelta::hours(1),
        ))
        .unwrap();
    let other = w
        .repo
        .begin(&claim(w.acme.id, "k", &fingerprint(2), t0()))
        .unwrap();

    assert!(completed);
    assert_eq!(replay, IdempotencyBegin::Replay(answer(200, &body)));
    assert_eq!(other, IdempotencyBegin::Mismatch);
    assert_eq!(keys(&w.db)[0].2, "concluida");
}

#[test]
fn only_the_holder_completes_or_releases_a_key() {
    let w = world();
    let first = claim(w.acme.id, "k", &fingerprint(1), t0());
    w.repo.begin(&first).unwrap();
    let stranger = Uuid::new_v4();

    assert!(!w
        .repo
        .complete(w.acme.id, "k", stranger, &answer(200, b"{}"), t0())
        .unwrap());
    assert!(!w.repo.release(w.acme.id, "k", stranger, t0()).unwrap());
    assert!(!w
        .repo
        .complete(w.globex.id, "k", first.dono, &answer(200, b"{}"), t0())
        .unwrap());
    assert_eq!(keys(&w.db)[0].2, "em_andamento");
}

#[test]
fn a_released_key_runs_again_at_once_under_the_first_resource_id() {
    let w = world();
    let first = claim(w.acme.id, "k", &fingerprint(1), t0());
    w.repo.begin(&first).unwrap();
    let released_at = t0() + TimeDelta::seconds(2);
    assert!(w
        .repo
        .release(w.acme.id, "k", first.dono, released_at)
        .unwrap());
    let retry = claim(w.acme.id, "k", &fingerprint(1), released_at);

    let begun = w.repo.begin(&retry).unwrap();

    assert_eq!(
        begun,
        IdempotencyBegin::Run {
            recurso_id: first.recurso_id
        }
    );
    // the retry holds it now: the first holder can no longer complete it
    assert!(!w
        .repo
        .complete(w.acme.id, "k", first.dono, &answer(200, b"{}"), released_at)
        .unwrap());
    assert!(w
        .repo
        .complete(w.acme.id, "k", retry.dono, &answer(422, b"{}"), released_at)
        .unwrap());
}

#[test]
fn a_key_whose_holder_died_is_taken_over_once_its_lease_is_over() {
    let w = world();
    let first = claim(w.acme.id, "k", &fingerprint(1), t0());
    w.repo.begin(&first).unwrap();

    let before_end = w
        .repo
        .begin(&claim(
            w.acme.id,
            "k",
            &fingerprint(1),
            first.lease_until - TimeDelta::microseconds(1),
        ))
        .unwrap();
    let at_end = w
        .repo
        .begin(&claim(w.acme.id, "k", &fingerprint(1), first.lease_until))
        .unwrap();

    assert_eq!(before_end, IdempotencyBegin::InProgress);
    assert_eq!(
        at_end,
        IdempotencyBegin::Run {
            recurso_id: first.recurso_id
        }
    );
}

#[test]
fn keys_are_scoped_by_company() {
    let w = world();
    let ours = claim(w.acme.id, "same-key", &fingerprint(1), t0());
    let theirs = claim(w.globex.id, "same-key", &fingerprint(2), t0());

    let a = w.repo.begin(&ours).unwrap();
    let b = w.repo.begin(&theirs).unwrap();

    assert_eq!(
        a,
        IdempotencyBegin::Run {
            recurso_id: ours.recurso_id
        }
    );
    assert_eq!(
        b,
        IdempotencyBegin::Run {
            recurso_id: theirs.recurso_id
        }
    );
    assert_eq!(keys(&w.db).len(), 2);
}

#[test]
fn concurrent_requests_with_one_key_run_exactly_once() {
    let w = world();
    let barrier = Arc::new(Barrier::new(8));
    let outcomes: Vec<IdempotencyBegin> = thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let repo = w.repo.clone();
                let barrier = barrier.clone();
                let empresa = w.acme.id;
                scope.spawn(move || {
                    barrier.wait();
                    repo.begin(&claim(empresa, "k", &fingerprint(1), t0()))
                        .unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    let ran = outcomes
        .iter()
        .filter(|o| matches!(o, IdempotencyBegin::Run { .. }))
        .count();
    let in_progress = outcomes
        .iter()
        .filter(|o| **o == IdempotencyBegin::InProgress)
        .count();
    assert_eq!((ran, in_progress), (1, 7), "{outcomes:?}");
}

#[test]
fn the_purge_deletes_keys_created_before_the_cutoff_in_batches() {
    let w = world();
    for (n, minutes) in [(1, 0), (2, 10), (3, 20), (4, 30)] {
        let c = claim(
            w.acme.id,
            &format!("k{n}"),
            &fingerprint(n),
            t0() + TimeDelta::minutes(minutes),
        );
        w.repo.begin(&c).unwrap();
        if n % 2 == 0 {
            w.repo
                .complete(w.acme.id, &c.chave, c.dono, &answer(200, b"{}"), c.now)
                .unwrap();
        }
    }
    let cutoff = t0() + TimeDelta::minutes(25);

    let first = w.repo.purge_created_before(cutoff, 2).unwrap();
    let second = w.repo.purge_created_before(cutoff, 2).unwrap();
    let third = w.repo.purge_created_before(cutoff, 2).unwrap();

    assert_eq!((first, second, third), (2, 1, 0));
    assert_eq!(
        keys(&w.db),
        [(w.acme.id.0, "k4".to_owned(), "concluida".to_owned())]
    );
    assert_eq!(w.repo.purge_created_before(cutoff, 0).unwrap(), 0);
    // a purged key is new again
    let again = claim(w.acme.id, "k1", &fingerprint(9), t0());
    assert_eq!(
        w.repo.begin(&again).unwrap(),
        IdempotencyBegin::Run {
            recurso_id: again.recurso_id
        }
    );
}

#[test]
fn the_table_refuses_keys_that_are_not_visible_ascii_and_fingerprints_that_are_not_digests() {
    let w = world();
    for (chave, impressao) in [
        ("com espaço", fingerprint(1)),
        ("", fingerprint(1)),
        ("ç", fingerprint(1)),
        ("ok", "nao-e-um-sha256".to_owned()),
    ] {
        let result = w.repo.begin(&claim(w.acme.id, chave, &impressao, t0()));
        assert!(result.is_err(), "{chave:?} {impressao:?}");
    }
    assert!(keys(&w.db).is_empty());
}
