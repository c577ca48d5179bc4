//! The two-phase creation of [`PgConsentRequestRepository`]: `begin_creation` stores the row
//! `em_andamento` (invisible), `confirm_creation` / `cancel_creation` settle it, and the
//! reconciler claims what was left unfinished.

mod common;

use std::collections::HashSet;
use std::sync::{Arc, Barrier};
use std::thread;

use chrono::{DateTime, Utc};
use common::at;
use common::consent::{
    claim_checks, history, history_count, next_check, pool_of, stored, tenant, Spec, Tenant, LINK,
};
use common::webhook::{deliveries, events_of, register};
use diesel::prelude::*;
use domain::{ConsentRequest, ConsentStatus, PgccUseCase, TransitionCause};
use ports::{
    Confirmation, ConsentFilter, ConsentRequestRepository, CreationRecord, CreationStart,
    UnfinishedCreation, UseCaseRepository,
};
use postgres_adapter::schema::solicitacoes_consentimento as sc;
use postgres_adapter::{
    PgConsentRequestRepository, PgPool, PgStatusCheckSchedule, PgUseCaseRepository,
};
use testkit::TestDb;
use uuid::Uuid;

fn created() -> DateTime<Utc> {
    at("2026-05-01T12:00:00Z")
}

fn attempt() -> DateTime<Utc> {
    at("2026-05-01T12:00:00.5Z")
}

fn later() -> DateTime<Utc> {
    at("2026-05-01T12:05:00Z")
}

struct World {
    db: TestDb,
    pool: PgPool,
    repo: PgConsentRequestRepository,
    acme: Tenant,
    globex: Tenant,
}

fn world() -> World {
    let db = TestDb::new();
    let pool = pool_of(&db, 4);
    let acme = tenant(&pool, "ACME", "112223330001");
    let globex = tenant(&pool, "Globex", "445556660001");
    World {
        repo: PgConsentRequestRepository::new(pool.clone()),
        db,
        pool,
        acme,
        globex,
    }
}

/// A request as the service builds it before the PGCC answers: no PGCC id.
fn new_request(tenant: &Tenant, status: ConsentStatus) -> ConsentRequest {
    let mut request = tenant.request(&Spec::new(created()).status(status));
    request.pgcc_id = String::new();
    request
}

fn criacao(db: &TestDb, id: Uuid) -> (String, Option<String>, Option<DateTime<Utc>>) {
    sc::table
        .filter(sc::id.eq(id))
        .select((sc::criacao, sc::pgcc_id, sc::criacao_tentativa_em))
        .first(&mut db.conn())
        .unwrap()
}

/// Every read and worker of the port, as the request's company and at a later instant: does any
/// of them see `request`?
fn seen_anywhere(w: &World, request: &ConsentRequest) -> Vec<&'static str> {
    let empresa = request.company_id;
    let mut seen = Vec::new();
    if w.repo.get(empresa, request.id).unwrap().is_some() {
        seen.push("get");
    }
    let listed = w
        .repo
        .list(empresa, &ConsentFilter::default(), None, 500, later())
        .unwrap();
    if listed.iter().any(|r| r.id == request.id) {
        seen.push("list");
    }
    let cpf = request.content.subject_cpf.clone();
    if w.repo
        .find_valid(empresa, &cpf, "tpl-1", later())
        .unwrap()
        .is_some_and(|r| r.id == request.id)
    {
        seen.push("find_valid");
    }
    if w.repo
        .find_by_hash(empresa, &request.hash)
        .unwrap()
        .is_some()
    {
        seen.push("find_by_hash");
    }
    seen
}

/// Synchronizes `tenant`'s use cases to `templates` only (the others are removed).
fn sync_only(w: &World, tenant: &Tenant, templates: &[&str]) {
    let listed: Vec<PgccUseCase> = templates
        .iter()
        .map(|template| PgccUseCase {
            link_id: LINK,
            template_id: (*template).to_owned(),
            title: "Crédito".to_owned(),
            other_fields: "{}".to_owned(),
        })
        .collect();
    PgUseCaseRepository::new(w.pool.clone())
        .apply_sync(tenant.company.id, &listed, later())
        .unwrap();
}

