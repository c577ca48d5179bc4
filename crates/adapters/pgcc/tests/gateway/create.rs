use domain::{AccessMode, Cnpj, CreationVariant};
use ports::PgccGateway;
use serde_json::json;

use crate::helpers::{
    consent, gateway, gateway_to, received, sim, CNPJ, CNPJ_ANUENTE, CPF, VINCULO_1,
};

#[test]
fn creating_an_active_request_returns_the_pgcc_id_and_sends_every_field() {
    let sim = sim();
    let consent = consent("tpl-credito", CreationVariant::Active);

    let created = gateway(&sim)
        .create_consent_request(&consent)
        .expect("created");

    assert!(created.pgcc_id.starts_with("pgcc-"), "{}", created.pgcc_id);
    let received = received(&sim);
    assert_eq!(received.len(), 1);
    let mut stored = received[0].clone();
    let object = stored.as_object_mut().unwrap();
    assert_eq!(object.remove("id").unwrap(), json!(created.pgcc_id));
    object.remove("criadoEm");
    object.remove("atualizadoEm");
    assert_eq!(
        stored,
        json!({
            "referenciaExterna": consent.referencia_externa.to_string(),
            "cnpjEmpresa": CNPJ,
            "vinculoId": VINCULO_1.to_string(),
            "templateId": "tpl-credito",
            "cpfTitular": CPF,
            "tipoTitular": "PessoaFisica",
            "modalidadeAcesso": "Direto",
            "cnpjAnuente": null,
            "dataExpiracaoConsentimento": "2030-01-02T03:04:05Z",
            "status": "ativo",
            "dataTitularRespondeuConsentimento": "2025-03-04T05:06:07Z",
            "provaColeta": "assinatura-eletronica-123",
        })
    );
}

#[test]
fn a_pending_indirect_request_sends_status_pendente_the_consenter_and_no_answer() {
    let sim = sim();
    let mut consent = consent("tpl-conta", CreationVariant::Pending);
    consent.link_id = None;
    consent.request.access_mode = AccessMode::Indirect;
    consent.request.consenting_cnpj = Some(Cnpj::parse(CNPJ_ANUENTE).unwrap());

    gateway(&sim)
        .create_consent_request(&consent)
        .expect("created");

    let stored = &received(&sim)[0];
    assert_eq!(stored["status"], "pendente");
    assert_eq!(stored["vinculoId"], json!(null));
    assert_eq!(stored["modalidadeAcesso"], "Indireto");
    assert_eq!(stored["cnpjAnuente"], CNPJ_ANUENTE);
    assert_eq!(stored["dataTitularRespondeuConsentimento"], json!(null));
    assert_eq!(stored["provaColeta"], json!(null));
}

#[test]
fn repeating_a_creation_returns_the_same_pgcc_id_and_creates_one_request() {
    let sim = sim();
    let gateway = gateway(&sim);
    let consent = consent("tpl-conta", CreationVariant::Pending);

    let first = gateway.create_consent_request(&consent).unwrap();
    let second = gateway.create_consent_request(&consent).unwrap();

    assert_eq!(first, second);
    assert_eq!(received(&sim).len(), 1);
}

#[test]
fn the_token_is_sent_as_a_bearer_and_accepted() {
    let sim = pgcc_sim::spawn_in_background_with_token(crate::helpers::seed(), Some("tk".into()));
    let gateway = gateway_to(&sim.base_url, Some("tk"), std::time::Duration::from_secs(5));

    assert_eq!(
        gateway
            .list_use_cases(&crate::helpers::cnpj())
            .unwrap()
            .len(),
        3
    );
    gateway
        .create_consent_request(&consent("tpl-credito", CreationVariant::Pending))
        .expect("created with the token");
    assert_eq!(received(&sim).len(), 1);
}
