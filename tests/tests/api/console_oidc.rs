//! Signing in to `/console` at the company's OpenID Provider (issue 38, part 1; docs/console.md,
//! "Signing in with the company's identity provider"), against a real one: npm's `oidc-provider`
//! started by the test (tests/oidc/provider.mjs). The flow is driven over HTTP as a browser
//! without JavaScript would: cookies kept per host, every redirect followed by hand. The id_token
//! checks' refusals (a forged signature, expired, another nonce or audience) are unit tests of
//! the verifier (`crates/delivery/console/src/id_token.rs`, keys generated in the test); here,
//! the refusals a provider produces: a user whose role was removed, a `state` used twice.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;
use testkit::OidcProvider;

use crate::helpers::*;

const CLIENT_ID: &str = "consent-console";
const CLIENT_SECRET: &str = "segredo-do-cliente-oidc-de-teste-0123456789";

/// A browser without JavaScript: keeps each host's cookies, follows no redirect.
#[derive(Default)]
struct Browser {
    cookies: BTreeMap<String, BTreeMap<String, String>>,
}

struct Page {
    status: u16,
    location: Option<String>,
    body: String,
}

impl Page {
    /// The value of the first hidden `csrf` field of the page.
    fn csrf(&self) -> String {
        let at = self
            .body
            .find("name=\"csrf\" value=\"")
            .unwrap_or_else(|| panic!("no CSRF field: {}", self.body));
        let rest = &self.body[at + "name=\"csrf\" value=\"".len()..];
        rest[..rest.find('"').unwrap()].to_owned()
    }
}

fn host_of(url: &str) -> String {
    url.split('/').nth(2).unwrap_or_default().to_owned()
}

impl Browser {
    fn request(&mut self, method: &str, url: &str, form: Option<&str>) -> Page {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        let host = host_of(url);
        let jar = self.cookies.entry(host.clone()).or_default();
        let cookie = jar
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let res = if method == "POST" {
            let mut req = agent
                .post(url)
                .header("Content-Type", "application/x-www-form-urlencoded");
            if !cookie.is_empty() {
                req = req.header("Cookie", &cookie);
            }
            req.send(form.unwrap_or_default().as_bytes())
        } else {
            let mut req = agent.get(url);
            if !cookie.is_empty() {
                req = req.header("Cookie", &cookie);
            }
            req.call()
        };
        let mut res = res.unwrap_or_else(|e| panic!("{method} {url}: {e}"));
        for value in res.headers().get_all("set-cookie") {
            let value = value.to_str().unwrap_or_default();
            let pair = value.split(';').next().unwrap_or_default();
            if let Some((n, v)) = pair.split_once('=') {
                let lower = value.to_ascii_lowercase();
                if v.is_empty()
                    || lower.contains("max-age=0")
                    || lower.contains("expires=thu, 01 jan 1970")
                {
                    jar.remove(n.trim());
                } else {
                    jar.insert(n.trim().to_owned(), v.to_owned());
                }
            }
        }
        let location = res
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(|l| {
                if l.starts_with('/') {
                    format!("http://{host}{l}")
                } else {
                    l.to_owned()
                }
            });
        Page {
            status: res.status().as_u16(),
            location,
            body: res.body_mut().read_to_string().unwrap_or_default(),
        }
    }

    fn get(&mut self, url: &str) -> Page {
        self.request("GET", url, None)
    }

    fn post(&mut self, url: &str, form: &str) -> Page {
        self.request("POST", url, Some(form))
    }
}

