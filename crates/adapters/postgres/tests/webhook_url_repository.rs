mod common;

use chrono::TimeDelta;
use common::consent::{tenant, Spec};
use common::webhook::{
    deliveries, delivery, held, register, secret_of, secrets, set_disabled, webhook,
};
use common::{at, create_company, pool};
use diesel::prelude::*;
use domain::{Company, CompanyId, WebhookUrl};
use ports::{
    ConsentRequestRepository, DeliveryAttempt, DeliveryOutcome, EncryptedSecret,
    WebhookDeliveryRepository, WebhookUrlRepository,
};
use postgres_adapter::models::WebhookUrlRow;
use postgres_adapter::schema::webhook_urls;
use postgres_adapter::{
    PgConsentRequestRepository, PgWebhookDeliveryRepository, PgWebhookUrlRepository,
};
use testkit::TestDb;
use uuid::Uuid;

fn hook(empresa: &Company, url: &str, criado_em: &str) -> WebhookUrl {
    webhook(empresa, url, at(criado_em))
}

fn row(db: &TestDb, id: Uuid) -> WebhookUrlRow {
    webhook_urls::table
        .filter(webhook_urls::id.eq(id))
        .select(WebhookUrlRow::as_select())
        .first(&mut db.conn())
        .unwrap()
}

fn insert(repo: &PgWebhookUrlRepository, hook: &WebhookUrl) {
    repo.insert(hook, &secret_of(hook.id), u32::MAX).unwrap();
}

#[test]
fn a_companys_active_webhook_urls_are_listed_oldest_first() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgWebhookUrlRepository::new(pool);
    let newer = hook(&acme, "https://acme.example/b", "2026-02-01T00:00:00Z");
    let older = hook(&acme, "https://acme.example/a", "2026-01-01T00:00:00Z");
    insert(&repo, &newer);
    insert(&repo, &older);

    assert_eq!(repo.list_active(acme.id).unwrap(), vec![older, newer]);
}

#[test]
fn insert_stores_the_encrypted_secret_and_no_previous_one() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgWebhookUrlRepository::new(pool);
    let h = hook(&acme, "https://acme.example/a", "2026-01-01T00:00:00Z");

    repo.insert(&h, &EncryptedSecret("v1:abc".to_owned()), u32::MAX)
        .unwrap();

    assert_eq!(secrets(&db, h.id), ("v1:abc".to_owned(), None, None));
    assert_eq!(row(&db, h.id).desativado_em, None);
}

#[test]
fn disabled_urls_are_listed_with_their_disabling_time_and_removed_ones_are_not() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgWebhookUrlRepository::new(pool);
    let mut disabled = hook(&acme, "https://acme.example/a", "2026-01-01T00:00:00Z");
    let active = hook(&acme, "https://acme.example/b", "2026-01-02T00:00:00Z");
    let removed = hook(&acme, "https://acme.example/c", "2026-01-03T00:00:00Z");
    for h in [&disabled, &active, &removed] {
        insert(&repo, h);
    }
    let when = at("2026-03-01T00:00:00.25Z");
    set_disabled(&db, disabled.id, Some(when));
    assert!(repo
        .soft_delete(acme.id, removed.id, at("2026-03-02T00:00:00Z"))
        .unwrap());
    disabled.disabled_at = Some(when);

    assert_eq!(
        repo.list_active(acme.id).unwrap(),
        vec![disabled.clone(), active.clone()]
    );
    assert_eq!(repo.get(acme.id, disabled.id).unwrap(), Some(disabled));
    assert_eq!(repo.get(acme.id, active.id).unwrap(), Some(active));
    assert_eq!(repo.get(acme.id, removed.id).unwrap(), None);
}