#[test]
fn a_request_is_stored_under_the_companys_use_case_for_its_template() {
    let w = world();
    let mut request = new_request(&w.acme, ConsentStatus::Active);
    request.content.template_id = "tpl-2".to_owned();

    let start = w.repo.begin_creation(&request, attempt()).unwrap();

    assert_eq!(start, CreationStart::Started { link: Some(LINK) });
    // the template check and the insert are one statement: the use case is ACME's tpl-2, not
    // its tpl-1 nor Globex's tpl-2
    assert_eq!(stored(&w.db, request.id).caso_de_uso_id, w.acme.tpl2);
    assert_ne!(w.acme.tpl2, w.globex.tpl2);
}

#[test]
fn a_template_without_a_live_use_case_of_the_company_stores_nothing() {
    let w = world();
    let mut unknown = new_request(&w.acme, ConsentStatus::Active);
    unknown.content.template_id = "tpl-9".to_owned();
    sync_only(&w, &w.acme, &["tpl-2"]);
    let removed = new_request(&w.acme, ConsentStatus::Active); // tpl-1, removed just now

    for request in [&unknown, &removed] {
        assert_eq!(
            w.repo.begin_creation(request, attempt()).unwrap(),
            CreationStart::UnknownTemplate
        );
    }

    let rows: i64 = sc::table.count().get_result(&mut w.db.conn()).unwrap();
    assert_eq!(rows, 0);
}

#[test]
fn a_takeover_keeps_the_use_case_it_was_stored_under_even_once_removed() {
    let w = world();
    let request = new_request(&w.acme, ConsentStatus::Active);
    assert_eq!(
        w.repo.begin_creation(&request, attempt()).unwrap(),
        CreationStart::Started { link: Some(LINK) }
    );
    sync_only(&w, &w.acme, &["tpl-2"]);

    // a retry under the same idempotency key: taken over, sent to the PGCC without a link
    let start = w.repo.begin_creation(&request, later()).unwrap();

    assert_eq!(start, CreationStart::Started { link: None });
    let row = stored(&w.db, request.id);
    assert_eq!(row.caso_de_uso_id, w.acme.tpl1);
    assert_eq!(
        criacao(&w.db, request.id),
        ("em_andamento".to_owned(), None, Some(later()))
    );
}

#[test]
fn a_request_being_created_is_stored_without_pgcc_id_history_or_event_and_is_invisible() {
    let w = world();
    register(
        &w.pool,
        &w.acme.company,
        "https://acme.example/1",
        created(),
    );
    let request = new_request(&w.acme, ConsentStatus::Active);

    let start = w.repo.begin_creation(&request, attempt()).unwrap();

    assert_eq!(start, CreationStart::Started { link: Some(LINK) });
    assert_eq!(
        criacao(&w.db, request.id),
        ("em_andamento".to_owned(), None, Some(attempt()))
    );
    let row = stored(&w.db, request.id);
    assert_eq!(row.hash, request.hash);
    assert_eq!(row.criado_em, created());
    assert_eq!(history_count(&w.db), 0);
    assert!(events_of(&w.db, "solicitacao.criada").is_empty());
    assert!(seen_anywhere(&w, &request).is_empty());
    // no worker sees it either
    assert!(claim_checks(
        &PgStatusCheckSchedule::new(w.pool.clone()),
        100,
        later(),
        later()
    )
    .is_empty());
    let expired_later = at("2028-01-01T00:00:00Z");
    assert_eq!(w.repo.expire_due(expired_later, 100).unwrap(), 0);
    assert!(!w
        .repo
        .transition(
            w.acme.company.id,
            request.id,
            ConsentStatus::Active,
            ConsentStatus::Revoked,
            TransitionCause::Company,
            None,
            later(),
        )
        .unwrap());
}

