//! The sandbox (issue 25, part 2; docs/api.md, "Sandbox"): a `cak_test_` key acts on the
//! company's sandbox, whose PGCC is simulated inside the service. The configured PGCC (the
//! simulator, running and logging every call) must receive nothing; each magic CPF drives its
//! outcome; webhooks are delivered for real; the sandbox and the real company never see each
//! other's requests; the sandbox's data older than the retention is purged.

use std::time::Duration;

use serde_json::{json, Value};
use testkit::processes::{cli, single_line};
use testkit::{wait_until, Client, Receiver};

use crate::helpers::*;
use crate::lifecycle::{create, detail, FAST_WORKERS};

/// The magic CPFs (docs/api.md, "Sandbox").
const CPF_ACCEPTS: &str = "100.000.001-08";
const CPF_REFUSES: &str = "100.000.002-80";
const CPF_REVOKES: &str = "100.000.003-61";
const CPF_429: &str = "100.000.004-42";
const CPF_503: &str = "100.000.005-23";
const CPF_TIMES_OUT: &str = "100.000.006-04";

/// Long enough for a 5 s (or 10 s) move plus the status worker's rounds on a loaded machine.
const WAIT: Duration = Duration::from_secs(60);

/// A sandbox key of company `empresa`, through the real command line.
pub(crate) fn sandbox_key(app: &TestApp, empresa: &str) -> String {
    let out = cli(
        &app.db,
        &app.sim,
        &["api-key", "issue", "--empresa", empresa, "--sandbox"],
    );
    assert!(
        out.status.success(),
        "api-key issue --sandbox: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = single_line(&out.stdout);
    assert!(key.starts_with("cak_test_"), "a sandbox key's prefix");
    key
}

fn sandbox_of(app: &TestApp, empresa: &str) -> String {
    app.db
        .text(&format!(
            "SELECT id::text AS v FROM empresas WHERE sandbox_de = '{empresa}'"
        ))
        .expect("the sandbox company exists")
}

pub(crate) fn body(template: &str, cpf: &str, active: bool) -> Value {
    let mut body = if active {
        active_body()
    } else {
        pending_body()
    };
    body["casoDeUsoIdTemplate"] = json!(template);
    body["cpfTitular"] = json!(cpf);
    body
}

pub(crate) const TEMPLATE: &str = "sandbox-abertura-de-conta";

fn wait_status(client: &Client, id: &str, status: &str) {
    assert!(
        wait_until(WAIT, || detail(client, id)["status"] == status),
        "request {id} never became {status}: {}",
        detail(client, id)
    );
}

/// Nothing reached the configured PGCC: no creation, no status query, no use-case list.
fn assert_nothing_reached_the_configured_pgcc(app: &TestApp) {
    assert!(app.sim_requests().is_empty(), "no creation on the PGCC");
    for path in ["/_sim/status-consultas", "/_sim/casos-de-uso-consultas"] {
        let r = app.sim_admin.get(path);
        assert_eq!(r.status, 200, "{}", r.text);
        assert_eq!(r.json, json!({}), "{path}: the PGCC was asked nothing");
    }
}

#[test]
fn a_sandbox_key_drives_each_magic_cpf_without_reaching_the_configured_pgcc_and_its_webhooks_arrive(
) {
    // the active requests' steady recheck stays at its default (15 min): the revocations below
    // are seen within seconds because the sandbox tells the status worker when its subject moves
    let app = TestApp::spawn_with(FAST_WORKERS);
    let sandbox = Client::new(&app.api.base_url, Some(&sandbox_key(&app, &app.company_a)));
    let receiver = Receiver::start(&[]);
    sandbox
        .post_json("/api/webhook-urls", &json!({"url": receiver.url}))
        .expect(200);

    // the fixed use cases
    sandbox
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let listed = sandbox.get("/api/casos-de-uso").expect(200);
    let mut templates: Vec<(String, String)> = listed
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["pgccProviderTemplateId"].as_str().unwrap().to_owned(),
                u["titulo"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    templates.sort();
    assert_eq!(
        templates,
        [
            ("sandbox-abertura-de-conta", "Abertura de conta (sandbox)"),
            ("sandbox-analise-de-credito", "Análise de crédito (sandbox)"),
            (
                "sandbox-portabilidade-de-salario",
                "Portabilidade de salário (sandbox)"
            ),
        ]
        .map(|(t, n)| (t.to_owned(), n.to_owned()))
    );

    // any other valid CPF: active at once, or pending for good
    let (active, pgcc_id) = create(&sandbox, ATIVO, &body(TEMPLATE, CPF, true));
    assert!(pgcc_id.starts_with("sandbox-"), "{pgcc_id}");
    assert_eq!(detail(&sandbox, &active)["status"], "ativo");
    let (pending, _) = create(&sandbox, PENDENTE, &body(TEMPLATE, CPF, false));

    // the subject's answers, about 5 s later
    let (accepted, _) = create(&sandbox, PENDENTE, &body(TEMPLATE, CPF_ACCEPTS, false));
    let (refused, _) = create(&sandbox, PENDENTE, &body(TEMPLATE, CPF_REFUSES, false));
    let (revoked, _) = create(&sandbox, ATIVO, &body(TEMPLATE, CPF_REVOKES, true));
    // accepted after 5 s, then revoked 5 s after it became active
    let (accepted_then_revoked, _) =
        create(&sandbox, PENDENTE, &body(TEMPLATE, CPF_REVOKES, false));
    assert_eq!(detail(&sandbox, &accepted)["status"], "pendente");
    wait_status(&sandbox, &accepted, "ativo");
    wait_status(&sandbox, &refused, "recusado");
    wait_status(&sandbox, &revoked, "revogado");
    wait_status(&sandbox, &accepted_then_revoked, "revogado");
    let moves: Vec<(Value, Value)> = detail(&sandbox, &accepted_then_revoked)["historico"]
        .as_array()
        .map(|h| {
            h.iter()
                .map(|e| (e["de"].clone(), e["para"].clone()))
                .collect()
        })
        .unwrap_or_default();
    assert!(
        moves
            .iter()
            .any(|(from, to)| from == "ativo" && to == "revogado"),
        "it was active before it was revoked: {moves:?}"
    );

    // the PGCC's failures, as a real PGCC's are answered (docs/architecture.md, section 3)
    let too_many = sandbox
        .post_json(PENDENTE, &body(TEMPLATE, CPF_429, false))
        .expect(503);
    assert_eq!(too_many.json["isPgccErro"], true);
    assert_eq!(too_many.json["pgccCodigoErro"], "TooManyRequests");
    assert_eq!(too_many.header("retry-after"), Some("30"));
    let failing = sandbox
        .post_json(ATIVO, &body(TEMPLATE, CPF_503, true))
        .expect(502);
    assert_eq!(failing.json["isPgccErro"], true);
    assert_eq!(failing.json["pgccCodigoErro"], "ServiceUnavailable");
    let silent = sandbox
        .post_json(PENDENTE, &body(TEMPLATE, CPF_TIMES_OUT, false))
        .expect(504);
    assert_eq!(silent.json["isPgccErro"], true);
    assert_eq!(silent.json["pgccCodigoErro"], "GatewayTimeout");

    // a pending request of any other CPF is still pending after the others moved
    assert_eq!(detail(&sandbox, &pending)["status"], "pendente");

    // every change reached the company's receiver, for real
    let expected = [
        "solicitacao.ativada",
        "solicitacao.recusada",
        "solicitacao.revogada",
    ];
    assert!(
        wait_until(WAIT, || {
            let types: Vec<String> = receiver
                .received()
                .iter()
                .map(|r| r.json()["type"].as_str().unwrap_or_default().to_owned())
                .collect();
            expected.iter().all(|t| types.iter().any(|got| got == t))
                && types.iter().filter(|t| *t == "solicitacao.criada").count() >= 5
        }),
        "the sandbox's events were delivered"
    );

    assert_nothing_reached_the_configured_pgcc(&app);
}

#[test]
fn the_real_company_and_its_sandbox_never_see_each_others_requests() {
    let app = TestApp::synced();
    let (real, _) = create(&app.a, ATIVO, &active_body());
    let key = sandbox_key(&app, &app.company_a);
    let sandbox = Client::new(&app.api.base_url, Some(&key));
    sandbox
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let (test, _) = create(&sandbox, ATIVO, &body(TEMPLATE, CPF, true));

    app.a
        .get(&format!("/api/solicitacao-consentimento/{test}"))
        .expect(404);
    sandbox
        .get(&format!("/api/solicitacao-consentimento/{real}"))
        .expect(404);
    // the real company's use cases are not the sandbox's, nor the other way round
    let real_templates = app.a.get("/api/casos-de-uso").expect(200);
    assert!(!real_templates.text.contains("sandbox-"));
    let test_templates = sandbox.get("/api/casos-de-uso").expect(200);
    assert!(!test_templates.text.contains("tpl-a-"));

    // a second sandbox key acts on the same sandbox; a real key for the sandbox is refused
    let again = Client::new(&app.api.base_url, Some(&sandbox_key(&app, &app.company_a)));
    assert_eq!(detail(&again, &test)["status"], "ativo");
    let sandbox_id = sandbox_of(&app, &app.company_a);
    let out = cli(
        &app.db,
        &app.sim,
        &["api-key", "issue", "--empresa", &sandbox_id],
    );
    assert!(!out.status.success(), "a real key for a sandbox is refused");
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM api_keys WHERE empresa_id = '{sandbox_id}'"
        )),
        2
    );
    // only the real company's creation reached the configured PGCC
    assert_eq!(app.sim_requests().len(), 1);
}

