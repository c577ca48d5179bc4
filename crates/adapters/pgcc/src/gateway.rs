//! [`PgccHttpGateway`]: the calls the core makes (list use cases, create a request, read
//! statuses in batches, revoke).

use std::borrow::Cow;

use chrono::{DateTime, SecondsFormat, Utc};
use domain::{Cnpj, ConsentStatus, CreationVariant, PgccUseCase};
use ports::{PgccConsentCreated, PgccConsentStatus, PgccError, PgccGateway, PgccNewConsent};
use serde::de::DeserializeOwned;
use ureq::http::Response;
use ureq::unversioned::transport::DefaultConnector;
use ureq::{Agent, Body, RequestBuilder};
use uuid::Uuid;

use crate::http_errors::{classify_body, classify_status, classify_transport, RetryAfter};
use crate::resolver::RememberingResolver;
use crate::settings::PgccSettings;
use crate::wire;

/// The most ids one `POST /pgcc/v1/solicitacoes/status` may carry (`docs/pgcc.md`): longer
/// lists are sent in chunks of this size.
pub const MAX_IDS_PER_STATUS_CALL: usize = 500;

/// Idle keep-alive connections kept to the PGCC: more than the blocking threads that call it at
/// once under load.
const IDLE_CONNECTIONS: usize = 128;

/// The PGCC over HTTP. One agent (and its connection pool) for the life of the gateway; cheap
/// to share behind an `Arc`.
pub struct PgccHttpGateway {
    agent: Agent,
    base_url: String,
    /// `Bearer <token>`, ready to send. Secret: never logged, hidden from `Debug`.
    authorization: Option<String>,
    /// The longest `Retry-After` of the PGCC passed on (see [`PgccSettings`]).
    max_retry_after_seconds: u64,
}

