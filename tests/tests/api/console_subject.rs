//! The subject's page and evidence bundle (issue 38, part 2; docs/console.md, "The subject's
//! page"): one CPF search answered 303 to a GET carrying an opaque token (Back and reload work,
//! the token expires, another session's or company's token and a made-up one are refused), the
//! timeline of each request with who caused each change, the reads of the subject's data, and
//! the ZIP of receipts, records and proofs verified offline by `scripts/verify_audit.py
//! --pacote` against a checkpoint cosigned by a real `consent-api witness serve`.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ed25519_dalek::SigningKey;
use serde_json::json;
use testkit::processes::{log_dir, repo_root};
use testkit::wait_until;

use crate::audit_log::proofs_covering;
use crate::console::{Browser, Page};
use crate::helpers::*;
use crate::lifecycle::{create, detail, synced_with, FAST_WORKERS};
use crate::scopes::issue_key_with_scopes;
use crate::witness::{
    cosigned_by, hex, key_id, read, start_witness, LOG_SEED, ORIGIN_A, WITNESS_NAME,
};

const PAGE_ROUTE: &str = "/console/titulares/{token}";
const BUNDLE_ROUTE: &str = "/console/titulares/{token}/pacote";

fn wait_status(app: &TestApp, id: &str, want: &str) {
    let reached = wait_until(Duration::from_secs(20), || {
        detail(&app.a, id)["status"] == want
    });
    assert!(reached, "{id} never became {want}: {}", detail(&app.a, id));
}

fn sim_move(app: &TestApp, pgcc_id: &str, action: &str) {
    let r = app
        .sim_admin
        .post_empty(&format!("/_sim/solicitacoes/{pgcc_id}/{action}"));
    assert_eq!(r.status, 200, "{}", r.text);
}

/// Signs a DPO of `company` in and searches the CPF: the search's Location.
fn search(app: &TestApp, company: &str) -> (Browser, String) {
    let mut dpo = Browser::new(&app.api.base_url);
    dpo.sign_in(&issue_key_with_scopes(app, company, "auditor"));
    let form = dpo.get("/console/titulares");
    let posted = dpo.post(
        "/console/titulares",
        &[("cpf", CPF), ("csrf", &form.csrf())],
    );
    assert_eq!(posted.status, 303, "{}", posted.body);
    let location = posted.header("location").expect("a Location").to_owned();
    assert!(location.starts_with("/console/titulares/"), "{location}");
    assert!(
        !location.contains(CPF_DIGITS) && !location.contains(CPF),
        "never the CPF in the URL: {location}"
    );
    (dpo, location)
}

/// The part of the page about request `id` (its section of the timeline).
fn section<'a>(page: &'a Page, id: &str) -> &'a str {
    let marker = format!("<section aria-label=\"Solicitação {id}\">");
    let at = page
        .body
        .find(&marker)
        .unwrap_or_else(|| panic!("no section of {id}: {}", page.body));
    let rest = &page.body[at..];
    &rest[..rest.find("</section>").unwrap()]
}

fn recorded(app: &TestApp, route: &str) -> i64 {
    app.db.scalar(&format!(
        "SELECT count(*) AS v FROM acessos_dados_pessoais WHERE rota = '{route}'"
    ))
}

