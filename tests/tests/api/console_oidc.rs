//! Signing in to `/console` at the company's OpenID Provider (issue 38, part 1; docs/console.md,
//! "Signing in with the company's identity provider"), against a real one: npm's `oidc-provider`
//! started by the test (tests/oidc/provider.mjs). The flow is driven over HTTP as a browser
//! without JavaScript would: cookies kept per host, every redirect followed by hand. The refusals:
//! a user whose role was removed, a `state` used twice, and the id_token's four checks end to end
//! (a forged token, an expired one, another sign-in's nonce, another client's audience), each made
//! from the real provider's answer by a relay in front of it (`testkit::HttpRelay`). Signing out
//! ends the provider's session too (RP-initiated logout).

use std::collections::BTreeMap;
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use testkit::{HttpRelay, OidcProvider};

use crate::helpers::*;

const CLIENT_ID: &str = "consent-console";
const CLIENT_SECRET: &str = "segredo-do-cliente-oidc-de-teste-0123456789";
/// Another application of the company at the same provider: its id_tokens are not the console's.
const OTHER_CLIENT: &str = "outro-aplicativo";
const OTHER_SECRET: &str = "segredo-do-outro-aplicativo-0123456789abcdef";
/// The other application's redirect URI (nothing listens there: the test reads the code from it).
const OTHER_REDIRECT: &str = "http://127.0.0.1:9/outro/retorno";
/// What a person whose id_token was refused is told.
const FAILED: &str = "A entrada pelo provedor de identidade falhou";

/// A browser without JavaScript: keeps each host's cookies, follows no redirect.
#[derive(Default)]
struct Browser {
    cookies: BTreeMap<String, BTreeMap<String, String>>,
}

