//! The verifiable log (issue 24, parts 1-5; docs/auditoria.md): entries of a creation and a
//! revocation proven against a signed checkpoint by an RFC 9162 check written here (not the
//! service's tree crate), consistency proofs, the append-only table, `audit verify` catching a
//! change made behind the service's back, another company's proofs and receipt, and the Python
//! verifier run against the live server.

use std::process::Command;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use testkit::processes::{cli, repo_root};
use testkit::wait_until;

use crate::helpers::*;

pub(crate) fn provas(id: &str) -> String {
    format!("/api/solicitacao-consentimento/{id}/provas")
}

fn recibo(id: &str) -> String {
    format!("/api/solicitacao-consentimento/{id}/recibo")
}

pub(crate) fn hash(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn node(left: &[u8], right: &[u8]) -> [u8; 32] {
    hash(&[&[1], left, right])
}

/// RFC 9162, 2.1.3.2: the root an inclusion proof leads to from `leaf` at `index` in a tree of
/// `size` leaves (`None` when the proof has the wrong length).
pub(crate) fn root_from_inclusion(
    index: u64,
    size: u64,
    leaf: [u8; 32],
    proof: &[[u8; 32]],
) -> Option<[u8; 32]> {
    if index >= size {
        return None;
    }
    let (mut fnode, mut snode, mut r) = (index, size - 1, leaf);
    for p in proof {
        if snode == 0 {
            return None;
        }
        if fnode & 1 == 1 || fnode == snode {
            r = node(p, &r);
            if fnode & 1 == 0 {
                while fnode & 1 == 0 && fnode != 0 {
                    fnode >>= 1;
                    snode >>= 1;
                }
            }
        } else {
            r = node(&r, p);
        }
        fnode >>= 1;
        snode >>= 1;
    }
    (snode == 0).then_some(r)
}

/// RFC 9162, 2.1.4.2: whether `proof` shows the tree (`second`, `second_root`) extends the tree
/// (`first`, `first_root`).
pub(crate) fn consistent(
    first: u64,
    second: u64,
    first_root: [u8; 32],
    second_root: [u8; 32],
    proof: &[[u8; 32]],
) -> bool {
    if first == second {
        return proof.is_empty() && first_root == second_root;
    }
    let mut path = proof.to_vec();
    if first.is_power_of_two() {
        path.insert(0, first_root);
    }
    let Some((head, rest)) = path.split_first() else {
        return false;
    };
    let (mut fnode, mut snode) = (first - 1, second - 1);
    while fnode & 1 == 1 {
        fnode >>= 1;
        snode >>= 1;
    }
    let (mut fr, mut sr) = (*head, *head);
    for c in rest {
        if snode == 0 {
            return false;
        }
        if fnode & 1 == 1 || fnode == snode {
            fr = node(c, &fr);
            sr = node(c, &sr);
            while fnode & 1 == 0 && fnode != 0 {
                fnode >>= 1;
                snode >>= 1;
            }
        } else {
            sr = node(&sr, c);
        }
        fnode >>= 1;
        snode >>= 1;
    }
    fr == first_root && sr == second_root && snode == 0
}

pub(crate) fn digest(b64: &Value) -> [u8; 32] {
    STANDARD
        .decode(b64.as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap()
}

/// (size, root) of a checkpoint note.
pub(crate) fn size_and_root(note: &str) -> (u64, [u8; 32]) {
    let lines: Vec<&str> = note.lines().collect();
    (
        lines[1].parse().unwrap(),
        STANDARD.decode(lines[2]).unwrap().try_into().unwrap(),
    )
}

pub(crate) fn create_active(app: &TestApp) -> String {
    let created = app.a.post_json(ATIVO, &active_body()).expect(200);
    created.data()["id"].as_str().unwrap().to_owned()
}

/// The request's proofs once the latest checkpoint covers `entries` of its entries.
pub(crate) fn proofs_covering(app: &TestApp, id: &str, entries: usize) -> Value {
    let mut last = Value::Null;
    let covered = wait_until(Duration::from_secs(20), || {
        last = app.a.get(&provas(id)).expect(200).data().clone();
        last["entradas"].as_array().map_or(0, Vec::len) >= entries
    });
    assert!(covered, "no checkpoint covered {entries} entries: {last}");
    last
}

fn entry_json(item: &Value) -> Value {
    serde_json::from_slice(&STANDARD.decode(item["entrada"].as_str().unwrap()).unwrap()).unwrap()
}

#[test]
fn a_creation_and_a_revocation_are_proven_against_a_signed_checkpoint_by_an_independent_rfc_9162_check(
) {
    let app = TestApp::synced();
    let id = create_active(&app);
    app.a
        .post_json(
            &format!("/api/solicitacao-consentimento/{id}/revogar"),
            &json!({"motivo": "Pedido do titular."}),
        )
        .expect(200);

    let proofs = proofs_covering(&app, &id, 2);
    let note = proofs["checkpoint"].as_str().unwrap();
    assert!(
        note.starts_with("consent-api/empresas/11222333000181\n"),
        "the origin names the service and the company: {note}"
    );
    assert!(note.contains("\n\n\u{2014} consent-api "), "{note}");
    let (size, root) = size_and_root(note);
    let items = proofs["entradas"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{proofs}");
    for item in items {
        let bytes = STANDARD.decode(item["entrada"].as_str().unwrap()).unwrap();
        let proof: Vec<[u8; 32]> = item["provaInclusao"]
            .as_array()
            .unwrap()
            .iter()
            .map(digest)
            .collect();
        let index = item["indice"].as_u64().unwrap();
        assert_eq!(
            root_from_inclusion(index, size, hash(&[&[0], &bytes]), &proof),
            Some(root),
            "entry {index} is in the checkpoint's tree"
        );
    }

    let creation = entry_json(&items[0]);
    let revocation = entry_json(&items[1]);
    assert_eq!(creation["id"], id.as_str());
    assert_eq!(
        (
            creation["statusAnterior"].clone(),
            creation["status"].clone()
        ),
        (Value::Null, json!("ativo"))
    );
    assert_eq!(creation["causa"], "empresa");
    assert_eq!(creation["cnpjEmpresa"], "11222333000181");
    assert_eq!(
        creation["provaColetaSha256"],
        hex(&hash(&[b"assinatura-digital:abc123"])).as_str()
    );
    assert_eq!(
        (
            revocation["statusAnterior"].clone(),
            revocation["status"].clone()
        ),
        (json!("ativo"), json!("revogado"))
    );
    assert_eq!(
        revocation["motivoSha256"],
        hex(&hash(&["Pedido do titular.".as_bytes()])).as_str()
    );
    let keys: Vec<&String> = creation.as_object().unwrap().keys().collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "canonical: keys in order");
    let raw = String::from_utf8(
        STANDARD
            .decode(items[0]["entrada"].as_str().unwrap())
            .unwrap(),
    )
    .unwrap();
    assert!(
        !raw.contains(' ') && !raw.contains('\n'),
        "no whitespace: {raw}"
    );
    let cpf_digits: String = CPF.chars().filter(char::is_ascii_digit).collect();
    assert!(
        !raw.contains(&cpf_digits) && !raw.contains(CPF),
        "never the CPF: {raw}"
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_consistency_proof_links_two_checkpoints_and_bad_sizes_are_400() {
    let app = TestApp::synced();
    let first = create_active(&app);
    let before = proofs_covering(&app, &first, 1);
    let (old_size, old_root) = size_and_root(before["checkpoint"].as_str().unwrap());
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(create_active(&app));
    }
    let after = proofs_covering(&app, ids.last().unwrap(), 1);
    let (new_size, new_root) = size_and_root(after["checkpoint"].as_str().unwrap());
    assert!(new_size > old_size);
    // the log as a whole is the auditor's (a default key gets 403)
    let auditor = crate::scopes::key_with_scopes(&app, &app.company_a, "auditor");
    assert_eq!(app.a.get("/api/auditoria/checkpoint").status, 403);

    let reply = auditor
        .get(&format!(
            "/api/auditoria/consistencia?de={old_size}&para={new_size}"
        ))
        .expect(200);
    let proof: Vec<[u8; 32]> = reply.data()["prova"]
        .as_array()
        .unwrap()
        .iter()
        .map(digest)
        .collect();
    assert!(
        consistent(old_size, new_size, old_root, new_root, &proof),
        "{}",
        reply.text
    );

    let latest = auditor.get("/api/auditoria/checkpoint");
    assert_eq!(latest.status, 200, "{}", latest.text);
    assert!(
        latest.content_type.starts_with("text/plain"),
        "{}",
        latest.content_type
    );
    assert_eq!(size_and_root(&latest.text).0, new_size, "{}", latest.text);
    for bad in [
        "".to_owned(),
        format!("?de={old_size}"),
        format!("?de=abc&para={new_size}"),
        format!("?de={new_size}&para={old_size}"),
        format!("?de={old_size}&para={}", new_size + 1000),
    ] {
        let r = auditor
            .get(&format!("/api/auditoria/consistencia{bad}"))
            .expect(400);
        assert_eq!(r.json["sucesso"], false, "{bad}: {}", r.text);
    }
}

#[test]
fn another_companys_receipt_and_proofs_are_404() {
    let app = TestApp::synced();
    let id = create_active(&app);
    app.b.get(&provas(&id)).expect(404);
    app.b.get(&recibo(&id)).expect(404);
    app.a.get(&recibo(&id)).expect(200);
    let b_auditor = crate::scopes::key_with_scopes(&app, &app.company_b, "auditor");
    let b_checkpoint = b_auditor.get("/api/auditoria/checkpoint");
    assert_eq!(
        b_checkpoint.status, 404,
        "company B has no log yet: {}",
        b_checkpoint.text
    );
}

/// What lets the owner switch a trigger of a distributed table off and on again on Citus ("triggers
/// are not supported on distributed tables" without it; distribute.sql sets it to create them).
/// On one node it is a setting nothing reads: the same statements run on both.
const UNSAFE_TRIGGERS: &str = "SET citus.enable_unsafe_triggers = on";

/// The owner rewrites company `company`'s history, as whoever runs the service can: switches the
/// log tables' append-only triggers off (`ALTER TABLE ... DISABLE TRIGGER` needs only ownership;
/// here the superuser), deletes the company's last log entry with its checkpoints and its stored
/// tree, and switches the triggers on again, so the checkpoint job is left to sign a smaller
/// size. The same statements on Citus (`UNSAFE_TRIGGERS`), where a `session_replication_role`
/// set on the coordinator does not reach the workers' shards.
pub(crate) fn rewrite_last_entry_as_owner(app: &TestApp, company: &str) {
    use diesel::RunQueryDsl;
    const TABLES: [&str; 4] = [
        "auditoria_entradas",
        "auditoria_checkpoints",
        "auditoria_nos",
        "auditoria_folhas",
    ];
    let mut conn = app.db.conn();
    let mut statements = vec![UNSAFE_TRIGGERS.to_owned()];
    statements.extend(TABLES.map(|t| format!("ALTER TABLE {t} DISABLE TRIGGER USER")));
    statements.push(format!(
        "DELETE FROM auditoria_entradas WHERE empresa_id = '{company}'
           AND (transacao, posicao) IN (
             SELECT transacao, posicao FROM auditoria_entradas WHERE empresa_id = '{company}'
             ORDER BY transacao DESC, posicao DESC LIMIT 1)"
    ));
    statements.extend(
        TABLES[1..]
            .iter()
            .map(|t| format!("DELETE FROM {t} WHERE empresa_id = '{company}'")),
    );
    statements.extend(TABLES.map(|t| format!("ALTER TABLE {t} ENABLE TRIGGER USER")));
    for sql in statements {
        diesel::sql_query(&sql)
            .execute(&mut conn)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

#[test]
fn the_log_refuses_update_and_delete() {
    let app = TestApp::synced();
    create_active(&app);
    use diesel::RunQueryDsl;
    let mut conn = app.db.conn();
    for sql in [
        // a constant, not `gen_random_uuid()`: Citus refuses a VOLATILE function in an UPDATE of
        // a distributed table before any trigger could, and the test is the trigger's
        "UPDATE auditoria_entradas SET solicitacao_id = '00000000-0000-4000-8000-000000000000'",
        "DELETE FROM auditoria_entradas",
        "TRUNCATE auditoria_entradas",
    ] {
        let err = diesel::sql_query(sql).execute(&mut conn).unwrap_err();
        assert!(err.to_string().contains("append-only"), "{sql}: {err}");
    }
    assert_eq!(
        app.db
            .scalar("SELECT count(*) AS v FROM auditoria_entradas"),
        1
    );
}

#[test]
fn audit_verify_passes_then_names_the_request_whose_expiry_was_changed_in_the_database() {
    let app = TestApp::synced();
    let id = create_active(&app);
    proofs_covering(&app, &id, 1);
    let ok = cli(&app.db, &app.sim, &["audit", "verify"]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );

    app.db.scalar(&format!(
        "WITH x AS (UPDATE solicitacoes_consentimento SET data_expiracao_consentimento = '2199-12-31T00:00:00Z' WHERE empresa_id = '{}' AND id = '{id}' RETURNING 1) SELECT count(*) AS v FROM x",
        app.company_a
    ));
    let failed = cli(
        &app.db,
        &app.sim,
        &["audit", "verify", "--empresa", &app.company_a],
    );
    assert!(!failed.status.success());
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(stderr.contains(&id), "names the request: {stderr}");
}

#[test]
fn audit_verify_fails_after_a_log_row_is_deleted_with_the_trigger_disabled() {
    let app = TestApp::synced();
    let id = create_active(&app);
    app.a
        .post_json(
            &format!("/api/solicitacao-consentimento/{id}/revogar"),
            &json!({}),
        )
        .expect(200);
    proofs_covering(&app, &id, 2);
    let ok = cli(&app.db, &app.sim, &["audit", "verify"]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );

    use diesel::RunQueryDsl;
    let mut conn = app.db.conn();
    for sql in [
        UNSAFE_TRIGGERS.to_owned(),
        "ALTER TABLE auditoria_entradas DISABLE TRIGGER auditoria_entradas_somente_insercao"
            .to_owned(),
        format!(
            "DELETE FROM auditoria_entradas WHERE empresa_id = '{0}'
               AND (transacao, posicao) IN (
                 SELECT transacao, posicao FROM auditoria_entradas WHERE empresa_id = '{0}'
                 ORDER BY transacao DESC, posicao DESC LIMIT 1)",
            app.company_a
        ),
        "ALTER TABLE auditoria_entradas ENABLE TRIGGER auditoria_entradas_somente_insercao"
            .to_owned(),
    ] {
        diesel::sql_query(sql).execute(&mut conn).unwrap();
    }
    let failed = cli(&app.db, &app.sim, &["audit", "verify"]);
    assert!(!failed.status.success());
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(stderr.contains("audit log mismatch"), "{stderr}");
    assert!(
        stderr.contains("checkpoint"),
        "names the checkpoint the log no longer matches: {stderr}"
    );
}

#[test]
fn audit_verify_names_a_stored_tree_node_changed_in_the_database_and_proofs_stay_right() {
    let app = TestApp::synced();
    let id = create_active(&app);
    app.a
        .post_json(
            &format!("/api/solicitacao-consentimento/{id}/revogar"),
            &json!({}),
        )
        .expect(200);
    proofs_covering(&app, &id, 2);
    let stored = app.db.scalar(&format!(
        "SELECT count(*) AS v FROM auditoria_nos WHERE empresa_id = '{}'",
        app.company_a
    ));
    assert_eq!(stored, 3, "two leaves and the subtree they complete");
    let ok = cli(&app.db, &app.sim, &["audit", "verify"]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );

    use diesel::RunQueryDsl;
    let mut conn = app.db.conn();
    for sql in [
        UNSAFE_TRIGGERS.to_owned(),
        "ALTER TABLE auditoria_nos DISABLE TRIGGER auditoria_nos_somente_insercao".to_owned(),
        format!(
            "UPDATE auditoria_nos SET hash = sha256('forged') WHERE empresa_id = '{}' AND nivel = 1 AND indice = 0",
            app.company_a
        ),
        "ALTER TABLE auditoria_nos ENABLE TRIGGER auditoria_nos_somente_insercao".to_owned(),
    ] {
        diesel::sql_query(sql).execute(&mut conn).unwrap();
    }
    let failed = cli(&app.db, &app.sim, &["audit", "verify"]);
    assert!(!failed.status.success());
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(
        stderr.contains("stored tree node (level 1, index 0) does not match the entries"),
        "{stderr}"
    );

    // the forged node does not give the checkpoint's root: proofs are rebuilt from the entries
    let proofs = app.a.get(&provas(&id)).expect(200).data().clone();
    let (size, root) = size_and_root(proofs["checkpoint"].as_str().unwrap());
    for item in proofs["entradas"].as_array().unwrap() {
        let bytes = STANDARD.decode(item["entrada"].as_str().unwrap()).unwrap();
        let proof: Vec<[u8; 32]> = item["provaInclusao"]
            .as_array()
            .unwrap()
            .iter()
            .map(digest)
            .collect();
        let index = item["indice"].as_u64().unwrap();
        assert_eq!(
            root_from_inclusion(index, size, hash(&[&[0], &bytes]), &proof),
            Some(root)
        );
    }
}

#[test]
fn the_python_verifier_checks_a_receipt_an_inclusion_proof_and_a_checkpoint_signature_against_the_jwks(
) {
    let app = TestApp::synced();
    let id = create_active(&app);
    proofs_covering(&app, &id, 1);
    let jwks = app.anonymous.get("/.well-known/jwks.json");
    assert_eq!(jwks.status, 200, "{}", jwks.text);
    let jwks: Value = serde_json::from_str(&jwks.text).unwrap();
    assert_eq!(jwks["keys"][0]["kty"], "OKP");
    assert_eq!(jwks["keys"][0]["crv"], "Ed25519");

    let out = Command::new("python3")
        .arg(repo_root().join("scripts/verify_audit.py"))
        .args(["--url", &app.api.base_url, "--id", &id])
        .env("CONSENT_API_KEY", &app.key_a)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("receipt: signature valid"), "{stdout}");
    assert!(stdout.contains("checkpoint: signature valid"), "{stdout}");
    assert!(stdout.contains("inclusion: 1 entries proven"), "{stdout}");
}

#[test]
fn every_audit_read_is_in_the_access_log_with_its_key_route_and_request() {
    let app = TestApp::synced();
    let id = create_active(&app);
    proofs_covering(&app, &id, 1);
    let auditor = crate::scopes::key_with_scopes(&app, &app.company_a, "auditor");
    assert_eq!(auditor.get("/api/auditoria/checkpoint").status, 200);
    let jws = app.a.get(&recibo(&id)).expect(200).data()["recibo"]
        .as_str()
        .unwrap()
        .to_owned();
    let payload: Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(jws.split('.').nth(1).unwrap())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(payload["id"], json!(id));
    assert_eq!(
        payload["versaoCasoDeUso"],
        json!(1),
        "the use-case version it was given under"
    );

    let records = auditor.get("/api/auditoria/acessos").expect(200);
    let items = records.data()["itens"].as_array().unwrap().clone();
    let route_of = |route: &str| items.iter().find(|i| i["rota"] == route).cloned();
    let checkpoint = route_of("/api/auditoria/checkpoint").expect("the checkpoint read");
    assert_eq!(checkpoint["solicitacaoIds"], json!([]));
    let receipt = route_of("/api/solicitacao-consentimento/{id}/recibo").expect("the receipt read");
    assert_eq!(receipt["solicitacaoIds"], json!([id]));
    assert_ne!(
        receipt["apiKeyId"], checkpoint["apiKeyId"],
        "each read names its own key"
    );
    assert!(
        route_of("/api/solicitacao-consentimento/{id}/provas").is_some(),
        "the proofs read"
    );
}