#[test]
fn confirming_stores_the_pgcc_id_history_and_event_in_one_go_and_makes_it_visible() {
    let w = world();
    let hook = register(
        &w.pool,
        &w.acme.company,
        "https://acme.example/1",
        created(),
    );
    let request = new_request(&w.acme, ConsentStatus::Pending);
    w.repo.begin_creation(&request, attempt()).unwrap();

    let confirmation = w
        .repo
        .confirm_creation(&request, "pgcc-77", later())
        .unwrap();

    assert_eq!(confirmation, Confirmation::Confirmed);
    assert_eq!(
        criacao(&w.db, request.id),
        ("confirmada".to_owned(), Some("pgcc-77".to_owned()), None)
    );
    let expected = ConsentRequest {
        pgcc_id: "pgcc-77".to_owned(),
        ..request.clone()
    };
    let record = w
        .repo
        .get(w.acme.company.id, request.id)
        .unwrap()
        .expect("visible once confirmed");
    assert_eq!(record.request, expected);
    assert_eq!(record.history.len(), 1);
    let first = &history(&w.db, request.id)[0];
    assert_eq!(
        (
            first.de.as_deref(),
            first.para.as_str(),
            first.em,
            first.causa.as_str()
        ),
        (None, "pendente", created(), "empresa")
    );
    let events = events_of(&w.db, "solicitacao.criada");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].criado_em, created());
    let payload: serde_json::Value = serde_json::from_str(&events[0].payload).unwrap();
    assert_eq!(payload["data"]["pgccId"], "pgcc-77");
    assert_eq!(payload["data"]["id"], request.id.to_string());
    let sent = deliveries(&w.db);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].webhook_url_id, hook.id);
    // due for a status check at the confirmation
    assert_eq!(next_check(&w.db, request.id), Some(later()));
    assert_eq!(
        seen_anywhere(&w, &expected),
        ["get", "list", "find_by_hash"],
        "a pending request is not valid for HashConsulta"
    );
}

#[test]
fn confirming_a_copy_that_is_not_what_was_stored_confirms_the_stored_content() {
    let w = world();
    let hook = register(
        &w.pool,
        &w.acme.company,
        "https://acme.example/1",
        created(),
    );
    let request = new_request(&w.acme, ConsentStatus::Active);
    w.repo.begin_creation(&request, attempt()).unwrap();
    w.repo
        .cancel_creation(w.acme.company.id, request.id, attempt())
        .unwrap();
    // a retry after the cancellation builds the request again (another creation instant and
    // hash) and takes the row over, which keeps its content
    let retry = ConsentRequest {
        created_at: later(),
        hash: "f".repeat(64),
        ..request.clone()
    };
    w.repo.begin_creation(&retry, later()).unwrap();

    let confirmation = w.repo.confirm_creation(&retry, "pgcc-88", later()).unwrap();

    assert_eq!(confirmation, Confirmation::Confirmed);
    assert_eq!(
        criacao(&w.db, request.id),
        ("confirmada".to_owned(), Some("pgcc-88".to_owned()), None)
    );
    let record = w.repo.get(w.acme.company.id, request.id).unwrap().unwrap();
    assert_eq!(
        record.request,
        ConsentRequest {
            pgcc_id: "pgcc-88".to_owned(),
            ..request.clone()
        }
    );
    assert_eq!(history(&w.db, request.id).len(), 1);
    let events = events_of(&w.db, "solicitacao.criada");
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0].criado_em,
        created(),
        "the stored creation instant"
    );
    let payload: serde_json::Value = serde_json::from_str(&events[0].payload).unwrap();
    assert_eq!(payload["data"]["pgccId"], "pgcc-88");
    assert_eq!(deliveries(&w.db)[0].webhook_url_id, hook.id);
    assert_eq!(next_check(&w.db, request.id), Some(later()));
}

#[test]
fn confirming_a_request_that_is_no_longer_unconfirmed_falls_back_to_what_the_row_says() {
    let w = world();
    let request = new_request(&w.acme, ConsentStatus::Active);
    w.repo.begin_creation(&request, attempt()).unwrap();
    w.repo
        .confirm_creation(&request, "pgcc-1", later())
        .unwrap();

    // already confirmed: the guarded statement changes nothing, the row answers
    let again = w
        .repo
        .confirm_creation(&request, "pgcc-2", later())
        .unwrap();
    // a copy that is not what was stored (another hash) confirms nothing by itself
    let stranger = ConsentRequest {
        hash: "0".repeat(64),
        ..request.clone()
    };
    let other = w
        .repo
        .confirm_creation(&stranger, "pgcc-3", later())
        .unwrap();

    let first = Confirmation::AlreadyConfirmed {
        pgcc_id: "pgcc-1".to_owned(),
    };
    assert_eq!(again, first);
    assert_eq!(other, first);
    assert_eq!(history_count(&w.db), 1);
    assert_eq!(events_of(&w.db, "solicitacao.criada").len(), 1);
}

