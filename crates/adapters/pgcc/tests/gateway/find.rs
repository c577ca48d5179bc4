//! `find_by_external_reference`: `GET /pgcc/v1/solicitacoes?cnpjEmpresa=...&referenciaExterna=...`.

use domain::{Cnpj, CreationVariant};
use ports::{PgccError, PgccGateway};
use serde_json::json;
use uuid::Uuid;

use crate::helpers::{
    cnpj, consent, create, fault, gateway, gateway_to, one_shot_200, sim, CNPJ_ANUENTE,
};

#[test]
fn a_request_the_pgcc_holds_is_found_with_its_pgcc_id() {
    let sim = sim();
    let request = consent("tpl-credito", CreationVariant::Active);
    let pgcc_id = create(&sim, &request);
    create(&sim, &consent("tpl-conta", CreationVariant::Pending));

    let found = gateway(&sim)
        .find_by_external_reference(&cnpj(), request.referencia_externa)
        .unwrap();

    assert_eq!(found.map(|f| f.pgcc_id), Some(pgcc_id));
}

#[test]
fn a_reference_the_pgcc_never_received_is_none() {
    let sim = sim();

    let found = gateway(&sim)
        .find_by_external_reference(&cnpj(), Uuid::new_v4())
        .unwrap();

    assert_eq!(found, None);
}

#[test]
fn failures_to_ask_are_errors_never_none() {
    let sim = sim();
    let gateway = gateway(&sim);
    fault(&sim, json!({"status": 503}));
    let unavailable = gateway.find_by_external_reference(&cnpj(), Uuid::new_v4());
    let unknown_company =
        gateway.find_by_external_reference(&Cnpj::parse(CNPJ_ANUENTE).unwrap(), Uuid::new_v4());

    assert!(
        matches!(unavailable, Err(PgccError::Failed { status: 503 })),
        "{unavailable:?}"
    );
    assert!(
        matches!(unknown_company, Err(PgccError::Rejected { status: 404 })),
        "{unknown_company:?}"
    );
}

#[test]
fn an_answer_about_another_request_is_unexpected() {
    let asked = Uuid::new_v4();
    let (base, server) = one_shot_200(
        r#"{"solicitacoes":[{"id":"pgcc-x","status":"ativo","referenciaExterna":"0f8d5b7e-3c1a-4f2b-9d6e-5a4b3c2d1e0f","atualizadoEm":"2025-03-04T05:06:08Z"}]}"#,
    );

    let result = gateway_to(&base, None, std::time::Duration::from_secs(5))
        .find_by_external_reference(&cnpj(), asked);
    server.join().unwrap();

    assert!(
        matches!(result, Err(PgccError::Unexpected(_))),
        "{result:?}"
    );
}

#[test]
fn an_unreadable_answer_is_unexpected() {
    let (base, server) = one_shot_200(r#"{"solicitacoes": "nenhuma"}"#);

    let result = gateway_to(&base, None, std::time::Duration::from_secs(5))
        .find_by_external_reference(&cnpj(), Uuid::new_v4());
    server.join().unwrap();

    assert!(
        matches!(result, Err(PgccError::Unexpected(_))),
        "{result:?}"
    );
}
