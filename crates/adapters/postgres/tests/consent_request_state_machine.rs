//! The SQL of [`PgConsentRequestRepository`] restates three rules of the domain's state machine
//! (crates/domain/src/consent_status.rs) as status literals: which requests are effectively in
//! a status at an instant (the list's status filter, HashConsulta's "valid"), which expire
//! (`expire_due`), and which the status poller claims (`claim_status_checks`). Every status,
//! with its expiry before, at and after the instant, is stored in real PostgreSQL through the
//! creation path production uses, and each rule's SQL answer is held against the domain's:
//! a status added to the domain, or a rule changed on one side only, fails here.

mod common;

use chrono::{DateTime, TimeDelta, Utc};
use common::consent::{set_next_check, tenant, Spec, Tenant};
use common::{at, pool};
use domain::{ConsentEvent, ConsentRequest, ConsentStatus};
use ports::{ConsentFilter, ConsentRequestRepository};
use postgres_adapter::{PgConsentRequestRepository, PgStatusCheckSchedule};
use testkit::TestDb;

/// The instant every rule is evaluated at.
fn now() -> DateTime<Utc> {
    at("2026-06-01T12:00:00Z")
}

/// The domain's answer to "may the PGCC still report a change of a request in `status`?":
/// some event of the state machine moves it. The poller asks the PGCC about exactly those.
fn may_still_move(status: ConsentStatus) -> bool {
    ConsentEvent::ALL
        .into_iter()
        .any(|event| ConsentStatus::apply(Some(status), event).is_ok())
}

/// The domain's answer to "does expiry move `request` at `now`?": the state machine lets
/// `Expired` happen to its status, and its expiry is not after `now`.
fn expires(request: &ConsentRequest, now: DateTime<Utc>) -> bool {
    ConsentStatus::apply(Some(request.status), ConsentEvent::Expired).is_ok()
        && request.content.consent_expires_at <= now
}

/// One stored request per (status, expiry relative to `now`), each of its own company (so
/// HashConsulta's "the valid one of the subject and template" is about it alone).
struct Case {
    tenant: Tenant,
    request: ConsentRequest,
}

fn cases(pool: &postgres_adapter::PgPool, repo: &PgConsentRequestRepository) -> Vec<Case> {
    let expiries = [
        ("past", now() - TimeDelta::days(1)),
        ("now", now()),
        ("later", now() + TimeDelta::microseconds(1)),
    ];
    let mut cases = Vec::new();
    for status in ConsentStatus::ALL {
        for (name, expiry) in expiries {
            let n = cases.len();
            let tenant = tenant(
                pool,
                &format!("{status} {name}"),
                &format!("{:012}", 100_000_000_000u64 + n as u64),
            );
            let request = tenant.create(
                repo,
                &Spec::new(now() - TimeDelta::days(30))
                    .status(status)
                    .expira_em(expiry),
            );
            cases.push(Case { tenant, request });
        }
    }
    cases
}

fn label(case: &Case) -> String {
    format!(
        "{} expiring at {}",
        case.request.status, case.request.content.consent_expires_at
    )
}

#[test]
fn the_lists_status_filter_and_hash_consulta_answer_the_domains_effective_status() {
    let db = TestDb::new();
    let pool = pool(&db);
    let repo = PgConsentRequestRepository::new(pool.clone());
    let cases = cases(&pool, &repo);

    for case in &cases {
        let empresa = case.tenant.company.id;
        let effective = case.request.effective_status(now());
        for filter in ConsentStatus::ALL {
            let listed = repo
                .list(
                    empresa,
                    &ConsentFilter {
                        status: Some(filter),
                        ..ConsentFilter::default()
                    },
                    None,
                    10,
                    now(),
                )
                .unwrap();
            let ids: Vec<_> = listed.iter().map(|r| r.id).collect();
            let expected = if filter == effective {
                vec![case.request.id]
            } else {
                vec![]
            };
            assert_eq!(ids, expected, "{}: listed under {filter}?", label(case));
        }
        let valid = repo
            .find_valid(
                empresa,
                &case.request.content.subject_cpf,
                &case.request.content.template_id,
                now(),
            )
            .unwrap();
        assert_eq!(
            valid.map(|r| r.id),
            case.request.is_valid_at(now()).then_some(case.request.id),
            "{}: valid for HashConsulta?",
            label(case)
        );
    }
}

