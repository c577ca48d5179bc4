//! Background workers as separate processes: shared work, scheduled synchronization.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{json, Value};
use testkit::{wait_until, Worker};

use crate::helpers::*;
use crate::lifecycle::{create, synced_with};

const NO_WORKERS_IN_API: &[(&str, &str)] = &[("APP__WORKERS__RUN_IN_SERVE", "false")];

#[test]
fn two_worker_processes_never_check_the_same_request_twice() {
    let app = synced_with(NO_WORKERS_IN_API);
    let created: Vec<(String, String)> = (0..60)
        .map(|_| create(&app.a, PENDENTE, &pending_body()))
        .collect();
    for (_, pgcc_id) in &created {
        assert_eq!(
            app.sim_admin
                .post_empty(&format!("/_sim/solicitacoes/{pgcc_id}/aceitar"))
                .status,
            200
        );
    }
    assert_eq!(
        app.sim_admin.delete("/_sim/status-consultas").status / 100,
        2
    );

    // One round each (the next is an hour away), small batches so the two interleave.
    let env = [
        ("APP__WORKERS__STATUS_POLL_SECONDS", "3600"),
        ("APP__WORKERS__EXPIRY_SECONDS", "0"),
        ("APP__WORKERS__SYNC_SECONDS", "0"),
        ("APP__WORKERS__BATCH_SIZE", "7"),
    ];
    let _w1 = Worker::start_with(&app.db, &app.sim, &env);
    let _w2 = Worker::start_with(&app.db, &app.sim, &env);

    let all_active = wait_until(Duration::from_secs(30), || {
        app.db
            .scalar("SELECT count(*) AS v FROM solicitacoes_consentimento WHERE status = 'ativo'")
            == 60
    });
    assert!(all_active, "the workers did not activate every request");
    let counts: HashMap<String, Value> =
        serde_json::from_value(app.sim_admin.get("/_sim/status-consultas").json)
            .expect("counts by PGCC id");
    for (_, pgcc_id) in &created {
        assert_eq!(
            counts.get(pgcc_id),
            Some(&json!(1)),
            "{pgcc_id} was checked exactly once"
        );
    }
    assert_eq!(
        app.db
            .scalar("SELECT count(*) AS v FROM solicitacoes_historico WHERE causa = 'pgcc'"),
        60,
        "one transition per request, none twice"
    );
}

#[test]
fn the_scheduled_sync_refreshes_every_company_and_one_failure_does_not_stop_the_others() {
    let app = synced_with(&[("APP__WORKERS__SYNC_SECONDS", "1")]);
    // Company A (the oldest, synced first) is gone from the PGCC: its sync fails (404).
    // Company B gained a use case: it is synced all the same.
    let mut seed = seed();
    let b = seed["empresas"][1].clone();
    seed["empresas"] = json!([b]);
    seed["empresas"][0]["vinculos"][0]["casosDeUso"]
        .as_array_mut()
        .unwrap()
        .push(json!({"templateId": "tpl-b-vida", "titulo": "Seguro de vida"}));
    assert!(app.sim_admin.put_json("/_sim/seed", &seed).status < 300);

    let refreshed = wait_until(Duration::from_secs(20), || {
        app.b
            .get("/api/casos-de-uso")
            .expect(200)
            .data()
            .as_array()
            .unwrap()
            .len()
            == 2
    });
    assert!(
        refreshed,
        "company B was never synchronized by the schedule"
    );
    assert_eq!(
        app.a
            .get("/api/casos-de-uso")
            .expect(200)
            .data()
            .as_array()
            .unwrap()
            .len(),
        3,
        "a failed sync changes nothing stored"
    );
    let log = std::fs::read_to_string(&app.api.log).unwrap();
    assert!(
        log.contains("scheduled use-case sync"),
        "the schedule's result is logged"
    );
}
