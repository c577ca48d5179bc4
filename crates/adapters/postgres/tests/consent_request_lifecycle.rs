//! `find_valid`, `transition` and the two worker operations, the status checks' schedule
//! (`companies_with_due_status_checks`, `claim_status_checks`, `schedule_status_checks`) and
//! `expire_due`, including concurrent callers on one pool.

mod common;

use std::collections::HashSet;
use std::sync::Barrier;
use std::thread;

use chrono::{DateTime, TimeDelta, Utc};
use common::consent::{
    claim_checks, cpf, history, history_count, next_check, pool_of, set_every_next_check,
    set_next_check, stored, sweep_lane, tenant, Spec, CPF, OTHER_CPF,
};
use common::{at, pool};
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use domain::{ConsentRequest, ConsentStatus, Cpf, TransitionCause};
use ports::{
    ConsentRequestRepository, DueStatusChecks, NextStatusCheck, ScheduledStatusCheck,
    StatusCheckItem, StatusCheckSchedule, StatusSweepLane, StatusSweepLease,
};
use postgres_adapter::{PgConsentRequestRepository, PgStatusCheckSchedule};
use testkit::TestDb;
use uuid::Uuid;

use ConsentStatus::{Active, Expired, Pending, Refused, Revoked};

/// The instant of `find_valid` and `expire_due` in these tests.
fn now() -> DateTime<Utc> {
    at("2026-06-01T12:00:00Z")
}

fn created() -> DateTime<Utc> {
    at("2026-05-01T12:00:00Z")
}

fn days(n: i64) -> TimeDelta {
    TimeDelta::days(n)
}

fn sorted(mut ids: Vec<Uuid>) -> Vec<Uuid> {
    ids.sort();
    ids
}

// --- find_valid ---

#[test]
fn find_valid_picks_the_active_request_expiring_last_of_the_company_subject_and_template() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let globex = tenant(&pool, "Globex", "445556660001");
    let repo = PgConsentRequestRepository::new(pool);
    let spec = |status, expira_em| Spec::new(created()).status(status).expira_em(expira_em);
    acme.create(&repo, &spec(Active, now() + days(1)));
    let last = acme.create(&repo, &spec(Active, now() + days(30)));
    acme.create(&repo, &spec(Active, now()));
    acme.create(&repo, &spec(Active, now() - days(1)));
    // Not active, though expiring later.
    acme.create(&repo, &spec(Expired, now() + days(60)));
    acme.create(&repo, &spec(Revoked, now() + days(60)));
    acme.create(&repo, &spec(Pending, now() + days(60)));
    // Another template, another subject, another company.
    let tpl2 = acme.create(&repo, &spec(Active, now() + days(90)).template("tpl-2"));
    let other_cpf = acme.create(&repo, &spec(Active, now() + days(90)).cpf(OTHER_CPF));
    let theirs = globex.create(&repo, &spec(Active, now() + days(90)));
    let acme_id = acme.company.id;

    let found = repo.find_valid(acme_id, &cpf(CPF), "tpl-1", now()).unwrap();

    assert_eq!(found, Some(last.clone()));
    assert_eq!(
        repo.find_valid(acme_id, &cpf(CPF), "tpl-2", now()).unwrap(),
        Some(tpl2)
    );
    assert_eq!(
        repo.find_valid(acme_id, &cpf(OTHER_CPF), "tpl-1", now())
            .unwrap(),
        Some(other_cpf)
    );
    assert_eq!(
        repo.find_valid(globex.company.id, &cpf(CPF), "tpl-1", now())
            .unwrap(),
        Some(theirs)
    );
    assert_eq!(
        repo.find_valid(acme_id, &cpf(CPF), "tpl-3", now()).unwrap(),
        None
    );
    // At the instant the last one expires, none of the company's tpl-1 requests is valid.
    assert_eq!(
        repo.find_valid(acme_id, &cpf(CPF), "tpl-1", last.content.consent_expires_at)
            .unwrap(),
        None
    );
}

#[test]
fn find_valid_many_answers_each_pair_in_order_as_find_valid_would_in_one_statement() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let globex = tenant(&pool, "Globex", "445556660001");
    let repo = PgConsentRequestRepository::new(pool);
    let spec = |status, expira_em| Spec::new(created()).status(status).expira_em(expira_em);
    acme.create(&repo, &spec(Active, now() + days(1)));
    let last = acme.create(&repo, &spec(Active, now() + days(30)));
    acme.create(&repo, &spec(Revoked, now() + days(60)).template("tpl-2"));
    let other_cpf = acme.create(&repo, &spec(Active, now() + days(90)).cpf(OTHER_CPF));
    globex.create(&repo, &spec(Active, now() + days(90)).template("tpl-2"));
    let pairs: Vec<(Cpf, String)> = [
        (CPF, "tpl-2"),       // revoked here; Globex's is not ACME's
        (CPF, "tpl-1"),       // the one expiring last
        (OTHER_CPF, "tpl-1"), // another subject
        (CPF, "tpl-1"),       // the same pair twice: answered twice
        (CPF, "tpl-9"),       // nothing
    ]
    .into_iter()
    .map(|(c, t)| (cpf(c), t.to_owned()))
    .collect();

    let found = repo
        .find_valid_many(acme.company.id, &pairs, now())
        .unwrap();

    assert_eq!(
        found,
        vec![None, Some(last.clone()), Some(other_cpf), Some(last), None]
    );
    assert_eq!(
        repo.find_valid_many(acme.company.id, &[], now()).unwrap(),
        Vec::<Option<ConsentRequest>>::new()
    );
}