#[test]
fn the_sandboxs_data_older_than_the_retention_is_purged_and_the_real_companys_kept() {
    let app = synced_with_retention();
    let (real, _) = create(&app.a, ATIVO, &active_body());
    let sandbox = Client::new(&app.api.base_url, Some(&sandbox_key(&app, &app.company_a)));
    sandbox
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let (old, _) = create(&sandbox, ATIVO, &body(TEMPLATE, CPF, true));
    let (young, _) = create(&sandbox, ATIVO, &body(TEMPLATE, CPF, true));
    let sandbox_id = sandbox_of(&app, &app.company_a);

    // 8 days old: past the default 7 (APP__SANDBOX__RETENTION_DAYS)
    execute(
        &app,
        &format!(
            "UPDATE solicitacoes_consentimento SET criado_em = now() - interval '8 days' \
             WHERE id IN ('{old}', '{real}')"
        ),
    );
    let sandbox_events = || {
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM webhook_eventos WHERE empresa_id = '{sandbox_id}'"
        ))
    };
    // counted before they are aged: the purge may take them at once after
    assert!(sandbox_events() > 0);
    execute(
        &app,
        &format!(
            "UPDATE webhook_eventos SET criado_em = now() - interval '8 days' \
             WHERE empresa_id IN ('{sandbox_id}', '{}')",
            app.company_a
        ),
    );

    assert!(
        wait_until(WAIT, || {
            app.db.scalar(&format!(
                "SELECT count(*) AS v FROM solicitacoes_consentimento WHERE id = '{old}'"
            )) == 0
                && sandbox_events() == 0
        }),
        "the sandbox's old request and events were purged"
    );
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM solicitacoes_historico WHERE solicitacao_id = '{old}'"
        )),
        0,
        "with its history"
    );
    sandbox
        .get(&format!("/api/solicitacao-consentimento/{old}"))
        .expect(404);
    assert_eq!(detail(&sandbox, &young)["status"], "ativo");
    assert_eq!(
        detail(&app.a, &real)["status"],
        "ativo",
        "a real company's data stays"
    );
    assert!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM webhook_eventos WHERE empresa_id = '{}'",
            app.company_a
        )) > 0,
        "the real company's events stay (their own retention is 30 days)"
    );
}