#[test]
fn the_subjects_page_shows_each_requests_timeline_by_who_did_it_and_never_another_companys() {
    let app = synced_with(FAST_WORKERS);
    // answered by the subject on the PGCC
    let (by_subject, pgcc_1) = create(&app.a, PENDENTE, &pending_body());
    sim_move(&app, &pgcc_1, "aceitar");
    wait_status(&app, &by_subject, "ativo");
    // revoked by the subject on the PGCC
    let (revoked_by_subject, pgcc_2) = create(&app.a, ATIVO, &active_body());
    sim_move(&app, &pgcc_2, "revogar");
    wait_status(&app, &revoked_by_subject, "revogado");
    // indirect access for a third company, revoked by the company
    let mut indirect = active_body();
    indirect["modalidadeAcesso"] = json!("Indireto");
    indirect["cnpjAnuente"] = json!("11.444.777/0001-61");
    let (by_company, _) = create(&app.a, ATIVO, &indirect);
    app.a
        .post_empty(&format!(
            "/api/solicitacao-consentimento/{by_company}/revogar"
        ))
        .expect(200);
    // expired by the system
    let mut short = active_body();
    short["dataExpiracaoConsentimento"] =
        json!((chrono::Utc::now() + chrono::Duration::seconds(2)).to_rfc3339());
    let (by_system, _) = create(&app.a, ATIVO, &short);
    let stored = wait_until(Duration::from_secs(20), || {
        app.db
            .text(&format!(
                "SELECT status AS v FROM solicitacoes_consentimento WHERE id = '{by_system}'"
            ))
            .as_deref()
            == Some("expirado")
    });
    assert!(stored, "the expiry worker never stored expirado");
    // the same CPF at another company
    let mut of_b_body = active_body();
    of_b_body["casoDeUsoIdTemplate"] = json!("tpl-b-seguro");
    let (of_b, _) = create(&app.b, ATIVO, &of_b_body);

    let (mut dpo, location) = search(&app, &app.company_a);
    let page = dpo.get(&location);
    assert_eq!(page.status, 200, "{}", page.body);
    page.assert_console_headers();
    assert!(
        !page.body.contains(&of_b),
        "another company's request shown"
    );
    assert_eq!(recorded(&app, PAGE_ROUTE), 1, "the view is recorded");

    let subject = section(&page, &by_subject);
    for text in ["Criada", "A empresa", "Consentida", "O titular, na PGCC"] {
        assert!(subject.contains(text), "{text} missing: {subject}");
    }
    if !detail(&app.a, &by_subject)["dataTitularRespondeuConsentimento"].is_null() {
        assert!(subject.contains("O titular respondeu em"), "{subject}");
    }
    let revoked = section(&page, &revoked_by_subject);
    assert!(revoked.contains("Revogada"), "{revoked}");
    assert!(revoked.contains("O titular, na PGCC"), "{revoked}");
    let company = section(&page, &by_company);
    assert!(company.contains("Indireta"), "{company}");
    assert!(
        company.contains("CNPJ anuente 11444777000161")
            || company.contains("CNPJ anuente 11.444.777/0001-61"),
        "{company}"
    );
    assert!(company.contains("Revogada"), "{company}");
    assert!(!company.contains("O titular, na PGCC"), "{company}");
    let system = section(&page, &by_system);
    assert!(system.contains("Expirada"), "{system}");
    assert!(system.contains("O sistema (prazo expirado)"), "{system}");
    // the use case once, with its newest request's status (the expired one), in words
    let cases = &page.body[page.body.find("Casos de uso do titular").unwrap()..];
    let cases = &cases[..cases.find("</table>").unwrap()];
    assert!(cases.contains(">Expirado</span>"), "{cases}");
    // dates as people read them, never the API's format
    assert!(!page.body.contains("+00:00<"), "{}", page.body);

    // the request's page read, then Back (a GET again): the read is listed among the subject's
    let request_page = dpo.get(&format!("/console/solicitacoes/{by_subject}"));
    assert_eq!(request_page.status, 200);
    let back = dpo.get(&location);
    assert_eq!(back.status, 200, "Back and reload are a GET: {}", back.body);
    let reads = &back.body[back.body.find("Quem leu os dados deste titular").unwrap()..];
    assert!(reads.contains("Console: página da solicitação"), "{reads}");
    assert!(reads.contains("Console: página do titular"), "{reads}");
    assert_eq!(recorded(&app, PAGE_ROUTE), 2);

    // another session of the same company, company B's DPO, a made-up token: refused, nothing
    // shown, nothing recorded
    let (mut other_dpo, _) = search(&app, &app.company_a);
    let (mut b_dpo, _) = search(&app, &app.company_b);
    let made_up = format!("/console/titulares/{}", "0".repeat(64));
    for (who, browser, path) in [
        ("another session", &mut other_dpo, location.as_str()),
        ("company B", &mut b_dpo, location.as_str()),
        ("made up", &mut dpo, made_up.as_str()),
    ] {
        let refused = browser.get(path);
        assert_eq!(refused.status, 404, "{who}: {}", refused.body);
        assert!(refused.body.contains("busque o CPF de novo"), "{who}");
        assert!(!refused.body.contains(&by_subject), "{who}");
        let bundle = browser.get_bytes(&format!("{path}/pacote"));
        assert_eq!(bundle.0, 404, "{who}: the bundle too");
    }
    assert_eq!(
        recorded(&app, PAGE_ROUTE),
        2,
        "nothing recorded for refusals"
    );
    assert_eq!(recorded(&app, BUNDLE_ROUTE), 0);

    // other scopes may not open it
    let mut operator = Browser::new(&app.api.base_url);
    operator.sign_in(&issue_key_with_scopes(&app, &app.company_a, "webhooks"));
    assert_eq!(operator.get(&location).status, 403);
}