// --- transition ---

#[test]
fn transition_is_a_compare_and_set_with_its_history_entry() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let repo = PgConsentRequestRepository::new(pool);
    let request = acme.create(&repo, &Spec::new(created()).status(Pending));
    let at1 = created() + TimeDelta::hours(1);
    let at2 = created() + TimeDelta::hours(2);
    let id = request.id;
    let empresa = acme.company.id;

    let first = repo
        .transition(
            empresa,
            id,
            Pending,
            Active,
            TransitionCause::Pgcc,
            None,
            at1,
        )
        .unwrap();
    let again = repo
        .transition(
            empresa,
            id,
            Pending,
            Active,
            TransitionCause::Pgcc,
            None,
            at2,
        )
        .unwrap();

    assert!(first);
    assert!(!again, "the status is no longer pendente");
    let row = stored(&db, id);
    assert_eq!(row.status, "ativo");
    assert_eq!(row.atualizado_em, at1);
    let entries = history(&db, id);
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert_eq!(entries[1].de.as_deref(), Some("pendente"));
    assert_eq!(entries[1].para, "ativo");
    assert_eq!(entries[1].em, at1);
    assert_eq!(entries[1].causa, "pgcc");

    // From the new status it moves on.
    assert!(repo
        .transition(
            empresa,
            id,
            Active,
            Revoked,
            TransitionCause::Company,
            None,
            at2
        )
        .unwrap());
    let entries = history(&db, id);
    assert_eq!(entries.len(), 3);
    assert_eq!(
        (entries[2].de.as_deref(), entries[2].para.as_str()),
        (Some("ativo"), "revogado")
    );
    assert_eq!(entries[2].causa, "empresa");
    assert_eq!(stored(&db, id).atualizado_em, at2);
}

#[test]
fn transition_of_another_companys_or_an_unknown_request_changes_nothing() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let globex = tenant(&pool, "Globex", "445556660001");
    let repo = PgConsentRequestRepository::new(pool);
    let request = acme.create(&repo, &Spec::new(created()).status(Pending));
    let at1 = created() + TimeDelta::hours(1);

    let by_other = repo
        .transition(
            globex.company.id,
            request.id,
            Pending,
            Active,
            TransitionCause::Pgcc,
            None,
            at1,
        )
        .unwrap();
    let unknown = repo
        .transition(
            acme.company.id,
            Uuid::new_v4(),
            Pending,
            Active,
            TransitionCause::Pgcc,
            None,
            at1,
        )
        .unwrap();
    let wrong_from = repo
        .transition(
            acme.company.id,
            request.id,
            Active,
            Revoked,
            TransitionCause::Company,
            None,
            at1,
        )
        .unwrap();

    assert!(!by_other && !unknown && !wrong_from);
    let row = stored(&db, request.id);
    assert_eq!(row.status, "pendente");
    assert_eq!(row.atualizado_em, created());
    assert_eq!(history_count(&db), 1);
}

#[test]
fn of_identical_transitions_racing_exactly_one_wins() {
    const RACERS: usize = 6;
    let db = TestDb::new();
    let pool = pool_of(&db, RACERS as u32);
    let acme = tenant(&pool, "ACME", "112223330001");
    let repo = PgConsentRequestRepository::new(pool);
    let request = acme.create(&repo, &Spec::new(created()).status(Pending));
    let barrier = Barrier::new(RACERS);

    let wins: Vec<bool> = thread::scope(|s| {
        let racers: Vec<_> = (0..RACERS)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    repo.transition(
                        acme.company.id,
                        request.id,
                        Pending,
                        Refused,
                        TransitionCause::Pgcc,
                        None,
                        now(),
                    )
                    .unwrap()
                })
            })
            .collect();
        racers.into_iter().map(|r| r.join().unwrap()).collect()
    });

    assert_eq!(wins.iter().filter(|&&w| w).count(), 1, "{wins:?}");
    assert_eq!(history(&db, request.id).len(), 2);
}

// --- the status checks' schedule ---

