//! Fixtures shared by the services' test modules: a fixed clock, a company and a stored consent
//! request.

use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use domain::{
    AccessMode, ActiveAnswer, Cnpj, Company, CompanyId, ConsentRequest, ConsentStatus, Cpf,
    CreationVariant, SubjectType, ValidConsentRequest,
};
use ports::{Clock, MockClock};
use uuid::Uuid;

use crate::consent_requests::hash::consent_hash;

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
        name: "Empresa Exemplo Ltda".to_owned(),
        cnpj: Cnpj::parse(VALID_CNPJ).unwrap(),
        created_at: now(),
    }
}

/// A request of [`company`] for [`VALID_CPF`] and template `tpl-credito`, created a day before
/// [`now`], expiring a year after it, stored with `status` and its hash.
pub fn consent_request(id: Uuid, status: ConsentStatus) -> ConsentRequest {
    let created_at = now() - Duration::days(1);
    let mut request = ConsentRequest {
        id,
        company_id: company().id,
        content: ValidConsentRequest {
            variant: CreationVariant::Active,
            template_id: "tpl-credito".to_owned(),
            subject_cpf: Cpf::parse(VALID_CPF).unwrap(),
            access_mode: AccessMode::Direct,
            subject_type: SubjectType::NaturalPerson,
            consent_expires_at: now() + Duration::days(365),
            answer: Some(ActiveAnswer {
                subject_answered_at: created_at - Duration::hours(1),
                proof_of_collection: "aceite eletrônico registrado".to_owned(),
            }),
            consenting_cnpj: None,
        },
        status,
        pgcc_id: format!("pgcc-{}", id.simple()),
        hash: String::new(),
        hash_salt: "00112233445566778899aabbccddeeff".into(),
        created_at,
        updated_at: created_at,
        use_case_version: Some(1),
    };
    request.hash = consent_hash(&request);
    request
}