#[test]
fn a_second_confirmation_changes_nothing_and_answers_the_first_pgcc_id() {
    let w = world();
    let request = new_request(&w.acme, ConsentStatus::Active);
    w.repo.begin_creation(&request, attempt()).unwrap();
    w.repo
        .confirm_creation(&request, "pgcc-1", later())
        .unwrap();

    let again = w
        .repo
        .confirm_creation(&request, "pgcc-1", later())
        .unwrap();

    assert_eq!(
        again,
        Confirmation::AlreadyConfirmed {
            pgcc_id: "pgcc-1".to_owned()
        }
    );
    assert_eq!(history_count(&w.db), 1);
    assert_eq!(events_of(&w.db, "solicitacao.criada").len(), 1);
}

#[test]
fn confirming_an_unknown_id_or_another_companys_is_missing_and_writes_nothing() {
    let w = world();
    let request = new_request(&w.acme, ConsentStatus::Active);
    w.repo.begin_creation(&request, attempt()).unwrap();

    let unknown = ConsentRequest {
        id: Uuid::new_v4(),
        ..request.clone()
    };
    let unknown = w
        .repo
        .confirm_creation(&unknown, "pgcc-1", later())
        .unwrap();
    let theirs = ConsentRequest {
        company_id: w.globex.company.id,
        ..request.clone()
    };
    let theirs = w.repo.confirm_creation(&theirs, "pgcc-1", later()).unwrap();

    assert_eq!(unknown, Confirmation::Missing);
    assert_eq!(theirs, Confirmation::Missing);
    assert_eq!(criacao(&w.db, request.id).0, "em_andamento");
    assert_eq!(history_count(&w.db), 0);
}

#[test]
fn a_refused_creation_is_cancelled_only_by_the_attempt_that_stamped_it() {
    let w = world();
    let request = new_request(&w.acme, ConsentStatus::Active);
    w.repo.begin_creation(&request, attempt()).unwrap();

    let stale = w
        .repo
        .cancel_creation(w.acme.company.id, request.id, created())
        .unwrap();
    let theirs = w
        .repo
        .cancel_creation(w.globex.company.id, request.id, attempt())
        .unwrap();
    assert!(!stale && !theirs);
    assert_eq!(criacao(&w.db, request.id).0, "em_andamento");

    assert!(w
        .repo
        .cancel_creation(w.acme.company.id, request.id, attempt())
        .unwrap());
    assert_eq!(criacao(&w.db, request.id).0, "cancelada");
    assert!(seen_anywhere(&w, &request).is_empty());
    assert_eq!(history_count(&w.db), 0);
    // a cancelled or confirmed creation is not cancelled again
    assert!(!w
        .repo
        .cancel_creation(w.acme.company.id, request.id, attempt())
        .unwrap());
}

#[test]
fn the_pgccs_word_beats_a_cancellation() {
    let w = world();
    let request = new_request(&w.acme, ConsentStatus::Active);
    w.repo.begin_creation(&request, attempt()).unwrap();
    w.repo
        .cancel_creation(w.acme.company.id, request.id, attempt())
        .unwrap();

    let confirmation = w
        .repo
        .confirm_creation(&request, "pgcc-late", later())
        .unwrap();

    assert_eq!(confirmation, Confirmation::Confirmed);
    assert!(w.repo.get(w.acme.company.id, request.id).unwrap().is_some());
}