#[test]
fn two_companies_never_see_each_others_webhook_urls() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let globex = create_company(&pool, "Globex", "998887770001");
    let repo = PgWebhookUrlRepository::new(pool);
    let acme_hook = hook(&acme, "https://acme.example/hook", "2026-01-01T00:00:00Z");
    let globex_hook = hook(
        &globex,
        "https://globex.example/hook",
        "2026-01-01T00:00:00Z",
    );
    insert(&repo, &acme_hook);
    insert(&repo, &globex_hook);

    assert_eq!(repo.list_active(acme.id).unwrap(), vec![acme_hook.clone()]);
    assert_eq!(
        repo.list_active(globex.id).unwrap(),
        vec![globex_hook.clone()]
    );
    assert_eq!(repo.get(acme.id, globex_hook.id).unwrap(), None);
    assert_eq!(
        repo.get(globex.id, globex_hook.id).unwrap(),
        Some(globex_hook)
    );
    assert_eq!(repo.get(acme.id, Uuid::new_v4()).unwrap(), None);
}

#[test]
fn soft_delete_keeps_the_row_with_its_removal_time_and_a_second_delete_is_false() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgWebhookUrlRepository::new(pool);
    let h = hook(&acme, "https://acme.example/hook", "2026-01-01T00:00:00Z");
    insert(&repo, &h);
    let removed_at = at("2026-03-01T10:00:00.5Z");

    assert!(repo.soft_delete(acme.id, h.id, removed_at).unwrap());

    assert_eq!(row(&db, h.id).removido_em, Some(removed_at));
    assert_eq!(repo.list_active(acme.id).unwrap(), vec![]);

    assert!(!repo
        .soft_delete(acme.id, h.id, at("2026-04-01T00:00:00Z"))
        .unwrap());
    assert_eq!(
        row(&db, h.id).removido_em,
        Some(removed_at),
        "the first removal time stays"
    );
}

#[test]
fn soft_delete_marks_the_url_and_settling_behind_it_cancels_its_pending_deliveries_only() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let gone = register(
        &pool,
        &acme.company,
        "https://acme.example/gone",
        at("2026-01-01T00:00:00Z"),
    );
    let kept = register(
        &pool,
        &acme.company,
        "https://acme.example/kept",
        at("2026-01-02T00:00:00Z"),
    );
    let requests = PgConsentRequestRepository::new(pool.clone());
    let first = acme.create(&requests, &Spec::new(at("2026-05-02T00:00:00Z")));
    acme.create(&requests, &Spec::new(at("2026-05-03T00:00:00Z")));
    let delivered = deliveries(&db)
        .into_iter()
        .find(|d| d.webhook_url_id == gone.id && d.criado_em == first.created_at)
        .unwrap();
    PgWebhookDeliveryRepository::new(pool.clone())
        .record_attempt(
            CompanyId(delivered.empresa_id),
            delivered.id,
            held(&db, delivered.id),
            &DeliveryAttempt {
                at: at("2026-05-02T00:00:01Z"),
                http_status: Some(204),
                latency_ms: 12,
                error: None,
                response_body: None,
            },
            DeliveryOutcome::Delivered,
        )
        .unwrap();
    let repo = PgWebhookUrlRepository::new(pool.clone());
    let removed_at = at("2026-05-04T00:00:00Z");

    assert!(repo
        .soft_delete(acme.company.id, gone.id, removed_at)
        .unwrap());
    assert!(
        deliveries(&db).iter().all(|d| d.status != "cancelada"),
        "the removal answers without touching the deliveries"
    );
    let sender = PgWebhookDeliveryRepository::new(pool.clone());
    assert_eq!(
        sender.urls_to_settle(10).unwrap(),
        [(acme.company.id, gone.id)]
    );
    while !sender
        .settle_url(acme.company.id, gone.id, 1, removed_at)
        .unwrap()
        .done
    {}
    assert_eq!(sender.urls_to_settle(10).unwrap(), []);

    let all = deliveries(&db);
    assert_eq!(all.len(), 4);
    for d in &all {
        let expected = if d.webhook_url_id == kept.id {
            "pendente"
        } else if d.id == delivered.id {
            "entregue"
        } else {
            "cancelada"
        };
        assert_eq!(d.status, expected, "{d:?}");
    }
    let cancelled = all.iter().find(|d| d.status == "cancelada").unwrap();
    assert_eq!(cancelled.proxima_tentativa_em, None);
    assert_eq!(cancelled.atualizado_em, removed_at);
    let delivered = delivery(&db, delivered.id);
    assert_eq!(delivered.entregue_em, Some(at("2026-05-02T00:00:01Z")));
    assert_eq!(
        delivered.atualizado_em,
        at("2026-05-02T00:00:01Z"),
        "a finished delivery is left as it was"
    );
}

