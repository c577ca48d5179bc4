use pgcc_sim::{load_seed, spawn_in_background, Seed, SpawnedSim};
use serde_json::{json, Value};

pub const CNPJ: &str = "11222333000181";
pub const VINCULO_1: &str = "6f1c2a4e-8b3d-4c5a-9e7f-1a2b3c4d5e01";
pub const VINCULO_2: &str = "6f1c2a4e-8b3d-4c5a-9e7f-1a2b3c4d5e02";

pub fn demo_seed() -> Seed {
    load_seed(concat!(env!("CARGO_MANIFEST_DIR"), "/seeds/demo.json")).expect("demo seed")
}

pub fn demo_sim() -> SpawnedSim {
    spawn_in_background(demo_seed())
}

/// A plain HTTP client that returns every status instead of failing on 4xx/5xx.
pub struct Client {
    agent: ureq::Agent,
    base: String,
    token: Option<String>,
}

impl Client {
    pub fn new(sim: &SpawnedSim) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .build()
            .into();
        Self {
            agent,
            base: sim.base_url.clone(),
            token: None,
        }
    }

    pub fn with_token(mut self, token: &str) -> Self {
        self.token = Some(token.to_owned());
        self
    }

    pub fn get(&self, path: &str) -> (u16, Value) {
        let mut req = self.agent.get(format!("{}{path}", self.base));
        if let Some(t) = &self.token {
            req = req.header("Authorization", format!("Bearer {t}"));
        }
        read(req.call())
    }

    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let mut req = self.agent.post(format!("{}{path}", self.base));
        if let Some(t) = &self.token {
            req = req.header("Authorization", format!("Bearer {t}"));
        }
        read(req.send_json(body))
    }

    pub fn post_raw(&self, path: &str, body: &str) -> (u16, Value) {
        let req = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("Content-Type", "application/json");
        read(req.send(body))
    }

    pub fn post_empty(&self, path: &str) -> (u16, Value) {
        read(self.agent.post(format!("{}{path}", self.base)).send_empty())
    }

    pub fn put(&self, path: &str, body: &Value) -> (u16, Value) {
        read(
            self.agent
                .put(format!("{}{path}", self.base))
                .send_json(body),
        )
    }

    pub fn delete(&self, path: &str) -> (u16, Value) {
        read(self.agent.delete(format!("{}{path}", self.base)).call())
    }

    /// Creates a request on the contract route; asserts nothing.
    pub fn criar(&self, body: &Value) -> (u16, Value) {
        self.post("/pgcc/v1/solicitacoes", body)
    }
}

fn read(result: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> (u16, Value) {
    let mut response = result.expect("HTTP call to the simulator");
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().expect("body");
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).expect("JSON body")
    };
    (status, body)
}

/// A valid creation body for the demo company.
pub fn nova(referencia: &str, template_id: &str, status: &str) -> Value {
    let ativo = status == "ativo";
    json!({
        "referenciaExterna": referencia,
        "cnpjEmpresa": CNPJ,
        "vinculoId": null,
        "templateId": template_id,
        "cpfTitular": "52998224725",
        "tipoTitular": "PessoaFisica",
        "modalidadeAcesso": "Direto",
        "cnpjAnuente": null,
        "dataExpiracaoConsentimento": "2030-01-01T00:00:00Z",
        "status": status,
        "dataTitularRespondeuConsentimento": if ativo { json!("2025-01-01T10:00:00Z") } else { Value::Null },
        "provaColeta": if ativo { json!("assinatura-digital") } else { Value::Null },
    })
}

pub fn new_ref() -> String {
    uuid::Uuid::new_v4().to_string()
}
