//! [`PgWebhookDeliveryRepository`]: claims (including two senders at once), attempts, the
//! company's delivery log, replays and the disabling of failing URLs. Events and deliveries are
//! seeded directly in the tables, so each test states exactly what exists.

mod common;

use std::collections::HashSet;
use std::sync::Barrier;
use std::thread;

use chrono::{DateTime, TimeDelta, Utc};
use common::consent::pool_of;
use common::webhook::{attempts, delivery, held, register, secret_of, set_disabled, sorted};
use common::{at, create_company};
use diesel::prelude::*;
use domain::{Company, CompanyId, WebhookUrl};
use ports::{
    DeliveryAttempt, DeliveryFilter, DeliveryOutcome, DeliveryRecord, DueDelivery, EncryptedSecret,
    RepoError, WebhookDeliveryRepository, WebhookUrlRepository,
};
use postgres_adapter::schema::{webhook_entregas as we, webhook_eventos as ev, webhook_urls};
use postgres_adapter::{PgPool, PgWebhookDeliveryRepository, PgWebhookUrlRepository};
use testkit::TestDb;
use uuid::Uuid;

fn t0() -> DateTime<Utc> {
    at("2026-06-01T12:00:00Z")
}

fn minutes(n: i64) -> TimeDelta {
    TimeDelta::minutes(n)
}

fn days(n: i64) -> TimeDelta {
    TimeDelta::days(n)
}

/// The body seeded for event `id`.
fn body(id: Uuid) -> String {
    format!(
        r#"{{"type":"solicitacao.criada","timestamp":"2026-06-01T12:00:00Z","data":{{"id":"{id}"}}}}"#
    )
}

/// Stores an event of `empresa` created at `criado_em` and returns its id.
fn event(db: &TestDb, empresa: CompanyId, criado_em: DateTime<Utc>) -> Uuid {
    let id = Uuid::new_v4();
    diesel::insert_into(ev::table)
        .values((
            ev::id.eq(id),
            ev::empresa_id.eq(empresa.0),
            ev::tipo.eq("solicitacao.criada"),
            ev::payload.eq(body(id)),
            ev::criado_em.eq(criado_em),
        ))
        .execute(&mut db.conn())
        .unwrap();
    id
}

/// Stores a delivery of a new event to `url`, created at `criado_em`, in `status`, next due at
/// `due`, and returns its id.
fn seed(
    db: &TestDb,
    url: &WebhookUrl,
    status: &str,
    criado_em: DateTime<Utc>,
    due: Option<DateTime<Utc>>,
) -> Uuid {
    let evento = event(db, url.company_id, criado_em);
    deliver(db, evento, url, status, criado_em, due)
}

/// Stores a delivery of event `evento` to `url` and returns its id.
fn deliver(
    db: &TestDb,
    evento: Uuid,
    url: &WebhookUrl,
    status: &str,
    criado_em: DateTime<Utc>,
    due: Option<DateTime<Utc>>,
) -> Uuid {
    let id = Uuid::new_v4();
    diesel::insert_into(we::table)
        .values((
            we::id.eq(id),
            we::evento_id.eq(evento),
            we::webhook_url_id.eq(url.id),
            we::empresa_id.eq(url.company_id.0),
            we::status.eq(status),
            we::proxima_tentativa_em.eq(due),
            we::criado_em.eq(criado_em),
            we::atualizado_em.eq(criado_em),
            we::entregue_em.eq((status == "entregue").then_some(criado_em)),
        ))
        .execute(&mut db.conn())
        .unwrap();
    id
}

/// A pending delivery due at `due` (created then).
fn pending(db: &TestDb, url: &WebhookUrl, due: DateTime<Utc>) -> Uuid {
    seed(db, url, "pendente", due, Some(due))
}

/// Marks URL `id` removed without cancelling its deliveries (as a removal racing an event
/// could leave them).
fn set_removed(db: &TestDb, id: Uuid, when: DateTime<Utc>) {
    diesel::update(webhook_urls::table.filter(webhook_urls::id.eq(id)))
        .set(webhook_urls::removido_em.eq(when))
        .execute(&mut db.conn())
        .unwrap();
}

fn evento_of(db: &TestDb, delivery_id: Uuid) -> Uuid {
    delivery(db, delivery_id).evento_id
}

/// The payload of the delivery's event, as the log carries it (its first 2,000 characters).
fn body_of(db: &TestDb, delivery_id: Uuid) -> String {
    let event = evento_of(db, delivery_id);
    let payload: String = ev::table
        .filter(ev::id.eq(event))
        .select(ev::payload)
        .first(&mut db.conn())
        .unwrap();
    payload.chars().take(ports::REQUEST_BODY_SHOWN).collect()
}

fn ids(claimed: &[DueDelivery]) -> Vec<Uuid> {
    sorted(claimed.iter().map(|d| d.id).collect())
}

fn attempt(em: DateTime<Utc>, status_http: Option<u16>, erro: Option<&str>) -> DeliveryAttempt {
    DeliveryAttempt {
        at: em,
        http_status: status_http,
        latency_ms: 120,
        error: erro.map(str::to_owned),
        response_body: None,
    }
}

struct World {
    db: TestDb,
    pool: PgPool,
    acme: Company,
    globex: Company,
}

fn world(pool_size: u32) -> World {
    let db = TestDb::new();
    let pool = pool_of(&db, pool_size);
    let acme = create_company(&pool, "ACME", "112223330001");
    let globex = create_company(&pool, "Globex", "998887770001");
    World {
        db,
        pool,
        acme,
        globex,
    }
}

impl World {
    fn url(&self, empresa: &Company, path: &str) -> WebhookUrl {
        register(
            &self.pool,
            empresa,
            &format!("https://{path}"),
            at("2026-01-01T00:00:00Z"),
        )
    }

    fn repo(&self) -> PgWebhookDeliveryRepository {
        PgWebhookDeliveryRepository::new(self.pool.clone())
    }
}

// --- claim_due ---