#[test]
fn a_claim_takes_one_companys_oldest_due_checks_and_leases_them_without_touching_the_request() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let globex = tenant(&pool, "Globex", "445556660001");
    let quiet = tenant(&pool, "Quiet", "778889990001");
    let repo = PgConsentRequestRepository::new(pool.clone());
    let schedule = PgStatusCheckSchedule::new(pool.clone());
    let t0 = common::now();
    let minutes = TimeDelta::minutes;
    let spec = |status| Spec::new(created()).status(status);
    let a = acme.create(&repo, &spec(Active));
    let b = globex.create(&repo, &spec(Pending));
    let c = acme.create(&repo, &spec(Pending));
    let d = acme.create(&repo, &spec(Active));
    let terminal = acme.create(&repo, &spec(Revoked));
    let not_due = acme.create(&repo, &spec(Active));
    let quiet_one = quiet.create(&repo, &spec(Active));
    assert_eq!(
        next_check(&db, terminal.id),
        None,
        "a final status is never scheduled"
    );
    for (request, when) in [
        (&a, t0 - minutes(4)),
        (&b, t0 - minutes(3)),
        (&c, t0 - minutes(2)),
        (&d, t0),
        (&not_due, t0 + minutes(1)),
        (&quiet_one, t0 + minutes(30)),
    ] {
        set_next_check(&db, request.id, when);
    }
    let before = stored(&db, a.id);
    let lease = t0 + minutes(5);
    let ids_of = |items: &[StatusCheckItem]| sorted(items.iter().map(|i| i.id).collect());

    let mut found = schedule
        .companies_with_due_status_checks(t0, None, 10)
        .unwrap();
    found.sort();
    assert_eq!(
        found,
        sorted(vec![acme.company.id.0, globex.company.id.0])
            .into_iter()
            .map(|id| DueStatusChecks {
                company_id: domain::CompanyId(id),
                scheduled: true,
                swept: false,
            })
            .collect::<Vec<_>>(),
        "the quiet company has nothing due; the others their own scheduled checks, no sweep"
    );
    let due: Vec<domain::CompanyId> = found.iter().map(|d| d.company_id).collect();
    let first = *due.iter().min().unwrap();
    assert_eq!(
        schedule
            .companies_with_due_status_checks(t0, Some(first), 10)
            .unwrap()
            .into_iter()
            .map(|d| d.company_id)
            .collect::<Vec<_>>(),
        [*due.iter().max().unwrap(), first],
        "the turn goes on after the last company served, then wraps around"
    );

    let oldest = schedule
        .claim_status_checks(DueStatusChecks::all(acme.company.id), 2, t0, lease)
        .unwrap();
    let rest = schedule
        .claim_status_checks(DueStatusChecks::all(acme.company.id), 10, t0, lease)
        .unwrap();
    let none = schedule
        .claim_status_checks(DueStatusChecks::all(acme.company.id), 10, t0, lease)
        .unwrap();
    let globex_items = schedule
        .claim_status_checks(DueStatusChecks::all(globex.company.id), 10, t0, lease)
        .unwrap();

    assert_eq!(ids_of(&oldest), sorted(vec![a.id, c.id]));
    let a_item = oldest.iter().find(|i| i.id == a.id).unwrap();
    assert_eq!(
        *a_item,
        StatusCheckItem {
            id: a.id,
            company_id: acme.company.id,
            pgcc_id: a.pgcc_id.clone(),
            status: Active,
            unknown_status_since: None,
            due_at: t0 - minutes(4),
            interval_seconds: 0,
            sweep: None,
        }
    );
    assert_eq!(ids_of(&rest), [d.id]);
    assert_eq!(none, []);
    assert_eq!(ids_of(&globex_items), [b.id], "each company its own");
    for request in [&a, &b, &c, &d] {
        assert_eq!(next_check(&db, request.id), Some(lease));
    }
    assert_eq!(next_check(&db, not_due.id), Some(t0 + minutes(1)));
    assert_eq!(
        stored(&db, a.id),
        before,
        "the request itself is not written"
    );
    assert_eq!(
        schedule
            .claim_status_checks(DueStatusChecks::all(acme.company.id), 0, lease, lease)
            .unwrap(),
        []
    );

    // the schedule after the check: a to the company's active sweep, c's in 1 min with its
    // interval, d gone
    schedule
        .schedule_status_checks(&[
            ScheduledStatusCheck {
                company_id: acme.company.id,
                id: a.id,
                next: NextStatusCheck::Sweep {
                    lane: StatusSweepLane::Active,
                    period_seconds: 900,
                    first_pass_at: t0 + minutes(15),
                },
            },
            ScheduledStatusCheck {
                company_id: acme.company.id,
                id: c.id,
                next: NextStatusCheck::At {
                    at: t0 + minutes(1),
                    interval_seconds: 60,
                },
            },
            ScheduledStatusCheck {
                company_id: acme.company.id,
                id: d.id,
                next: NextStatusCheck::Never,
            },
        ])
        .unwrap();
    assert_eq!(next_check(&db, a.id), None, "no row of its own due");
    assert_eq!(sweep_lane(&db, a.id).as_deref(), Some("ativo"));
    assert_eq!(next_check(&db, d.id), None);
    assert_eq!(sweep_lane(&db, d.id), None);
    let again = schedule
        .claim_status_checks(
            DueStatusChecks::all(acme.company.id),
            10,
            t0 + minutes(1),
            lease,
        )
        .unwrap();
    assert_eq!(ids_of(&again), sorted(vec![c.id, not_due.id]));
    assert_eq!(
        again
            .iter()
            .find(|i| i.id == c.id)
            .unwrap()
            .interval_seconds,
        60
    );
}

