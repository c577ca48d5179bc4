mod common;

use common::{at, create_company, pool};
use diesel::prelude::*;
use domain::{Company, WebhookUrl};
use ports::WebhookUrlRepository;
use postgres_adapter::models::WebhookUrlRow;
use postgres_adapter::schema::webhook_urls;
use postgres_adapter::PgWebhookUrlRepository;
use testkit::TestDb;
use uuid::Uuid;

fn webhook(empresa: &Company, url: &str, criado_em: &str) -> WebhookUrl {
    WebhookUrl {
        id: Uuid::new_v4(),
        empresa_id: empresa.id,
        url: url.to_owned(),
        criado_em: at(criado_em),
        removido_em: None,
    }
}

fn row(db: &TestDb, id: Uuid) -> WebhookUrlRow {
    webhook_urls::table
        .find(id)
        .select(WebhookUrlRow::as_select())
        .first(&mut db.conn())
        .unwrap()
}

#[test]
fn a_companys_active_webhook_urls_are_listed_oldest_first() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgWebhookUrlRepository::new(pool);
    let newer = webhook(&acme, "https://acme.example/b", "2026-02-01T00:00:00Z");
    let older = webhook(&acme, "https://acme.example/a", "2026-01-01T00:00:00Z");
    repo.insert(&newer).unwrap();
    repo.insert(&older).unwrap();

    assert_eq!(repo.list_active(acme.id).unwrap(), vec![older, newer]);
}

#[test]
fn two_companies_never_see_each_others_webhook_urls() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let globex = create_company(&pool, "Globex", "998887770001");
    let repo = PgWebhookUrlRepository::new(pool);
    let acme_hook = webhook(&acme, "https://acme.example/hook", "2026-01-01T00:00:00Z");
    let globex_hook = webhook(
        &globex,
        "https://globex.example/hook",
        "2026-01-01T00:00:00Z",
    );
    repo.insert(&acme_hook).unwrap();
    repo.insert(&globex_hook).unwrap();

    assert_eq!(repo.list_active(acme.id).unwrap(), vec![acme_hook]);
    assert_eq!(repo.list_active(globex.id).unwrap(), vec![globex_hook]);
}

#[test]
fn soft_delete_keeps_the_row_with_its_removal_time_and_a_second_delete_is_false() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgWebhookUrlRepository::new(pool);
    let hook = webhook(&acme, "https://acme.example/hook", "2026-01-01T00:00:00Z");
    repo.insert(&hook).unwrap();
    let removed_at = at("2026-03-01T10:00:00.5Z");

    assert!(repo.soft_delete(acme.id, hook.id, removed_at).unwrap());

    assert_eq!(row(&db, hook.id).removido_em, Some(removed_at));
    assert_eq!(repo.list_active(acme.id).unwrap(), vec![]);

    assert!(!repo
        .soft_delete(acme.id, hook.id, at("2026-04-01T00:00:00Z"))
        .unwrap());
    assert_eq!(
        row(&db, hook.id).removido_em,
        Some(removed_at),
        "the first removal time stays"
    );
}

#[test]
fn deleting_another_companys_webhook_url_is_false_and_changes_nothing() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let globex = create_company(&pool, "Globex", "998887770001");
    let repo = PgWebhookUrlRepository::new(pool);
    let globex_hook = webhook(
        &globex,
        "https://globex.example/hook",
        "2026-01-01T00:00:00Z",
    );
    repo.insert(&globex_hook).unwrap();
    let before = row(&db, globex_hook.id);

    let deleted = repo
        .soft_delete(acme.id, globex_hook.id, at("2026-03-01T00:00:00Z"))
        .unwrap();

    assert!(!deleted);
    assert_eq!(row(&db, globex_hook.id), before);
    assert_eq!(repo.list_active(globex.id).unwrap(), vec![globex_hook]);
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