/// A sandbox's key takes its real company's rate limit, not a bucket of its own, which gave a
/// company twice its quota (issue 39). The real key spends the bucket (1 a second, burst 50);
/// the sandbox's key is then refused, or served from what refilled meanwhile, never from a full
/// bucket of 50; another company is served.
#[test]
fn a_sandbox_key_takes_its_companys_rate_limit_not_a_second_quota() {
    let app = TestApp::spawn_with(&[
        ("APP__RATE_LIMIT__PER_SECOND", "1"),
        ("APP__RATE_LIMIT__BURST", "50"),
    ]);
    let sandbox = Client::new(&app.api.base_url, Some(&sandbox_key(&app, &app.company_a)));
    let mut served = 0;
    loop {
        let reply = app.a.get("/api/casos-de-uso");
        if reply.status == 429 {
            break;
        }
        reply.expect(200);
        served += 1;
        assert!(served < 1000, "company A's key was never limited");
    }
    let reply = sandbox.get("/api/casos-de-uso");
    match reply.status {
        429 => {
            reply.expect(429);
        }
        200 => {
            let remaining: u32 = reply
                .header("ratelimit")
                .and_then(|v| {
                    v.split(',')
                        .find_map(|p| p.trim().strip_prefix("remaining="))
                })
                .and_then(|n| n.parse().ok())
                .expect("RateLimit with remaining");
            assert!(
                remaining < 40,
                "the sandbox's key had a bucket of its own: {remaining} left"
            );
        }
        other => panic!("the sandbox's key: {other}: {}", reply.text),
    }
    app.b.get("/api/casos-de-uso").expect(200);
}

fn execute(app: &TestApp, sql: &str) {
    diesel::RunQueryDsl::execute(diesel::sql_query(sql), &mut app.db.conn())
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

fn synced_with_retention() -> TestApp {
    let app = TestApp::spawn_with(&[("APP__WORKERS__RETENTION_SECONDS", "1")]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    app
}
