//! How the PGCC's answers are classified (issue 12): "try later" (408, 425, 429) and 5xx are
//! transient (503/502, never kept under an Idempotency-Key, never a cancelled row: the same
//! request later creates the consent); a status the PGCC names that we do not know is skipped for
//! that request alone (its neighbours are applied, the metric counts it); the reconciler cancels
//! a creation only once "not found" answers span its window.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use testkit::{wait_until, Client};

use crate::helpers::*;
use crate::lifecycle::{create, detail, synced_with};

/// The answer's status, the headers that matter here and the envelope.
fn create_with_key(app: &TestApp, key: &str) -> testkit::Reply {
    app.a
        .post_json_with(ATIVO, &active_body(), &[("Idempotency-Key", key)])
}

fn header<'a>(reply: &'a testkit::Reply, name: &str) -> Option<&'a str> {
    reply.header(name)
}

#[test]
fn a_pgcc_asking_to_try_later_or_failing_is_transient_and_the_same_request_later_creates_it() {
    let app = synced_with(&[]);
    let cases: [(Value, u16, &str, Option<&str>); 3] = [
        (
            json!({"status": 429, "retryAfter": "7"}),
            503,
            "TooManyRequests",
            Some("7"),
        ),
        (json!({"status": 408}), 503, "RequestTimeout", None),
        (json!({"status": 503}), 502, "ServiceUnavailable", None),
    ];
    for (i, (fault, status, name, retry_after)) in cases.into_iter().enumerate() {
        let key = format!("pedido-transitorio-{i}");
        app.fault(fault);

        let failed = create_with_key(&app, &key).expect(status);
        assert_eq!(failed.json["isPgccErro"], true, "{}", failed.text);
        assert_eq!(failed.json["pgccCodigoErro"], name);
        assert_eq!(failed.json["sucesso"], false);
        assert_eq!(header(&failed, "retry-after"), retry_after, "{name}");
        assert_eq!(header(&failed, "idempotent-replayed"), None);
        assert_eq!(
            app.creation_rows("cancelada"),
            0,
            "{name}: no row cancelled"
        );
        assert_eq!(
            app.creation_rows("em_andamento"),
            1,
            "{name}: left unconfirmed"
        );

        // the PGCC recovered (the fault was for one call): the same request runs again
        let created = create_with_key(&app, &key).expect(200);
        assert_eq!(
            header(&created, "idempotent-replayed"),
            None,
            "not a replay"
        );
        assert_eq!(created.json["isPgccErro"], false);
        let id = created.data()["id"].as_str().unwrap().to_owned();
        assert_eq!(detail(&app.a, &id)["status"], "ativo");
        assert_eq!(app.creation_rows("em_andamento"), 0);

        // and from now on the key replays the success
        let again = create_with_key(&app, &key).expect(200);
        assert_eq!(header(&again, "idempotent-replayed"), Some("true"));
        assert_eq!(again.text, created.text);
    }
    assert_eq!(app.consent_rows(), 3);
    assert_eq!(app.creation_rows("cancelada"), 0);
    assert_eq!(app.sim_requests().len(), 3, "one PGCC request per key");
}

/// A PGCC asking for a day (`Retry-After: 86400`) on a creation: the company is told to come
/// back after `pgcc.max_retry_after_seconds` (60 by default, 5 when configured so), and nothing
/// was done (no row confirmed, none cancelled).
#[test]
fn a_day_long_retry_after_from_the_pgcc_reaches_the_company_capped() {
    for (env, expected) in [
        (&[][..], "60"),
        (&[("APP__PGCC__MAX_RETRY_AFTER_SECONDS", "5")][..], "5"),
    ] {
        let app = synced_with(env);
        app.fault(json!({"status": 429, "retryAfter": "86400"}));

        let failed = create_with_key(&app, "pedido-um-dia").expect(503);
        assert_eq!(failed.json["isPgccErro"], true, "{}", failed.text);
        assert_eq!(failed.json["pgccCodigoErro"], "TooManyRequests");
        assert_eq!(failed.retry_after.as_deref(), Some(expected), "{env:?}");
        assert_eq!(app.consent_rows(), 0);
        assert_eq!(app.creation_rows("cancelada"), 0);
        assert!(app.sim_requests().is_empty(), "the PGCC created nothing");
    }
}

