mod common;

use chrono::Duration;
use common::{at, create_company, now, pool};
use diesel::prelude::*;
use ports::{ApiKeyRecord, ApiKeyRepository, ApiKeySummary, ResolvedApiKey, RevokeApiKeyOutcome};
use postgres_adapter::models::ApiKeyRow;
use postgres_adapter::schema::api_keys;
use postgres_adapter::PgApiKeyRepository;
use testkit::TestDb;
use uuid::Uuid;

fn key(empresa: &domain::Company, hash: &str) -> ApiKeyRecord {
    ApiKeyRecord {
        id: Uuid::new_v4(),
        company_id: empresa.id,
        hash: hash.to_owned(),
        prefixo: "ck_live_ab12".to_owned(),
        created_at: now(),
        scopes: domain::Scopes::of(&[domain::Scope::Check, domain::Scope::Auditor]),
    }
}

fn row(db: &TestDb, id: Uuid) -> ApiKeyRow {
    api_keys::table
        .find(id)
        .select(ApiKeyRow::as_select())
        .first(&mut db.conn())
        .unwrap()
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

    let found = repo.find_by_hash(&"a1".repeat(32)).unwrap();

    assert_eq!(
        found,
        Some(ResolvedApiKey {
            id: record.id,
            quota_of: acme.id,
            company: acme,
            last_used_at: None,
            scopes: record.scopes,
        })
    );
    let row = row(&db, record.id);
    assert_eq!(ApiKeyRecord::from(row.clone()), record);
    assert_eq!(row.revogado_em, None);
}

#[test]
fn a_key_stored_without_scopes_has_every_scope_but_auditor_and_unknown_names_are_refused() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgApiKeyRepository::new(pool.clone());
    // as a key issued before scopes existed: the column's default
    diesel::sql_query(format!(
        "INSERT INTO api_keys (id, empresa_id, hash, prefixo) \
         VALUES ('{}', '{}', '{}', 'cak_00000000')",
        Uuid::new_v4(),
        acme.id,
        "c3".repeat(32)
    ))
    .execute(&mut db.conn())
    .unwrap();

    let found = repo.find_by_hash(&"c3".repeat(32)).unwrap().unwrap();

    assert_eq!(found.scopes, domain::Scopes::DEFAULT);
    let refused = diesel::sql_query(format!(
        "INSERT INTO api_keys (id, empresa_id, hash, prefixo, escopos) \
         VALUES ('{}', '{}', '{}', 'cak_00000000', '{{admin}}')",
        Uuid::new_v4(),
        acme.id,
        "d4".repeat(32)
    ))
    .execute(&mut db.conn());
    assert!(
        refused.is_err(),
        "api_keys_escopos_check refuses unknown names"
    );
}

#[test]
fn an_unknown_hash_finds_no_key() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgApiKeyRepository::new(pool.clone());
    repo.insert(&key(&acme, &"a1".repeat(32))).unwrap();

    assert_eq!(repo.find_by_hash(&"ff".repeat(32)).unwrap(), None);
}

#[test]
fn a_revoked_key_finds_nothing() {
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

    assert_eq!(repo.find_by_hash(&record.hash).unwrap(), None);
}

#[test]
fn finding_a_key_by_its_hash_changes_no_row() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgApiKeyRepository::new(pool.clone());
    let record = key(&acme, &"a1".repeat(32));
    repo.insert(&record).unwrap();
    let before = row(&db, record.id);

    repo.find_by_hash(&record.hash).unwrap();

    let after = row(&db, record.id);
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

#[test]
fn the_table_refuses_a_hash_that_is_not_a_sha256_digest_so_no_key_is_ever_stored_in_clear() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgApiKeyRepository::new(pool);
    let raw_key = format!("cak_{}_0011aabb", "a1".repeat(32));

    for hash in [
        raw_key.as_str(),
        &"A1".repeat(32),
        &"a1".repeat(31),
        &"a1".repeat(33),
    ] {
        let result = repo.insert(&key(&acme, hash));
        assert!(
            matches!(result, Err(ports::RepoError::Unexpected(_))),
            "{hash}: {result:?}"
        );
        let text = format!("{:#}", result.unwrap_err());
        assert!(!text.contains(hash), "the error names no value: {text}");
    }
    let mut long_prefix = key(&acme, &"a1".repeat(32));
    long_prefix.prefixo = raw_key.clone();
    assert!(repo.insert(&long_prefix).is_err());
    let count: i64 = api_keys::table.count().get_result(&mut db.conn()).unwrap();
    assert_eq!(count, 0);
}