#[test]
fn expiry_moves_exactly_what_the_state_machine_expires_to_the_effective_status() {
    let db = TestDb::new();
    let pool = pool(&db);
    let repo = PgConsentRequestRepository::new(pool.clone());
    let cases = cases(&pool, &repo);
    let expected_moves = cases.iter().filter(|c| expires(&c.request, now())).count();
    assert!(expected_moves > 0, "the cases include expiring requests");

    let moved = repo.expire_due(now(), 1000).unwrap();

    assert_eq!(moved as usize, expected_moves);
    for case in &cases {
        let stored = repo
            .get(case.tenant.company.id, case.request.id)
            .unwrap()
            .expect("the request")
            .request;
        let expected = if expires(&case.request, now()) {
            ConsentStatus::Expired
        } else {
            case.request.status
        };
        assert_eq!(stored.status, expected, "{}", label(case));
        // after the worker ran, the stored status is the one reads reported before it
        assert_eq!(
            stored.status,
            case.request.effective_status(now()),
            "{}",
            label(case)
        );
    }
}

#[test]
fn the_status_poller_claims_exactly_the_statuses_the_state_machine_may_still_move() {
    let db = TestDb::new();
    let pool = pool(&db);
    let repo = PgConsentRequestRepository::new(pool.clone());
    let cases = cases(&pool, &repo);
    for case in &cases {
        set_next_check(&db, case.request.id, now() - TimeDelta::seconds(1));
    }

    let claimed = common::consent::claim_checks(
        &PgStatusCheckSchedule::new(pool.clone()),
        1000,
        now(),
        now() + TimeDelta::minutes(5),
    );

    for case in &cases {
        let was_claimed = claimed.iter().any(|item| item.id == case.request.id);
        assert_eq!(
            was_claimed,
            may_still_move(case.request.status),
            "{}: claimed?",
            label(case)
        );
    }
    assert!(claimed.iter().all(|item| may_still_move(item.status)));
}

#[derive(diesel::QueryableByName)]
struct Allowed {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    permitida: bool,
}

/// The owner's functions refuse every move the state machine does not make (issue 36):
/// `consentimento_transicao_permitida(de, para)`, which `consentimento_iniciar`,
/// `consentimento_transicionar` and `consentimento_expirar` ask, answers exactly the domain's
/// "some event moves `de` (nothing: a creation) to `para`", for every pair.
#[test]
fn the_owners_functions_allow_exactly_the_moves_of_the_state_machine() {
    use diesel::prelude::*;
    let db = TestDb::new();
    let mut conn = db.conn();
    let froms = std::iter::once(None).chain(ConsentStatus::ALL.into_iter().map(Some));
    for from in froms {
        for to in ConsentStatus::ALL {
            let domain = ConsentEvent::ALL
                .into_iter()
                .any(|event| ConsentStatus::apply(from, event) == Ok(to));
            let sql =
                diesel::sql_query("SELECT consentimento_transicao_permitida($1, $2) AS permitida")
                    .bind::<diesel::sql_types::Nullable<diesel::sql_types::Text>, _>(
                        from.map(|s| s.as_str()),
                    )
                    .bind::<diesel::sql_types::Text, _>(to.as_str())
                    .get_result::<Allowed>(&mut conn)
                    .unwrap()
                    .permitida;
            assert_eq!(sql, domain, "{from:?} -> {to:?}");
        }
    }
}

#[derive(diesel::QueryableByName)]
struct PlanLine {
    #[diesel(sql_type = diesel::sql_types::Text, column_name = "QUERY PLAN")]
    line: String,
}

/// The check is inlined into the statements that ask it (issue 40): a SQL function PostgreSQL
/// cannot inline (one with a `SET` clause, as it first had) is parsed and planned anew at every
/// call, a fifth of a creation's database time. The plan of a statement asking it shows its
/// `CASE`, never a call of the function.
#[test]
fn the_state_machine_check_is_inlined_into_the_statements_that_ask_it() {
    use diesel::prelude::*;
    let db = TestDb::new();
    let mut conn = db.conn();
    let plan: Vec<String> = diesel::sql_query(
        "EXPLAIN (VERBOSE, COSTS OFF) SELECT consentimento_transicao_permitida(s.status, 'expirado') \
         FROM solicitacoes_consentimento s",
    )
    .load::<PlanLine>(&mut conn)
    .unwrap()
    .into_iter()
    .map(|row| row.line)
    .collect();
    let plan = plan.join("\n");
    assert!(plan.contains("CASE"), "no inlined check in:\n{plan}");
    assert!(
        !plan.contains("consentimento_transicao_permitida"),
        "the check is called, not inlined:\n{plan}"
    );
}