#[test]
fn claim_takes_the_oldest_due_pending_deliveries_of_live_urls_with_all_they_need() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let g = w.url(&w.globex, "globex.example/g");
    let removed = w.url(&w.acme, "acme.example/removed");
    let disabled = w.url(&w.acme, "acme.example/disabled");
    let db = &w.db;
    let a1 = pending(db, &a, t0() - minutes(4));
    let g1 = pending(db, &g, t0() - minutes(3));
    let a2 = pending(db, &a, t0());
    let not_due = pending(db, &a, t0() + minutes(1));
    let finished: Vec<Uuid> = ["entregue", "falhou", "cancelada"]
        .into_iter()
        .map(|status| seed(db, &a, status, t0() - minutes(20), None))
        .collect();
    let to_removed = pending(db, &removed, t0() - minutes(10));
    let to_disabled = pending(db, &disabled, t0() - minutes(10));
    set_removed(db, removed.id, t0() - minutes(5));
    set_disabled(db, disabled.id, Some(t0() - minutes(5)));
    let repo = w.repo();
    let lease = t0() + minutes(5);

    let oldest = common::webhook::claim(&repo, 2, t0(), lease).unwrap();
    let rest = common::webhook::claim(&repo, 10, t0(), lease).unwrap();
    let none = common::webhook::claim(&repo, 10, t0(), lease).unwrap();

    assert_eq!(ids(&oldest), sorted(vec![a1, g1]));
    let claimed_g1 = oldest.iter().find(|d| d.id == g1).unwrap();
    assert_eq!(
        *claimed_g1,
        DueDelivery {
            id: g1,
            company_id: w.globex.id,
            webhook_url_id: g.id,
            url: "https://globex.example/g".to_owned(),
            event_id: evento_of(db, g1),
            payload: body(evento_of(db, g1)),
            attempts: 0,
            secret: secret_of(g.id),
            previous_secret: None,
            // A new token, checked by the record (see the record_attempt tests).
            lease: claimed_g1.lease,
            traceparent: None,
        }
    );
    assert_eq!(ids(&rest), [a2]);
    assert_eq!(none, []);
    for id in [a1, g1, a2] {
        assert_eq!(delivery(db, id).proxima_tentativa_em, Some(lease));
        assert_eq!(delivery(db, id).status, "pendente");
    }
    for (id, due) in [
        (not_due, t0() + minutes(1)),
        (to_removed, t0() - minutes(10)),
        (to_disabled, t0() - minutes(10)),
    ] {
        assert_eq!(
            delivery(db, id).proxima_tentativa_em,
            Some(due),
            "not claimed"
        );
    }
    for id in finished {
        assert_eq!(delivery(db, id).proxima_tentativa_em, None, "never claimed");
    }
    assert_eq!(common::webhook::claim(&repo, 0, lease, lease).unwrap(), []);
}

#[test]
fn a_claimed_delivery_is_not_due_again_until_its_lease() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let d = pending(&w.db, &a, t0());
    let repo = w.repo();
    let lease = t0() + minutes(5);
    assert_eq!(
        ids(&common::webhook::claim(&repo, 10, t0(), lease).unwrap()),
        [d]
    );

    let just_before = common::webhook::claim(
        &repo,
        10,
        lease - TimeDelta::microseconds(1),
        lease + minutes(5),
    )
    .unwrap();
    let at_lease = common::webhook::claim(&repo, 10, lease, lease + minutes(5)).unwrap();

    assert_eq!(just_before, []);
    assert_eq!(
        ids(&at_lease),
        [d],
        "a crashed sender's claim is retried at the lease"
    );
    assert_eq!(
        delivery(&w.db, d).proxima_tentativa_em,
        Some(lease + minutes(5))
    );
}

#[test]
fn two_senders_claiming_at_once_never_share_a_delivery() {
    const ROWS: usize = 100;
    let w = world(4);
    let a = w.url(&w.acme, "acme.example/a");
    let g = w.url(&w.globex, "globex.example/g");
    let all: HashSet<Uuid> = (0..ROWS)
        .map(|i| {
            let url = if i % 2 == 0 { &a } else { &g };
            pending(&w.db, url, t0() - TimeDelta::seconds(i as i64))
        })
        .collect();
    let repo = w.repo();
    let lease = t0() + minutes(5);
    let barrier = Barrier::new(2);

    let claimed: Vec<Vec<Uuid>> = thread::scope(|s| {
        let senders: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let mut mine = Vec::new();
                    loop {
                        let batch = common::webhook::claim(&repo, 7, t0(), lease).unwrap();
                        if batch.is_empty() {
                            return mine;
                        }
                        mine.extend(batch.into_iter().map(|d| d.id));
                    }
                })
            })
            .collect();
        senders.into_iter().map(|s| s.join().unwrap()).collect()
    });

    let first: HashSet<Uuid> = claimed[0].iter().copied().collect();
    let second: HashSet<Uuid> = claimed[1].iter().copied().collect();
    assert_eq!(
        first.len(),
        claimed[0].len(),
        "a sender got a delivery twice"
    );
    assert_eq!(
        second.len(),
        claimed[1].len(),
        "a sender got a delivery twice"
    );
    assert_eq!(
        first.intersection(&second).count(),
        0,
        "claimed by both senders"
    );
    let union: HashSet<Uuid> = first.union(&second).copied().collect();
    assert_eq!(union, all);
    assert_eq!(common::webhook::claim(&repo, 500, t0(), lease).unwrap(), []);
}

#[test]
fn companies_due_names_each_company_with_due_work_once_with_its_soonest_due_time() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let b = w.url(&w.acme, "acme.example/b");
    let g = w.url(&w.globex, "globex.example/g");
    for n in 0..5 {
        pending(&w.db, &a, t0() - minutes(10 - n));
        pending(&w.db, &b, t0() - minutes(20 - n));
    }
    pending(&w.db, &g, t0() + minutes(1));
    let repo = w.repo();

    let mut due = repo.companies_due(t0()).unwrap();
    due.sort_by_key(|c| c.since);

    assert_eq!(
        due,
        [ports::CompanyDue {
            company_id: w.acme.id,
            since: t0() - minutes(20),
        }],
        "Globex's delivery is not due yet"
    );
    let later = repo.companies_due(t0() + minutes(1)).unwrap();
    assert_eq!(later.len(), 2);
}