#[test]
fn recording_a_use_sets_the_last_use_unless_one_was_recorded_since_the_given_instant() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgApiKeyRepository::new(pool);
    let record = key(&acme, &"a1".repeat(32));
    repo.insert(&record).unwrap();
    let first = at("2026-03-01T12:00:00Z");

    assert!(repo
        .record_use(record.id, first, first - Duration::minutes(1))
        .unwrap());
    assert_eq!(row(&db, record.id).ultimo_uso_em, Some(first));

    // 30 s later: the recorded use is within the minute, nothing is written
    let soon = first + Duration::seconds(30);
    assert!(!repo
        .record_use(record.id, soon, soon - Duration::minutes(1))
        .unwrap());
    assert_eq!(row(&db, record.id).ultimo_uso_em, Some(first));

    // 61 s later: written again
    let later = first + Duration::seconds(61);
    assert!(repo
        .record_use(record.id, later, later - Duration::minutes(1))
        .unwrap());
    assert_eq!(row(&db, record.id).ultimo_uso_em, Some(later));
    assert_eq!(
        repo.find_by_hash(&record.hash)
            .unwrap()
            .unwrap()
            .last_used_at,
        Some(later)
    );
}

#[test]
fn listing_answers_the_companys_keys_oldest_first_without_hashes() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let other = create_company(&pool, "Outra", "998887770001");
    let repo = PgApiKeyRepository::new(pool);
    let mut older = key(&acme, &"a1".repeat(32));
    older.created_at = at("2026-01-01T00:00:00Z");
    let mut newer = key(&acme, &"a2".repeat(32));
    newer.created_at = at("2026-02-01T00:00:00Z");
    repo.insert(&newer).unwrap();
    repo.insert(&older).unwrap();
    repo.insert(&key(&other, &"b2".repeat(32))).unwrap();
    let revoked_at = at("2026-02-02T00:00:00Z");
    repo.revoke(older.id, revoked_at).unwrap();

    let listed = repo.list_by_company(acme.id).unwrap();

    assert_eq!(
        listed,
        vec![
            ApiKeySummary {
                id: older.id,
                company_id: acme.id,
                prefixo: older.prefixo.clone(),
                created_at: older.created_at,
                last_used_at: None,
                revoked_at: Some(revoked_at),
                scopes: older.scopes,
            },
            ApiKeySummary {
                id: newer.id,
                company_id: acme.id,
                prefixo: newer.prefixo.clone(),
                created_at: newer.created_at,
                last_used_at: None,
                revoked_at: None,
                scopes: newer.scopes,
            },
        ]
    );
    assert_eq!(
        repo.list_by_company(domain::CompanyId(Uuid::new_v4()))
            .unwrap(),
        vec![]
    );
}

#[test]
fn revoking_sets_the_revocation_once_and_tells_a_revoked_key_from_an_unknown_one() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgApiKeyRepository::new(pool);
    let record = key(&acme, &"a1".repeat(32));
    let kept = key(&acme, &"a2".repeat(32));
    repo.insert(&record).unwrap();
    repo.insert(&kept).unwrap();
    let first = at("2026-03-01T12:00:00Z");

    let outcome = repo.revoke(record.id, first).unwrap();
    assert!(
        matches!(&outcome, RevokeApiKeyOutcome::Revoked(s) if s.id == record.id && s.revoked_at == Some(first)),
        "{outcome:?}"
    );
    assert_eq!(repo.find_by_hash(&record.hash).unwrap(), None);

    let again = repo.revoke(record.id, first + Duration::hours(1)).unwrap();
    assert!(
        matches!(&again, RevokeApiKeyOutcome::AlreadyRevoked(s) if s.revoked_at == Some(first)),
        "{again:?}"
    );
    assert_eq!(row(&db, record.id).revogado_em, Some(first));

    assert_eq!(
        repo.revoke(Uuid::new_v4(), first).unwrap(),
        RevokeApiKeyOutcome::NotFound
    );
    assert!(
        repo.find_by_hash(&kept.hash).unwrap().is_some(),
        "other keys still work"
    );
}
