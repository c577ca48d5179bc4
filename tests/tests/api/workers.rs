//! Background workers as separate processes: shared work, scheduled synchronization.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{json, Value};
use testkit::{wait_until, Worker};

use crate::helpers::*;
use crate::lifecycle::{create, synced_with};

const NO_WORKERS_IN_API: &[(&str, &str)] = &[("APP__WORKERS__RUN_IN_SERVE", "false")];

/// An API without workers, and 60 pending requests of company A that their subjects accepted on
/// the PGCC (the simulator's status counts reset): each due for its first check.
fn sixty_accepted_on_the_pgcc() -> (TestApp, Vec<(String, String)>) {
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
    (app, created)
}

#[test]
fn two_worker_processes_never_check_the_same_request_twice() {
    let (app, created) = sixty_accepted_on_the_pgcc();

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
fn two_worker_processes_share_one_budget_of_pgcc_status_calls() {
    let (app, created) = sixty_accepted_on_the_pgcc();

    // 60 first checks of 5 ids a call: 12 calls, at 2 a second for both workers together
    let env = [
        ("APP__WORKERS__STATUS_POLL_SECONDS", "1"),
        ("APP__WORKERS__PGCC_STATUS_CALLS_PER_SECOND", "2"),
        ("APP__WORKERS__BATCH_SIZE", "5"),
        ("APP__WORKERS__EXPIRY_SECONDS", "0"),
        ("APP__WORKERS__SYNC_SECONDS", "0"),
    ];
    let _w1 = Worker::start_with(&app.db, &app.sim, &env);
    let _w2 = Worker::start_with(&app.db, &app.sim, &env);

    let all_active = wait_until(Duration::from_secs(60), || {
        app.db
            .scalar("SELECT count(*) AS v FROM solicitacoes_consentimento WHERE status = 'ativo'")
            == 60
    });
    assert!(all_active, "the workers did not activate every request");
    let calls = app.sim_admin.get("/_sim/status-chamadas").json;
    let calls = calls.as_array().expect("a list of calls");
    let instants: Vec<chrono::DateTime<chrono::Utc>> = calls
        .iter()
        .map(|c| c["em"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(
        calls.iter().all(|c| c["ids"].as_u64().unwrap() <= 5),
        "at most batch_size ids a call: {calls:?}"
    );
    assert!(instants.len() >= 12, "{} calls", instants.len());
    // A bucket of 2 calls (the burst) refilled at 2 a second for both processes: the 12th call
    // cannot come before 5 s after the first. Two budgets of their own would allow it after 2 s.
    let span = instants[11] - instants[0];
    assert!(
        span >= chrono::Duration::milliseconds(3_500),
        "12 calls in {span}: the workers did not share the budget"
    );
    let counts: HashMap<String, Value> =
        serde_json::from_value(app.sim_admin.get("/_sim/status-consultas").json)
            .expect("counts by PGCC id");
    for (_, pgcc_id) in &created {
        assert_eq!(
            counts.get(pgcc_id),
            Some(&json!(1)),
            "{pgcc_id} checked once"
        );
    }
}

#[test]
fn a_company_with_a_backlog_of_due_checks_never_delays_anothers_first_check() {
    let app = synced_with(NO_WORKERS_IN_API);
    // company A: 100,000 active requests, all overdue for their check (rows made with SQL)
    let (template, link) = first_use_case(&app, &app.company_a);
    // in batches: one transaction would hold the cluster's watermark (TestDb::seed_in_batches)
    let a = &app.company_a;
    app.db.seed_in_batches(100_000, |lo, hi| {
        format!(
            "INSERT INTO solicitacoes_consentimento (id, empresa_id, caso_de_uso_id, \
             caso_de_uso_id_template, cpf_titular, tipo_titular, modalidade_acesso, \
             data_expiracao_consentimento, status, pgcc_id, hash, sal_hash, criado_em, \
             atualizado_em, criacao) \
         SELECT md5('carga-' || g)::uuid, '{a}', '{link}', '{template}', '52998224725', \
             'PessoaFisica', 'Direto', now() + interval '1 year', 'ativo', 'carga-' || g, \
             encode(sha256(g::text::bytea), 'hex'), md5(g::text), now(), now(), 'confirmada' \
         FROM generate_series({lo}, {hi}) g; \
         INSERT INTO verificacoes_status (empresa_id, solicitacao_id, proxima_em) \
         SELECT '{a}', md5('carga-' || g)::uuid, now() - interval '1 hour' \
         FROM generate_series({lo}, {hi}) g"
        )
    });
    // company B: one new pending request, accepted by its subject at once
    let mut body = pending_body();
    body["casoDeUsoIdTemplate"] = json!("tpl-b-seguro");
    let (b_id, b_pgcc) = create(&app.b, PENDENTE, &body);
    assert_eq!(
        app.sim_admin
            .post_empty(&format!("/_sim/solicitacoes/{b_pgcc}/aceitar"))
            .status,
        200
    );

    // a budget far below A's backlog: 2 calls a second of 50 ids
    let env = [
        ("APP__WORKERS__STATUS_POLL_SECONDS", "1"),
        ("APP__WORKERS__PGCC_STATUS_CALLS_PER_SECOND", "2"),
        ("APP__WORKERS__BATCH_SIZE", "50"),
        ("APP__WORKERS__EXPIRY_SECONDS", "0"),
        ("APP__WORKERS__SYNC_SECONDS", "0"),
    ];
    let _w = Worker::start_with(&app.db, &app.sim, &env);

    let b_active = wait_until(Duration::from_secs(20), || {
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM solicitacoes_consentimento \
             WHERE id = '{b_id}' AND status = 'ativo'"
        )) == 1
    });
    assert!(
        b_active,
        "company B's first check waited behind A's backlog"
    );
    let still_due = app.db.scalar(&format!(
        "SELECT count(*) AS v FROM verificacoes_status \
         WHERE empresa_id = '{}' AND proxima_em <= now()",
        app.company_a
    ));
    assert!(
        still_due > 90_000,
        "A's backlog is still there: {still_due}"
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

/// The row versions (`xmin`) of `table`'s rows, in id order `key`: unchanged while nothing
/// writes them.
fn versions(app: &TestApp, table: &str, key: &str) -> String {
    app.db
        .text(&format!(
            "SELECT string_agg(xmin::text, ',' ORDER BY {key}) AS v FROM {table}"
        ))
        .unwrap_or_default()
}

#[test]
fn steady_checks_are_swept_once_a_period_by_two_workers_write_nothing_and_a_revocation_arrives() {
    let app = synced_with(NO_WORKERS_IN_API);
    let mut body_a = active_body();
    body_a["casoDeUsoIdTemplate"] = json!("tpl-a-credito");
    let mut body_b = active_body();
    body_b["casoDeUsoIdTemplate"] = json!("tpl-b-seguro");
    let mut created = Vec::new();
    for _ in 0..20 {
        created.push(create(&app.a, ATIVO, &body_a));
        created.push(create(&app.b, ATIVO, &body_b));
    }
    // every `ativo` request checked every 4 s; batches of 7 so that the two workers interleave
    let period_seconds = 4;
    let env = [
        ("APP__WORKERS__STATUS_POLL_SECONDS", "1"),
        ("APP__WORKERS__ACTIVE_RECHECK_SECONDS", "4"),
        ("APP__WORKERS__BATCH_SIZE", "7"),
        ("APP__WORKERS__EXPIRY_SECONDS", "0"),
        ("APP__WORKERS__SYNC_SECONDS", "0"),
    ];
    let _w1 = Worker::start_with(&app.db, &app.sim, &env);
    let _w2 = Worker::start_with(&app.db, &app.sim, &env);

    // after its first check, each joins its company's sweep of the active lane
    let swept = wait_until(Duration::from_secs(30), || {
        app.db
            .scalar("SELECT count(*) AS v FROM verificacoes_status WHERE varredura = 'ativo'")
            == 40
    });
    assert!(swept, "not every active request joined its company's sweep");
    assert_eq!(
        app.db.scalar("SELECT count(*) AS v FROM varreduras_status"),
        2,
        "one sweep per company"
    );
    let consents = versions(&app, "solicitacoes_consentimento", "id");
    let schedule = versions(&app, "verificacoes_status", "solicitacao_id");
    assert_eq!(
        app.sim_admin.delete("/_sim/status-consultas").status / 100,
        2
    );

    // two passes: every request asked about at least twice, by one worker or the other
    let counts = || -> HashMap<String, Value> {
        serde_json::from_value(app.sim_admin.get("/_sim/status-consultas").json)
            .expect("counts by PGCC id")
    };
    let twice = wait_until(Duration::from_secs(30), || {
        let counts = counts();
        created
            .iter()
            .all(|(_, pgcc_id)| counts.get(pgcc_id).and_then(Value::as_u64) >= Some(2))
    });
    assert!(twice, "not every request was swept twice: {:?}", counts());
    assert_eq!(
        versions(&app, "solicitacoes_consentimento", "id"),
        consents,
        "a check that finds no change writes nothing to the request"
    );
    assert_eq!(
        versions(&app, "verificacoes_status", "solicitacao_id"),
        schedule,
        "nor to its schedule row"
    );

    // a subject's revocation on the PGCC still arrives within a period (and a poll or two)
    let (revoked, revoked_pgcc) = &created[1];
    assert_eq!(
        app.sim_admin
            .post_json(
                &format!("/_sim/solicitacoes/{revoked_pgcc}/revogar"),
                &json!({ "motivo": "mudei de ideia" }),
            )
            .status,
        200
    );
    let arrived = wait_until(Duration::from_secs(period_seconds + 4), || {
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM solicitacoes_consentimento \
             WHERE id = '{revoked}' AND status = 'revogado'"
        )) == 1
    });
    assert!(arrived, "the revocation did not arrive within a period");
    assert_eq!(
        app.db
            .scalar("SELECT count(*) AS v FROM verificacoes_status WHERE varredura = 'ativo'"),
        39,
        "a final status leaves the sweep"
    );
}