#[test]
fn beginning_an_existing_id_takes_it_over_keeps_its_content_and_revives_a_cancelled_one() {
    let w = world();
    let request = new_request(&w.acme, ConsentStatus::Active);
    w.repo.begin_creation(&request, attempt()).unwrap();
    // a retry builds the request again: another creation instant (and hash)
    let retry = ConsentRequest {
        created_at: later(),
        hash: "f".repeat(64),
        ..request.clone()
    };

    assert_eq!(
        w.repo.begin_creation(&retry, later()).unwrap(),
        CreationStart::Started { link: Some(LINK) }
    );
    assert_eq!(
        criacao(&w.db, request.id),
        ("em_andamento".to_owned(), None, Some(later()))
    );
    let row = stored(&w.db, request.id);
    assert_eq!((row.criado_em, row.hash), (created(), request.hash.clone()));

    w.repo
        .cancel_creation(w.acme.company.id, request.id, later())
        .unwrap();
    let third = at("2026-05-01T12:10:00Z");
    assert_eq!(
        w.repo.begin_creation(&retry, third).unwrap(),
        CreationStart::Started { link: Some(LINK) }
    );
    assert_eq!(
        criacao(&w.db, request.id),
        ("em_andamento".to_owned(), None, Some(third))
    );
}

#[test]
fn beginning_a_confirmed_id_changes_nothing_and_answers_its_pgcc_id() {
    let w = world();
    let request = new_request(&w.acme, ConsentStatus::Active);
    w.repo.begin_creation(&request, attempt()).unwrap();
    w.repo
        .confirm_creation(&request, "pgcc-9", later())
        .unwrap();

    let start = w.repo.begin_creation(&request, later()).unwrap();

    assert_eq!(
        start,
        CreationStart::AlreadyConfirmed {
            pgcc_id: "pgcc-9".to_owned()
        }
    );
    assert_eq!(criacao(&w.db, request.id).0, "confirmada");
}

#[test]
fn an_id_another_company_holds_is_a_row_of_its_own_and_changes_nothing_of_the_first() {
    // The key is (empresa_id, id) (issue 23): the same id under another company is another
    // request. Ids are the service's random UUIDs, so this only happens on purpose.
    let w = world();
    let request = new_request(&w.acme, ConsentStatus::Active);
    w.repo.begin_creation(&request, attempt()).unwrap();
    let mut theirs = new_request(&w.globex, ConsentStatus::Active);
    theirs.id = request.id;

    let result = w.repo.begin_creation(&theirs, later());

    assert!(
        matches!(result, Ok(CreationStart::Started { .. })),
        "{result:?}"
    );
    let rows: Vec<(Uuid, Option<DateTime<Utc>>)> = sc::table
        .filter(sc::id.eq(request.id))
        .order(sc::criacao_tentativa_em)
        .select((sc::empresa_id, sc::criacao_tentativa_em))
        .load(&mut w.db.conn())
        .unwrap();
    assert_eq!(
        rows,
        vec![
            (w.acme.company.id.0, Some(attempt())),
            (w.globex.company.id.0, Some(later())),
        ]
    );
}

#[test]
fn find_creation_tells_each_state_and_only_to_the_owning_company() {
    let w = world();
    let in_progress = new_request(&w.acme, ConsentStatus::Pending);
    let confirmed = new_request(&w.acme, ConsentStatus::Active);
    let cancelled = new_request(&w.acme, ConsentStatus::Active);
    for r in [&in_progress, &confirmed, &cancelled] {
        w.repo.begin_creation(r, attempt()).unwrap();
    }
    w.repo
        .confirm_creation(&confirmed, "pgcc-c", later())
        .unwrap();
    w.repo
        .cancel_creation(w.acme.company.id, cancelled.id, attempt())
        .unwrap();
    let acme = w.acme.company.id;

    assert_eq!(
        w.repo.find_creation(acme, in_progress.id).unwrap(),
        Some(CreationRecord::InProgress(Box::new(in_progress.clone())))
    );
    assert_eq!(
        w.repo.find_creation(acme, confirmed.id).unwrap(),
        Some(CreationRecord::Confirmed {
            pgcc_id: "pgcc-c".to_owned()
        })
    );
    assert_eq!(
        w.repo.find_creation(acme, cancelled.id).unwrap(),
        Some(CreationRecord::Cancelled)
    );
    assert_eq!(w.repo.find_creation(acme, Uuid::new_v4()).unwrap(), None);
    assert_eq!(
        w.repo
            .find_creation(w.globex.company.id, in_progress.id)
            .unwrap(),
        None
    );
}