#[test]
fn a_companys_claim_takes_only_its_own_deliveries_soonest_first_within_the_limit() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let g = w.url(&w.globex, "globex.example/g");
    let acme: Vec<Uuid> = (0..5)
        .map(|n| pending(&w.db, &a, t0() - minutes(10 - n)))
        .collect();
    let globex = pending(&w.db, &g, t0() - minutes(30));
    let repo = w.repo();
    let (lease_until, lease) = (t0() + minutes(1), Uuid::new_v4());

    let two = repo
        .claim_due(w.acme.id, 2, t0(), lease_until, lease)
        .unwrap();

    assert_eq!(ids(&two), sorted(vec![acme[0], acme[1]]));
    assert!(two
        .iter()
        .all(|d| d.lease == lease && d.company_id == w.acme.id));
    assert_eq!(
        delivery(&w.db, acme[0]).proxima_tentativa_em,
        Some(lease_until)
    );
    assert_eq!(
        delivery(&w.db, globex).proxima_tentativa_em,
        Some(t0() - minutes(30)),
        "another company's delivery is never touched"
    );
    assert_eq!(
        repo.claim_due(w.acme.id, 0, t0(), lease_until, lease)
            .unwrap(),
        []
    );
}

/// Runs `settle_url` on URL `id` of `company` in batches of `batch` until it is done; the
/// number of rows changed by each batch.
fn settle_all(
    repo: &PgWebhookDeliveryRepository,
    company: CompanyId,
    id: Uuid,
    batch: u32,
) -> Vec<u32> {
    let mut batches = Vec::new();
    loop {
        let settled = repo.settle_url(company, id, batch, t0()).unwrap();
        batches.push(settled.changed);
        if settled.done {
            return batches;
        }
    }
}

fn parked(db: &TestDb, id: Uuid) -> bool {
    we::table
        .filter(we::id.eq(id))
        .select(we::estacionada)
        .first(&mut db.conn())
        .unwrap()
}

#[test]
fn deliveries_of_a_disabled_url_are_parked_in_batches_not_claimed_and_back_after_reenabling() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let ok = w.url(&w.acme, "acme.example/ok");
    let stuck: Vec<Uuid> = (0..5)
        .map(|n| pending(&w.db, &a, t0() - minutes(10 - n)))
        .collect();
    let live = pending(&w.db, &ok, t0() - minutes(1));
    // as disable_failing_urls leaves it
    diesel::update(webhook_urls::table.filter(webhook_urls::id.eq(a.id)))
        .set((
            webhook_urls::desativado_em.eq(t0() - minutes(1)),
            webhook_urls::entregas_por_acertar.eq(true),
        ))
        .execute(&mut w.db.conn())
        .unwrap();
    let repo = w.repo();
    assert_eq!(repo.urls_to_settle(10).unwrap(), [(w.acme.id, a.id)]);

    let batches = settle_all(&repo, w.acme.id, a.id, 2);

    assert_eq!(batches, [2, 2, 1]);
    assert!(stuck.iter().all(|id| parked(&w.db, *id)));
    assert!(stuck
        .iter()
        .all(|id| delivery(&w.db, *id).status == "pendente"));
    assert_eq!(repo.urls_to_settle(10).unwrap(), []);
    let due = repo.companies_due(t0()).unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(
        due[0].since,
        t0() - minutes(1),
        "the parked ones are not due"
    );
    assert_eq!(
        ids(&common::webhook::claim(&repo, 10, t0(), t0() + minutes(1)).unwrap()),
        [live]
    );

    PgWebhookUrlRepository::new(w.pool.clone())
        .reenable(w.acme.id, a.id, t0())
        .unwrap()
        .unwrap();
    assert_eq!(repo.urls_to_settle(10).unwrap(), [(w.acme.id, a.id)]);
    assert_eq!(settle_all(&repo, w.acme.id, a.id, 10), [5]);

    assert!(stuck.iter().all(|id| !parked(&w.db, *id)));
    assert_eq!(
        ids(&common::webhook::claim(&repo, 10, t0(), t0() + minutes(1)).unwrap()),
        sorted(stuck.clone()),
        "back, due as they were"
    );
}

#[test]
fn a_removed_urls_deliveries_parked_or_not_are_cancelled_in_batches_behind_the_removal() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let waiting: Vec<Uuid> = (0..3)
        .map(|n| pending(&w.db, &a, t0() - minutes(10 - n)))
        .collect();
    let sleeping = pending(&w.db, &a, t0() - minutes(20));
    diesel::update(we::table.filter(we::id.eq(sleeping)))
        .set(we::estacionada.eq(true))
        .execute(&mut w.db.conn())
        .unwrap();
    let done = seed(&w.db, &a, "entregue", t0() - minutes(30), None);
    let urls = PgWebhookUrlRepository::new(w.pool.clone());

    assert!(urls.soft_delete(w.acme.id, a.id, t0()).unwrap());

    assert!(
        waiting
            .iter()
            .all(|id| delivery(&w.db, *id).status == "pendente"),
        "the removal answers without touching them"
    );
    let repo = w.repo();
    assert_eq!(
        common::webhook::claim(&repo, 10, t0(), t0() + minutes(1)).unwrap(),
        [],
        "none is claimed meanwhile"
    );
    assert_eq!(settle_all(&repo, w.acme.id, a.id, 2), [2, 2, 0]);
    for id in waiting.iter().chain([&sleeping]) {
        let row = delivery(&w.db, *id);
        assert_eq!(
            (
                row.status.as_str(),
                row.proxima_tentativa_em,
                row.atualizado_em
            ),
            ("cancelada", None, t0())
        );
        assert!(!parked(&w.db, *id));
    }
    assert_eq!(delivery(&w.db, done).status, "entregue");
    assert_eq!(repo.urls_to_settle(10).unwrap(), []);
}

