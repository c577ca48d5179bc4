//! The checkpoint job's HTTP client of a witness (`ports::WitnessGateway`): `POST
//! <url>/add-checkpoint`, bounded in time and in the bytes read back.

use std::time::Duration;

use anyhow::Context;
use ports::{WitnessAnswer, WitnessGateway};

/// A witness answers within this, or counts as not answering.
const TIMEOUT: Duration = Duration::from_secs(10);
/// The most bytes read from a witness's answer.
const MAX_ANSWER_BYTES: u64 = 16 * 1024;

pub struct HttpWitness {
    url: String,
    agent: ureq::Agent,
}

impl HttpWitness {
    pub fn new(url: &str) -> Self {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(TIMEOUT))
            .http_status_as_error(false)
            .max_redirects(0)
            .build();
        HttpWitness {
            url: format!("{}/add-checkpoint", url.trim_end_matches('/')),
            agent: ureq::Agent::new_with_config(config),
        }
    }
}

impl WitnessGateway for HttpWitness {
    fn add_checkpoint(&self, body: &str) -> anyhow::Result<WitnessAnswer> {
        let mut response = self
            .agent
            .post(&self.url)
            .header("Content-Type", "text/plain; charset=utf-8")
            .send(body)
            .with_context(|| format!("POST {}", self.url))?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_string()
            .with_context(|| format!("reading the answer of {}", self.url))?;
        Ok(match status {
            200 => WitnessAnswer::Cosigned(text),
            409 => WitnessAnswer::Conflict(
                text.trim()
                    .parse()
                    .with_context(|| format!("{} answered 409 without a size", self.url))?,
            ),
            other => WitnessAnswer::Refused(other),
        })
    }
}