#[test]
fn a_searchs_token_expires() {
    let app = synced_with(&[("APP__CONSOLE__SEARCH_SECONDS", "2")]);
    let (id, _) = create(&app.a, ATIVO, &active_body());
    let (mut dpo, location) = search(&app, &app.company_a);
    let page = dpo.get(&location);
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains(&id));
    std::thread::sleep(Duration::from_millis(2500));
    let gone = dpo.get(&location);
    assert_eq!(gone.status, 404, "{}", gone.body);
    assert!(gone.body.contains("busque o CPF de novo"), "{}", gone.body);
    assert!(!gone.body.contains(&id));
}

/// A search's token is kept in PostgreSQL (`console_buscas`), not in the process: a reload served
/// by another API process on the same database shows the subject's page. The row holds neither
/// the token nor the CPF in clear; another session's or company's reload, on either process, is
/// the 404 page and reads nothing; the search ends with its session (signed out), and the worker
/// purges the expired ones.
#[test]
fn a_searchs_token_made_on_one_api_process_is_honoured_by_another() {
    let app = synced_with(&[
        ("APP__CONSOLE__SEARCH_SECONDS", "10"),
        ("APP__WORKERS__IDEMPOTENCY_PURGE_SECONDS", "1"),
    ]);
    let (id, _) = create(&app.a, ATIVO, &active_body());
    let other = testkit::Api::start(&app.db, &app.sim);
    let (dpo, location) = search(&app, &app.company_a);
    // the same browser, the other process: the page
    let mut there = Browser::new(&other.base_url);
    there.cookies = dpo.cookies.clone();
    let page = there.get(&location);
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains(&id), "{}", page.body);
    assert_eq!(recorded(&app, PAGE_ROUTE), 1);
    // kept under the token's SHA-256; the CPF sealed, in no form in clear
    let token = location.trim_start_matches("/console/titulares/");
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM console_buscas WHERE empresa_id = '{}' \
             AND token_hash = sha256(convert_to('{token}', 'UTF8'))",
            app.company_a
        )),
        1
    );
    for cpf in [CPF, CPF_DIGITS] {
        assert_eq!(
            app.db.scalar(&format!(
                "SELECT count(*) AS v FROM console_buscas \
                 WHERE position(convert_to('{cpf}', 'UTF8') in cpf_cifrado) > 0 \
                    OR position(convert_to('{token}', 'UTF8') in cpf_cifrado) > 0"
            )),
            0,
            "{cpf} in clear"
        );
    }
    // another session of company A and company B's DPO, on the other process: refused, nothing
    // read
    for (who, company) in [
        ("another session", &app.company_a),
        ("company B", &app.company_b),
    ] {
        let mut browser = Browser::new(&other.base_url);
        browser.sign_in(&issue_key_with_scopes(&app, company, "auditor"));
        let refused = browser.get(&location);
        assert_eq!(refused.status, 404, "{who}: {}", refused.body);
        assert!(refused.body.contains("busque o CPF de novo"), "{who}");
        assert!(!refused.body.contains(&id), "{who}");
        assert_eq!(
            browser.get_bytes(&format!("{location}/pacote")).0,
            404,
            "{who}"
        );
    }
    assert_eq!(
        recorded(&app, PAGE_ROUTE),
        1,
        "nothing recorded for refusals"
    );
    assert_eq!(recorded(&app, BUNDLE_ROUTE), 0);
    // refused for being theirs, not for being expired: the search still opens on the first
    let mut here = Browser::new(&app.api.base_url);
    here.cookies = dpo.cookies.clone();
    assert_eq!(here.get(&location).status, 200);
    assert_eq!(recorded(&app, PAGE_ROUTE), 2);

    // expired, then purged by the worker
    let rows = |app: &TestApp| app.db.scalar("SELECT count(*) AS v FROM console_buscas");
    let purged = wait_until(Duration::from_secs(30), || rows(&app) == 0);
    assert!(purged, "the expired search was never purged");
    assert_eq!(there.get(&location).status, 404);

    // a search ends with its session: signed out on the other process, its searches are gone
    let form = there.get("/console/titulares");
    let posted = there.post(
        "/console/titulares",
        &[("cpf", CPF), ("csrf", &form.csrf())],
    );
    assert_eq!(posted.status, 303, "{}", posted.body);
    assert_eq!(rows(&app), 1);
    let out = there.post("/console/sair", &[("csrf", &form.csrf())]);
    assert_eq!(out.status, 303, "{}", out.body);
    assert_eq!(rows(&app), 0, "the session's searches end with it");
}