#[test]
fn the_cap_fails_the_soonest_due_beyond_the_newest_kept_with_the_reason_and_only_those() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let g = w.url(&w.globex, "globex.example/g");
    let acme: Vec<Uuid> = (0..7)
        .map(|n| pending(&w.db, &a, t0() - minutes(10 - n)))
        .collect();
    diesel::update(we::table.filter(we::id.eq(acme[6])))
        .set(we::estacionada.eq(true))
        .execute(&mut w.db.conn())
        .unwrap();
    let globex: Vec<Uuid> = (0..7)
        .map(|n| pending(&w.db, &g, t0() - minutes(10 - n)))
        .collect();
    let repo = w.repo();
    let mut with_pending = repo.companies_with_pending().unwrap();
    with_pending.sort_by_key(|c| c.0);
    let mut both = vec![w.acme.id, w.globex.id];
    both.sort_by_key(|c| c.0);
    assert_eq!(with_pending, both);

    let first = repo
        .fail_beyond_cap(w.acme.id, 4, 2, "limite", t0())
        .unwrap();
    let second = repo
        .fail_beyond_cap(w.acme.id, 4, 2, "limite", t0())
        .unwrap();
    let third = repo
        .fail_beyond_cap(w.acme.id, 4, 2, "limite", t0())
        .unwrap();

    assert_eq!((first, second, third), (2, 1, 0));
    let motivo = |id: Uuid| -> Option<String> {
        we::table
            .filter(we::id.eq(id))
            .select(we::motivo)
            .first(&mut w.db.conn())
            .unwrap()
    };
    for id in &acme[..3] {
        let row = delivery(&w.db, *id);
        assert_eq!(
            (
                row.status.as_str(),
                row.proxima_tentativa_em,
                row.atualizado_em
            ),
            ("falhou", None, t0())
        );
        assert_eq!(motivo(*id).as_deref(), Some("limite"));
    }
    for id in acme[3..].iter().chain(&globex) {
        assert_eq!(delivery(&w.db, *id).status, "pendente");
        assert_eq!(motivo(*id), None);
    }
}

#[test]
fn each_claim_gets_its_own_lease_token() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let d = pending(&w.db, &a, t0());
    let repo = w.repo();
    let first = common::webhook::claim(&repo, 10, t0(), t0() + minutes(1)).unwrap();
    let again = common::webhook::claim(&repo, 10, t0() + minutes(1), t0() + minutes(2)).unwrap();

    assert_eq!((ids(&first), ids(&again)), (vec![d], vec![d]));
    assert_ne!(first[0].lease, again[0].lease);
}

// --- record_attempt ---

#[test]
fn a_sender_whose_lease_was_taken_over_records_nothing_and_the_holder_records() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let d = pending(&w.db, &a, t0());
    let repo = w.repo();
    let lease = t0() + minutes(1);
    let first = common::webhook::claim(&repo, 10, t0(), lease).unwrap();
    // The first sender outlives its lease: another instance claims the delivery.
    let second = common::webhook::claim(&repo, 10, lease, lease + minutes(1)).unwrap();

    let late = repo
        .record_attempt(
            w.acme.id,
            d,
            first[0].lease,
            &attempt(lease, Some(200), None),
            DeliveryOutcome::Delivered,
        )
        .unwrap();
    let holder = repo
        .record_attempt(
            w.acme.id,
            d,
            second[0].lease,
            &attempt(
                lease + TimeDelta::seconds(1),
                Some(500),
                Some("resposta HTTP 500"),
            ),
            DeliveryOutcome::RetryAt(lease + minutes(5)),
        )
        .unwrap();

    assert!(!late, "the late sender's attempt is not recorded");
    assert!(holder);
    let row = delivery(&w.db, d);
    assert_eq!(
        (
            row.status.as_str(),
            row.tentativas,
            row.proxima_tentativa_em
        ),
        ("pendente", 1, Some(lease + minutes(5)))
    );
    assert_eq!(attempts(&w.db, d).len(), 1);
    // The lease ended with the record: the same token cannot record twice.
    assert!(!repo
        .record_attempt(
            w.acme.id,
            d,
            second[0].lease,
            &attempt(lease, Some(200), None),
            DeliveryOutcome::Delivered
        )
        .unwrap());
}

#[test]
fn a_delivered_attempt_finishes_the_delivery() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let d = pending(&w.db, &a, t0());
    let em = t0() + TimeDelta::seconds(1);

    w.repo()
        .record_attempt(
            w.acme.id,
            d,
            held(&w.db, d),
            &attempt(em, Some(204), None),
            DeliveryOutcome::Delivered,
        )
        .unwrap();

    let row = delivery(&w.db, d);
    assert_eq!(row.status, "entregue");
    assert_eq!(row.entregue_em, Some(em));
    assert_eq!(row.proxima_tentativa_em, None);
    assert_eq!(row.tentativas, 1);
    assert_eq!(row.atualizado_em, em);
    let tries = attempts(&w.db, d);
    assert_eq!(tries.len(), 1);
    assert_eq!(
        (
            tries[0].em,
            tries[0].status_http,
            tries[0].latencia_ms,
            tries[0].erro.as_deref()
        ),
        (em, Some(204), 120, None)
    );
}

#[test]
fn a_retry_reschedules_and_a_failure_ends_the_delivery_each_attempt_counted() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let d = pending(&w.db, &a, t0());
    let repo = w.repo();
    let em1 = t0() + TimeDelta::seconds(1);
    let retry_at = t0() + minutes(1);

    repo.record_attempt(
        w.acme.id,
        d,
        held(&w.db, d),
        &attempt(em1, Some(500), Some("HTTP 500")),
        DeliveryOutcome::RetryAt(retry_at),
    )
    .unwrap();

    let row = delivery(&w.db, d);
    assert_eq!(
        (
            row.status.as_str(),
            row.proxima_tentativa_em,
            row.tentativas,
            row.atualizado_em
        ),
        ("pendente", Some(retry_at), 1, em1)
    );
    assert_eq!(
        common::webhook::claim(&repo, 10, retry_at - TimeDelta::microseconds(1), retry_at).unwrap(),
        []
    );
    let claimed = common::webhook::claim(&repo, 10, retry_at, retry_at + minutes(5)).unwrap();
    assert_eq!(ids(&claimed), [d]);
    assert_eq!(claimed[0].attempts, 1, "attempts made before this one");

    let em2 = retry_at + TimeDelta::seconds(30);
    repo.record_attempt(
        w.acme.id,
        d,
        claimed[0].lease,
        &attempt(em2, None, Some("timeout")),
        DeliveryOutcome::Failed,
    )
    .unwrap();

    let row = delivery(&w.db, d);
    assert_eq!(
        (
            row.status.as_str(),
            row.proxima_tentativa_em,
            row.tentativas,
            row.entregue_em
        ),
        ("falhou", None, 2, None)
    );
    assert_eq!(row.atualizado_em, em2);
    let tries = attempts(&w.db, d);
    assert_eq!(tries.len(), 2);
    assert_eq!(
        (tries[0].status_http, tries[0].erro.as_deref()),
        (Some(500), Some("HTTP 500"))
    );
    assert_eq!(
        (tries[1].em, tries[1].status_http, tries[1].erro.as_deref()),
        (em2, None, Some("timeout"))
    );
    assert_eq!(
        common::webhook::claim(&repo, 10, em2 + days(1), em2 + days(1)).unwrap(),
        []
    );
}