#[test]
fn the_reconciler_claims_unfinished_creations_past_the_grace_oldest_first_with_their_cnpj() {
    let w = world();
    let t = |s: u32| at(&format!("2026-05-01T12:00:{s:02}Z"));
    let old_acme = new_request(&w.acme, ConsentStatus::Active);
    let old_globex = new_request(&w.globex, ConsentStatus::Active);
    let recent = new_request(&w.acme, ConsentStatus::Active);
    let done = new_request(&w.acme, ConsentStatus::Active);
    let refused = new_request(&w.acme, ConsentStatus::Active);
    w.repo.begin_creation(&old_globex, t(1)).unwrap();
    w.repo.begin_creation(&old_acme, t(2)).unwrap();
    w.repo.begin_creation(&done, t(3)).unwrap();
    w.repo.begin_creation(&refused, t(4)).unwrap();
    w.repo.begin_creation(&recent, t(40)).unwrap();
    w.repo.confirm_creation(&done, "pgcc-d", t(5)).unwrap();
    w.repo
        .cancel_creation(w.acme.company.id, refused.id, t(4))
        .unwrap();
    let now = t(50);

    // each company's claim is its own statement: within a company, oldest attempt first
    let first = w.repo.claim_unfinished_creations(1, t(30), now).unwrap();
    let second = w.repo.claim_unfinished_creations(10, t(30), now).unwrap();
    let third = w.repo.claim_unfinished_creations(10, t(30), now).unwrap();

    assert_eq!(first.len(), 1);
    let both: Vec<&UnfinishedCreation> = first.iter().chain(&second).collect();
    let mut ids: Vec<Uuid> = both.iter().map(|c| c.id).collect();
    ids.sort();
    let mut expected = vec![old_acme.id, old_globex.id];
    expected.sort();
    assert_eq!(
        ids, expected,
        "not the recent one, the confirmed one nor the cancelled one"
    );
    for claimed in &both {
        let owner = if claimed.id == old_acme.id {
            &w.acme
        } else {
            &w.globex
        };
        assert_eq!(claimed.company_id, owner.company.id);
        assert_eq!(claimed.company_cnpj, owner.company.cnpj);
        assert_eq!(claimed.claimed_at, now);
    }
    assert!(third.is_empty(), "a claim waits another grace");
    assert_eq!(criacao(&w.db, old_acme.id).2, Some(now));
    assert!(w
        .repo
        .claim_unfinished_creations(0, now, now)
        .unwrap()
        .is_empty());
}

#[test]
fn a_claimed_creation_is_cancelled_only_if_no_retry_attempted_it_since_the_claim() {
    let w = world();
    let request = new_request(&w.acme, ConsentStatus::Active);
    w.repo.begin_creation(&request, created()).unwrap();
    let claimed = w
        .repo
        .claim_unfinished_creations(10, attempt(), attempt())
        .unwrap();
    assert_eq!(claimed.len(), 1);
    // a retry under the same idempotency key attempts it again meanwhile
    w.repo.begin_creation(&request, later()).unwrap();

    let cancelled = w
        .repo
        .cancel_creation(w.acme.company.id, request.id, claimed[0].claimed_at)
        .unwrap();

    assert!(!cancelled);
    assert_eq!(criacao(&w.db, request.id).0, "em_andamento");
}

fn not_found_since(db: &TestDb, id: Uuid) -> Option<DateTime<Utc>> {
    sc::table
        .filter(sc::id.eq(id))
        .select(sc::criacao_nao_encontrada_em)
        .first(&mut db.conn())
        .unwrap()
}

