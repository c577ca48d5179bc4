//! Issue 36, part 1: the evidence holds against the service's own database role. `serve` and
//! `worker` run as a role that owns nothing (`testkit::db::RUNTIME_ROLE`); the owner migrates and
//! grants. Each attack found from outside is run here as that role, and refused.

use std::process::{Command, Stdio};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::PgConnection;
use serde_json::json;
use testkit::processes::{bin_path, repo_root};

use crate::audit_log::create_active;
use crate::helpers::TestApp;

/// A connection as the service's runtime role.
fn as_runtime(app: &TestApp) -> PgConnection {
    PgConnection::establish(&app.db.runtime_url()).expect("connect as the runtime role")
}

/// `sql` as the runtime role: its error's text, or a panic when PostgreSQL accepted it.
fn refused(conn: &mut PgConnection, sql: &str) -> String {
    match diesel::sql_query(sql).execute(conn) {
        Ok(n) => panic!("accepted as the runtime role ({n} rows): {sql}"),
        Err(e) => e.to_string(),
    }
}

fn entries_of(app: &TestApp, id: &str) -> i64 {
    app.db.scalar(&format!(
        "SELECT count(*) AS v FROM auditoria_entradas WHERE solicitacao_id = '{id}'"
    ))
}

#[test]
fn a_consent_forged_by_sql_as_the_runtime_role_is_refused() {
    let app = TestApp::synced();
    let id = create_active(&app);
    let mut conn = as_runtime(&app);
    let err = refused(
        &mut conn,
        &format!(
            "INSERT INTO solicitacoes_consentimento (id, empresa_id, caso_de_uso_id,
                caso_de_uso_id_template, cpf_titular, tipo_titular, modalidade_acesso,
                data_expiracao_consentimento, status, hash, criacao, pgcc_id)
             SELECT gen_random_uuid(), empresa_id, caso_de_uso_id, caso_de_uso_id_template,
                '52998224725', tipo_titular, modalidade_acesso, data_expiracao_consentimento,
                'ativo', md5(random()::text), 'confirmada', 'forjado-1'
             FROM solicitacoes_consentimento WHERE id = '{id}'"
        ),
    );
    assert!(err.contains("permission denied"), "{err}");
    assert_eq!(app.consent_rows(), 1);
    // nor through the history or the log, nor by deleting
    for sql in [
        format!(
            "INSERT INTO solicitacoes_historico (empresa_id, solicitacao_id, de, para, em, causa)
             SELECT empresa_id, id, NULL, 'ativo', now(), 'empresa'
             FROM solicitacoes_consentimento WHERE id = '{id}'"
        ),
        format!(
            "INSERT INTO auditoria_entradas (empresa_id, solicitacao_id, entrada)
             SELECT empresa_id, id, '\\x00' FROM solicitacoes_consentimento WHERE id = '{id}'"
        ),
        format!("DELETE FROM solicitacoes_consentimento WHERE id = '{id}'"),
        format!("DELETE FROM solicitacoes_historico WHERE solicitacao_id = '{id}'"),
    ] {
        let err = refused(&mut conn, &sql);
        assert!(err.contains("permission denied"), "{sql}: {err}");
    }
    assert_eq!(entries_of(&app, &id), 1);
}

#[test]
fn a_revoked_consent_cannot_be_brought_back_by_the_runtime_role() {
    let app = TestApp::synced();
    let id = create_active(&app);
    app.a
        .post_json(
            &format!("/api/solicitacao-consentimento/{id}/revogar"),
            &json!({"motivo": "Pedido do titular."}),
        )
        .expect(200);
    let mut conn = as_runtime(&app);
    // directly
    let err = refused(
        &mut conn,
        &format!("UPDATE solicitacoes_consentimento SET status = 'ativo' WHERE id = '{id}'"),
    );
    assert!(err.contains("permission denied"), "{err}");
    // through the owner's function: the state machine refuses the move
    let err = refused(
        &mut conn,
        &format!(
            "SELECT * FROM consentimento_transicionar(
                (SELECT empresa_id FROM solicitacoes_consentimento WHERE id = '{id}'), '{id}',
                'revogado', 'ativo', 'empresa', NULL, now(), NULL)"
        ),
    );
    assert!(
        err.contains("does not move from revogado to ativo"),
        "{err}"
    );
    assert_eq!(
        app.db.text(&format!(
            "SELECT status AS v FROM solicitacoes_consentimento WHERE id = '{id}'"
        )),
        Some("revogado".into())
    );
    assert_eq!(
        entries_of(&app, &id),
        2,
        "the creation and the revocation only"
    );
    // the owner's triggers stay on: only the owner may disable them
    let err = refused(
        &mut conn,
        "ALTER TABLE auditoria_entradas DISABLE TRIGGER auditoria_entradas_somente_insercao",
    );
    assert!(err.contains("must be owner"), "{err}");
}