#[test]
fn an_attempt_on_a_delivery_cancelled_meanwhile_is_counted_and_it_stays_cancelled() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let d = pending(&w.db, &a, t0());
    let repo = w.repo();
    assert_eq!(
        ids(&common::webhook::claim(&repo, 10, t0(), t0() + minutes(5)).unwrap()),
        [d]
    );
    assert!(PgWebhookUrlRepository::new(w.pool.clone())
        .soft_delete(w.acme.id, a.id, t0() + TimeDelta::seconds(1))
        .unwrap());
    settle_all(&repo, w.acme.id, a.id, 10);
    let em = t0() + TimeDelta::seconds(2);

    repo.record_attempt(
        w.acme.id,
        d,
        held(&w.db, d),
        &attempt(em, Some(503), None),
        DeliveryOutcome::RetryAt(t0() + minutes(1)),
    )
    .unwrap();

    let row = delivery(&w.db, d);
    assert_eq!(
        (
            row.status.as_str(),
            row.proxima_tentativa_em,
            row.tentativas
        ),
        ("cancelada", None, 1)
    );
    assert_eq!(attempts(&w.db, d).len(), 1);
}

#[test]
fn a_huge_latency_is_stored_saturated_and_an_unknown_delivery_is_an_error() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let d = pending(&w.db, &a, t0());
    let repo = w.repo();
    let slow = DeliveryAttempt {
        latency_ms: u32::MAX,
        ..attempt(t0(), None, Some("timeout"))
    };

    repo.record_attempt(w.acme.id, d, held(&w.db, d), &slow, DeliveryOutcome::Failed)
        .unwrap();
    let unknown = repo.record_attempt(
        w.acme.id,
        Uuid::new_v4(),
        Uuid::new_v4(),
        &slow,
        DeliveryOutcome::Failed,
    );

    assert_eq!(attempts(&w.db, d)[0].latencia_ms, i32::MAX);
    assert!(
        matches!(unknown, Err(RepoError::Unexpected(_))),
        "{unknown:?}"
    );
    assert_eq!(attempts(&w.db, d).len(), 1);
}

// --- list_for_url ---

#[test]
fn the_log_lists_the_newest_deliveries_of_the_companys_url_with_their_attempts() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let other = w.url(&w.acme, "acme.example/other");
    let db = &w.db;
    let oldest = pending(db, &a, t0() - minutes(3));
    let middle = pending(db, &a, t0() - minutes(2));
    let newest = pending(db, &a, t0() - minutes(1));
    pending(db, &other, t0());
    let repo = w.repo();
    let em1 = t0() + TimeDelta::seconds(1);
    let em2 = t0() + TimeDelta::seconds(2);
    let retry = t0() + minutes(10);
    repo.record_attempt(
        w.acme.id,
        middle,
        held(&w.db, middle),
        &attempt(em1, Some(500), Some("HTTP 500")),
        DeliveryOutcome::RetryAt(retry),
    )
    .unwrap();
    repo.record_attempt(
        w.acme.id,
        middle,
        held(&w.db, middle),
        &attempt(em2, Some(200), None),
        DeliveryOutcome::Delivered,
    )
    .unwrap();

    let two = repo.list_for_url(w.acme.id, a.id, 2).unwrap().unwrap();
    let all = repo.list_for_url(w.acme.id, a.id, 50).unwrap().unwrap();

    assert_eq!(
        two,
        vec![
            DeliveryRecord {
                id: newest,
                event_id: evento_of(db, newest),
                event_type: "solicitacao.criada".to_owned(),
                status: "pendente".to_owned(),
                created_at: t0() - minutes(1),
                next_attempt_at: Some(t0() - minutes(1)),
                attempts: vec![],
                request_body: body_of(db, newest),
            },
            DeliveryRecord {
                id: middle,
                event_id: evento_of(db, middle),
                event_type: "solicitacao.criada".to_owned(),
                status: "entregue".to_owned(),
                created_at: t0() - minutes(2),
                next_attempt_at: None,
                attempts: vec![
                    attempt(em1, Some(500), Some("HTTP 500")),
                    attempt(em2, Some(200), None),
                ],
                request_body: body_of(db, middle),
            },
        ]
    );
    assert_eq!(
        all.iter().map(|r| r.id).collect::<Vec<_>>(),
        [newest, middle, oldest],
        "only this URL's deliveries, newest first"
    );
    assert_eq!(repo.list_for_url(w.acme.id, a.id, 0).unwrap(), Some(vec![]));
}

#[test]
fn the_log_of_another_companys_or_an_unknown_url_is_none_and_a_removed_url_keeps_its_log() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let d = pending(&w.db, &a, t0());
    let repo = w.repo();
    assert!(PgWebhookUrlRepository::new(w.pool.clone())
        .soft_delete(w.acme.id, a.id, t0() + minutes(1))
        .unwrap());
    settle_all(&repo, w.acme.id, a.id, 10);

    assert_eq!(repo.list_for_url(w.globex.id, a.id, 10).unwrap(), None);
    assert_eq!(
        repo.list_for_url(w.acme.id, Uuid::new_v4(), 10).unwrap(),
        None
    );
    let log = repo.list_for_url(w.acme.id, a.id, 10).unwrap().unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!((log[0].id, log[0].status.as_str()), (d, "cancelada"));
}

/// Every page of `filter`, `size` at a time, following the keyset cursor: the ids in order.
fn paged(
    repo: &PgWebhookDeliveryRepository,
    empresa: CompanyId,
    url: Uuid,
    filter: &DeliveryFilter,
    size: u32,
) -> Vec<Uuid> {
    let mut filter = filter.clone();
    let mut ids = Vec::new();
    loop {
        let page = repo
            .page_for_url(empresa, url, &filter, size)
            .unwrap()
            .unwrap();
        ids.extend(page.iter().map(|d| d.id));
        match page.last() {
            Some(last) if page.len() == size as usize => {
                filter.before = Some((last.created_at, last.id))
            }
            _ => return ids,
        }
    }
}

