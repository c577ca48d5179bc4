use std::time::Duration;

use chrono::{TimeZone, Utc};
use domain::{
    AccessMode, ActiveAnswer, Cnpj, Cpf, CreationVariant, SubjectType, ValidConsentRequest,
};
use pgcc_adapter::{PgccHttpGateway, PgccSettings};
use pgcc_sim::{Seed, SeedCasoDeUso, SeedEmpresa, SeedVinculo, SpawnedSim};
use ports::PgccNewConsent;
use serde_json::Value;
use uuid::Uuid;

pub const CNPJ: &str = "11222333000181";
pub const CNPJ_ANUENTE: &str = "11444777000161";
pub const CPF: &str = "52998224725";
pub const VINCULO_1: Uuid = Uuid::from_u128(0x6f1c2a4e_8b3d_4c5a_9e7f_1a2b3c4d5e01);
pub const VINCULO_2: Uuid = Uuid::from_u128(0x6f1c2a4e_8b3d_4c5a_9e7f_1a2b3c4d5e02);

/// One company (masked CNPJ in the seed) with two links: two use cases in the first, one in the
/// second.
pub fn seed() -> Seed {
    let caso = |id: &str, titulo: &str| SeedCasoDeUso {
        template_id: id.into(),
        titulo: titulo.into(),
    };
    Seed {
        empresas: vec![SeedEmpresa {
            cnpj: "11.222.333/0001-81".into(),
            vinculos: vec![
                SeedVinculo {
                    id: VINCULO_1,
                    casos_de_uso: vec![
                        caso("tpl-credito", "Análise de crédito"),
                        caso("tpl-conta", "Abertura de conta"),
                    ],
                },
                SeedVinculo {
                    id: VINCULO_2,
                    casos_de_uso: vec![caso("tpl-salario", "Portabilidade de salário")],
                },
            ],
        }],
    }
}

pub fn sim() -> SpawnedSim {
    pgcc_sim::spawn_in_background(seed())
}

pub fn gateway(sim: &SpawnedSim) -> PgccHttpGateway {
    gateway_to(&sim.base_url, None, Duration::from_secs(5))
}

pub fn gateway_to(base_url: &str, token: Option<&str>, timeout: Duration) -> PgccHttpGateway {
    PgccHttpGateway::new(PgccSettings {
        base_url: base_url.to_owned(),
        token: token.map(str::to_owned),
        timeout,
        max_retry_after_seconds: pgcc_adapter::DEFAULT_MAX_RETRY_AFTER_SECONDS,
    })
}

pub fn cnpj() -> Cnpj {
    Cnpj::parse(CNPJ).expect("valid CNPJ")
}

/// A valid request for `template`, active (with the subject's answer) or pending.
pub fn consent(template: &str, variant: CreationVariant) -> PgccNewConsent {
    let resposta = match variant {
        CreationVariant::Active => Some(ActiveAnswer {
            subject_answered_at: Utc.with_ymd_and_hms(2025, 3, 4, 5, 6, 7).unwrap(),
            proof_of_collection: "assinatura-eletronica-123".into(),
        }),
        CreationVariant::Pending => None,
    };
    PgccNewConsent {
        referencia_externa: Uuid::new_v4(),
        company_cnpj: cnpj(),
        link_id: Some(VINCULO_1),
        request: ValidConsentRequest {
            variant,
            template_id: template.into(),
            subject_cpf: Cpf::parse(CPF).expect("valid CPF"),
            access_mode: AccessMode::Direct,
            subject_type: SubjectType::NaturalPerson,
            consent_expires_at: Utc.with_ymd_and_hms(2030, 1, 2, 3, 4, 5).unwrap(),
            answer: resposta,
            consenting_cnpj: None,
        },
    }
}

/// `GET /_sim/solicitacoes`
pub fn received(sim: &SpawnedSim) -> Vec<Value> {
    let agent: ureq::Agent = ureq::Agent::config_builder().proxy(None).build().into();
    agent
        .get(sim.url("/_sim/solicitacoes"))
        .call()
        .expect("admin list")
        .body_mut()
        .read_json()
        .expect("JSON")
}

/// `POST /_sim/faults` with `rule`.
pub fn fault(sim: &SpawnedSim, rule: Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder().proxy(None).build().into();
    let response = agent
        .post(sim.url("/_sim/faults"))
        .send_json(rule)
        .expect("setting a fault");
    assert_eq!(response.status().as_u16(), 204);
}

fn admin_agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .into()
}

/// `POST /_sim/...` without a body (the subject's moves); returns the status.
pub fn admin_post(sim: &SpawnedSim, path: &str) -> u16 {
    admin_agent()
        .post(sim.url(path))
        .send_empty()
        .expect("admin call")
        .status()
        .as_u16()
}

/// `GET /_sim/status-consultas`: how many batch status calls asked about each id.
pub fn status_consultas(sim: &SpawnedSim) -> serde_json::Map<String, Value> {
    admin_agent()
        .get(sim.url("/_sim/status-consultas"))
        .call()
        .expect("admin counts")
        .body_mut()
        .read_json()
        .expect("JSON")
}

/// Creates a request on the simulator through the gateway; returns its PGCC id.
pub fn create(sim: &SpawnedSim, consent: &PgccNewConsent) -> String {
    use ports::PgccGateway;
    gateway(sim)
        .create_consent_request(consent)
        .expect("created")
        .pgcc_id
}

/// A server that answers one call with `200` and `body` (JSON or not), then stops. Returns its
/// base URL and the thread to join.
pub fn one_shot_200(body: &'static str) -> (String, std::thread::JoinHandle<()>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        // read the whole request (headers, then content-length bytes) before answering
        let mut request = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            let n = stream.read(&mut buf).unwrap_or(0);
            if n == 0 {
                break;
            }
            request.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&request).to_ascii_lowercase();
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if request.len() >= end + 4 + length {
                    break;
                }
            }
        }
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
    });
    (base, server)
}