#[test]
fn a_final_refusal_stays_a_kept_422_that_cancels_its_row() {
    let app = synced_with(&[]);
    app.fault(json!({"status": 409}));

    let refused = create_with_key(&app, "pedido-recusado").expect(422);
    let again = create_with_key(&app, "pedido-recusado").expect(422);

    assert_eq!(refused.json["pgccCodigoErro"], "Conflict");
    assert_eq!(header(&again, "idempotent-replayed"), Some("true"));
    assert_eq!(app.creation_rows("cancelada"), 1);
    assert!(app.sim_requests().is_empty());
}

#[test]
fn a_revocation_or_sync_the_pgcc_asks_to_retry_later_is_503_and_changes_nothing() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "0")]);
    let (id, _) = create(&app.a, ATIVO, &active_body());

    app.fault(json!({"status": 429, "retryAfter": "3"}));
    let r = app
        .a
        .post_empty(&format!("/api/solicitacao-consentimento/{id}/revogar"))
        .expect(503);
    assert_eq!(r.json["isPgccErro"], true);
    assert_eq!(r.json["pgccCodigoErro"], "TooManyRequests");
    assert_eq!(r.retry_after.as_deref(), Some("3"));
    assert_eq!(detail(&app.a, &id)["status"], "ativo");

    app.fault(json!({"status": 425}));
    let r = app
        .a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(503);
    assert_eq!(r.json["pgccCodigoErro"], "TooEarly");
    assert_eq!(
        app.a
            .get("/api/casos-de-uso")
            .expect(200)
            .data()
            .as_array()
            .unwrap()
            .len(),
        3,
        "the use cases stored are kept"
    );
}

/// `consent_api_pgcc_unknown_status_total` as the API process reports it.
fn unknown_status_total(app: &TestApp) -> u64 {
    let metrics = Client::new(&app.api.base_url, None).get("/metrics");
    assert_eq!(metrics.status, 200, "{}", metrics.text);
    metrics
        .text
        .lines()
        .find_map(|line| line.strip_prefix("consent_api_pgcc_unknown_status_total "))
        .unwrap_or_else(|| panic!("no unknown-status counter in {}", metrics.text))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_status_we_do_not_know_skips_that_request_alone_and_its_neighbour_is_applied() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "1")]);
    let (odd, odd_pgcc) = create(&app.a, PENDENTE, &pending_body());
    let (plain, plain_pgcc) = create(&app.a, PENDENTE, &pending_body());
    assert_eq!(unknown_status_total(&app), 0);

    let r = app.sim_admin.post_json(
        &format!("/_sim/solicitacoes/{odd_pgcc}/status"),
        &json!({"status": "suspensa-pela-pgcc"}),
    );
    assert_eq!(r.status, 200, "{}", r.text);
    let r = app
        .sim_admin
        .post_empty(&format!("/_sim/solicitacoes/{plain_pgcc}/aceitar"));
    assert_eq!(r.status, 200, "{}", r.text);

    // both are asked about in the same batch: the neighbour's activation is applied
    assert!(
        wait_until(Duration::from_secs(20), || detail(&app.a, &plain)["status"]
            == "ativo"),
        "the neighbour never became active"
    );
    assert!(wait_until(
        Duration::from_secs(10),
        || unknown_status_total(&app) >= 1
    ));
    let odd_now = detail(&app.a, &odd);
    assert_eq!(odd_now["status"], "pendente", "the odd one stays as it was");
    assert_eq!(odd_now["historico"].as_array().unwrap().len(), 1);
    // backed off: its next check is later than the others' 1 s cadence
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM solicitacoes_consentimento s \
             JOIN verificacoes_status v ON v.empresa_id = s.empresa_id AND v.solicitacao_id = s.id \
             WHERE s.id = '{odd}' AND s.status_desconhecido_desde IS NOT NULL \
             AND v.proxima_em > s.status_desconhecido_desde + interval '1 second'"
        )),
        1
    );
    let log = std::fs::read_to_string(&app.api.log).unwrap();
    assert!(
        log.contains("status we do not know") && log.contains(&odd_pgcc),
        "logged with the PGCC id"
    );
}