#[test]
fn deleting_another_companys_webhook_url_is_false_and_changes_nothing() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let globex = tenant(&pool, "Globex", "998887770001");
    let globex_hook = register(
        &pool,
        &globex.company,
        "https://globex.example/hook",
        at("2026-01-01T00:00:00Z"),
    );
    globex.create(
        &PgConsentRequestRepository::new(pool.clone()),
        &Spec::new(at("2026-05-02T00:00:00Z")),
    );
    let repo = PgWebhookUrlRepository::new(pool);
    let before = row(&db, globex_hook.id);
    let deliveries_before = deliveries(&db);

    let deleted = repo
        .soft_delete(acme.company.id, globex_hook.id, at("2026-03-01T00:00:00Z"))
        .unwrap();

    assert!(!deleted);
    assert_eq!(row(&db, globex_hook.id), before);
    assert_eq!(deliveries(&db), deliveries_before);
    assert_eq!(deliveries_before[0].status, "pendente");
    assert_eq!(
        repo.list_active(globex.company.id).unwrap(),
        vec![globex_hook]
    );
}

#[test]
fn deleting_an_unknown_webhook_url_is_false() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgWebhookUrlRepository::new(pool);

    assert!(!repo
        .soft_delete(acme.id, Uuid::new_v4(), at("2026-03-01T00:00:00Z"))
        .unwrap());
}

#[test]
fn rotate_secret_keeps_the_previous_secret_signing_until_its_time() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let h = register(
        &pool,
        &acme.company,
        "https://acme.example/hook",
        at("2026-01-01T00:00:00Z"),
    );
    let repo = PgWebhookUrlRepository::new(pool.clone());
    let until = at("2026-06-02T00:00:00Z");
    let new_secret = EncryptedSecret("v1:novo".to_owned());

    assert!(repo
        .rotate_secret(acme.company.id, h.id, &new_secret, until)
        .unwrap());

    assert_eq!(
        secrets(&db, h.id),
        ("v1:novo".to_owned(), Some(secret_of(h.id).0), Some(until))
    );
    // The claim signs with both until `until`, then with the new one only.
    acme.create(
        &PgConsentRequestRepository::new(pool.clone()),
        &Spec::new(at("2026-05-02T00:00:00Z")),
    );
    let sender = PgWebhookDeliveryRepository::new(pool);
    let before = until - TimeDelta::microseconds(1);
    let claimed = common::webhook::claim(&sender, 10, before, before).unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].secret, new_secret);
    assert_eq!(claimed[0].previous_secret, Some(secret_of(h.id)));
    let claimed =
        common::webhook::claim(&sender, 10, until, until + TimeDelta::minutes(1)).unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].secret, new_secret);
    assert_eq!(
        claimed[0].previous_secret, None,
        "the overlap is over at `until`"
    );

    // A second rotation keeps only the secret it replaces.
    let until2 = at("2026-07-01T00:00:00Z");
    assert!(repo
        .rotate_secret(
            acme.company.id,
            h.id,
            &EncryptedSecret("v1:terceiro".to_owned()),
            until2
        )
        .unwrap());
    assert_eq!(
        secrets(&db, h.id),
        (
            "v1:terceiro".to_owned(),
            Some("v1:novo".to_owned()),
            Some(until2)
        )
    );
}