fn verify(dir: &Path) -> (bool, String) {
    let out = Command::new("python3")
        .arg(repo_root().join("scripts/verify_audit.py"))
        .arg("--pacote")
        .arg(dir)
        .env_remove("CONSENT_API_KEY")
        .output()
        .expect("python3 runs");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn extract(zip: &Path, into: &Path) {
    let out = Command::new("python3")
        .args(["-m", "zipfile", "-e"])
        .arg(zip)
        .arg(into)
        .output()
        .expect("python3 -m zipfile");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_evidence_bundle_is_verified_offline_against_a_cosigned_checkpoint_and_a_tampered_one_fails()
{
    let dir = log_dir().join(format!(
        "bundle-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    ));
    std::fs::create_dir_all(&dir).unwrap();
    // the witness trusts company A's log (the log's vkey from the fixed seed)
    let log_key: [u8; 32] = SigningKey::from_bytes(&LOG_SEED).verifying_key().to_bytes();
    let log_vkey = format!(
        "consent-api+{}+{}",
        hex(&key_id("consent-api", 0x01, &log_key)),
        STANDARD.encode([&[0x01u8][..], &log_key].concat())
    );
    std::fs::write(dir.join("logs"), format!("{ORIGIN_A} {log_vkey}\n")).unwrap();
    let witness = start_witness(&dir);
    let witnesses = format!("url={};key={}", witness.url, witness.vkey);
    let seed = STANDARD.encode(LOG_SEED);
    let mut env = FAST_WORKERS.to_vec();
    env.push(("APP__AUDITORIA__WITNESSES", witnesses.as_str()));
    env.push(("APP__AUDITORIA__SIGNING_KEY", seed.as_str()));
    let app = synced_with(&env);

    let (active, _) = create(&app.a, ATIVO, &active_body());
    let (answered, pgcc_id) = create(&app.a, PENDENTE, &pending_body());
    sim_move(&app, &pgcc_id, "aceitar");
    wait_status(&app, &answered, "ativo");
    proofs_covering(&app, &active, 1);
    proofs_covering(&app, &answered, 2);
    let witness_key = SigningKey::from_bytes(&[0x77; 32])
        .verifying_key()
        .to_bytes();
    let mut note = String::new();
    let cosigned = wait_until(Duration::from_secs(30), || {
        note = app
            .a
            .get(&format!("/api/solicitacao-consentimento/{answered}/provas"))
            .expect(200)
            .data()["checkpoint"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        cosigned_by(&note, WITNESS_NAME, &witness_key)
    });
    assert!(
        cosigned,
        "no cosigned checkpoint: {note}\n{}",
        read(&witness.log)
    );

    let (mut dpo, location) = search(&app, &app.company_a);
    let (status, headers, zip) = dpo.get_bytes(&format!("{location}/pacote"));
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&zip));
    assert_eq!(header("content-type"), "application/zip");
    assert!(
        header("content-disposition").starts_with("attachment; filename=\"pacote-evidencias-"),
        "{}",
        header("content-disposition")
    );
    assert_eq!(header("cache-control"), "no-store");
    assert_eq!(recorded(&app, BUNDLE_ROUTE), 1, "the download is recorded");
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM acessos_dados_pessoais WHERE rota = '{BUNDLE_ROUTE}' \
             AND solicitacao_ids @> ARRAY['{active}'::uuid, '{answered}'::uuid]"
        )),
        1,
        "naming both requests"
    );

    let zip_path = dir.join("pacote.zip");
    std::fs::write(&zip_path, &zip).unwrap();
    let good = dir.join("pacote");
    extract(&zip_path, &good);
    for id in [&active, &answered] {
        assert!(good.join(format!("solicitacoes/{id}/recibo.jws")).exists());
        assert!(good.join(format!("solicitacoes/{id}/provas.json")).exists());
        // the use case is not annotated: the record's error in its place, said in the README
        let error =
            std::fs::read_to_string(good.join(format!("solicitacoes/{id}/registro.erro.json")))
                .expect("the record's error envelope");
        assert!(error.contains("mensagem"), "{error}");
    }
    let readme = std::fs::read_to_string(good.join("LEIAME.md")).unwrap();
    assert!(readme.contains("verify_audit.py --pacote"), "{readme}");
    assert!(readme.contains("sem registro ISO 27560"), "{readme}");
    assert_eq!(
        std::fs::read_to_string(good.join("testemunhas.txt"))
            .unwrap()
            .trim(),
        witness.vkey
    );
    let (ok, out) = verify(&good);
    assert!(ok, "{out}");
    assert!(
        out.contains(&format!("cosigned by {WITNESS_NAME}")),
        "{out}"
    );
    assert!(out.contains("bundle: 2 requests verified"), "{out}");
    assert!(out.contains("record missing"), "{out}");

    // a receipt whose signature was changed: refused, naming it
    let tampered = dir.join("recibo-alterado");
    extract(&zip_path, &tampered);
    let receipt = tampered.join(format!("solicitacoes/{active}/recibo.jws"));
    let jws = std::fs::read_to_string(&receipt).unwrap();
    let (signed, signature) = jws.rsplit_once('.').unwrap();
    let first = if signature.starts_with('A') { 'B' } else { 'A' };
    std::fs::write(&receipt, format!("{signed}.{first}{}", &signature[1..])).unwrap();
    let (ok, out) = verify(&tampered);
    assert!(!ok, "{out}");
    assert!(
        out.contains(&format!("receipt signature of {active} does not verify")),
        "{out}"
    );

    // the checkpoint without the witness's cosignature: refused
    let uncosigned = dir.join("sem-cossinatura");
    extract(&zip_path, &uncosigned);
    let checkpoint = uncosigned.join("checkpoint.txt");
    let text = std::fs::read_to_string(&checkpoint).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with(&format!("\u{2014} {WITNESS_NAME} ")))
        .collect();
    std::fs::write(&checkpoint, format!("{}\n", kept.join("\n"))).unwrap();
    let (ok, out) = verify(&uncosigned);
    assert!(!ok, "{out}");
    assert!(out.contains("no valid cosignature"), "{out}");

    // an inclusion proof changed: refused
    let bad_proof = dir.join("prova-alterada");
    extract(&zip_path, &bad_proof);
    let proofs_path = bad_proof.join(format!("solicitacoes/{answered}/provas.json"));
    let mut proofs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&proofs_path).unwrap()).unwrap();
    let entry = proofs["data"]["entradas"][0]["entrada"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut bytes = STANDARD.decode(entry).unwrap();
    let last = bytes.len() - 2;
    bytes[last] ^= 0x01;
    proofs["data"]["entradas"][0]["entrada"] = json!(STANDARD.encode(bytes));
    std::fs::write(&proofs_path, proofs.to_string()).unwrap();
    let (ok, out) = verify(&bad_proof);
    assert!(!ok, "{out}");
    assert!(out.contains("FAILED"), "{out}");
}
