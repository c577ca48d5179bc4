//! Fixtures shared by the services' test modules: a fixed clock, a company and a stored consent
//! request.

use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use domain::{
    ActiveAnswer, Cnpj, Company, CompanyId, ConsentRequest, ConsentStatus, Cpf, CreationVariant,
    ModalidadeAcesso, TipoTitular, ValidConsentRequest,
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
        nome: "Empresa Exemplo Ltda".to_owned(),
        cnpj: Cnpj::parse(VALID_CNPJ).unwrap(),
        criado_em: now(),
    }
}

/// A request of [`company`] for [`VALID_CPF`] and template `tpl-credito`, created a day before
/// [`now`], expiring a year after it, stored with `status` and its hash.
pub fn consent_request(id: Uuid, status: ConsentStatus) -> ConsentRequest {
    let criado_em = now() - Duration::days(1);
    let mut request = ConsentRequest {
        id,
        empresa_id: company().id,
        dados: ValidConsentRequest {
            variant: CreationVariant::Active,
            caso_de_uso_id_template: "tpl-credito".to_owned(),
            cpf_titular: Cpf::parse(VALID_CPF).unwrap(),
            modalidade_acesso: ModalidadeAcesso::Direto,
            tipo_titular: TipoTitular::PessoaFisica,
            data_expiracao_consentimento: now() + Duration::days(365),
            resposta: Some(ActiveAnswer {
                data_titular_respondeu_consentimento: criado_em - Duration::hours(1),
                prova_coleta: "aceite eletrônico registrado".to_owned(),
            }),
            cnpj_anuente: None,
        },
        status,
        pgcc_id: format!("pgcc-{}", id.simple()),
        hash: String::new(),
        hash_salt: "00112233445566778899aabbccddeeff".into(),
        criado_em,
        atualizado_em: criado_em,
    };
    request.hash = consent_hash(&request);
    request
}
