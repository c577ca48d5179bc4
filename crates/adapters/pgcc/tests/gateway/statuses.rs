//! `consent_statuses`: `POST /pgcc/v1/solicitacoes/status`, in chunks of 500.

use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use domain::{ConsentStatus, CreationVariant};
use pgcc_adapter::MAX_IDS_PER_STATUS_CALL;
use ports::{PgccConsentStatus, PgccError, PgccGateway};
use serde_json::json;

use crate::helpers::{
    admin_post, consent, create, fault, gateway, gateway_to, one_shot_200, received, seed, sim,
    status_consultas, CNPJ,
};

/// A request of the simulator's company ([`CNPJ`]), as the simulator answers it.
fn status(pgcc_id: &str, status: ConsentStatus) -> PgccConsentStatus {
    PgccConsentStatus {
        company_cnpj: Some(CNPJ.to_owned()),
        ..answered_without_company(pgcc_id, status)
    }
}

/// A request of an answer that names no company (a stub PGCC's).
fn answered_without_company(pgcc_id: &str, status: ConsentStatus) -> PgccConsentStatus {
    PgccConsentStatus {
        pgcc_id: pgcc_id.to_owned(),
        status: Some(status),
        reason: None,
        next_change_at: None,
        company_cnpj: None,
    }
}