#[test]
fn each_filter_of_the_log_pages_newest_first_by_keyset_as_the_whole_log_says() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let other = w.url(&w.acme, "acme.example/other");
    let db = &w.db;
    // (id, created at, status, type): ties in the creation instant, every status, two types
    let mut seeded = Vec::new();
    for i in 0..24i64 {
        let created = t0() - minutes(i / 3);
        let status = ["pendente", "entregue", "falhou", "cancelada"][(i % 4) as usize];
        let tipo = if i % 3 == 0 {
            "solicitacao.revogada"
        } else {
            "solicitacao.criada"
        };
        // a pending delivery has its next attempt (the table's check)
        let due = (status == "pendente").then_some(created);
        let id = seed(db, &a, status, created, due);
        seeded.push((id, created, status, tipo));
    }
    seed(db, &other, "falhou", t0(), None);
    let mut conn = db.conn();
    for (id, _, _, tipo) in &seeded {
        diesel::sql_query(format!(
            "WITH d AS (UPDATE webhook_entregas SET tipo_evento = '{tipo}' WHERE id = '{id}' \
             RETURNING evento_id) UPDATE webhook_eventos SET tipo = '{tipo}' \
             WHERE id = (SELECT evento_id FROM d)"
        ))
        .execute(&mut conn)
        .unwrap();
    }
    let repo = w.repo();
    let expected = |status: Option<&str>, tipo: Option<&str>, from: Option<DateTime<Utc>>| {
        let mut rows: Vec<_> = seeded
            .iter()
            .filter(|(_, c, s, t)| {
                status.is_none_or(|x| x == *s)
                    && tipo.is_none_or(|x| x == *t)
                    && from.is_none_or(|f| *c >= f)
            })
            .collect();
        rows.sort_by_key(|(id, c, _, _)| std::cmp::Reverse((*c, *id)));
        rows.into_iter().map(|(id, ..)| *id).collect::<Vec<_>>()
    };
    let from = t0() - minutes(5);
    for status in [None, Some("pendente"), Some("falhou")] {
        for tipo in [
            None,
            Some("solicitacao.revogada"),
            Some("solicitacao.criada"),
        ] {
            for period in [None, Some(from)] {
                let filter = DeliveryFilter {
                    status: status.map(str::to_owned),
                    event_type: tipo.map(str::to_owned),
                    created_from: period,
                    ..DeliveryFilter::default()
                };
                let want = expected(status, tipo, period);
                for size in [1, 2, 50] {
                    assert_eq!(
                        paged(&repo, w.acme.id, a.id, &filter, size),
                        want,
                        "{filter:?} by {size}"
                    );
                }
            }
        }
    }
    // the page carries each delivery's type from its event
    let revoked = DeliveryFilter {
        event_type: Some("solicitacao.revogada".to_owned()),
        ..DeliveryFilter::default()
    };
    let page = repo
        .page_for_url(w.acme.id, a.id, &revoked, 50)
        .unwrap()
        .unwrap();
    assert!(page.iter().all(|d| d.event_type == "solicitacao.revogada"));
    assert_eq!(
        repo.page_for_url(w.globex.id, a.id, &revoked, 50).unwrap(),
        None
    );

    // a delivery written before `tipo_evento` existed: found by the type filter once the
    // backfill gave it its event's type
    let old = seed(db, &a, "entregue", t0() + minutes(1), None);
    let criada = DeliveryFilter {
        event_type: Some("solicitacao.criada".to_owned()),
        ..DeliveryFilter::default()
    };
    let first =
        |f: &DeliveryFilter| repo.page_for_url(w.acme.id, a.id, f, 1).unwrap().unwrap()[0].id;
    assert_ne!(first(&criada), old);
    assert_eq!(first(&DeliveryFilter::default()), old);
    diesel::sql_query(
        "UPDATE preenchimentos_retroativos SET concluido_em = NULL, cursor = NULL \
         WHERE nome = 'webhook_entregas_tipo_evento'",
    )
    .execute(&mut conn)
    .unwrap();
    let ran = postgres_adapter::run_pending_backfills(&w.pool, 10).unwrap();
    assert_eq!(
        ran.iter()
            .find(|b| b.name == "webhook_entregas_tipo_evento")
            .map(|b| b.touched),
        Some(2),
        "the deliveries without a type (this one and the other URL's): {ran:?}"
    );
    assert_eq!(first(&criada), old);
}

// --- replay ---

#[test]
fn replay_makes_a_finished_delivery_due_again_now_keeping_its_attempts() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let failed = pending(&w.db, &a, t0());
    let delivered = pending(&w.db, &a, t0());
    let repo = w.repo();
    repo.record_attempt(
        w.acme.id,
        failed,
        held(&w.db, failed),
        &attempt(t0(), None, Some("timeout")),
        DeliveryOutcome::Failed,
    )
    .unwrap();
    repo.record_attempt(
        w.acme.id,
        delivered,
        held(&w.db, delivered),
        &attempt(t0(), Some(200), None),
        DeliveryOutcome::Delivered,
    )
    .unwrap();
    let now = t0() + days(1);

    assert!(repo.replay(w.acme.id, a.id, failed, now).unwrap());
    assert!(repo.replay(w.acme.id, a.id, delivered, now).unwrap());

    for id in [failed, delivered] {
        let row = delivery(&w.db, id);
        assert_eq!(
            (
                row.status.as_str(),
                row.proxima_tentativa_em,
                row.atualizado_em,
                row.entregue_em
            ),
            ("pendente", Some(now), now, None)
        );
        assert_eq!(row.tentativas, 1, "the attempts made stay counted");
        assert_eq!(attempts(&w.db, id).len(), 1);
    }
    let claimed = common::webhook::claim(&repo, 10, now, now + minutes(5)).unwrap();
    assert_eq!(ids(&claimed), sorted(vec![failed, delivered]));
    assert!(
        claimed.iter().all(|d| d.event_id == evento_of(&w.db, d.id)),
        "same event id"
    );
}