#[test]
fn the_reconciler_cancels_a_creation_the_pgcc_never_made_only_after_the_not_found_window() {
    let app = synced_with(&[
        ("APP__WORKERS__RECONCILE_SECONDS", "1"),
        ("APP__WORKERS__RECONCILE_GRACE_SECONDS", "3"),
        ("APP__WORKERS__RECONCILE_NOT_FOUND_SECONDS", "6"),
        ("APP__WORKERS__STATUS_POLL_SECONDS", "0"),
    ]);
    app.fault(json!({"status": 503}));
    app.a.post_json(PENDENTE, &pending_body()).expect(502);
    let not_found_recorded = || {
        app.db.scalar(
            "SELECT count(*) AS v FROM solicitacoes_consentimento \
             WHERE criacao_nao_encontrada_em IS NOT NULL",
        ) == 1
    };

    assert!(
        wait_until(Duration::from_secs(20), not_found_recorded),
        "the reconciler never asked"
    );
    let seen = Instant::now();
    // within the window: asked again, never cancelled
    while seen.elapsed() < Duration::from_secs(4) {
        assert_eq!(
            app.creation_rows("cancelada"),
            0,
            "cancelled within the window"
        );
        assert_eq!(app.creation_rows("em_andamento"), 1);
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        wait_until(Duration::from_secs(20), || app.creation_rows("cancelada")
            == 1),
        "never cancelled after the window"
    );
    assert_eq!(app.consent_rows(), 0);
    assert!(app.sim_requests().is_empty());
}

#[test]
fn a_creation_the_pgcc_commits_after_a_not_found_is_confirmed() {
    let app = synced_with(&[
        ("APP__WORKERS__RECONCILE_SECONDS", "1"),
        ("APP__WORKERS__RECONCILE_GRACE_SECONDS", "3"),
        ("APP__WORKERS__RECONCILE_NOT_FOUND_SECONDS", "600"),
        ("APP__WORKERS__STATUS_POLL_SECONDS", "0"),
    ]);
    app.fault(json!({"status": 503}));
    app.a.post_json(PENDENTE, &pending_body()).expect(502);
    let id = app
        .db
        .text("SELECT id::text AS v FROM solicitacoes_consentimento")
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(20), || app.db.scalar(
            "SELECT count(*) AS v FROM solicitacoes_consentimento \
             WHERE criacao_nao_encontrada_em IS NOT NULL"
        ) == 1),
        "the reconciler never asked"
    );

    // the PGCC commits the creation late, under our id as its external reference
    let body = pending_body();
    let late = app.sim_admin.post_json(
        "/pgcc/v1/solicitacoes",
        &json!({
            "referenciaExterna": id,
            "cnpjEmpresa": CNPJ_A.replace(['.', '/', '-'], ""),
            "vinculoId": VINCULO_A1,
            "templateId": body["casoDeUsoIdTemplate"],
            "cpfTitular": CPF_DIGITS,
            "tipoTitular": "PessoaFisica",
            "modalidadeAcesso": "Direto",
            "cnpjAnuente": null,
            "dataExpiracaoConsentimento": body["dataExpiracaoConsentimento"],
            "status": "pendente",
            "dataTitularRespondeuConsentimento": null,
            "provaColeta": null
        }),
    );
    assert_eq!(late.status, 201, "{}", late.text);

    assert!(
        wait_until(Duration::from_secs(20), || app.consent_rows() == 1),
        "the late creation was never confirmed"
    );
    let read = detail(&app.a, &id);
    assert_eq!(read["pgccId"], late.json["id"]);
    assert_eq!(app.creation_rows("cancelada"), 0);
}
