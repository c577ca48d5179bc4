//! `revoke_consent_request`: `POST /pgcc/v1/solicitacoes/{id}/revogar`.

use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use domain::{ConsentStatus, CreationVariant};
use ports::{PgccError, PgccGateway};
use serde_json::json;

use crate::helpers::{consent, create, fault, gateway, gateway_to, received, seed, sim};

#[test]
fn revoking_an_active_request_succeeds_and_the_pgcc_holds_it_revoked() {
    let sim = sim();
    let id = create(&sim, &consent("tpl-credito", CreationVariant::Active));

    gateway(&sim).revoke_consent_request(&id).expect("revoked");

    assert_eq!(received(&sim)[0]["status"], "revogado");
    let statuses = gateway(&sim).consent_statuses(&[id]).unwrap();
    assert_eq!(statuses[0].status, Some(ConsentStatus::Revoked));
}

#[test]
fn revoking_a_pending_request_withdraws_it_on_the_pgcc() {
    let sim = sim();
    let pending = create(&sim, &consent("tpl-conta", CreationVariant::Pending));

    gateway(&sim)
        .revoke_consent_request(&pending)
        .expect("withdrawn");

    assert_eq!(received(&sim)[0]["status"], "revogado");
}

#[test]
fn revoking_an_already_revoked_or_refused_request_is_rejected_409() {
    let sim = sim();
    let gateway = gateway(&sim);
    let refused = create(&sim, &consent("tpl-conta", CreationVariant::Pending));
    let active = create(&sim, &consent("tpl-credito", CreationVariant::Active));
    gateway.revoke_consent_request(&active).unwrap();
    assert_eq!(
        crate::helpers::admin_post(&sim, &format!("/_sim/solicitacoes/{refused}/recusar")),
        200
    );

    for id in [&refused, &active] {
        let error = gateway.revoke_consent_request(id).unwrap_err();
        assert!(
            matches!(error, PgccError::Rejected { status: 409 }),
            "{error:?}"
        );
    }
    assert_eq!(received(&sim)[0]["status"], "recusado");
}

#[test]
fn revoking_an_expired_request_is_rejected_409() {
    let sim = sim();
    let mut expired = consent("tpl-credito", CreationVariant::Active);
    expired.request.consent_expires_at = Utc.with_ymd_and_hms(2020, 1, 2, 3, 4, 5).unwrap();
    let id = create(&sim, &expired);

    let error = gateway(&sim).revoke_consent_request(&id).unwrap_err();

    assert!(
        matches!(error, PgccError::Rejected { status: 409 }),
        "{error:?}"
    );
}

#[test]
fn revoking_an_unknown_request_is_rejected_404() {
    let sim = sim();
    for id in ["pgcc-desconhecida", "status", "a/b", "..", ""] {
        let error = gateway(&sim).revoke_consent_request(id).unwrap_err();
        assert!(
            matches!(error, PgccError::Rejected { status: 404 }),
            "{id:?}: {error:?}"
        );
    }
}

#[test]
fn a_503_is_failed_503_and_a_slow_answer_is_timeout() {
    let sim = sim();
    let id = create(&sim, &consent("tpl-credito", CreationVariant::Active));

    fault(&sim, json!({"status": 503}));
    let error = gateway(&sim).revoke_consent_request(&id).unwrap_err();
    assert!(
        matches!(error, PgccError::Failed { status: 503 }),
        "{error:?}"
    );
    assert_eq!(received(&sim)[0]["status"], "ativo");

    fault(&sim, json!({"latencyMs": 3000}));
    let started = Instant::now();
    let error = gateway_to(&sim.base_url, None, Duration::from_millis(300))
        .revoke_consent_request(&id)
        .unwrap_err();
    assert!(matches!(error, PgccError::Timeout), "{error:?}");
    assert!(started.elapsed() < Duration::from_millis(2000));
}

#[test]
fn the_token_is_sent() {
    let sim = pgcc_sim::spawn_in_background_with_token(seed(), Some("tk".into()));
    let with = gateway_to(&sim.base_url, Some("tk"), Duration::from_secs(5));
    let id = with
        .create_consent_request(&consent("tpl-credito", CreationVariant::Active))
        .unwrap()
        .pgcc_id;
    let without = gateway_to(&sim.base_url, None, Duration::from_secs(5));
    assert!(matches!(
        without.revoke_consent_request(&id).unwrap_err(),
        PgccError::Failed { status: 401 }
    ));
    with.revoke_consent_request(&id)
        .expect("revoked with the token");
}