#[test]
fn replay_of_another_companys_a_mismatched_a_removed_or_an_unknown_delivery_is_false() {
    let w = world(2);
    let a = w.url(&w.acme, "acme.example/a");
    let b = w.url(&w.acme, "acme.example/b");
    let gone = w.url(&w.acme, "acme.example/gone");
    let off = w.url(&w.acme, "acme.example/off");
    let db = &w.db;
    let on_a = seed(db, &a, "falhou", t0(), None);
    let on_gone = seed(db, &gone, "falhou", t0(), None);
    let on_off = seed(db, &off, "falhou", t0(), None);
    set_removed(db, gone.id, t0());
    set_disabled(db, off.id, Some(t0()));
    let repo = w.repo();
    let now = t0() + days(1);

    assert!(!repo.replay(w.globex.id, a.id, on_a, now).unwrap());
    assert!(!repo.replay(w.acme.id, b.id, on_a, now).unwrap());
    assert!(!repo.replay(w.acme.id, gone.id, on_gone, now).unwrap());
    assert!(!repo.replay(w.acme.id, a.id, Uuid::new_v4(), now).unwrap());
    for id in [on_a, on_gone] {
        assert_eq!(delivery(db, id).status, "falhou");
    }
    // A disabled URL is not removed: its delivery is replayed (and sent once it is enabled).
    assert!(repo.replay(w.acme.id, off.id, on_off, now).unwrap());
    assert_eq!(delivery(db, on_off).status, "pendente");
    assert_eq!(common::webhook::claim(&repo, 10, now, now).unwrap(), []);
}

// --- disable_failing_urls ---

/// One attempt to `url` at `at` through the sender's record (a new delivery, held, of an event
/// of type `tipo`): `ok` delivered, otherwise failed (retried, or out of retries).
fn attempt_to(w: &World, url: &WebhookUrl, tipo: &str, at: DateTime<Utc>, ok: bool) {
    let evento = event(&w.db, url.company_id, at);
    diesel::update(ev::table.filter(ev::id.eq(evento)))
        .set(ev::tipo.eq(tipo))
        .execute(&mut w.db.conn())
        .unwrap();
    let d = deliver(&w.db, evento, url, "pendente", at, Some(at));
    let (status, outcome) = if ok {
        (Some(204), DeliveryOutcome::Delivered)
    } else {
        (Some(500), DeliveryOutcome::Failed)
    };
    assert!(w
        .repo()
        .record_attempt(
            url.company_id,
            d,
            held(&w.db, d),
            &attempt(at, status, None),
            outcome
        )
        .unwrap());
}

/// `(desativado_em, falhando_desde, motivo_desativacao)` of URL `u`.
fn disabling(
    db: &TestDb,
    u: &WebhookUrl,
) -> (Option<DateTime<Utc>>, Option<DateTime<Utc>>, Option<String>) {
    webhook_urls::table
        .filter(webhook_urls::id.eq(u.id))
        .select((
            webhook_urls::desativado_em,
            webhook_urls::falhando_desde,
            webhook_urls::motivo_desativacao,
        ))
        .first(&mut db.conn())
        .unwrap()
}

/// Issue 39: a URL registered a few minutes ago whose test event failed and whose first delivery
/// ran out of retries was disabled at once. A URL is disabled only when it has failed without a
/// single success for the whole window since its first failure after its last success; test
/// events never count; the reason and that first failure are stored, and told.
#[test]
fn a_url_is_disabled_only_after_failing_without_a_success_for_the_window_since_its_first_failure() {
    let w = world(2);
    let now = t0();
    let window = days(5);
    const EVENT: &str = "solicitacao.criada";
    const TEST: &str = "webhook.teste";
    let new = w.url(&w.acme, "acme.example/new");
    attempt_to(&w, &new, TEST, now - minutes(3), false);
    attempt_to(&w, &new, EVENT, now - minutes(2), false);
    attempt_to(
        &w,
        &new,
        EVENT,
        now - minutes(1) - TimeDelta::seconds(1),
        false,
    );
    let failing = w.url(&w.acme, "acme.example/failing");
    attempt_to(&w, &failing, EVENT, now - days(9), true);
    attempt_to(&w, &failing, EVENT, now - window, false);
    attempt_to(&w, &failing, EVENT, now - days(1), false);
    // a test event's success is no success either
    attempt_to(&w, &failing, TEST, now - days(1), true);
    let theirs = w.url(&w.globex, "globex.example/failing");
    attempt_to(&w, &theirs, EVENT, now - days(6), false);
    let recovered = w.url(&w.acme, "acme.example/recovered");
    attempt_to(&w, &recovered, EVENT, now - days(7), false);
    attempt_to(&w, &recovered, EVENT, now - days(2), true);
    attempt_to(&w, &recovered, EVENT, now - days(1), false);
    let quiet = w.url(&w.acme, "acme.example/quiet");
    attempt_to(&w, &quiet, EVENT, now - days(8), true);
    let only_tests = w.url(&w.acme, "acme.example/tests");
    attempt_to(&w, &only_tests, TEST, now - days(8), false);
    let removed = w.url(&w.acme, "acme.example/removed");
    attempt_to(&w, &removed, EVENT, now - days(8), false);
    set_removed(&w.db, removed.id, now - days(1));
    let repo = w.repo();

    let count = repo.disable_failing_urls(now, window).unwrap();
    let again = repo.disable_failing_urls(now + minutes(1), window).unwrap();

    assert_eq!((count, again), (2, 0));
    let reason = Some(domain::WebhookUrl::DISABLED_FOR_FAILING.to_owned());
    assert_eq!(
        disabling(&w.db, &failing),
        (Some(now), Some(now - window), reason.clone())
    );
    assert_eq!(
        disabling(&w.db, &theirs),
        (Some(now), Some(now - days(6)), reason),
        "every company's URLs"
    );
    assert_eq!(
        disabling(&w.db, &new),
        (None, Some(now - minutes(2)), None),
        "failing for two minutes: told, not disabled"
    );
    assert_eq!(
        disabling(&w.db, &recovered),
        (None, Some(now - days(1)), None)
    );
    assert_eq!(disabling(&w.db, &quiet), (None, None, None));
    assert_eq!(disabling(&w.db, &only_tests), (None, None, None));
    assert_eq!(disabling(&w.db, &removed).0, None);
    let listed = PgWebhookUrlRepository::new(w.pool.clone())
        .get(w.acme.id, failing.id)
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            listed.disabled_at,
            listed.failing_since,
            listed.disabled_reason.as_deref()
        ),
        (Some(now), Some(now - window), Some("falhas_sem_sucesso"))
    );
    // One `webhook-url.desativada` per URL disabled, naming it, since when and why; delivered to
    // the company's other active URLs only (globex has none: the event is in its feed only).
    let told = common::webhook::events_of(&w.db, "webhook-url.desativada");
    assert_eq!(told.len(), 2);
    let of = |c: &Company| told.iter().find(|e| e.empresa_id == c.id.0).unwrap();
    let acme_event: serde_json::Value = serde_json::from_str(&of(&w.acme).payload).unwrap();
    assert_eq!(acme_event["data"]["webhookUrlId"], failing.id.to_string());
    assert_eq!(acme_event["data"]["url"], failing.url.as_str());
    assert_eq!(acme_event["data"]["motivo"], "falhas_sem_sucesso");
    let since: DateTime<Utc> = acme_event["data"]["falhandoDesde"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(since, now - window);
    assert_eq!(
        common::webhook::url_ids(&common::webhook::deliveries_of(&w.db, of(&w.acme).id)),
        common::webhook::sorted(vec![new.id, recovered.id, quiet.id, only_tests.id])
    );
    assert!(common::webhook::deliveries_of(&w.db, of(&w.globex).id).is_empty());
}