#[test]
fn rotate_secret_of_another_companys_a_removed_or_an_unknown_url_is_false() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let globex = create_company(&pool, "Globex", "998887770001");
    let theirs = register(
        &pool,
        &globex,
        "https://globex.example/hook",
        at("2026-01-01T00:00:00Z"),
    );
    let removed = register(
        &pool,
        &acme,
        "https://acme.example/hook",
        at("2026-01-01T00:00:00Z"),
    );
    let repo = PgWebhookUrlRepository::new(pool);
    assert!(repo
        .soft_delete(acme.id, removed.id, at("2026-02-01T00:00:00Z"))
        .unwrap());
    let secret = EncryptedSecret("v1:novo".to_owned());
    let until = at("2026-06-02T00:00:00Z");

    assert!(!repo
        .rotate_secret(acme.id, theirs.id, &secret, until)
        .unwrap());
    assert!(!repo
        .rotate_secret(acme.id, removed.id, &secret, until)
        .unwrap());
    assert!(!repo
        .rotate_secret(acme.id, Uuid::new_v4(), &secret, until)
        .unwrap());

    assert_eq!(
        secrets(&db, theirs.id),
        (secret_of(theirs.id).0, None, None)
    );
    assert_eq!(
        secrets(&db, removed.id),
        (secret_of(removed.id).0, None, None)
    );
}

// --- limits and control (issue 12) ---

fn try_insert(
    repo: &PgWebhookUrlRepository,
    h: &WebhookUrl,
    max: u32,
) -> Result<(), ports::InsertWebhookUrlError> {
    repo.insert(h, &secret_of(h.id), max)
}

#[test]
fn insert_refuses_a_url_past_the_limit_counting_disabled_ones_but_not_removed_ones() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let globex = create_company(&pool, "Globex", "998887770001");
    let repo = PgWebhookUrlRepository::new(pool);
    let first = hook(&acme, "https://acme.example/1", "2026-01-01T00:00:00Z");
    let second = hook(&acme, "https://acme.example/2", "2026-01-01T00:00:00Z");
    try_insert(&repo, &first, 2).unwrap();
    try_insert(&repo, &second, 2).unwrap();
    set_disabled(&db, first.id, Some(at("2026-02-01T00:00:00Z")));
    let third = hook(&acme, "https://acme.example/3", "2026-01-01T00:00:00Z");

    let refused = try_insert(&repo, &third, 2);

    assert!(
        matches!(refused, Err(ports::InsertWebhookUrlError::LimitReached)),
        "{refused:?}"
    );
    assert_eq!(repo.get(acme.id, third.id).unwrap(), None);
    // Another company's count is its own; a removal frees a place.
    try_insert(
        &repo,
        &hook(&globex, "https://acme.example/3", "2026-01-01T00:00:00Z"),
        2,
    )
    .unwrap();
    assert!(repo
        .soft_delete(acme.id, first.id, at("2026-03-01T00:00:00Z"))
        .unwrap());
    try_insert(&repo, &third, 2).unwrap();
}

#[test]
fn insert_refuses_the_same_normalized_url_while_one_is_active_and_stores_the_normalized_form() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgWebhookUrlRepository::new(pool);
    let first = hook(
        &acme,
        "HTTPS://Acme.Example:443/Hook",
        "2026-01-01T00:00:00Z",
    );
    try_insert(&repo, &first, 10).unwrap();
    let same = hook(&acme, "https://acme.example/Hook#x", "2026-01-02T00:00:00Z");

    let refused = try_insert(&repo, &same, 10);

    assert!(
        matches!(refused, Err(ports::InsertWebhookUrlError::Duplicate)),
        "{refused:?}"
    );
    let normalized: String = webhook_urls::table
        .filter(webhook_urls::id.eq(first.id))
        .select(webhook_urls::url_normalizada)
        .first(&mut db.conn())
        .unwrap();
    assert_eq!(normalized, "https://acme.example/Hook");
    assert_eq!(
        row(&db, first.id).url,
        "HTTPS://Acme.Example:443/Hook",
        "kept as written"
    );
    assert!(repo
        .soft_delete(acme.id, first.id, at("2026-03-01T00:00:00Z"))
        .unwrap());
    try_insert(&repo, &same, 10).unwrap();
}