/// The API, company A's identity provider (users `dpo-1`, `op-1`, `ler-1`, `sem-papel`),
/// and company A configured with it through the CLI. `None`: no Node.js (skipped).
fn setup(env: &[(&str, &str)]) -> Option<(TestApp, OidcProvider)> {
    let app = TestApp::spawn_with(env);
    let idp = OidcProvider::start(
        CLIENT_ID,
        CLIENT_SECRET,
        &format!("{}/console/oidc/retorno", app.api.base_url),
        json!({
            "dpo-1": {"email": "dpo@empresa-a.example", "roles": ["dpo"]},
            "op-1": {"email": "op@empresa-a.example", "roles": ["operador"]},
            "ler-1": {"email": "ler@empresa-a.example", "roles": ["leitura"]},
            "sem-papel": {"email": "x@empresa-a.example", "roles": ["outro-sistema"]},
        }),
    )?;
    let out = testkit::processes::cli(
        &app.db,
        &app.sim,
        &[
            "company",
            "oidc",
            "--empresa",
            &app.company_a,
            "--issuer",
            &idp.issuer,
            "--client-id",
            CLIENT_ID,
            "--client-secret",
            CLIENT_SECRET,
        ],
    );
    assert!(
        out.status.success(),
        "company oidc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some((app, idp))
}

/// Signs `sub` in at the provider through company `empresa`'s sign-in: the console's start,
/// every redirect at the provider (its login interaction answered for `sub`), until the provider
/// sends the browser back; the console's answer to that return.
fn sign_in(browser: &mut Browser, app: &TestApp, empresa: &str, sub: &str) -> (Page, String) {
    let start = browser.get(&format!(
        "{}/console/entrar/oidc?empresa={}",
        app.api.base_url,
        encode(empresa)
    ));
    assert_eq!(start.status, 303, "{}", start.body);
    let mut next = start.location.expect("to the provider");
    // the provider's cookies are this sign-in's: a fresh session there each time
    let api_host = host_of(&app.api.base_url);
    browser.cookies.retain(|host, _| *host == api_host);
    for _ in 0..10 {
        if next.starts_with(&app.api.base_url) {
            let back = browser.get(&next);
            return (back, next);
        }
        if next.contains("/interaction/") {
            next = format!("{next}?login={sub}");
        }
        let page = browser.get(&next);
        assert!(
            page.status == 302 || page.status == 303,
            "{next}: {} {}",
            page.status,
            page.body
        );
        next = page.location.expect("a redirect");
    }
    panic!("the provider never sent the browser back");
}

/// `text` percent-encoded for a query string.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            b => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn people_sign_in_at_their_companys_provider_with_the_roles_it_gives_read_again_each_time() {
    let Some((app, mut idp)) = setup(&[]) else {
        return;
    };
    let base = app.api.base_url.clone();
    // the client secret is stored encrypted
    let stored: i64 = app.db.scalar(&format!(
        "SELECT count(*) AS v FROM empresas_oidc WHERE client_secret_cifrado <> '' \
         AND position('{CLIENT_SECRET}' in client_secret_cifrado) = 0"
    ));
    assert_eq!(stored, 1);

    // a DPO (by the company's CNPJ): the auditor's pages, named in the access log
    let mut dpo = Browser::default();
    let (back, callback) = sign_in(&mut dpo, &app, CNPJ_A, "dpo-1");
    assert_eq!(back.status, 303, "{}", back.body);
    assert_eq!(back.location.as_deref(), Some(&*format!("{base}/console")));
    let home = dpo.get(&format!("{base}/console"));
    assert_eq!(home.status, 200, "{}", home.body);
    assert!(home.body.contains("dpo@empresa-a.example"), "{}", home.body);
    assert!(home.body.contains("Empresa A"), "{}", home.body);
    let accesses = dpo.get(&format!("{base}/console/acessos"));
    assert_eq!(accesses.status, 200, "{}", accesses.body);
    let named: i64 = app.db.scalar(
        "SELECT count(*) AS v FROM acessos_dados_pessoais WHERE rota = '/console/acessos' \
         AND pessoa_sub = 'dpo-1' AND pessoa_email = 'dpo@empresa-a.example'",
    );
    assert_eq!(named, 1, "the access log names the person");
    let session_named: i64 = app.db.scalar(
        "SELECT count(*) AS v FROM acessos_dados_pessoais a JOIN console_sessoes s \
         ON s.empresa_id = a.empresa_id AND s.sessao_id = a.api_key_id \
         WHERE a.pessoa_sub = 'dpo-1'",
    );
    assert_eq!(
        session_named, 1,
        "and the session where a key's id would be"
    );
    // and so does the API's record of reads
    let auditor = crate::scopes::key_with_scopes(&app, &app.company_a, "auditor");
    let reads = auditor.get("/api/auditoria/acessos").expect(200);
    let item = reads.data()["itens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["rota"] == "/console/acessos")
        .cloned()
        .expect("the console read in the API's record");
    assert_eq!(item["pessoaSub"], "dpo-1");
    assert_eq!(item["pessoaEmail"], "dpo@empresa-a.example");
    assert_eq!(dpo.get(&format!("{base}/console/titulares")).status, 200);

    // the same return used twice: refused (the state is good once)
    let again = dpo.get(&callback);
    assert_eq!(again.status, 400, "{}", again.body);

    // a reader: signs in, cannot replay a delivery (nor see the webhooks)
    let mut reader = Browser::default();
    let (back, _) = sign_in(&mut reader, &app, &app.company_a, "ler-1");
    assert_eq!(back.status, 303, "{}", back.body);
    let home = reader.get(&format!("{base}/console"));
    assert_eq!(home.status, 200, "{}", home.body);
    let csrf = home.csrf();
    let replay = reader.post(
        &format!(
            "{base}/console/webhooks/{}/entregas/{}/reenviar",
            uuid::Uuid::new_v4(),
            uuid::Uuid::new_v4()
        ),
        &format!("csrf={csrf}"),
    );
    assert_eq!(replay.status, 403, "{}", replay.body);
    assert_eq!(reader.get(&format!("{base}/console/webhooks")).status, 403);
    assert_eq!(reader.get(&format!("{base}/console/acessos")).status, 403);

    // an operator: the webhooks, not the auditor's pages
    let mut operator = Browser::default();
    let (back, _) = sign_in(&mut operator, &app, &app.company_a, "op-1");
    assert_eq!(back.status, 303, "{}", back.body);
    assert_eq!(
        operator.get(&format!("{base}/console/webhooks")).status,
        200
    );
    assert_eq!(operator.get(&format!("{base}/console/acessos")).status, 403);

    // no role of the console: refused, no session
    let sessions_before: i64 = app.db.scalar("SELECT count(*) AS v FROM console_sessoes");
    let mut other = Browser::default();
    let (refused, _) = sign_in(&mut other, &app, &app.company_a, "sem-papel");
    assert_eq!(refused.status, 403, "{}", refused.body);

    // the DPO's role removed at the provider: the next sign-in is refused
    idp.set_roles("dpo-1", &[]);
    let mut later = Browser::default();
    let (refused, _) = sign_in(&mut later, &app, &app.company_a, "dpo-1");
    assert_eq!(refused.status, 403, "{}", refused.body);
    let sessions_after: i64 = app.db.scalar("SELECT count(*) AS v FROM console_sessoes");
    assert_eq!(sessions_after, sessions_before, "no session opened");

    // the CLI refuses an issuer that is not https (but on a loopback address) and an unknown
    // company, and changes nothing
    for (empresa, issuer) in [
        (app.company_b.as_str(), "http://idp.example"),
        ("00000000-0000-4000-8000-000000000000", idp.issuer.as_str()),
    ] {
        let out = testkit::processes::cli(
            &app.db,
            &app.sim,
            &[
                "company",
                "oidc",
                "--empresa",
                empresa,
                "--issuer",
                issuer,
                "--client-id",
                CLIENT_ID,
                "--client-secret",
                CLIENT_SECRET,
            ],
        );
        assert!(!out.status.success(), "{empresa} {issuer}");
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains(CLIENT_SECRET),
            "the secret is never printed"
        );
    }
    let providers: i64 = app.db.scalar("SELECT count(*) AS v FROM empresas_oidc");
    assert_eq!(providers, 1);

    // a company without a provider: API keys only
    let mut b = Browser::default();
    let none = b.get(&format!(
        "{base}/console/entrar/oidc?empresa={}",
        app.company_b
    ));
    assert_eq!(none.status, 404, "{}", none.body);
}