#[test]
fn no_session_can_switch_the_log_off() {
    // The former switch, in the environment and in the runtime role's session: neither exists.
    let app = TestApp::spawn_with(&[("APP__AUDITORIA__ENABLED", "false")]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let id = create_active(&app);
    assert_eq!(entries_of(&app, &id), 1);
    let mut conn = as_runtime(&app);
    diesel::sql_query("SET consent_api.auditoria = 'off'")
        .execute(&mut conn)
        .unwrap();
    let moved = diesel::sql_query(format!(
        "SELECT * FROM consentimento_transicionar(
            (SELECT empresa_id FROM solicitacoes_consentimento WHERE id = '{id}'), '{id}',
            'ativo', 'revogado', 'empresa', NULL, now(), NULL)"
    ))
    .execute(&mut conn)
    .unwrap();
    assert_eq!(moved, 1);
    assert_eq!(
        entries_of(&app, &id),
        2,
        "the move appended its entry all the same"
    );
}

#[test]
fn the_runtime_role_cannot_write_the_signing_keys_or_the_companies() {
    let app = TestApp::synced();
    let mut conn = as_runtime(&app);
    for sql in [
        "INSERT INTO auditoria_chaves (kid, chave_publica) VALUES ('forjada', '\\x00')",
        "DELETE FROM auditoria_chaves",
        "UPDATE empresas SET sandbox_de = NULL",
        "INSERT INTO empresas (id, nome, cnpj) VALUES (gen_random_uuid(), 'x', '11444777000161')",
        "DELETE FROM auditoria_checkpoints",
        "UPDATE auditoria_nos SET hash = hash",
        // the companies' identity providers (issue 38): `company oidc`, the owner's, only
        "INSERT INTO empresas_oidc SELECT id, 'https://forjado.example', 'c', 's', 'roles', now() \
         FROM empresas LIMIT 1",
        "UPDATE empresas_oidc SET emissor = 'https://forjado.example'",
    ] {
        let err = refused(&mut conn, sql);
        assert!(err.contains("permission denied"), "{sql}: {err}");
    }
}

/// `consent-api config check` in `app_env` against `url` as the service's database: (success,
/// stderr).
fn config_check(app_env: &str, url: &str) -> (bool, String) {
    let out = Command::new(bin_path("consent-api"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("APP_ENV", app_env)
        .env("APP_CONFIG_DIR", repo_root().join("config"))
        .env(
            "APP__AUDITORIA__SIGNING_KEY",
            "cHJvZmlsZS10ZXN0cy1hdWRpdC1zaWduaW5nLWtleSE=",
        )
        .env(
            "APP__AUDITORIA__SIGNING_KEY_SANDBOX",
            crate::operability::SANDBOX_AUDIT_KEY,
        )
        .env(
            "APP__WEBHOOKS__ENCRYPTION_KEY",
            "c2VjcmV0LWtleS1mb3ItdGhlLWNvbmZpZy10ZXN0cyE=",
        )
        .env("APP__METRICS__TOKEN", "privilege-metrics-token")
        .env("APP__PGCC__BASE_URL", "https://pgcc.example")
        .env("APP__SERVER__TRUSTED_PROXIES", "none")
        .env("APP__AUDITORIA__WITNESSES", crate::operability::WITNESSES)
        .env("APP__DATABASE__URL", url)
        .args(["config", "check"])
        .stdin(Stdio::null())
        .output()
        .expect("run consent-api");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn production_refuses_a_runtime_role_that_can_write_the_evidence_and_says_why() {
    let app = TestApp::synced();
    // the cluster's superuser owns the tables
    let (ok, stderr) = config_check("production", app.db.url());
    assert!(!ok, "{stderr}");
    assert!(stderr.contains("is a superuser"), "{stderr}");
    assert!(
        stderr.contains("can INSERT table solicitacoes_consentimento directly"),
        "{stderr}"
    );
    // development says the same and goes on
    let (ok, stderr) = config_check("development", app.db.url());
    assert!(ok, "{stderr}");
    assert!(stderr.contains("is a superuser"), "{stderr}");
    // the role the owner granted passes
    let (ok, stderr) = config_check("production", &app.db.runtime_url());
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("the role owns nothing and cannot write the evidence directly"),
        "{stderr}"
    );
    // a role given a direct write is named
    app.db
        .conn()
        .batch_execute("GRANT UPDATE (status) ON solicitacoes_consentimento TO consent_app")
        .unwrap();
    let (ok, stderr) = config_check("production", &app.db.runtime_url());
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains("can UPDATE column status of solicitacoes_consentimento directly"),
        "{stderr}"
    );
}