/// A URL already disabled keeps its disabling time, reason and first failure whatever its last
/// deliveries in flight did.
#[test]
fn a_disabled_url_keeps_why_and_since_when_and_its_pending_deliveries_are_not_claimed() {
    let w = world(2);
    let now = t0();
    let url = w.url(&w.acme, "acme.example/down");
    attempt_to(&w, &url, "solicitacao.criada", now - days(6), false);
    let waiting = pending(&w.db, &url, now - days(1));
    let repo = w.repo();
    assert_eq!(
        repo.disable_failing_urls(now - days(1), days(5)).unwrap(),
        1
    );
    // a delivery sent as it was being disabled succeeds: the record of why stays
    attempt_to(&w, &url, "solicitacao.criada", now - minutes(1), true);

    assert_eq!(
        disabling(&w.db, &url),
        (
            Some(now - days(1)),
            Some(now - days(6)),
            Some("falhas_sem_sucesso".to_owned())
        )
    );
    let claimed = common::webhook::claim(&repo, 10, now, now).unwrap();
    assert!(claimed.iter().all(|d| d.id != waiting));
}

#[test]
fn a_secret_stored_with_a_url_is_what_the_claim_hands_over() {
    let w = world(2);
    let h = domain::WebhookUrl {
        id: Uuid::new_v4(),
        company_id: w.acme.id,
        url: "https://acme.example/x".to_owned(),
        created_at: t0(),
        removed_at: None,
        disabled_at: None,
        failing_since: None,
        disabled_reason: None,
        events: domain::EventSelection::All,
    };
    PgWebhookUrlRepository::new(w.pool.clone())
        .insert(&h, &EncryptedSecret("v1:segredo".to_owned()), u32::MAX)
        .unwrap();
    let e = event(&w.db, w.acme.id, t0());
    let d = deliver(&w.db, e, &h, "pendente", t0(), Some(t0()));

    let claimed = common::webhook::claim(&w.repo(), 1, t0(), t0() + minutes(1)).unwrap();

    assert_eq!(ids(&claimed), [d]);
    assert_eq!(claimed[0].secret, EncryptedSecret("v1:segredo".to_owned()));
    assert_eq!(claimed[0].payload, body(e));
}

#[test]
fn a_reenabled_url_is_not_disabled_again_for_the_failures_before_its_reenabling_but_is_for_new_ones(
) {
    let w = world(2);
    let now = t0();
    let window = days(5);
    let url = w.url(&w.acme, "acme.example/reenabled");
    attempt_to(&w, &url, "solicitacao.criada", now - days(7), false);
    let urls = PgWebhookUrlRepository::new(w.pool.clone());
    let repo = w.repo();
    assert_eq!(repo.disable_failing_urls(now - days(1), window).unwrap(), 1);
    let reenabled_at = now - minutes(10);

    let back = urls
        .reenable(w.acme.id, url.id, reenabled_at)
        .unwrap()
        .unwrap();

    assert_eq!(
        (back.disabled_at, back.failing_since, back.disabled_reason),
        (None, None, None)
    );
    assert_eq!(repo.disable_failing_urls(now, window).unwrap(), 0);
    // A failure after the re-enabling counts again, from its own time.
    attempt_to(&w, &url, "solicitacao.criada", now - minutes(5), false);
    assert_eq!(repo.disable_failing_urls(now, window).unwrap(), 0);
    assert_eq!(
        repo.disable_failing_urls(now - minutes(5) + window, window)
            .unwrap(),
        1
    );
    let listed = urls.get(w.acme.id, url.id).unwrap().unwrap();
    assert_eq!(
        (listed.disabled_at, listed.failing_since),
        (Some(now - minutes(5) + window), Some(now - minutes(5)))
    );
}

// --- the backlog gauge ---

#[test]
fn the_backlog_counts_due_unparked_deliveries_and_finds_the_oldest_of_any_company() {
    use ports::OperationalStats;
    let w = world(2);
    let acme_url = w.url(&w.acme, "acme.example/hook");
    let globex_url = w.url(&w.globex, "globex.example/hook");
    let now = t0();
    pending(&w.db, &acme_url, now - minutes(1));
    pending(&w.db, &acme_url, now - minutes(2));
    let parked_one = pending(&w.db, &acme_url, now - minutes(90));
    diesel::update(we::table.filter(we::id.eq(parked_one)))
        .set(we::estacionada.eq(true))
        .execute(&mut w.db.conn())
        .unwrap();
    pending(&w.db, &globex_url, now - minutes(30));
    pending(&w.db, &globex_url, now + minutes(5));
    let stats = postgres_adapter::PgOperationalStats::new(w.pool.clone());

    let backlog = stats.backlog(now).unwrap();

    assert_eq!(
        backlog.deliveries_due, 3,
        "due and not parked, every company"
    );
    assert_eq!(
        backlog.oldest_delivery_due_seconds, 1800.0,
        "the oldest due of any company, the parked one aside"
    );
}