#[derive(QueryableByName)]
struct RowVersion {
    #[diesel(sql_type = diesel::sql_types::Text)]
    v: String,
}

/// The row versions (`xmin`) of the company's schedule rows, in id order: unchanged when
/// nothing wrote them.
fn schedule_versions(db: &TestDb, company: domain::CompanyId) -> Vec<String> {
    diesel::sql_query(
        "SELECT xmin::text AS v FROM verificacoes_status WHERE empresa_id = $1
         ORDER BY solicitacao_id",
    )
    .bind::<diesel::sql_types::Uuid, _>(company.0)
    .load::<RowVersion>(&mut db.conn())
    .unwrap()
    .into_iter()
    .map(|r| r.v)
    .collect()
}

#[test]
fn a_sweep_hands_out_its_lane_in_id_order_batches_writes_nothing_per_check_and_passes_once_a_period(
) {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let globex = tenant(&pool, "Globex", "445556660001");
    let repo = PgConsentRequestRepository::new(pool.clone());
    let schedule = PgStatusCheckSchedule::new(pool.clone());
    let t0 = common::now();
    let minutes = TimeDelta::minutes;
    let spec = Spec::new(created()).status(Active);
    let mine: Vec<Uuid> = sorted((0..5).map(|_| acme.create(&repo, &spec).id).collect());
    let theirs = globex.create(&repo, &spec).id;
    let sweep = |company, id, first_pass_at| ScheduledStatusCheck {
        company_id: company,
        id,
        next: NextStatusCheck::Sweep {
            lane: StatusSweepLane::Active,
            period_seconds: 900,
            first_pass_at,
        },
    };
    let mut schedules: Vec<ScheduledStatusCheck> = mine
        .iter()
        .map(|id| sweep(acme.company.id, *id, t0))
        .collect();
    schedules.push(sweep(globex.company.id, theirs, t0 + minutes(60)));
    schedule.schedule_status_checks(&schedules).unwrap();
    let versions = schedule_versions(&db, acme.company.id);
    let before = stored(&db, mine[0]);

    assert_eq!(
        schedule
            .companies_with_due_status_checks(t0, None, 10)
            .unwrap(),
        [DueStatusChecks {
            company_id: acme.company.id,
            scheduled: false,
            swept: true,
        }],
        "globex's first pass is an hour away; acme's checks are all in its sweep"
    );
    let ids = |items: &[StatusCheckItem]| items.iter().map(|i| i.id).collect::<Vec<_>>();
    let lease = t0 + minutes(1);
    let first = schedule
        .claim_status_checks(DueStatusChecks::all(acme.company.id), 2, t0, lease)
        .unwrap();
    assert_eq!(ids(&first), mine[..2], "in id order from the first");
    assert_eq!(
        first[0].sweep,
        Some(StatusSweepLease {
            company_id: acme.company.id,
            lane: StatusSweepLane::Active,
            token: lease,
        })
    );
    assert_eq!(first[0].due_at, t0, "the pass started on time: no lag");
    assert_eq!(
        schedule
            .claim_status_checks(DueStatusChecks::all(acme.company.id), 10, t0, lease)
            .unwrap(),
        [],
        "the leased batch is nobody else's, and the lane waits for it"
    );
    assert_eq!(
        schedule
            .companies_with_due_status_checks(t0, None, 10)
            .unwrap(),
        []
    );
    // not handed back (the PGCC failed): read again once its lease ends
    let retried = schedule
        .claim_status_checks(
            DueStatusChecks::all(acme.company.id),
            2,
            lease,
            lease + minutes(1),
        )
        .unwrap();
    assert_eq!(ids(&retried), mine[..2]);
    schedule
        .advance_status_sweeps(&[retried[0].sweep.unwrap()], lease)
        .unwrap();
    // a stale lease (the first one) hands back nothing
    schedule
        .advance_status_sweeps(&[first[0].sweep.unwrap()], lease)
        .unwrap();

    let at = lease + minutes(1);
    let second = schedule
        .claim_status_checks(
            DueStatusChecks::all(acme.company.id),
            2,
            at,
            at + minutes(1),
        )
        .unwrap();
    assert_eq!(ids(&second), mine[2..4]);
    schedule
        .advance_status_sweeps(&[second[0].sweep.unwrap()], at)
        .unwrap();
    let last = schedule
        .claim_status_checks(
            DueStatusChecks::all(acme.company.id),
            2,
            at,
            at + minutes(1),
        )
        .unwrap();
    assert_eq!(ids(&last), mine[4..], "the pass's last batch is short");
    schedule
        .advance_status_sweeps(&[last[0].sweep.unwrap()], at)
        .unwrap();

    assert_eq!(
        schedule
            .claim_status_checks(
                DueStatusChecks::all(acme.company.id),
                10,
                at + minutes(5),
                at + minutes(6)
            )
            .unwrap(),
        [],
        "the pass is over until a period after it was due"
    );
    let next_pass = schedule
        .claim_status_checks(
            DueStatusChecks::all(acme.company.id),
            10,
            t0 + minutes(15),
            t0 + minutes(16),
        )
        .unwrap();
    assert_eq!(ids(&next_pass), mine, "the next pass, from the first again");
    assert_eq!(
        schedule_versions(&db, acme.company.id),
        versions,
        "no check wrote its request's schedule row"
    );
    assert_eq!(stored(&db, mine[0]), before, "nor the request");
}

