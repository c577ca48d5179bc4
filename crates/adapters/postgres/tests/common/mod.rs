//! Fixtures shared by the repository tests: a pool on the test's own database, companies with
//! valid CNPJs, instants PostgreSQL stores exactly.
#![allow(dead_code)] // each test binary uses its own part of this module

pub mod consent;
pub mod webhook;

use std::time::Duration;

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use domain::{Cnpj, Company, CompanyId};
use ports::CompanyRepository;
use postgres_adapter::{connect, PgCompanyRepository, PgPool, PoolSettings};
use testkit::TestDb;
use uuid::Uuid;

/// A small pool on `db` (declare it after the `TestDb`, so it is dropped first).
pub fn pool(db: &TestDb) -> PgPool {
    connect(
        db.url(),
        &PoolSettings {
            max_size: 2,
            checkout_timeout: Duration::from_secs(10),
            ..PoolSettings::default()
        },
    )
    .expect("build the pool")
}

/// `timestamptz` keeps microseconds: instants built here survive a round trip unchanged.
pub fn at(rfc3339: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(rfc3339)
        .expect("a valid instant")
        .with_timezone(&Utc)
}

/// Now, truncated to what PostgreSQL stores.
pub fn now() -> DateTime<Utc> {
    Utc::now()
        .duration_trunc(TimeDelta::microseconds(1))
        .expect("truncate to microseconds")
}

/// A valid numeric CNPJ whose first 12 digits are `base` (the two check digits are computed).
pub fn cnpj(base: &str) -> Cnpj {
    assert_eq!(base.len(), 12, "a CNPJ base has 12 digits");
    let mut digits: Vec<u32> = base
        .chars()
        .map(|c| c.to_digit(10).expect("a digit"))
        .collect();
    for _ in 0..2 {
        let sum: u32 = digits
            .iter()
            .rev()
            .enumerate()
            .map(|(i, d)| d * (2 + (i as u32 % 8)))
            .sum();
        let rest = sum % 11;
        digits.push(if rest < 2 { 0 } else { 11 - rest });
    }
    let text: String = digits
        .iter()
        .map(|d| char::from_digit(*d, 10).unwrap())
        .collect();
    Cnpj::parse(&text).expect("a valid CNPJ")
}

pub fn company(nome: &str, cnpj_base: &str) -> Company {
    Company {
        id: CompanyId(Uuid::new_v4()),
        name: nome.to_owned(),
        cnpj: cnpj(cnpj_base),
        created_at: now(),
    }
}

/// Stores a new company and returns it.
pub fn create_company(pool: &PgPool, nome: &str, cnpj_base: &str) -> Company {
    let company = company(nome, cnpj_base);
    PgCompanyRepository::new(pool.clone())
        .create(&company)
        .expect("create the company");
    company
}
