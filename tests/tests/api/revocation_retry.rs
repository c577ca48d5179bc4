//! `revogar` is safe to retry: an attempt that revoked on the PGCC but could not store it here
//! (its row locked past the statement timeout) is completed by the retry, credited to the
//! company with its reason; under an `Idempotency-Key` the answer is kept and replayed like a
//! creation's.

use diesel::connection::SimpleConnection;
use serde_json::{json, Value};

use crate::helpers::*;
use crate::lifecycle::{check, create, detail, synced_with};

/// No status worker (it would otherwise find the PGCC's revocation first and credit the
/// subject), and a short statement timeout so a locked row fails the request soon.
const SETTINGS: &[(&str, &str)] = &[
    ("APP__WORKERS__STATUS_POLL_SECONDS", "0"),
    ("APP__DATABASE__STATEMENT_TIMEOUT_MS", "1000"),
];

fn revogar(id: &str) -> String {
    format!("/api/solicitacao-consentimento/{id}/revogar")
}

fn status_at_pgcc(app: &TestApp, pgcc_id: &str) -> Value {
    app.sim_requests()
        .into_iter()
        .find(|s| s["id"] == pgcc_id)
        .expect("the simulator holds the request")["status"]
        .clone()
}

/// `(de, para, causa, motivo)` of every history entry.
fn history(v: &Value) -> Vec<(Value, Value, Value, Value)> {
    v["historico"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["de"].clone(),
                h["para"].clone(),
                h["causa"].clone(),
                h["motivo"].clone(),
            )
        })
        .collect()
}

#[test]
fn a_revocation_that_failed_after_the_pgcc_revoked_is_completed_by_its_retry_as_the_companys() {
    let app = synced_with(SETTINGS);
    let (id, pgcc_id) = create(&app.a, ATIVO, &active_body());
    let body = json!({"motivo": "O titular pediu por telefone."});
    let key = [("Idempotency-Key", "revogar-2026-0001")];

    // Another transaction holds the consent's row past the statement timeout.
    let mut holder = app.db.conn();
    holder
        .batch_execute(&format!(
            // by company too: Citus locks rows only in a statement routed to one shard
            "BEGIN; SELECT id FROM solicitacoes_consentimento \
             WHERE empresa_id = '{}' AND id = '{id}' FOR UPDATE",
            app.company_a
        ))
        .unwrap();
    let first = app.a.post_json_with(&revogar(&id), &body, &key).expect(503);
    assert!(first.retry_after.is_some(), "{first:?}");
    // The PGCC took it; here nothing changed.
    assert_eq!(status_at_pgcc(&app, &pgcc_id), "revogado");
    assert_eq!(detail(&app.a, &id)["status"], "ativo");
    holder.batch_execute("ROLLBACK").unwrap();

    // The same request again: the PGCC answers 409 (already revoked), asked for the status it
    // says `revogado`, and the revocation is stored as the company's, with its reason.
    let retry = app.a.post_json_with(&revogar(&id), &body, &key).expect(200);
    assert_eq!(retry.header("Idempotent-Replayed"), None);
    assert_eq!(retry.data()["status"], "revogado");
    let expected = vec![
        (Value::Null, json!("ativo"), json!("empresa"), Value::Null),
        (
            json!("ativo"),
            json!("revogado"),
            json!("empresa"),
            json!("O titular pediu por telefone."),
        ),
    ];
    assert_eq!(history(retry.data()), expected);
    assert_eq!(history(&detail(&app.a, &id)), expected);
    assert_eq!(check(&app.a, "tpl-a-marketing"), json!({"valido": false}));
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM solicitacoes_historico WHERE solicitacao_id = '{id}' \
             AND para = 'revogado' AND causa = 'empresa' \
             AND motivo = 'O titular pediu por telefone.'"
        )),
        1
    );

    // Replayed under the key: the same answer, byte for byte, and nothing more happens.
    let replay = app.a.post_json_with(&revogar(&id), &body, &key).expect(200);
    assert_eq!(replay.header("Idempotent-Replayed"), Some("true"));
    assert_eq!(replay.text, retry.text);
    assert_eq!(history(&detail(&app.a, &id)).len(), 2);

    // Another body under the same key is refused as for a creation, naming the header.
    let other = app
        .a
        .post_json_with(&revogar(&id), &json!({"motivo": "Outro motivo."}), &key)
        .expect(422);
    assert_eq!(other.data()["erros"][0]["campo"], "Idempotency-Key");
    assert_eq!(history(&detail(&app.a, &id)).len(), 2);
}

#[test]
fn a_409_of_the_pgcc_on_a_request_it_does_not_hold_revoked_stays_a_refusal_and_changes_nothing() {
    let app = synced_with(SETTINGS);
    let (id, pgcc_id) = create(&app.a, PENDENTE, &pending_body());
    // The subject refused on the PGCC; the status worker is off, so here it is still pending.
    let r = app
        .sim_admin
        .post_empty(&format!("/_sim/solicitacoes/{pgcc_id}/recusar"));
    assert_eq!(r.status, 200, "{}", r.text);

    let refused = app
        .a
        .post_json_with(
            &revogar(&id),
            &json!({"motivo": "Criada por engano."}),
            &[("Idempotency-Key", "revogar-recusada")],
        )
        .expect(422);
    assert_eq!(refused.json["isPgccErro"], true);
    assert_eq!(refused.json["pgccCodigoErro"], "Conflict");
    assert_eq!(status_at_pgcc(&app, &pgcc_id), "recusado");
    let d = detail(&app.a, &id);
    assert_eq!(d["status"], "pendente");
    assert_eq!(history(&d).len(), 1);
}

#[test]
fn a_revocation_without_a_body_under_a_key_is_replayed_and_another_route_under_it_is_refused() {
    let app = synced_with(SETTINGS);
    let (id, _) = create(&app.a, ATIVO, &active_body());
    let key = [("Idempotency-Key", "revogar-sem-corpo")];

    let first = app
        .a
        .post_raw_with(&revogar(&id), "application/json", &key, b"")
        .expect(200);
    let replay = app
        .a
        .post_raw_with(&revogar(&id), "application/json", &key, b"")
        .expect(200);
    assert_eq!(replay.header("Idempotent-Replayed"), Some("true"));
    assert_eq!(replay.text, first.text);
    assert_eq!(
        history(&detail(&app.a, &id)).last().unwrap().2,
        json!("empresa")
    );

    // The key already answered another request (this path): refused, nothing created.
    let (other, _) = create(&app.a, ATIVO, &active_body());
    app.a
        .post_raw_with(&revogar(&other), "application/json", &key, b"")
        .expect(422);
    assert_eq!(detail(&app.a, &other)["status"], "ativo");
}