#[test]
fn concurrent_inserts_of_one_url_store_it_once_and_of_many_urls_stay_within_the_limit() {
    let db = TestDb::new();
    let pool = common::consent::pool_of(&db, 8);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgWebhookUrlRepository::new(pool);
    let race = |urls: Vec<WebhookUrl>, max: u32| -> usize {
        std::thread::scope(|s| {
            let handles: Vec<_> = urls
                .iter()
                .map(|h| {
                    let repo = repo.clone();
                    s.spawn(move || try_insert(&repo, h, max).is_ok())
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .filter(|ok| *ok)
                .count()
        })
    };

    let same: Vec<WebhookUrl> = (0..8)
        .map(|_| hook(&acme, "https://acme.example/race", "2026-01-01T00:00:00Z"))
        .collect();
    assert_eq!(race(same, 100), 1);
    let many: Vec<WebhookUrl> = (0..8)
        .map(|n| {
            hook(
                &acme,
                &format!("https://acme.example/{n}"),
                "2026-01-01T00:00:00Z",
            )
        })
        .collect();
    assert_eq!(race(many, 5), 4, "one place was taken by the race above");

    assert_eq!(repo.list_active(acme.id).unwrap().len(), 5);
}

#[test]
fn reenable_clears_the_disabling_keeps_the_secret_and_answers_none_for_removed_or_others() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let globex = create_company(&pool, "Globex", "998887770001");
    let repo = PgWebhookUrlRepository::new(pool);
    let h = hook(&acme, "https://acme.example/a", "2026-01-01T00:00:00Z");
    insert(&repo, &h);
    set_disabled(&db, h.id, Some(at("2026-02-01T00:00:00Z")));
    let when = at("2026-02-02T00:00:00Z");

    assert_eq!(repo.reenable(globex.id, h.id, when).unwrap(), None);
    assert_eq!(
        row(&db, h.id).desativado_em,
        Some(at("2026-02-01T00:00:00Z"))
    );
    let back = repo.reenable(acme.id, h.id, when).unwrap().unwrap();

    assert_eq!(back, h, "same id and URL, no longer disabled");
    assert_eq!(secrets(&db, h.id).0, secret_of(h.id).0, "same secret");
    let reenabled_at = |db: &TestDb| {
        webhook_urls::table
            .filter(webhook_urls::id.eq(h.id))
            .select(webhook_urls::reativado_em)
            .first::<Option<chrono::DateTime<chrono::Utc>>>(&mut db.conn())
            .unwrap()
    };
    assert_eq!(reenabled_at(&db), Some(when));
    // Already active: unchanged, its re-enabling time too.
    assert_eq!(
        repo.reenable(acme.id, h.id, at("2026-02-03T00:00:00Z"))
            .unwrap(),
        Some(h.clone())
    );
    assert_eq!(reenabled_at(&db), Some(when));
    assert!(repo
        .soft_delete(acme.id, h.id, at("2026-03-01T00:00:00Z"))
        .unwrap());
    assert_eq!(repo.reenable(acme.id, h.id, when).unwrap(), None);
    assert_eq!(repo.reenable(acme.id, Uuid::new_v4(), when).unwrap(), None);
}

// --- the events a URL receives (issue 14, part 6) ---

#[test]
fn a_url_receives_only_its_chosen_types_and_one_taking_all_receives_every_one() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let urls = PgWebhookUrlRepository::new(pool.clone());
    let mut revocations = hook(
        &acme.company,
        "https://acme.example/r",
        "2026-01-01T00:00:00Z",
    );
    revocations.events = domain::EventSelection::Only(vec![domain::EventType::RequestRevoked]);
    insert(&urls, &revocations);
    let all = hook(
        &acme.company,
        "https://acme.example/all",
        "2026-01-02T00:00:00Z",
    );
    insert(&urls, &all);
    assert_eq!(
        urls.get(acme.company.id, revocations.id).unwrap().unwrap(),
        revocations,
        "the choice is stored and read back"
    );

    let requests = PgConsentRequestRepository::new(pool.clone());
    let request = acme.create(
        &requests,
        &Spec::new(at("2026-05-01T12:00:00Z")).status(domain::ConsentStatus::Active),
    );
    assert!(requests
        .transition(
            acme.company.id,
            request.id,
            domain::ConsentStatus::Active,
            domain::ConsentStatus::Revoked,
            domain::TransitionCause::Company,
            None,
            at("2026-05-01T13:00:00Z"),
        )
        .unwrap());

    let to = |url: Uuid| -> Vec<String> {
        let mut tipos: Vec<String> = common::webhook::events(&db)
            .into_iter()
            .filter(|e| {
                deliveries(&db)
                    .iter()
                    .any(|d| d.evento_id == e.id && d.webhook_url_id == url)
            })
            .map(|e| e.tipo)
            .collect();
        tipos.sort();
        tipos
    };
    assert_eq!(to(revocations.id), ["solicitacao.revogada"]);
    assert_eq!(to(all.id), ["solicitacao.criada", "solicitacao.revogada"]);
}