struct Page {
    status: u16,
    location: Option<String>,
    /// The `Refresh` header (where the page sends the browser on at once).
    refresh: Option<String>,
    /// The names of the cookies the answer set (or deleted).
    set_cookies: Vec<String>,
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
        let mut set_cookies = Vec::new();
        for value in res.headers().get_all("set-cookie") {
            let value = value.to_str().unwrap_or_default();
            let pair = value.split(';').next().unwrap_or_default();
            if let Some((n, v)) = pair.split_once('=') {
                set_cookies.push(n.trim().to_owned());
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
        let refresh = res
            .headers()
            .get("refresh")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        Page {
            status: res.status().as_u16(),
            location,
            refresh,
            set_cookies,
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
    let idp = start_provider(&app, json!({}))?;
    configure(&app, &idp);
    Some((app, idp))
}

/// As [`setup`], the provider reached through a relay the test controls (its issuer is the
/// relay's URL), with a second client registered: another application of the company
/// ([`OTHER_CLIENT`], whose redirect URI nothing listens on).
fn setup_through_relay() -> Option<(TestApp, OidcProvider, HttpRelay)> {
    let app = TestApp::spawn();
    let relay = HttpRelay::start();
    let idp = start_provider(
        &app,
        json!({
            "issuer": relay.url(),
            "clients": [{
                "client_id": OTHER_CLIENT,
                "client_secret": OTHER_SECRET,
                "redirect_uris": [OTHER_REDIRECT],
            }],
        }),
    )?;
    relay.forward_to(&idp.address);
    configure(&app, &idp);
    Some((app, idp, relay))
}

/// The provider, its console client registered with the API's redirect URI and, as the
/// sign-out's `post_logout_redirect_uri`, the console's sign-in page; `more`: see
/// `OidcProvider::start_with`.
fn start_provider(app: &TestApp, mut more: Value) -> Option<OidcProvider> {
    more["post_logout_redirect_uris"] = json!([format!("{}/console", app.api.base_url)]);
    OidcProvider::start_with(
        CLIENT_ID,
        CLIENT_SECRET,
        &format!("{}/console/oidc/retorno", app.api.base_url),
        json!({
            "dpo-1": {"email": "dpo@empresa-a.example", "roles": ["dpo"]},
            "op-1": {"email": "op@empresa-a.example", "roles": ["operador"]},
            "ler-1": {"email": "ler@empresa-a.example", "roles": ["leitura"]},
            "sem-papel": {"email": "x@empresa-a.example", "roles": ["outro-sistema"]},
        }),
        more,
    )
}

/// Company A's provider set through the CLI.
fn configure(app: &TestApp, idp: &OidcProvider) {
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
}

/// Signs `sub` in at the provider through company `empresa`'s sign-in: the console's start,
/// every redirect at the provider (its login interaction answered for `sub`), until the provider
/// sends the browser back; the console's answer to that return. The provider's cookies are
/// this sign-in's: a fresh session there each time.
fn sign_in(browser: &mut Browser, app: &TestApp, empresa: &str, sub: &str) -> (Page, String) {
    let api_host = host_of(&app.api.base_url);
    browser.cookies.retain(|host, _| *host == api_host);
    sign_in_again(browser, app, empresa, sub)
}

/// As [`sign_in`], keeping the browser's session at the provider (if any).
fn sign_in_again(browser: &mut Browser, app: &TestApp, empresa: &str, sub: &str) -> (Page, String) {
    let next = start_sign_in(browser, app, empresa);
    let (back, _) = walk(browser, next, sub, &app.api.base_url);
    let page = browser.get(&back);
    (page, back)
}

/// The console's start of a sign-in for company `empresa`: the provider's authorization URL.
fn start_sign_in(browser: &mut Browser, app: &TestApp, empresa: &str) -> String {
    let start = browser.get(&format!(
        "{}/console/entrar/oidc?empresa={}",
        app.api.base_url,
        encode(empresa)
    ));
    assert_eq!(start.status, 303, "{}", start.body);
    start.location.expect("to the provider")
}

/// Follows the provider's redirects from `next` (its login interaction answered for `sub`) until
/// one leads to a URL starting with `until` (not fetched): that URL, and whether the provider
/// asked for the person's credentials on the way.
fn walk(browser: &mut Browser, mut next: String, sub: &str, until: &str) -> (String, bool) {
    let mut asked = false;
    for _ in 0..10 {
        if next.starts_with(until) {
            return (next, asked);
        }
        if next.contains("/interaction/") {
            asked = true;
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
    panic!("the provider never sent the browser to {until}");
}

/// The value of query parameter `name` of `url`.
fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    form_urlencoded::parse(query.as_bytes())
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.into_owned())
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

/// The claims of `token` (its payload, unverified).
fn claims(token: &str) -> Value {
    let payload = token.split('.').nth(1).expect("a JWT");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).expect("base64url")).expect("JSON")
}

/// `token` with its payload changed by `change`, its header and the provider's signature kept.
fn with_payload(token: &str, change: impl FnOnce(&mut Value)) -> String {
    let parts: Vec<&str> = token.split('.').collect();
    let mut payload = claims(token);
    change(&mut payload);
    format!(
        "{}.{}.{}",
        parts[0],
        URL_SAFE_NO_PAD.encode(payload.to_string()),
        parts[2]
    )
}

/// An id_token the provider issues to the other application for `sub`, carrying `nonce`: that
/// application's own authorization code flow (with PKCE) at the provider, its code exchanged
/// with its secret.
fn other_clients_token(
    browser: &mut Browser,
    idp: &OidcProvider,
    sub: &str,
    nonce: &str,
) -> String {
    let verifier = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let authorize = format!(
        "{}/auth?{}",
        idp.issuer,
        form_urlencoded::Serializer::new(String::new())
            .append_pair("client_id", OTHER_CLIENT)
            .append_pair("response_type", "code")
            .append_pair("redirect_uri", OTHER_REDIRECT)
            .append_pair("scope", "openid email roles")
            .append_pair("state", "outro-aplicativo")
            .append_pair("nonce", nonce)
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256")
            .finish()
    );
    let (back, _) = walk(browser, authorize, sub, OTHER_REDIRECT);
    let code = query_param(&back, "code").unwrap_or_else(|| panic!("no code: {back}"));
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let basic =
        base64::engine::general_purpose::STANDARD.encode(format!("{OTHER_CLIENT}:{OTHER_SECRET}"));
    let form = form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "authorization_code")
        .append_pair("code", &code)
        .append_pair("redirect_uri", OTHER_REDIRECT)
        .append_pair("code_verifier", &verifier)
        .finish();
    let mut res = agent
        .post(&format!("{}/token", idp.issuer))
        .header("Authorization", &format!("Basic {basic}"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .send(form.as_bytes())
        .expect("the other application's token request");
    let text = res.body_mut().read_to_string().unwrap_or_default();
    assert_eq!(res.status().as_u16(), 200, "{text}");
    let answer: Value = serde_json::from_str(&text).expect("the token endpoint's JSON");
    answer["id_token"].as_str().expect("an id_token").to_owned()
}

/// What stays the same when a sign-in is refused: the sessions and the access log's rows.
fn unchanged(app: &TestApp) -> (i64, i64) {
    (
        app.db.scalar("SELECT count(*) AS v FROM console_sessoes"),
        app.db
            .scalar("SELECT count(*) AS v FROM acessos_dados_pessoais"),
    )
}

/// The sign-in's answer `page` is the refusal page (401, the failure said, no cookie), no session
/// was opened, nothing read was recorded, and the API's log says why (`reason`).
fn assert_refused(
    app: &TestApp,
    browser: &Browser,
    page: &Page,
    before: (i64, i64),
    case: &str,
    reason: &str,
) {
    assert_eq!(page.status, 401, "{case}: {}", page.body);
    assert!(page.body.contains(FAILED), "{case}: {}", page.body);
    assert!(
        !page.set_cookies.iter().any(|c| c == "console_sessao"),
        "{case}: a session cookie was set"
    );
    let api_host = host_of(&app.api.base_url);
    assert!(
        browser
            .cookies
            .get(&api_host)
            .is_none_or(|jar| !jar.contains_key("console_sessao")),
        "{case}: the browser holds a session cookie"
    );
    assert_eq!(
        unchanged(app),
        before,
        "{case}: a session or a read recorded"
    );
    let log = std::fs::read_to_string(&app.api.log).unwrap_or_default();
    assert!(
        log.contains(reason),
        "{case}: the API's log does not say {reason:?}"
    );
}

/// The id_token's four checks end to end, against the real provider's answers, altered by the
/// relay in front of it: each refusal is a 401 page, no session cookie, no session, nothing in
/// the access log, and the log says which check failed.
#[test]
fn forged_expired_or_misdirected_id_tokens_from_the_real_provider_are_refused() {
    let Some((app, mut idp, relay)) = setup_through_relay() else {
        return;
    };
    let base = app.api.base_url.clone();
    // through the relay, untouched: a DPO signs in
    let mut dpo = Browser::default();
    let (back, _) = sign_in(&mut dpo, &app, &app.company_a, "dpo-1");
    assert_eq!(back.status, 303, "{}", back.body);
    assert_eq!(dpo.get(&format!("{base}/console/acessos")).status, 200);
    let earlier = relay
        .id_tokens()
        .last()
        .cloned()
        .expect("the token endpoint's id_token");
    assert_eq!(claims(&earlier)["aud"], CLIENT_ID);
    let before = unchanged(&app);

    // forged: a reader's token with the roles changed to the DPO's and the operator's, the
    // provider's signature kept
    relay.alter_next_id_token(|token| {
        with_payload(token, |claims| claims["roles"] = json!(["dpo", "operador"]))
    });
    let mut forger = Browser::default();
    let (page, _) = sign_in(&mut forger, &app, &app.company_a, "ler-1");
    assert_eq!(relay.altered(), 1);
    assert_refused(&app, &forger, &page, before, "forged", "InvalidSignature");

    // expired: the provider issues it expired (two minutes before, past the 60 s of leeway)
    idp.set_id_token_ttl(-120);
    let mut late = Browser::default();
    let (page, _) = sign_in(&mut late, &app, &app.company_a, "dpo-1");
    let issued = relay.id_tokens().last().cloned().unwrap();
    let exp = claims(&issued)["exp"].as_i64().unwrap();
    assert!(
        exp < chrono::Utc::now().timestamp() - 60,
        "the provider's token is expired"
    );
    assert_refused(&app, &late, &page, before, "expired", "ExpiredSignature");
    idp.set_id_token_ttl(3600);

    // another sign-in's nonce: the DPO's earlier token, real and unexpired, replayed
    let replayed = earlier.clone();
    relay.alter_next_id_token(move |_| replayed);
    let mut replayer = Browser::default();
    let (page, _) = sign_in(&mut replayer, &app, &app.company_a, "dpo-1");
    assert_eq!(relay.altered(), 2);
    assert_refused(
        &app,
        &replayer,
        &page,
        before,
        "another nonce",
        "nonce is not the one sent",
    );

    // another audience: a token the provider issued to the other application, for this very
    // sign-in's nonce
    let mut misled = Browser::default();
    let to_provider = start_sign_in(&mut misled, &app, &app.company_a);
    let nonce = query_param(&to_provider, "nonce").expect("the sign-in's nonce");
    let theirs = other_clients_token(&mut misled, &idp, "dpo-1", &nonce);
    assert_eq!(claims(&theirs)["aud"], OTHER_CLIENT);
    assert_eq!(claims(&theirs)["nonce"], nonce.as_str());
    relay.alter_next_id_token(move |_| theirs);
    let (back, _) = walk(&mut misled, to_provider, "dpo-1", &base);
    let page = misled.get(&back);
    assert_eq!(relay.altered(), 3);
    assert_refused(
        &app,
        &misled,
        &page,
        before,
        "another audience",
        "InvalidAudience",
    );

    // the relay untouched again: the same person signs in
    let mut again = Browser::default();
    let (back, _) = sign_in(&mut again, &app, &app.company_a, "dpo-1");
    assert_eq!(back.status, 303, "{}", back.body);
}

/// "Sair" on a session opened at the provider ends it there too (OpenID Connect RP-Initiated
/// Logout): the console's session ends, the answer sends the browser to the provider's
/// `end_session_endpoint` with the sign-in's id_token as `id_token_hint`, the provider asks to
/// confirm and sends the browser back to the sign-in page, and the next sign-in asks for the
/// person's credentials again (before, the provider's session signed the person in at once).
#[test]
fn signing_out_ends_the_session_at_the_provider_too() {
    let Some((app, idp)) = setup(&[]) else {
        return;
    };
    let base = app.api.base_url.clone();
    let mut dpo = Browser::default();
    let (back, _) = sign_in(&mut dpo, &app, &app.company_a, "dpo-1");
    assert_eq!(back.status, 303, "{}", back.body);
    // the id_token is kept with the session, encrypted, on the server only
    let kept: i64 = app.db.scalar(
        "SELECT count(*) AS v FROM console_sessoes WHERE id_token_cifrado LIKE 'v1:%' \
         AND position('eyJ' in id_token_cifrado) = 0",
    );
    assert_eq!(kept, 1);
    assert!(
        dpo.cookies
            .values()
            .flat_map(|jar| jar.values())
            .all(|v| !v.starts_with("eyJ")),
        "no token in a cookie"
    );
    // while the provider's session lasts, a new sign-in does not ask for credentials
    let next = start_sign_in(&mut dpo, &app, &app.company_a);
    let (back, asked) = walk(&mut dpo, next, "dpo-1", &base);
    assert!(!asked, "the provider's session signs the person in at once");
    assert_eq!(dpo.get(&back).status, 303);

    let home = dpo.get(&format!("{base}/console"));
    assert_eq!(home.status, 200, "{}", home.body);
    let out = dpo.post(
        &format!("{base}/console/sair"),
        &format!("csrf={}", home.csrf()),
    );
    assert_eq!(out.status, 200, "{}", out.body);
    assert!(
        out.set_cookies.iter().any(|c| c == "console_sessao"),
        "the session cookie deleted"
    );
    assert!(
        out.body.contains("Sair também do provedor de identidade"),
        "{}",
        out.body
    );
    let end = out
        .refresh
        .as_deref()
        .and_then(|r| r.split_once("url="))
        .map(|(_, url)| url.to_owned())
        .expect("a Refresh header to the provider");
    assert!(
        end.starts_with(&format!("{}/session/end?", idp.issuer)),
        "{end}"
    );
    assert!(
        out.body.contains("/session/end?"),
        "and the link: {}",
        out.body
    );
    assert_eq!(
        query_param(&end, "post_logout_redirect_uri"),
        Some(format!("{base}/console"))
    );
    assert_eq!(query_param(&end, "client_id").as_deref(), Some(CLIENT_ID));
    let state = query_param(&end, "state").expect("a state");
    let hint = query_param(&end, "id_token_hint").expect("an id_token_hint");
    assert_eq!(claims(&hint)["sub"], "dpo-1");
    assert_eq!(claims(&hint)["aud"], CLIENT_ID);
    // the console's session is over, on this browser and in the store
    assert_eq!(dpo.get(&format!("{base}/console/acessos")).status, 303);
    let left: i64 = app
        .db
        .scalar("SELECT count(*) AS v FROM console_sessoes WHERE id_token_cifrado IS NOT NULL");
    assert_eq!(left, 1, "only the other sign-in's session is left");

    // the provider asks to confirm, then sends the browser back to the console's sign-in page
    let confirm = dpo.get(&end);
    assert_eq!(confirm.status, 200, "{}", confirm.body);
    let field = |name: &str| {
        let marker = format!("name=\"{name}\" value=\"");
        let at = confirm
            .body
            .find(&marker)
            .unwrap_or_else(|| panic!("{}", confirm.body));
        let rest = &confirm.body[at + marker.len()..];
        rest[..rest.find('"').unwrap()].to_owned()
    };
    let xsrf = field("xsrf");
    let action = {
        let at = confirm
            .body
            .find("action=\"")
            .expect("the confirmation form")
            + 8;
        let rest = &confirm.body[at..];
        rest[..rest.find('"').unwrap()].to_owned()
    };
    let action = if action.starts_with("http") {
        action
    } else {
        format!("{}{action}", idp.issuer)
    };
    let done = dpo.post(&action, &format!("xsrf={xsrf}&logout=yes"));
    assert!(
        done.status == 302 || done.status == 303,
        "{} {}",
        done.status,
        done.body
    );
    let landing = done.location.expect("back to the console");
    assert!(
        landing.starts_with(&format!("{base}/console?")),
        "{landing}"
    );
    assert_eq!(query_param(&landing, "state"), Some(state));
    let sign_in_page = dpo.get(&landing);
    assert_eq!(sign_in_page.status, 200);
    assert!(
        sign_in_page.body.contains("Entrar"),
        "{}",
        sign_in_page.body
    );

    // the provider's session ended: the next sign-in asks for the credentials again
    let next = start_sign_in(&mut dpo, &app, &app.company_a);
    let (back, asked) = walk(&mut dpo, next, "dpo-1", &base);
    assert!(asked, "the provider asks again");
    assert_eq!(dpo.get(&back).status, 303);
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