#[test]
fn the_reason_the_simulator_reports_reaches_us_and_a_non_text_one_is_ignored() {
    let sim = sim();
    let refused = create(&sim, &consent("tpl-conta", CreationVariant::Pending));
    let r = ureq::post(format!(
        "{}/_sim/solicitacoes/{refused}/recusar",
        sim.base_url
    ))
    .send_json(json!({"motivo": "não reconheço esta empresa"}))
    .unwrap();
    assert_eq!(r.status(), 200);

    let answered = gateway(&sim)
        .consent_statuses(std::slice::from_ref(&refused))
        .unwrap();
    assert_eq!(
        answered,
        [PgccConsentStatus {
            pgcc_id: refused,
            status: Some(ConsentStatus::Refused),
            reason: Some("não reconheço esta empresa".to_owned()),
            next_change_at: None,
            company_cnpj: Some(CNPJ.to_owned()),
        }]
    );

    let (base, server) =
        one_shot_200(r#"{"solicitacoes":[{"id":"pgcc-1","status":"revogado","motivo":{"x":1}}]}"#);
    let answered = gateway_to(&base, None, Duration::from_secs(2))
        .consent_statuses(&["pgcc-1".to_owned()])
        .unwrap();
    server.join().unwrap();
    assert_eq!(
        answered,
        [answered_without_company("pgcc-1", ConsentStatus::Revoked)]
    );
}

#[test]
fn statuses_follow_the_subjects_moves_in_the_order_asked_and_unknown_ids_are_left_out() {
    let sim = sim();
    let pending = create(&sim, &consent("tpl-conta", CreationVariant::Pending));
    let accepted = create(&sim, &consent("tpl-conta", CreationVariant::Pending));
    let refused = create(&sim, &consent("tpl-conta", CreationVariant::Pending));
    let revoked = create(&sim, &consent("tpl-credito", CreationVariant::Active));
    let active = create(&sim, &consent("tpl-credito", CreationVariant::Active));
    assert_eq!(
        admin_post(&sim, &format!("/_sim/solicitacoes/{accepted}/aceitar")),
        200
    );
    assert_eq!(
        admin_post(&sim, &format!("/_sim/solicitacoes/{refused}/recusar")),
        200
    );
    assert_eq!(
        admin_post(&sim, &format!("/_sim/solicitacoes/{revoked}/revogar")),
        200
    );

    let asked = [
        revoked.clone(),
        "pgcc-desconhecida".to_owned(),
        pending.clone(),
        refused.clone(),
        active.clone(),
        accepted.clone(),
    ];
    let statuses = gateway(&sim).consent_statuses(&asked).expect("statuses");

    assert_eq!(
        statuses,
        vec![
            status(&revoked, ConsentStatus::Revoked),
            status(&pending, ConsentStatus::Pending),
            status(&refused, ConsentStatus::Refused),
            status(&active, ConsentStatus::Active),
            status(&accepted, ConsentStatus::Active),
        ]
    );
}

#[test]
fn only_unknown_ids_give_an_empty_list() {
    let sim = sim();
    let asked = ["pgcc-a".to_owned(), "pgcc-b".to_owned()];
    assert!(gateway(&sim).consent_statuses(&asked).unwrap().is_empty());
    assert_eq!(status_consultas(&sim).len(), 2, "one call was made");
}

#[test]
fn no_id_makes_no_call() {
    let sim = sim();
    // a pending fault would fail the first call made
    fault(&sim, json!({"status": 503}));

    assert!(gateway(&sim).consent_statuses(&[]).unwrap().is_empty());

    assert!(status_consultas(&sim).is_empty());
    let error = gateway(&sim)
        .consent_statuses(&["pgcc-a".to_owned()])
        .unwrap_err();
    assert!(
        matches!(error, PgccError::Failed { status: 503 }),
        "the fault was still pending: {error:?}"
    );
}

#[test]
fn six_hundred_ids_are_asked_in_two_calls_of_at_most_500() {
    assert_eq!(MAX_IDS_PER_STATUS_CALL, 500);
    let sim = sim();
    let first = create(&sim, &consent("tpl-conta", CreationVariant::Pending));
    let last_of_first_chunk = create(&sim, &consent("tpl-credito", CreationVariant::Active));
    let in_second_chunk = create(&sim, &consent("tpl-conta", CreationVariant::Pending));
    let mut asked: Vec<String> = (0..600).map(|i| format!("pgcc-desconhecida-{i}")).collect();
    asked[0] = first.clone();
    asked[499] = last_of_first_chunk.clone();
    asked[550] = in_second_chunk.clone();
    // The rule slows down the next three calls to /pgcc/v1. If the 600 ids take exactly two
    // calls, the probe below is the third one and is slowed down too. (One call of 600 ids would
    // be refused with 400.)
    let latency = Duration::from_millis(250);
    fault(&sim, json!({"latencyMs": 250, "count": 3}));

    let statuses = gateway(&sim).consent_statuses(&asked).expect("statuses");

    assert_eq!(
        statuses,
        vec![
            status(&first, ConsentStatus::Pending),
            status(&last_of_first_chunk, ConsentStatus::Active),
            status(&in_second_chunk, ConsentStatus::Pending),
        ]
    );
    let counts = status_consultas(&sim);
    assert_eq!(counts.len(), 600);
    assert!(
        counts.values().all(|count| count == &json!(1)),
        "every id asked exactly once"
    );
    let started = Instant::now();
    gateway(&sim).consent_statuses(&[first]).unwrap();
    assert!(
        started.elapsed() >= latency,
        "the probe was the third call: {:?}",
        started.elapsed()
    );
}

#[test]
fn a_request_whose_expiry_has_passed_reports_expirado() {
    let sim = sim();
    let mut expired_active = consent("tpl-credito", CreationVariant::Active);
    expired_active.request.consent_expires_at = Utc.with_ymd_and_hms(2020, 1, 2, 3, 4, 5).unwrap();
    let mut expired_pending = consent("tpl-conta", CreationVariant::Pending);
    expired_pending.request.consent_expires_at = Utc.with_ymd_and_hms(2020, 1, 2, 3, 4, 5).unwrap();
    let active = create(&sim, &expired_active);
    let pending = create(&sim, &expired_pending);

    let statuses = gateway(&sim)
        .consent_statuses(&[active.clone(), pending.clone()])
        .unwrap();

    assert_eq!(
        statuses,
        vec![
            status(&active, ConsentStatus::Expired),
            status(&pending, ConsentStatus::Expired),
        ]
    );
    let stored = received(&sim);
    assert_eq!(stored[0]["status"], "ativo", "the simulator computes it");
}

#[test]
fn a_503_is_failed_503_and_a_slow_answer_is_timeout() {
    let sim = sim();
    let asked = ["pgcc-a".to_owned()];
    fault(&sim, json!({"status": 503}));
    let error = gateway(&sim).consent_statuses(&asked).unwrap_err();
    assert!(
        matches!(error, PgccError::Failed { status: 503 }),
        "{error:?}"
    );

    fault(&sim, json!({"latencyMs": 3000}));
    let started = Instant::now();
    let error = gateway_to(&sim.base_url, None, Duration::from_millis(300))
        .consent_statuses(&asked)
        .unwrap_err();
    assert!(matches!(error, PgccError::Timeout), "{error:?}");
    assert!(started.elapsed() < Duration::from_millis(2000));
}

#[test]
fn an_unknown_status_is_none_for_that_request_alone() {
    let (base, server) = one_shot_200(
        r#"{"solicitacoes":[{"id":"pgcc-1","status":"suspenso-temporariamente"},{"id":"pgcc-2","status":"ativo"}]}"#,
    );
    let answered = gateway_to(&base, None, Duration::from_secs(2))
        .consent_statuses(&["pgcc-1".to_owned(), "pgcc-2".to_owned()])
        .unwrap();
    server.join().unwrap();
    assert_eq!(
        answered,
        [
            PgccConsentStatus {
                pgcc_id: "pgcc-1".to_owned(),
                status: None,
                reason: None,
                next_change_at: None,
                company_cnpj: None,
            },
            answered_without_company("pgcc-2", ConsentStatus::Active)
        ]
    );
}

#[test]
fn a_raw_status_set_on_the_simulator_reaches_us_as_unknown_beside_its_neighbours() {
    let sim = sim();
    let odd = create(&sim, &consent("tpl-conta", CreationVariant::Pending));
    let plain = create(&sim, &consent("tpl-conta", CreationVariant::Pending));
    let r = ureq::post(format!("{}/_sim/solicitacoes/{odd}/status", sim.base_url))
        .send_json(json!({"status": "Pendente "}))
        .unwrap();
    assert_eq!(r.status(), 200);

    let answered = gateway(&sim)
        .consent_statuses(&[odd.clone(), plain.clone()])
        .unwrap();

    assert_eq!(
        answered,
        [
            PgccConsentStatus {
                pgcc_id: odd,
                status: None,
                reason: None,
                next_change_at: None,
                company_cnpj: Some(CNPJ.to_owned()),
            },
            status(&plain, ConsentStatus::Pending)
        ]
    );
}

#[test]
fn an_unreadable_answer_is_unexpected() {
    let (base, server) = one_shot_200(r#"{"itens":[]}"#);
    let error = gateway_to(&base, None, Duration::from_secs(2))
        .consent_statuses(&["pgcc-1".to_owned()])
        .unwrap_err();
    server.join().unwrap();
    assert!(matches!(error, PgccError::Unexpected(_)), "{error:?}");
}

#[test]
fn the_token_is_sent() {
    let sim = pgcc_sim::spawn_in_background_with_token(seed(), Some("tk".into()));
    let asked = ["pgcc-a".to_owned()];
    let with = gateway_to(&sim.base_url, Some("tk"), Duration::from_secs(5));
    assert!(with.consent_statuses(&asked).unwrap().is_empty());
    let without = gateway_to(&sim.base_url, None, Duration::from_secs(5));
    assert!(matches!(
        without.consent_statuses(&asked).unwrap_err(),
        PgccError::Failed { status: 401 }
    ));
}