#[test]
fn choosing_events_changes_only_the_companys_url_not_removed_and_null_means_all() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let globex = create_company(&pool, "Globex", "445556660001");
    let repo = PgWebhookUrlRepository::new(pool);
    let h = hook(&acme, "https://acme.example/a", "2026-01-01T00:00:00Z");
    insert(&repo, &h);
    let only = domain::EventSelection::Only(vec![
        domain::EventType::RequestCreated,
        domain::EventType::UseCasesSynced,
    ]);

    assert_eq!(repo.set_events(globex.id, h.id, &only).unwrap(), None);
    assert_eq!(
        row(&db, h.id).eventos,
        None,
        "another company changes nothing"
    );

    let changed = repo.set_events(acme.id, h.id, &only).unwrap().unwrap();
    assert_eq!(changed.events, only);
    assert_eq!(
        row(&db, h.id).eventos,
        Some(vec![
            "solicitacao.criada".to_owned(),
            "casos-de-uso.sincronizados".to_owned()
        ])
    );
    let back = repo
        .set_events(acme.id, h.id, &domain::EventSelection::All)
        .unwrap()
        .unwrap();
    assert_eq!(back.events, domain::EventSelection::All);
    assert_eq!(row(&db, h.id).eventos, None);

    assert!(repo
        .soft_delete(acme.id, h.id, at("2026-02-01T00:00:00Z"))
        .unwrap());
    assert_eq!(repo.set_events(acme.id, h.id, &only).unwrap(), None);
}

#[test]
fn a_test_delivery_is_written_leased_for_the_companys_url_only() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let globex = create_company(&pool, "Globex", "445556660001");
    let urls = PgWebhookUrlRepository::new(pool.clone());
    let h = hook(&acme, "https://acme.example/a", "2026-01-01T00:00:00Z");
    insert(&urls, &h);
    set_disabled(&db, h.id, Some(at("2026-01-05T00:00:00Z")));
    let sender = PgWebhookDeliveryRepository::new(pool);
    let now = at("2026-06-01T12:00:00Z");
    let lease_until = now + TimeDelta::minutes(2);

    let other = domain::WebhookEvent::test(globex.id, h.id, now);
    assert_eq!(sender.begin_test(h.id, &other, lease_until).unwrap(), None);
    assert!(common::webhook::events(&db).is_empty(), "nothing written");

    let event = domain::WebhookEvent::test(acme.id, h.id, now);
    let due = sender
        .begin_test(h.id, &event, lease_until)
        .unwrap()
        .expect("a disabled URL can be tested");

    assert_eq!(
        (
            due.webhook_url_id,
            due.event_id,
            due.attempts,
            due.url.as_str()
        ),
        (h.id, event.id, 0, "https://acme.example/a")
    );
    assert_eq!(due.secret, secret_of(h.id));
    let stored = delivery(&db, due.id);
    assert_eq!(stored.status, "pendente");
    assert_eq!(stored.proxima_tentativa_em, Some(lease_until));
    // the background claim does not take it while leased
    let claimed = common::webhook::claim(
        &sender,
        10,
        lease_until - TimeDelta::seconds(1),
        lease_until,
    )
    .unwrap();
    assert!(claimed.is_empty());
    // its one attempt is recorded under the test's lease
    assert!(sender
        .record_attempt(
            due.company_id,
            due.id,
            due.lease,
            &DeliveryAttempt {
                at: now,
                http_status: Some(204),
                latency_ms: 5,
                error: None,
                response_body: None
            },
            DeliveryOutcome::Delivered,
        )
        .unwrap());
    let log = sender.list_for_url(acme.id, h.id, 10).unwrap().unwrap();
    assert_eq!(log[0].event_type, "webhook.teste");
    assert_eq!(log[0].status, "entregue");
}
