use serde_json::{json, Value};
use testkit::processes::company_with_key;
use testkit::{Api, Client, Sim, TestDb};

pub const CNPJ_A: &str = "11.222.333/0001-81";
pub const CNPJ_B: &str = "12.ABC.345/01DE-35";
pub const VINCULO_A1: &str = "a1a1a1a1-0000-4000-8000-000000000001";
pub const VINCULO_A2: &str = "a2a2a2a2-0000-4000-8000-000000000002";
pub const VINCULO_B1: &str = "b1b1b1b1-0000-4000-8000-000000000003";
/// Valid CPFs (check digits right) used by the tests.
pub const CPF: &str = "529.982.247-25";
pub const CPF_DIGITS: &str = "52998224725";

/// Every CPF-shaped value (11 digits, valid or not) the end-to-end tests send. None may appear in
/// any log, in digits or formatted (`529.982.247-25`): `scripts/test.sh` greps every log of
/// `target/e2e-logs` for them after each run, reading `tests/personal-data-canaries.txt`.
/// `personal_data.rs` checks that the file lists exactly these and that every CPF-shaped
/// literal of `tests/tests/api` is one of them: add a new test CPF here and in the file.
pub const PERSONAL_DATA_CANARIES: &[&str] = &[
    "52998224725", // CPF
    "11144477735", // a second valid subject
    "39053344705", // a third valid subject (personal_data.rs)
    "52998224724", // wrong check digit
    "39053344706", // wrong check digit
    "11111111111", // repeated digits
    "10000000108", // the sandbox's magic CPFs (sandbox.rs, docs/api.md "Sandbox")
    "10000000280",
    "10000000361",
    "10000000442",
    "10000000523",
    "10000000604",
];

/// The forms a CPF can take in text: its digits and the usual mask (`529.982.247-25`).
pub fn cpf_forms(digits: &str) -> [String; 2] {
    assert_eq!(digits.len(), 11, "{digits}");
    [
        digits.to_owned(),
        format!(
            "{}.{}.{}-{}",
            &digits[..3],
            &digits[3..6],
            &digits[6..9],
            &digits[9..]
        ),
    ]
}

/// Panics naming the file and line if `text` (the content of `what`) contains a canary CPF in
/// any form; the CPF itself is not repeated.
pub fn assert_no_canary_cpf(what: &str, text: &str) {
    for canary in PERSONAL_DATA_CANARIES {
        for form in cpf_forms(canary) {
            if let Some((n, _)) = text
                .lines()
                .enumerate()
                .find(|(_, line)| line.contains(&form))
            {
                let shape = if form.contains('.') {
                    "masked"
                } else {
                    "digits"
                };
                panic!("{what}, line {}: contains a test CPF ({shape})", n + 1);
            }
        }
    }
}

pub fn seed() -> Value {
    json!({"empresas": [
        {"cnpj": CNPJ_A, "vinculos": [
            {"id": VINCULO_A1, "casosDeUso": [
                {"templateId": "tpl-a-marketing", "titulo": "Marketing por e-mail"},
                {"templateId": "tpl-a-credito", "titulo": "Análise de crédito"}
            ]},
            {"id": VINCULO_A2, "casosDeUso": [
                {"templateId": "tpl-a-pesquisa", "titulo": "Pesquisa de satisfação"}
            ]}
        ]},
        {"cnpj": CNPJ_B, "vinculos": [
            {"id": VINCULO_B1, "casosDeUso": [
                {"templateId": "tpl-b-seguro", "titulo": "Cotação de seguro"}
            ]}
        ]}
    ]})
}

/// A running API with two companies (A and B), each with a key, against its own database and
/// simulator.
pub struct TestApp {
    pub db: TestDb,
    pub sim: Sim,
    pub api: Api,
    pub company_a: String,
    #[allow(dead_code)] // kept for tests that assert on company B's rows
    pub company_b: String,
    pub a: Client,
    pub b: Client,
    pub anonymous: Client,
    pub sim_admin: Client,
    pub key_a: String,
    pub key_b: String,
}

impl TestApp {
    pub fn spawn() -> TestApp {
        TestApp::spawn_with(&[])
    }

    pub fn spawn_with(env: &[(&str, &str)]) -> TestApp {
        TestApp::spawn_on(TestDb::new(), env)
    }

    /// [`TestApp::spawn_with`] on a database the test made.
    pub fn spawn_on(db: TestDb, env: &[(&str, &str)]) -> TestApp {
        let sim = Sim::start(&seed());
        let (company_a, key_a) = company_with_key(&db, &sim, "Empresa A", CNPJ_A);
        let (company_b, key_b) = company_with_key(&db, &sim, "Empresa B", CNPJ_B);
        let api = Api::start_with(&db, &sim, env);
        let a = Client::new(&api.base_url, Some(&key_a));
        let b = Client::new(&api.base_url, Some(&key_b));
        let anonymous = Client::new(&api.base_url, None);
        let sim_admin = Client::new(&sim.base_url, None);
        TestApp {
            db,
            sim,
            api,
            company_a,
            company_b,
            a,
            b,
            anonymous,
            sim_admin,
            key_a,
            key_b,
        }
    }

