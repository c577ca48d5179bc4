//! Nothing the PGCC sends can stop a loop (issue 21, part 4): a NUL in the subject's reason (which
//! PostgreSQL refuses in `text`) is dropped at the adapter, and a request whose change cannot be
//! stored is that request's failure alone, so its neighbours' revocations still reach HashConsulta.

use std::time::Duration;

use serde_json::{json, Value};
use testkit::wait_until;

use crate::helpers::*;
use crate::lifecycle::{create, synced_with};

const OTHER_CPF: &str = "111.444.777-35";

fn active_body_for(template: &str, cpf: &str) -> Value {
    let mut body = active_body();
    body["casoDeUsoIdTemplate"] = json!(template);
    body["cpfTitular"] = json!(cpf);
    body
}

fn valid(client: &testkit::Client, template: &str, cpf: &str) -> bool {
    let r = client
        .post_json(
            "/api/hash-consulta",
            &json!({"cpfTitular": cpf, "casoDeUsoIdTemplate": template}),
        )
        .expect(200);
    r.data()["valido"] == true
}

#[test]
fn a_nul_reason_from_the_pgcc_is_cleaned_and_never_holds_back_the_other_revocations() {
    let poll_seconds = 2;
    let app = synced_with(&[
        ("APP__WORKERS__STATUS_POLL_SECONDS", "2"),
        ("APP__WORKERS__EXPIRY_SECONDS", "0"),
        ("APP__WORKERS__SYNC_SECONDS", "0"),
    ]);
    // 10 active consents of each company; company A's first is the subject whose reason holds a NUL
    let poisoned = create(
        &app.a,
        ATIVO,
        &active_body_for("tpl-a-marketing", OTHER_CPF),
    );
    let mut others = Vec::new();
    for _ in 0..9 {
        others.push(create(
            &app.a,
            ATIVO,
            &active_body_for("tpl-a-credito", CPF),
        ));
    }
    for _ in 0..10 {
        others.push(create(&app.b, ATIVO, &active_body_for("tpl-b-seguro", CPF)));
    }
    assert!(valid(&app.a, "tpl-a-marketing", OTHER_CPF));
    assert!(valid(&app.a, "tpl-a-credito", CPF));
    assert!(valid(&app.b, "tpl-b-seguro", CPF));

    let revoke = |pgcc_id: &str, motivo: &str| {
        let r = app.sim_admin.post_json(
            &format!("/_sim/solicitacoes/{pgcc_id}/revogar"),
            &json!({ "motivo": motivo }),
        );
        assert_eq!(r.status, 200, "{}", r.text);
    };
    revoke(&poisoned.1, "x\u{0}y");
    for (_, pgcc_id) in &others {
        revoke(pgcc_id, "mudei de ideia");
    }

    // Three poll periods on an idle machine; the bound is far longer so that it holds on a
    // loaded one (or on Citus): a NUL that held the others back would hold them for good, and
    // the wait would still end with fewer than 20.
    let all_revoked = wait_until(Duration::from_secs(30 * poll_seconds), || {
        app.db.scalar(
            "SELECT count(*) AS v FROM solicitacoes_consentimento WHERE status = 'revogado'",
        ) == 20
    });
    assert!(
        all_revoked,
        "revoked after thirty poll periods: {} of 20",
        app.db.scalar(
            "SELECT count(*) AS v FROM solicitacoes_consentimento WHERE status = 'revogado'"
        )
    );
    assert!(
        !valid(&app.a, "tpl-a-marketing", OTHER_CPF),
        "the odd one too"
    );
    assert!(!valid(&app.a, "tpl-a-credito", CPF));
    assert!(!valid(&app.b, "tpl-b-seguro", CPF));
    // the reason is kept without its control character
    assert_eq!(
        app.db
            .text(&format!(
                "SELECT motivo AS v FROM solicitacoes_historico \
             WHERE solicitacao_id = '{}' AND causa = 'pgcc'",
                poisoned.0
            ))
            .as_deref(),
        Some("xy")
    );
    assert_eq!(
        app.db.scalar(
            "SELECT count(*) AS v FROM solicitacoes_historico \
             WHERE causa = 'pgcc' AND motivo = 'mudei de ideia'"
        ),
        19
    );
}