impl std::fmt::Debug for PgccHttpGateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgccHttpGateway")
            .field("base_url", &self.base_url)
            .field(
                "authorization",
                &self.authorization.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

impl PgccHttpGateway {
    /// Builds the HTTP agent: connect timeout and whole-call budget of `settings.timeout`, every
    /// status returned to us (we classify them), no redirect followed, no proxy taken from the
    /// environment.
    pub fn new(settings: PgccSettings) -> Self {
        let config = Agent::config_builder()
            .timeout_connect(Some(settings.timeout))
            .timeout_global(Some(settings.timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            // Keep a connection per concurrent caller: ureq's default (3 idle per host) closes
            // most of them under load, and every creation then pays a new TCP connection (and
            // the PGCC an accept) on top of its call.
            .max_idle_connections(IDLE_CONNECTIONS)
            .max_idle_connections_per_host(IDLE_CONNECTIONS)
            .build();
        Self {
            // a thread per call otherwise: see crate::resolver
            agent: Agent::with_parts(
                config,
                DefaultConnector::new(),
                RememberingResolver::default(),
            ),
            base_url: settings.base_url.trim_end_matches('/').to_owned(),
            authorization: settings.token.map(|t| format!("Bearer {t}")),
            max_retry_after_seconds: settings.max_retry_after_seconds,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}/pgcc/v1{path}", self.base_url)
    }

    /// The headers of every call: `Accept`, the token, and (telemetry on) the `traceparent` of
    /// the call's span, so the PGCC's trace can join ours.
    fn authorize<B>(&self, request: RequestBuilder<B>) -> RequestBuilder<B> {
        let mut request = request.header("Accept", "application/json");
        if let Some(traceparent) = telemetry::current_traceparent() {
            request = request.header(telemetry::TRACEPARENT, traceparent);
        }
        match &self.authorization {
            Some(value) => request.header("Authorization", value),
            None => request,
        }
    }
}

impl PgccGateway for PgccHttpGateway {
    fn list_use_cases(&self, company_cnpj: &Cnpj) -> Result<Vec<PgccUseCase>, PgccError> {
        let _span = call_span("list_use_cases").entered();
        let url = self.url(&format!("/empresas/{}/casos-de-uso", company_cnpj.as_str()));
        let result = self.authorize(self.agent.get(&url)).call();
        let body: wire::CasosDeUsoResponse = self.read_answer("list_use_cases", result)?;
        Ok(body
            .vinculos
            .into_iter()
            .flat_map(|vinculo| {
                vinculo
                    .casos_de_uso
                    .into_iter()
                    .map(move |caso| PgccUseCase {
                        other_fields: wire::other_purpose_fields(&caso),
                        link_id: vinculo.id,
                        template_id: caso.template_id,
                        title: caso.titulo,
                    })
            })
            .collect())
    }

    fn create_consent_request(
        &self,
        consent: &PgccNewConsent,
    ) -> Result<PgccConsentCreated, PgccError> {
        let _span = call_span("create_consent_request").entered();
        let body = creation_body(consent);
        let result = self
            .authorize(self.agent.post(self.url("/solicitacoes")))
            .send_json(&body);
        let created: wire::SolicitacaoCriada =
            self.read_answer("create_consent_request", result)?;
        if created.id.trim().is_empty() {
            return Err(PgccError::Unexpected(anyhow::anyhow!(
                "the PGCC created the request but answered an empty id"
            )));
        }
        // debug: the creation's own info line (application) carries both ids; two lines of
        // JSON per creation cost the hot path a formatted line and a write for nothing new
        tracing::debug!(
            referencia_externa = %consent.referencia_externa,
            pgcc_id = %created.id,
            "consent request created on the PGCC"
        );
        Ok(PgccConsentCreated {
            pgcc_id: created.id,
        })
    }

    fn consent_statuses(&self, pgcc_ids: &[String]) -> Result<Vec<PgccConsentStatus>, PgccError> {
        const OPERATION: &str = "consent_statuses";
        let url = self.url("/solicitacoes/status");
        let mut statuses = Vec::new();
        // no id, no chunk: no call
        for ids in pgcc_ids.chunks(MAX_IDS_PER_STATUS_CALL) {
            let _span = call_span(OPERATION).entered();
            let result = self
                .authorize(self.agent.post(&url))
                .send_json(wire::ConsultaStatus { ids });
            let answer: wire::ConsultaStatusResponse = self.read_answer(OPERATION, result)?;
            statuses.reserve(answer.solicitacoes.len());
            for item in answer.solicitacoes {
                // One odd status is that request's business: its neighbours are answered all the
                // same (the poller skips it and backs off). The value itself is not logged: it is
                // whatever the PGCC sent.
                let status = ConsentStatus::parse(&item.status);
                if status.is_none() {
                    tracing::warn!(
                        operation = OPERATION,
                        pgcc_id = %item.id,
                        "PGCC answered an unknown consent status"
                    );
                }
                let motivo = match item.motivo {
                    Some(serde_json::Value::String(motivo)) => Some(wire::without_controls(motivo)),
                    _ => None,
                };
                let company_cnpj = match item.cnpj_empresa {
                    Some(serde_json::Value::String(cnpj)) => Some(wire::without_controls(cnpj)),
                    _ => None,
                };
                statuses.push(PgccConsentStatus {
                    pgcc_id: item.id,
                    status,
                    reason: motivo,
                    next_change_at: None,
                    company_cnpj,
                });
            }
        }
        Ok(statuses)
    }

    fn revoke_consent_request(&self, pgcc_id: &str) -> Result<(), PgccError> {
        let _span = call_span("revoke_consent_request").entered();
        let url = self.url(&format!("/solicitacoes/{}/revogar", path_segment(pgcc_id)));
        let result = self.authorize(self.agent.post(&url)).send_empty();
        // the answer's body (the revoked or withdrawn request) is not needed
        self.check_answer("revoke_consent_request", result)?;
        tracing::info!(
            pgcc_id,
            "consent request revoked (or withdrawn) on the PGCC"
        );
        Ok(())
    }

    fn find_by_external_reference(
        &self,
        company_cnpj: &Cnpj,
        referencia_externa: Uuid,
    ) -> Result<Option<PgccConsentCreated>, PgccError> {
        const OPERATION: &str = "find_by_external_reference";
        let _span = call_span(OPERATION).entered();
        // a CNPJ is 14 letters and digits, a UUID hex and hyphens: nothing to encode
        let url = self.url(&format!(
            "/solicitacoes?cnpjEmpresa={}&referenciaExterna={}",
            company_cnpj.as_str(),
            referencia_externa.hyphenated()
        ));
        let result = self.authorize(self.agent.get(&url)).call();
        let answer: wire::BuscaPorReferenciaResponse = self.read_answer(OPERATION, result)?;
        let mut found = answer.solicitacoes.into_iter();
        let Some(first) = found.next() else {
            return Ok(None);
        };
        if found.next().is_some() || first.referencia_externa != referencia_externa {
            tracing::warn!(
                operation = OPERATION,
                %referencia_externa,
                "PGCC answered another request than the one asked for"
            );
            return Err(PgccError::Unexpected(anyhow::anyhow!(
                "the PGCC answered another request than the one asked for"
            )));
        }
        if first.id.trim().is_empty() {
            return Err(PgccError::Unexpected(anyhow::anyhow!(
                "the PGCC holds the request but answered an empty id"
            )));
        }
        Ok(Some(PgccConsentCreated { pgcc_id: first.id }))
    }
}

/// `raw` as one URL path segment: every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`)
/// percent-encoded, and `.` or `..` wholly encoded, so that an opaque PGCC id can never reach
/// another route.
fn path_segment(raw: &str) -> Cow<'_, str> {
    let dots_only = raw == "." || raw == "..";
    let keep =
        |b: u8| !dots_only && (b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    if raw.bytes().all(keep) {
        return Cow::Borrowed(raw);
    }
    let mut encoded = String::with_capacity(raw.len() * 3);
    for b in raw.bytes() {
        if keep(b) {
            encoded.push(char::from(b));
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    Cow::Owned(encoded)
}

/// The span of one PGCC call (exported with telemetry on; DEBUG, so not in the logs at the usual
/// levels): the operation and the answer's status, never a URL (it may hold a CNPJ or an id)
/// nor a body (personal data).
fn call_span(operation: &'static str) -> tracing::Span {
    tracing::debug_span!(
        "pgcc",
        otel.name = operation,
        otel.kind = "client",
        pgcc.operation = operation,
        http.response.status_code = tracing::field::Empty,
    )
}

/// The wire body of a creation (`docs/pgcc.md`).
pub(crate) fn creation_body(consent: &PgccNewConsent) -> wire::NovaSolicitacao<'_> {
    let request = &consent.request;
    let status = match request.variant {
        CreationVariant::Active => "ativo",
        CreationVariant::Pending => "pendente",
    };
    wire::NovaSolicitacao {
        referencia_externa: consent.referencia_externa,
        cnpj_empresa: consent.company_cnpj.as_str(),
        vinculo_id: consent.link_id,
        template_id: &request.template_id,
        cpf_titular: request.subject_cpf.as_str(),
        tipo_titular: request.subject_type.as_str(),
        modalidade_acesso: request.access_mode.as_str(),
        cnpj_anuente: request.consenting_cnpj.as_ref().map(Cnpj::as_str),
        data_expiracao_consentimento: rfc3339(request.consent_expires_at),
        status,
        data_titular_respondeu_consentimento: request
            .answer
            .as_ref()
            .map(|r| rfc3339(r.subject_answered_at)),
        prova_coleta: request
            .answer
            .as_ref()
            .map(|r| r.proof_of_collection.as_str()),
    }
}

/// `2030-01-01T00:00:00Z`; fractions of a second only when present.
fn rfc3339(instant: DateTime<Utc>) -> String {
    instant.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

impl PgccHttpGateway {
    /// The decoded body of a 2xx answer, or the error the outcome means. Logs the status or the
    /// transport failure, never a body (bodies may carry personal data).
    fn read_answer<T: DeserializeOwned>(
        &self,
        operation: &'static str,
        result: Result<Response<Body>, ureq::Error>,
    ) -> Result<T, PgccError> {
        let mut response = self.check_answer(operation, result)?;
        let status = response.status().as_u16();
        response.body_mut().read_json::<T>().map_err(|e| {
            tracing::warn!(operation, status, cause = %e, "PGCC answer could not be read");
            classify_body(e)
        })
    }

    /// The 2xx answer (body unread), or the error the outcome means (a `Retry-After` bounded by
    /// `max_retry_after_seconds`); logged like [`Self::read_answer`].
    fn check_answer(
        &self,
        operation: &'static str,
        result: Result<Response<Body>, ureq::Error>,
    ) -> Result<Response<Body>, PgccError> {
        let response = result.map_err(|e| {
            tracing::warn!(operation, cause = %e, "PGCC call failed without an answer");
            classify_transport(e)
        })?;
        let status = response.status().as_u16();
        tracing::Span::current().record("http.response.status_code", status);
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|value| value.to_str().ok());
        let retry_after = RetryAfter {
            raw: retry_after,
            now: Utc::now(),
            max_seconds: self.max_retry_after_seconds,
        };
        if let Some(error) = classify_status(status, retry_after) {
            tracing::warn!(operation, status, "PGCC answered an error status");
            return Err(error);
        }
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn instants_are_written_in_rfc3339_utc() {
        let instant = Utc.with_ymd_and_hms(2030, 1, 2, 3, 4, 5).unwrap();
        assert_eq!(rfc3339(instant), "2030-01-02T03:04:05Z");
    }

    #[test]
    fn an_id_is_sent_as_one_path_segment() {
        assert!(matches!(
            path_segment("pgcc-3b9f0c1e_A.b~"),
            Cow::Borrowed("pgcc-3b9f0c1e_A.b~")
        ));
        assert_eq!(path_segment("a/b?c#d e.f"), "a%2Fb%3Fc%23d%20e.f");
        assert_eq!(path_segment(".."), "%2E%2E");
        assert_eq!(path_segment("."), "%2E");
        assert_eq!(path_segment("ç"), "%C3%A7");
        assert_eq!(path_segment(""), "");
    }

    #[test]
    fn debug_never_shows_the_token() {
        let gateway = PgccHttpGateway::new(PgccSettings {
            base_url: "http://pgcc/".into(),
            token: Some("super-secret".into()),
            timeout: std::time::Duration::from_secs(1),
            max_retry_after_seconds: crate::DEFAULT_MAX_RETRY_AFTER_SECONDS,
        });
        let shown = format!("{gateway:?}");
        assert!(!shown.contains("super-secret"), "{shown}");
        assert!(shown.contains("\"http://pgcc\""), "{shown}");
    }
}