    /// Both companies synchronized.
    pub fn synced() -> TestApp {
        let app = TestApp::spawn();
        app.a
            .post_empty("/api/casos-de-uso/sincronizar")
            .expect(200);
        app.b
            .post_empty("/api/casos-de-uso/sincronizar")
            .expect(200);
        app
    }

    /// Kills the API (SIGKILL, mid-whatever), then starts a new one on the same database and
    /// simulator; the clients follow it.
    pub fn restart_api(&mut self, env: &[(&str, &str)]) {
        self.api.kill();
        self.api = Api::start_with(&self.db, &self.sim, env);
        self.a = Client::new(&self.api.base_url, Some(&self.key_a));
        self.b = Client::new(&self.api.base_url, Some(&self.key_b));
        self.anonymous = Client::new(&self.api.base_url, None);
    }

    pub fn fault(&self, fault: Value) {
        let r = self.sim_admin.post_raw(
            "/_sim/faults",
            "application/json",
            fault.to_string().as_bytes(),
        );
        assert!(r.status < 300, "setting a fault failed: {}", r.text);
    }

    /// What the simulator received and created.
    pub fn sim_requests(&self) -> Vec<Value> {
        let r = self.sim_admin.get("/_sim/solicitacoes");
        assert_eq!(r.status, 200, "{}", r.text);
        r.json.as_array().cloned().unwrap_or_default()
    }

    /// Consents stored: confirmed rows (a creation still in progress or cancelled is not one).
    pub fn consent_rows(&self) -> i64 {
        self.db.scalar(
            "SELECT count(*) AS v FROM solicitacoes_consentimento WHERE criacao = 'confirmada'",
        )
    }

    /// Rows of creations in `state` (`em_andamento`, `confirmada` or `cancelada`).
    #[allow(dead_code)] // used by the creation tests only
    pub fn creation_rows(&self, state: &str) -> i64 {
        self.db.scalar(&format!(
            "SELECT count(*) AS v FROM solicitacoes_consentimento WHERE criacao = '{state}'"
        ))
    }
}

/// A valid active-variant body for company A's first template.
pub fn active_body() -> Value {
    json!({
        "casoDeUsoIdTemplate": "tpl-a-marketing",
        "cpfTitular": CPF,
        "modalidadeAcesso": "Direto",
        "tipoTitular": "PessoaFisica",
        "dataExpiracaoConsentimento": "2099-12-31T23:59:59Z",
        "dataTitularRespondeuConsentimento": "2026-01-10T12:00:00Z",
        "provaColeta": "assinatura-digital:abc123"
    })
}

/// A valid pending-variant body for company A's first template.
pub fn pending_body() -> Value {
    json!({
        "casoDeUsoIdTemplate": "tpl-a-marketing",
        "cpfTitular": CPF,
        "modalidadeAcesso": "Direto",
        "tipoTitular": "PessoaFisica",
        "dataExpiracaoConsentimento": "2099-12-31T23:59:59Z"
    })
}

pub const ATIVO: &str = "/api/solicitacao-consentimento/criar/ativo";
pub const PENDENTE: &str = "/api/solicitacao-consentimento/criar/pendente";

/// The `campo` names listed in a 422's `data.erros`.
pub fn error_fields(reply: &testkit::Reply) -> Vec<String> {
    reply.data()["erros"]
        .as_array()
        .unwrap_or_else(|| panic!("no data.erros in {}", reply.text))
        .iter()
        .map(|e| e["campo"].as_str().unwrap().to_owned())
        .collect()
}

/// The events of type `tipo` on the first page of the company's events feed.
/// [`feed_of_type`] once it lists at least `want` events (or after 10 s, for the assertion to
/// show what it lists). The feed lists an event once no transaction still running on the database
/// could precede it: the service's other transactions may hold a committed event back a moment
/// (on a busy Citus cluster, longer), so an event just delivered by webhook may not be listed yet.
pub fn settled_feed_of_type(client: &Client, tipo: &str, want: usize) -> Vec<Value> {
    let mut feed = Vec::new();
    testkit::wait_until(std::time::Duration::from_secs(10), || {
        feed = feed_of_type(client, tipo);
        feed.len() >= want
    });
    feed
}

pub fn feed_of_type(client: &Client, tipo: &str) -> Vec<Value> {
    client.get("/api/eventos").expect(200).data()["itens"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == tipo)
        .cloned()
        .collect()
}

/// The template and id of the company's first synced use case (by template): what rows made with
/// SQL need.
pub fn first_use_case(app: &TestApp, company: &str) -> (String, String) {
    let t = app
        .db
        .text(&format!(
            "SELECT pgcc_provider_template_id || '|' || id::text AS v FROM casos_de_uso \
             WHERE empresa_id = '{company}' ORDER BY pgcc_provider_template_id LIMIT 1"
        ))
        .expect("a synced use case");
    let (template, link) = t.split_once('|').unwrap();
    (template.to_owned(), link.to_owned())
}
