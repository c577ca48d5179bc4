mod common;

use common::{at, create_company, now, pool};
use diesel::prelude::*;
use ports::{ApiKeyRecord, ApiKeyRepository};
use postgres_adapter::models::ApiKeyRow;
use postgres_adapter::schema::api_keys;
use postgres_adapter::PgApiKeyRepository;
use testkit::TestDb;
use uuid::Uuid;

fn key(empresa: &domain::Company, hash: &str) -> ApiKeyRecord {
    ApiKeyRecord {
        id: Uuid::new_v4(),
        empresa_id: empresa.id,
        hash: hash.to_owned(),
        prefixo: "ck_live_ab12".to_owned(),
        criado_em: now(),
    }
}

#[test]
fn a_stored_key_is_kept_as_its_hash_and_finds_its_company() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let other = create_company(&pool, "Outra", "998887770001");
    let repo = PgApiKeyRepository::new(pool.clone());
    let record = key(&acme, &"a1".repeat(32));
    repo.insert(&record).unwrap();
    repo.insert(&key(&other, &"b2".repeat(32))).unwrap();

    let found = repo.find_company_by_hash(&"a1".repeat(32)).unwrap();

    assert_eq!(found, Some(acme));
    let row: ApiKeyRow = api_keys::table
        .find(record.id)
        .select(ApiKeyRow::as_select())
        .first(&mut db.conn())
        .unwrap();
    assert_eq!(ApiKeyRecord::from(row.clone()), record);
    assert_eq!(row.revogado_em, None);
}

#[test]
fn an_unknown_hash_finds_no_company() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgApiKeyRepository::new(pool.clone());
    repo.insert(&key(&acme, &"a1".repeat(32))).unwrap();

    assert_eq!(repo.find_company_by_hash(&"ff".repeat(32)).unwrap(), None);
}

#[test]
fn a_revoked_key_finds_no_company() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgApiKeyRepository::new(pool.clone());
    let record = key(&acme, &"a1".repeat(32));
    repo.insert(&record).unwrap();
    diesel::update(api_keys::table.find(record.id))
        .set(api_keys::revogado_em.eq(Some(at("2026-01-01T00:00:00Z"))))
        .execute(&mut db.conn())
        .unwrap();

    assert_eq!(repo.find_company_by_hash(&record.hash).unwrap(), None);
}

#[test]
fn finding_a_company_by_key_hash_changes_no_row() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgApiKeyRepository::new(pool.clone());
    let record = key(&acme, &"a1".repeat(32));
    repo.insert(&record).unwrap();
    let before: ApiKeyRow = api_keys::table
        .find(record.id)
        .select(ApiKeyRow::as_select())
        .first(&mut db.conn())
        .unwrap();

    repo.find_company_by_hash(&record.hash).unwrap();

    let after: ApiKeyRow = api_keys::table
        .find(record.id)
        .select(ApiKeyRow::as_select())
        .first(&mut db.conn())
        .unwrap();
    assert_eq!(after, before);
    assert_eq!(after.ultimo_uso_em, None);
}

#[test]
fn a_key_for_an_unknown_company_is_refused() {
    let db = TestDb::new();
    let pool = pool(&db);
    let ghost = common::company("Fantasma", "112223330001");
    let repo = PgApiKeyRepository::new(pool);

    let result = repo.insert(&key(&ghost, &"a1".repeat(32)));

    assert!(
        matches!(result, Err(ports::RepoError::Unexpected(_))),
        "{result:?}"
    );
    let count: i64 = api_keys::table.count().get_result(&mut db.conn()).unwrap();
    assert_eq!(count, 0);
}