#[test]
fn the_first_not_found_is_recorded_kept_and_claimed_back_and_a_retry_forgets_it() {
    let w = world();
    let acme = w.acme.company.id;
    let request = new_request(&w.acme, ConsentStatus::Active);
    w.repo.begin_creation(&request, created()).unwrap();
    let claimed = w
        .repo
        .claim_unfinished_creations(10, attempt(), attempt())
        .unwrap();
    assert_eq!(claimed[0].not_found_since, None);

    // only under the claim's stamp, and only the first one
    assert!(!w
        .repo
        .record_creation_not_found(acme, request.id, created(), attempt())
        .unwrap());
    assert!(w
        .repo
        .record_creation_not_found(acme, request.id, attempt(), attempt())
        .unwrap());
    let again = w
        .repo
        .claim_unfinished_creations(10, later(), later())
        .unwrap();
    assert_eq!(again[0].not_found_since, Some(attempt()), "claimed with it");
    assert!(!w
        .repo
        .record_creation_not_found(acme, request.id, later(), later())
        .unwrap());
    assert_eq!(
        not_found_since(&w.db, request.id),
        Some(attempt()),
        "the first kept"
    );
    assert!(!w
        .repo
        .record_creation_not_found(w.globex.company.id, request.id, later(), later())
        .unwrap());

    // a retry may create it: the count starts again
    w.repo.begin_creation(&request, later()).unwrap();
    assert_eq!(not_found_since(&w.db, request.id), None);
    assert_eq!(criacao(&w.db, request.id).0, "em_andamento");
}