/// Sets the PGCC id kept in request `id`'s schedule row (`None`: as a row written before it was
/// kept there).
fn set_scheduled_pgcc_id(db: &TestDb, id: Uuid, pgcc_id: Option<&str>) {
    diesel::sql_query("UPDATE verificacoes_status SET pgcc_id = $1 WHERE solicitacao_id = $2")
        .bind::<diesel::sql_types::Nullable<diesel::sql_types::Text>, _>(pgcc_id)
        .bind::<diesel::sql_types::Uuid, _>(id)
        .execute(&mut db.conn())
        .unwrap();
}

/// Whether request `id` has a schedule row at all.
fn is_scheduled(db: &TestDb, id: Uuid) -> bool {
    diesel::select(diesel::dsl::sql::<diesel::sql_types::Bool>(&format!(
        "EXISTS (SELECT 1 FROM verificacoes_status WHERE solicitacao_id = '{id}')"
    )))
    .get_result(&mut db.conn())
    .unwrap()
}

#[test]
fn a_swept_batch_is_read_from_the_lane_alone_and_a_request_leaves_its_lane_when_final_or_odd() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let repo = PgConsentRequestRepository::new(pool.clone());
    let schedule = PgStatusCheckSchedule::new(pool.clone());
    let t0 = common::now();
    let minutes = TimeDelta::minutes;
    let spec = Spec::new(created()).status(Active);
    let mut requests: Vec<ConsentRequest> = (0..4).map(|_| acme.create(&repo, &spec)).collect();
    requests.sort_by_key(|r| r.id);
    let [kept, revoked, odd, expiring] = [0, 1, 2, 3].map(|i| requests[i].clone());
    let lane = |id| ScheduledStatusCheck {
        company_id: acme.company.id,
        id,
        next: NextStatusCheck::Sweep {
            lane: StatusSweepLane::Active,
            period_seconds: 900,
            first_pass_at: t0,
        },
    };
    schedule
        .schedule_status_checks(&requests.iter().map(|r| lane(r.id)).collect::<Vec<_>>())
        .unwrap();

    // a final status takes the request out of the schedule in its own transaction: by the
    // API's revocation (a transition) and by expiry
    assert!(repo
        .transition(
            acme.company.id,
            revoked.id,
            Active,
            Revoked,
            TransitionCause::Company,
            None,
            t0,
        )
        .unwrap());
    assert!(!is_scheduled(&db, revoked.id), "revoked: unscheduled");
    diesel::sql_query(
        "UPDATE solicitacoes_consentimento SET data_expiracao_consentimento = $1 WHERE id = $2",
    )
    .bind::<diesel::sql_types::Timestamptz, _>(t0 - minutes(1))
    .bind::<diesel::sql_types::Uuid, _>(expiring.id)
    .execute(&mut db.conn())
    .unwrap();
    assert_eq!(repo.expire_due(t0, 10).unwrap(), 1);
    assert!(!is_scheduled(&db, expiring.id), "expired: unscheduled");
    // an odd answer: the request's backoff is its own row, out of the lane
    assert!(schedule
        .defer_status_check(acme.company.id, odd.id, t0, t0 + minutes(10))
        .unwrap());
    assert_eq!(sweep_lane(&db, odd.id), None);
    assert_eq!(next_check(&db, odd.id), Some(t0 + minutes(10)));

    // the consent row is not read: what the lane holds is what the batch says
    diesel::sql_query("UPDATE solicitacoes_consentimento SET pgcc_id = 'outro' WHERE id = $1")
        .bind::<diesel::sql_types::Uuid, _>(kept.id)
        .execute(&mut db.conn())
        .unwrap();
    let batch = schedule
        .claim_status_checks(
            DueStatusChecks::all(acme.company.id),
            10,
            t0,
            t0 + minutes(1),
        )
        .unwrap();
    assert_eq!(
        batch
            .iter()
            .map(|i| (i.id, i.pgcc_id.as_str(), i.status, i.unknown_status_since))
            .collect::<Vec<_>>(),
        [(kept.id, kept.pgcc_id.as_str(), Active, None)],
        "only the request still in the lane, with the PGCC id and status its lane keeps"
    );
    schedule
        .advance_status_sweeps(&[batch[0].sweep.unwrap()], t0)
        .unwrap();

    // a row scheduled before the lane kept PGCC ids: read from its request until the backfill
    set_scheduled_pgcc_id(&db, kept.id, None);
    let next_pass = t0 + minutes(15);
    let swept = |items: Vec<StatusCheckItem>| -> Vec<StatusCheckItem> {
        // the odd request, due by its own row at t0 + 10 min, comes with the later claims
        items.into_iter().filter(|i| i.sweep.is_some()).collect()
    };
    let batch = swept(
        schedule
            .claim_status_checks(
                DueStatusChecks::all(acme.company.id),
                10,
                next_pass,
                next_pass + minutes(1),
            )
            .unwrap(),
    );
    assert_eq!(
        batch.iter().map(|i| i.pgcc_id.as_str()).collect::<Vec<_>>(),
        ["outro"]
    );
    db.conn()
        .batch_execute(
            "UPDATE preenchimentos_retroativos SET cursor = NULL, concluido_em = NULL, linhas = 0 \
             WHERE nome = 'verificacoes_status_pgcc_id'",
        )
        .unwrap();
    let reports = postgres_adapter::run_pending_backfills(&pool, 2).unwrap();
    assert_eq!(
        reports
            .iter()
            .find(|r| r.name == "verificacoes_status_pgcc_id")
            .map(|r| r.touched),
        Some(1),
        "only the row without its PGCC id"
    );
    schedule
        .advance_status_sweeps(&[batch[0].sweep.unwrap()], next_pass)
        .unwrap();
    let after = t0 + minutes(30);
    let batch = swept(
        schedule
            .claim_status_checks(
                DueStatusChecks::all(acme.company.id),
                10,
                after,
                after + minutes(1),
            )
            .unwrap(),
    );
    assert_eq!(
        batch.iter().map(|i| i.pgcc_id.as_str()).collect::<Vec<_>>(),
        ["outro"],
        "the backfill copied it"
    );
}