#[test]
fn a_session_opened_at_the_provider_ends_at_its_absolute_end_however_used() {
    let Some((app, _idp)) = setup(&[
        ("APP__CONSOLE__SESSION_MAX_SECONDS", "3"),
        ("APP__CONSOLE__SESSION_SECONDS", "60"),
    ]) else {
        return;
    };
    let base = app.api.base_url.clone();
    let mut dpo = Browser::default();
    let (back, _) = sign_in(&mut dpo, &app, &app.company_a, "dpo-1");
    assert_eq!(back.status, 303, "{}", back.body);
    assert_eq!(dpo.get(&format!("{base}/console/titulares")).status, 200);
    // used every second, it still ends 3 s after it was opened
    let mut ended = false;
    for _ in 0..8 {
        std::thread::sleep(Duration::from_secs(1));
        let page = dpo.get(&format!("{base}/console/titulares"));
        if page.status == 303 {
            assert_eq!(page.location.as_deref(), Some(&*format!("{base}/console")));
            ended = true;
            break;
        }
        assert_eq!(page.status, 200);
    }
    assert!(ended, "the session outlived its absolute end");
}

/// Each role signs in through the provider in a real browser (Chromium, Playwright:
/// tests/browser/console_oidc_ui.py): the sign-in page's form, the console's link to the
/// provider (the CSP's `form-action 'self'` is never asked to allow the provider: a form's answer
/// is a page with a link, not a redirect to another origin), the provider, the home page; then
/// the role's pages, one it may not open, sign-out; screenshots at 1280 and 320 px and axe-core.
/// Skipped only when Chromium or the provider is missing outside CI.
#[test]
fn each_role_signs_in_through_the_provider_in_a_real_browser() {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !std::path::Path::new(&chromium).exists() {
        let in_ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        assert!(!in_ci, "{chromium} is missing in CI: .ci/run installs it");
        eprintln!(
            "SKIPPED each_role_signs_in_through_the_provider_in_a_real_browser: no {chromium}"
        );
        return;
    }
    let Some((app, _idp)) = setup(&[]) else {
        return;
    };
    let cnpj = app
        .db
        .text(&format!(
            "SELECT cnpj AS v FROM empresas WHERE id = '{}'",
            app.company_a
        ))
        .expect("company A's CNPJ");
    let out = std::process::Command::new("bash")
        .arg(testkit::processes::repo_root().join("tests/browser/run.sh"))
        .args([
            app.api.base_url.as_str(),
            cnpj.as_str(),
            "dpo-1",
            "op-1",
            "ler-1",
        ])
        .env("BROWSER_SCRIPT", "console_oidc_ui.py")
        .env("CHROMIUM", &chromium)
        .env("CONSOLE_UI_ARTIFACTS", testkit::processes::log_dir())
        .output()
        .expect("run tests/browser/run.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}");
    assert!(
        out.status.success() && stdout.contains("CONSOLE_OIDC_UI_OK"),
        "the browser walk through the provider failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    for role in ["dpo", "operador", "leitura"] {
        assert!(
            stdout.contains(&format!("{role}: signed in through the provider")),
            "{stdout}"
        );
    }
}
