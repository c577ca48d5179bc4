//! Fixtures shared by the services' test modules: a fixed clock and a company.

use std::sync::Arc;

use chrono::{DateTime, TimeZone, Utc};
use domain::{Cnpj, Company, CompanyId};
use ports::{Clock, MockClock};
use uuid::Uuid;

/// The instant every test runs at.
pub fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 14, 12, 0, 0).unwrap()
}

/// A clock that always answers [`now`], as often as asked.
pub fn fixed_clock() -> Arc<dyn Clock> {
    let mut clock = MockClock::new();
    clock.expect_now().returning(now);
    Arc::new(clock)
}

pub const VALID_CNPJ: &str = "11222333000181";
pub const VALID_CPF: &str = "52998224725";

/// The calling company of the tests.
pub fn company() -> Company {
    Company {
        id: CompanyId(Uuid::from_u128(0x0e4a_0000_0000_4000_8000_0000_0000_0001)),
        nome: "Empresa Exemplo Ltda".to_owned(),
        cnpj: Cnpj::parse(VALID_CNPJ).unwrap(),
        criado_em: now(),
    }
}