#[test]
fn an_unknown_status_backs_off_its_request_alone_until_it_is_forgotten() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let repo = PgConsentRequestRepository::new(pool.clone());
    let schedule = PgStatusCheckSchedule::new(pool.clone());
    let t0 = common::now();
    let minutes = TimeDelta::minutes;
    let odd = acme.create(&repo, &Spec::new(created()).status(Active));
    let plain = acme.create(&repo, &Spec::new(created()).status(Active));
    for request in [&odd, &plain] {
        set_next_check(&db, request.id, t0);
    }
    let claimed = claim_checks(&schedule, 10, t0, t0 + minutes(1));
    assert_eq!(claimed.len(), 2);
    assert!(claimed.iter().all(|i| i.unknown_status_since.is_none()));

    assert!(schedule
        .defer_status_check(acme.company.id, odd.id, t0, t0 + minutes(10))
        .unwrap());
    assert!(!schedule
        .defer_status_check(acme.company.id, Uuid::new_v4(), t0, t0 + minutes(10))
        .unwrap());

    // at t0 + 1 min only the neighbour is due; the odd one at t0 + 10 min, with its oddity
    let due = claim_checks(&schedule, 10, t0 + minutes(1), t0 + minutes(2));
    assert_eq!(due.iter().map(|i| i.id).collect::<Vec<_>>(), [plain.id]);
    let later = claim_checks(&schedule, 10, t0 + minutes(10), t0 + minutes(11));
    let odd_item = later.iter().find(|i| i.id == odd.id).unwrap();
    assert_eq!(odd_item.unknown_status_since, Some(t0));

    schedule
        .clear_unknown_status(acme.company.id, odd.id)
        .unwrap();
    set_next_check(&db, odd.id, t0 + minutes(20));
    let after = claim_checks(&schedule, 10, t0 + minutes(20), t0 + minutes(21));
    assert_eq!(
        after
            .iter()
            .find(|i| i.id == odd.id)
            .unwrap()
            .unknown_status_since,
        None
    );
}