#[test]
fn concurrent_reconcilers_never_claim_the_same_creation() {
    let w = world();
    let mut ids = HashSet::new();
    for _ in 0..40 {
        let request = new_request(&w.acme, ConsentStatus::Active);
        w.repo.begin_creation(&request, created()).unwrap();
        ids.insert(request.id);
    }
    let barrier = Arc::new(Barrier::new(4));
    let claims: Vec<Vec<Uuid>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let repo = w.repo.clone();
                let barrier = barrier.clone();
                scope.spawn(move || {
                    barrier.wait();
                    let mut mine = Vec::new();
                    loop {
                        let batch = repo
                            .claim_unfinished_creations(3, attempt(), later())
                            .unwrap();
                        if batch.is_empty() {
                            break mine;
                        }
                        mine.extend(batch.into_iter().map(|c| c.id));
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    let all: Vec<Uuid> = claims.into_iter().flatten().collect();
    assert_eq!(all.len(), 40, "each claimed exactly once");
    assert_eq!(all.iter().copied().collect::<HashSet<_>>(), ids);
}

#[test]
fn a_creation_confirmed_from_the_reconcilers_claim_reads_back_as_one_confirmed_by_its_caller() {
    let w = world();
    let by_caller = new_request(&w.acme, ConsentStatus::Active);
    let by_reconciler = new_request(&w.acme, ConsentStatus::Active);
    w.repo.begin_creation(&by_caller, created()).unwrap();
    w.repo.begin_creation(&by_reconciler, created()).unwrap();
    w.repo
        .confirm_creation(&by_caller, "pgcc-caller", attempt())
        .unwrap();
    let claimed = w
        .repo
        .claim_unfinished_creations(10, attempt(), attempt())
        .unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(
        *claimed[0].request, by_reconciler,
        "the claim reads it whole"
    );

    let confirmation = w
        .repo
        .confirm_creation(&claimed[0].request, "pgcc-2p", attempt())
        .unwrap();

    assert_eq!(confirmation, Confirmation::Confirmed);
    let read = |id| w.repo.get(w.acme.company.id, id).unwrap().unwrap();
    let (a, b) = (read(by_caller.id), read(by_reconciler.id));
    assert_eq!(
        a.request,
        ConsentRequest {
            pgcc_id: "pgcc-caller".to_owned(),
            ..by_caller
        }
    );
    assert_eq!(
        b.request,
        ConsentRequest {
            pgcc_id: "pgcc-2p".to_owned(),
            ..by_reconciler
        }
    );
    assert_eq!(a.history.len(), b.history.len());
    assert_eq!(events_of(&w.db, "solicitacao.criada").len(), 2);
}

#[test]
fn creations_on_one_connection_each_confirm_with_their_own_history_event_and_deliveries() {
    // One connection: every begin and confirmation after the first runs the statements it
    // prepared (diesel caches them by text), past PostgreSQL's switch to a generic plan (after
    // five executions).
    let db = TestDb::new();
    let pool = pool_of(&db, 1);
    let acme = tenant(&pool, "ACME", "112223330001");
    let repo = PgConsentRequestRepository::new(pool.clone());
    let hook = register(&pool, &acme.company, "https://acme.example/1", created());
    let requests: Vec<_> = (0..8)
        .map(|i| {
            let status = if i % 2 == 0 {
                ConsentStatus::Active
            } else {
                ConsentStatus::Pending
            };
            new_request(&acme, status)
        })
        .collect();

    for (i, request) in requests.iter().enumerate() {
        assert_eq!(
            repo.begin_creation(request, attempt()).unwrap(),
            CreationStart::Started { link: Some(LINK) }
        );
        assert_eq!(
            repo.confirm_creation(request, &format!("pgcc-{i}"), later())
                .unwrap(),
            Confirmation::Confirmed
        );
    }

    let events = events_of(&db, "solicitacao.criada");
    assert_eq!(events.len(), requests.len());
    let sent = deliveries(&db);
    assert_eq!(sent.len(), requests.len());
    for (i, request) in requests.iter().enumerate() {
        assert_eq!(
            criacao(&db, request.id),
            ("confirmada".to_owned(), Some(format!("pgcc-{i}")), None)
        );
        let entries = history(&db, request.id);
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].para, request.status.as_str());
        let expected = ConsentRequest {
            pgcc_id: format!("pgcc-{i}"),
            ..request.clone()
        };
        assert_eq!(
            repo.get(acme.company.id, request.id)
                .unwrap()
                .unwrap()
                .request,
            expected
        );
        let event = events
            .iter()
            .find(|e| {
                serde_json::from_str::<serde_json::Value>(&e.payload).unwrap()["data"]["id"]
                    == request.id.to_string()
            })
            .expect("an event about each request");
        let payload: serde_json::Value = serde_json::from_str(&event.payload).unwrap();
        assert_eq!(payload["data"]["pgccId"], format!("pgcc-{i}"));
        assert_eq!(payload["data"]["status"], request.status.as_str());
        assert_eq!(event.criado_em, created());
        assert!(sent
            .iter()
            .any(|d| d.evento_id == event.id && d.webhook_url_id == hook.id));
    }
    // a confirmed id begun again answers its PGCC id, whatever plan the statement runs with
    assert_eq!(
        repo.begin_creation(&requests[3], later()).unwrap(),
        CreationStart::AlreadyConfirmed {
            pgcc_id: "pgcc-3".to_owned()
        }
    );
    assert_eq!(history_count(&db), 8);
    // each statement was prepared once on the connection and executed from then on
    let mut conn = pool.get().unwrap();
    let prepared = diesel::sql_query(
        "SELECT (custom_plans + generic_plans)::bigint AS n FROM pg_prepared_statements \
         WHERE statement LIKE 'SELECT consentimento_confirmar_criacao(%' \
            OR statement LIKE 'SELECT gravadas, caso_encontrado%' \
         ORDER BY statement",
    )
    .load::<Executions>(&mut conn)
    .unwrap()
    .into_iter()
    .map(|e| e.n)
    .collect::<Vec<_>>();
    assert_eq!(
        prepared,
        [8, 9],
        "confirm, then begin (8 + the confirmed one)"
    );
}

#[derive(QueryableByName)]
struct Executions {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

#[test]
fn a_consent_check_is_prepared_once_per_connection_not_planned_per_call() {
    let db = TestDb::new();
    let pool = pool_of(&db, 1);
    let acme = tenant(&pool, "ACME", "112223330001");
    let repo = PgConsentRequestRepository::new(pool.clone());
    let request = new_request(&acme, ConsentStatus::Active);
    repo.begin_creation(&request, attempt()).unwrap();
    repo.confirm_creation(&request, "pgcc-1", attempt())
        .unwrap();
    let cpf = request.content.subject_cpf.clone();

    for _ in 0..5 {
        let found = repo
            .find_valid(acme.company.id, &cpf, &request.content.template_id, later())
            .unwrap();
        assert_eq!(found.map(|r| r.id), Some(request.id));
    }

    let mut conn = pool.get().unwrap();
    let executions = diesel::sql_query(
        "SELECT (custom_plans + generic_plans)::bigint AS n FROM pg_prepared_statements \
         WHERE statement LIKE '%solicitacoes_consentimento.status = ''ativo''%'",
    )
    .load::<Executions>(&mut conn)
    .unwrap()
    .into_iter()
    .map(|e| e.n)
    .collect::<Vec<_>>();
    assert_eq!(executions, [5], "one prepared statement, run 5 times");
}
