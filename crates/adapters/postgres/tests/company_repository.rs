mod common;

use common::{at, company, create_company, pool};
use diesel::prelude::*;
use domain::CompanyId;
use ports::{CompanyRepository, CreateCompanyError};
use postgres_adapter::models::EmpresaRow;
use postgres_adapter::schema::empresas;
use postgres_adapter::PgCompanyRepository;
use testkit::TestDb;
use uuid::Uuid;

#[test]
fn a_created_company_is_stored_and_read_back_unchanged() {
    let db = TestDb::new();
    let pool = pool(&db);
    let repo = PgCompanyRepository::new(pool.clone());
    let acme = company("ACME Ltda", "112223330001");

    repo.create(&acme).unwrap();

    let rows: Vec<EmpresaRow> = empresas::table
        .select(EmpresaRow::as_select())
        .load(&mut db.conn())
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].id, acme.id.0);
    assert_eq!(rows[0].nome, "ACME Ltda");
    assert_eq!(rows[0].cnpj, acme.cnpj.as_str());
    assert_eq!(repo.get(acme.id).unwrap(), Some(acme));
}

#[test]
fn creating_a_company_with_a_taken_cnpj_is_duplicate_cnpj_and_stores_nothing() {
    let db = TestDb::new();
    let pool = pool(&db);
    let repo = PgCompanyRepository::new(pool.clone());
    let first = create_company(&pool, "Primeira", "112223330001");
    let second = company("Segunda", "112223330001");
    assert_eq!(second.cnpj, first.cnpj);

    let result = repo.create(&second);

    assert!(
        matches!(result, Err(CreateCompanyError::DuplicateCnpj)),
        "{result:?}"
    );
    assert_eq!(repo.get(second.id).unwrap(), None);
    let count: i64 = empresas::table.count().get_result(&mut db.conn()).unwrap();
    assert_eq!(count, 1);
}

#[test]
fn creating_a_company_with_a_taken_id_is_unexpected_not_a_duplicate_cnpj() {
    let db = TestDb::new();
    let pool = pool(&db);
    let repo = PgCompanyRepository::new(pool.clone());
    let first = create_company(&pool, "Primeira", "112223330001");
    let mut same_id = company("Segunda", "998887770001");
    same_id.id = first.id;

    let result = repo.create(&same_id);

    assert!(
        matches!(
            result,
            Err(CreateCompanyError::Repo(ports::RepoError::Unexpected(_)))
        ),
        "{result:?}"
    );
}

#[test]
fn getting_an_unknown_company_is_none() {
    let db = TestDb::new();
    let pool = pool(&db);
    create_company(&pool, "ACME", "112223330001");

    let found = PgCompanyRepository::new(pool)
        .get(CompanyId(Uuid::new_v4()))
        .unwrap();

    assert_eq!(found, None);
}

#[test]
fn listing_companies_returns_every_company_oldest_first() {
    let db = TestDb::new();
    let pool = pool(&db);
    let repo = PgCompanyRepository::new(pool.clone());
    let mut newer = company("Nova", "112223330001");
    newer.created_at = at("2026-03-01T10:00:00.000001Z");
    let mut older = company("Antiga", "998887770001");
    older.created_at = at("2025-01-01T10:00:00Z");
    repo.create(&newer).unwrap();
    repo.create(&older).unwrap();

    let listed = repo.list().unwrap();

    assert_eq!(listed, vec![older, newer]);
}

#[test]
fn a_new_company_is_due_for_its_scheduled_sync_and_claimed_once_per_period() {
    let db = TestDb::new();
    let pool = pool(&db);
    let repo = PgCompanyRepository::new(pool.clone());
    let acme = create_company(&pool, "ACME", "112223330001");
    let (t0, t1) = (at("2026-05-01T12:00:00Z"), at("2026-05-01T12:54:00Z"));

    assert_eq!(repo.claim_due_sync(t0, t1).unwrap(), Some(acme.clone()));
    assert_eq!(
        repo.claim_due_sync(t0, t1).unwrap(),
        None,
        "claimed until t1"
    );
    assert_eq!(
        repo.claim_due_sync(at("2026-05-01T12:53:59Z"), t1).unwrap(),
        None
    );
    assert_eq!(
        repo.claim_due_sync(t1, at("2026-05-01T13:48:00Z")).unwrap(),
        Some(acme)
    );
}

#[test]
fn concurrent_claims_never_give_one_company_to_two_processes() {
    let db = TestDb::new();
    let pool = pool(&db);
    let companies: Vec<_> = (0..20)
        .map(|i| {
            create_company(
                &pool,
                &format!("Empresa {i}"),
                &format!("{:012}", 112223330001u64 + i * 7),
            )
        })
        .collect();
    let (now, next) = (at("2026-05-01T12:00:00Z"), at("2026-05-01T13:00:00Z"));
    let claimers: Vec<_> = (0..4)
        .map(|_| {
            let repo = PgCompanyRepository::new(pool.clone());
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                while let Some(company) = repo.claim_due_sync(now, next).unwrap() {
                    mine.push(company.id);
                }
                mine
            })
        })
        .collect();
    let mut claimed: Vec<CompanyId> = claimers
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    claimed.sort_by_key(|id| id.0);
    let mut expected: Vec<CompanyId> = companies.iter().map(|c| c.id).collect();
    expected.sort_by_key(|id| id.0);
    assert_eq!(claimed, expected, "each company exactly once");
}