#[test]
fn two_workers_claiming_at_once_never_share_a_request() {
    const ROWS: usize = 200;
    let db = TestDb::new();
    let pool = pool_of(&db, 4);
    let acme = tenant(&pool, "ACME", "112223330001");
    let repo = PgConsentRequestRepository::new(pool.clone());
    let schedule = PgStatusCheckSchedule::new(pool.clone());
    let all: HashSet<Uuid> = (0..ROWS)
        .map(|i| {
            let status = if i % 2 == 0 { Active } else { Pending };
            acme.create(&repo, &Spec::new(created()).status(status)).id
        })
        .collect();
    let t0 = common::now();
    set_every_next_check(&db, t0 - TimeDelta::minutes(1));
    let next = t0 + TimeDelta::hours(1);
    let barrier = Barrier::new(2);

    let claimed: Vec<Vec<Uuid>> = thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let mut mine = Vec::new();
                    loop {
                        let batch = schedule
                            .claim_status_checks(DueStatusChecks::all(acme.company.id), 7, t0, next)
                            .unwrap();
                        if batch.is_empty() {
                            return mine;
                        }
                        mine.extend(batch.into_iter().map(|i| i.id));
                    }
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });

    let first: HashSet<Uuid> = claimed[0].iter().copied().collect();
    let second: HashSet<Uuid> = claimed[1].iter().copied().collect();
    assert_eq!(first.len(), claimed[0].len(), "a worker got a row twice");
    assert_eq!(second.len(), claimed[1].len(), "a worker got a row twice");
    let shared = first.intersection(&second).count();
    assert_eq!(shared, 0, "{shared} requests claimed by both workers");
    let union: HashSet<Uuid> = first.union(&second).copied().collect();
    assert_eq!(union, all);
    assert_eq!(claim_checks(&schedule, 500, t0, next), []);
}

// --- expire_due ---

#[test]
fn expire_due_moves_exactly_the_due_requests_with_their_history() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let globex = tenant(&pool, "Globex", "445556660001");
    let repo = PgConsentRequestRepository::new(pool);
    let spec = |status, expira_em| Spec::new(created()).status(status).expira_em(expira_em);
    let ativo_past = acme.create(&repo, &spec(Active, now() - days(1)));
    let pendente_at_now = globex.create(&repo, &spec(Pending, now()));
    let ativo_live = acme.create(&repo, &spec(Active, now() + TimeDelta::microseconds(1)));
    let pendente_live = acme.create(&repo, &spec(Pending, now() + days(1)));
    let refused = acme.create(&repo, &spec(Refused, now() - days(1)));
    let revoked = acme.create(&repo, &spec(Revoked, now() - days(1)));
    let expired = acme.create(&repo, &spec(Expired, now() - days(1)));

    let moved = repo.expire_due(now(), 100).unwrap();

    assert_eq!(moved, 2);
    for (request, de) in [(&ativo_past, "ativo"), (&pendente_at_now, "pendente")] {
        let row = stored(&db, request.id);
        assert_eq!(row.status, "expirado");
        assert_eq!(row.atualizado_em, now());
        let entries = history(&db, request.id);
        assert_eq!(entries.len(), 2, "{entries:?}");
        assert_eq!(entries[1].de.as_deref(), Some(de));
        assert_eq!(entries[1].para, "expirado");
        assert_eq!(entries[1].em, now());
        assert_eq!(entries[1].causa, "expiracao");
    }
    for request in [&ativo_live, &pendente_live, &refused, &revoked, &expired] {
        let row = stored(&db, request.id);
        assert_eq!(row.status, request.status.as_str());
        assert_eq!(row.atualizado_em, created());
        // a final status is set up by its move from `pendente` (common::consent::create)
        let set_up = if request.status.is_terminal() { 2 } else { 1 };
        assert_eq!(history(&db, request.id).len(), set_up);
    }
    assert_eq!(repo.expire_due(now(), 100).unwrap(), 0);
    assert_eq!(history_count(&db), 7 + 3 + 2);
}

#[test]
fn expire_due_moves_at_most_limit_soonest_expiry_first() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let repo = PgConsentRequestRepository::new(pool);
    let due: Vec<_> = [3, 1, 2]
        .into_iter()
        .map(|d| acme.create(&repo, &Spec::new(created()).expira_em(now() - days(d))))
        .collect();
    let status = |i: usize| stored(&db, due[i].id).status;

    assert_eq!(repo.expire_due(now(), 2).unwrap(), 2);
    assert_eq!(
        (status(0), status(1), status(2)),
        ("expirado".into(), "ativo".into(), "expirado".into())
    );
    assert_eq!(repo.expire_due(now(), 0).unwrap(), 0);
    assert_eq!(repo.expire_due(now(), 2).unwrap(), 1);
    assert_eq!(repo.expire_due(now(), 2).unwrap(), 0);
    assert_eq!(history_count(&db), 3 + 3);
}

#[test]
fn two_expiry_workers_at_once_expire_each_request_once() {
    const ROWS: usize = 100;
    let db = TestDb::new();
    let pool = pool_of(&db, 4);
    let acme = tenant(&pool, "ACME", "112223330001");
    let repo = PgConsentRequestRepository::new(pool);
    for i in 0..ROWS {
        let status = if i % 2 == 0 { Active } else { Pending };
        acme.create(
            &repo,
            &Spec::new(created())
                .status(status)
                .expira_em(now() - TimeDelta::seconds(i as i64)),
        );
    }
    let barrier = Barrier::new(2);

    let counts: Vec<u32> = thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let mut total = 0;
                    loop {
                        let moved = repo.expire_due(now(), 7).unwrap();
                        if moved == 0 {
                            return total;
                        }
                        total += moved;
                    }
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });

    assert_eq!(counts.iter().sum::<u32>(), ROWS as u32, "{counts:?}");
    assert_eq!(
        db.scalar(
            "SELECT count(*) AS v FROM solicitacoes_consentimento WHERE status <> 'expirado'"
        ),
        0
    );
    assert_eq!(
        db.scalar(
            "SELECT count(DISTINCT solicitacao_id) AS v FROM solicitacoes_historico \
             WHERE causa = 'expiracao'"
        ),
        ROWS as i64
    );
    assert_eq!(history_count(&db), 2 * ROWS as i64);
}

#[derive(QueryableByName)]
struct Executions {
    #[diesel(sql_type = diesel::sql_types::Text)]
    statement: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

#[test]
fn the_workers_statements_are_prepared_once_per_connection_and_then_only_executed() {
    let db = TestDb::new();
    let pool = pool_of(&db, 1);
    let acme = tenant(&pool, "ACME", "112223330001");
    let repo = PgConsentRequestRepository::new(pool.clone());
    let schedule = PgStatusCheckSchedule::new(pool.clone());
    for d in 1..=12 {
        let request = acme.create(&repo, &Spec::new(created()).expira_em(now() - days(d)));
        set_next_check(&db, request.id, now() - days(1));
    }

    for round in 0..6 {
        let claimed = schedule
            .claim_status_checks(
                DueStatusChecks::all(acme.company.id),
                1,
                now(),
                now() + days(1),
            )
            .unwrap();
        assert_eq!(claimed.len(), 1, "round {round}");
        assert_eq!(repo.expire_due(now(), 1).unwrap(), 1, "round {round}");
        repo.claim_unfinished_creations(1, now(), now()).unwrap();
    }

    let mut conn = pool.get().unwrap();
    let executions = diesel::sql_query(
        "SELECT left(statement, 40) AS statement, (custom_plans + generic_plans)::bigint AS n \
         FROM pg_prepared_statements \
         WHERE statement LIKE 'UPDATE solicitacoes_consentimento%' \
            OR statement LIKE 'WITH devidas AS%' \
            OR statement LIKE 'SELECT * FROM consentimento_expirar%' \
            OR statement LIKE 'WITH n AS%' \
         ORDER BY statement",
    )
    .load::<Executions>(&mut conn)
    .unwrap()
    .into_iter()
    .map(|e| (e.statement.lines().next().unwrap_or("").to_owned(), e.n))
    .collect::<Vec<_>>();
    assert_eq!(
        executions,
        [
            // the expiry: the owner's function (issue 36)
            ("SELECT * FROM consentimento_expirar($1, ".to_owned(), 6),
            ("WITH devidas AS (".to_owned(), 6),
            // the expiry's events, and the use-case synchronization of the setup (the outbox's
            // batch write, `outbox::WriteEvents`)
            ("WITH n AS (".to_owned(), 7),
        ],
        "the status claim, the outbox, the expiry: one statement each (the reconciler finds no \
         company with an unfinished creation, so it claims nothing)"
    );
}

#[test]
fn the_schedule_backfill_gives_every_open_request_stored_before_it_a_check_and_no_other() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let repo = PgConsentRequestRepository::new(pool.clone());
    let spec = |status| Spec::new(created()).status(status);
    let open: Vec<Uuid> = [Active, Pending, Active]
        .into_iter()
        .map(|status| acme.create(&repo, &spec(status)).id)
        .collect();
    let closed = acme.create(&repo, &spec(Revoked));
    let unfinished = acme.request(&spec(Active));
    repo.begin_creation(&unfinished, common::now()).unwrap();
    // as a database migrated before the schedule existed: no row, the backfill registered
    db.conn()
        .batch_execute(
            "DELETE FROM verificacoes_status; \
             UPDATE preenchimentos_retroativos SET cursor = NULL, concluido_em = NULL, linhas = 0 \
             WHERE nome = 'verificacoes_status'",
        )
        .unwrap();
    let before = common::now();

    // batches of two rows: three batches over the five requests, then done
    let reports = postgres_adapter::run_pending_backfills(&pool, 2).unwrap();

    let report = reports
        .iter()
        .find(|r| r.name == "verificacoes_status")
        .expect("the backfill ran");
    assert_eq!(report.touched, 3);
    for id in &open {
        let due = next_check(&db, *id).expect("scheduled");
        assert!(
            due >= before && due <= common::now() + TimeDelta::seconds(900),
            "{due}"
        );
    }
    assert_eq!(
        next_check(&db, open[1]).map(|d| d <= common::now()),
        Some(true),
        "a pending one is due now"
    );
    assert_eq!(next_check(&db, closed.id), None);
    assert_eq!(next_check(&db, unfinished.id), None);
    // done: a second run does nothing
    assert!(postgres_adapter::run_pending_backfills(&pool, 2)
        .unwrap()
        .iter()
        .all(|r| r.name != "verificacoes_status"));
}
