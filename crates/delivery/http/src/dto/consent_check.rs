//! HashConsulta (the consent check, `routes/consent_check.rs`): its bodies and answers.

use chrono::{DateTime, Utc};
use domain::ConsentRequest;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::enumerations::StatusSolicitacao;
use super::text_rules::{Cpf, Hash, TemplateIdConsulta};

/// Body of `POST /api/hash-consulta`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConsultarConsentimento {
    #[schema(required = true, value_type = Cpf, inline, example = "529.982.247-25")]
    #[serde(rename = "cpfTitular")]
    pub subject_cpf: Option<String>,
    #[schema(required = true, value_type = TemplateIdConsulta, inline, example = "tpl-abertura-conta")]
    #[serde(rename = "casoDeUsoIdTemplate")]
    pub template_id: Option<String>,
}

/// The `{hash}` of `GET /api/hash-consulta/{hash}`, read as text: a hash of no consent of the
/// company is 404 whatever its shape.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct HashNoCaminho {
    /// The consent's hash (64 lower-case hex digits).
    #[param(value_type = Hash, inline)]
    pub hash: String,
}

/// Whether a valid consent exists now; when it does, which one.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResultadoConsulta {
    /// `true` when the consent is `ativo` and unexpired right now.
    #[serde(rename = "valido")]
    pub valid: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<StatusSolicitacao>)]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(rename = "dataExpiracaoConsentimento")]
    pub consent_expires_at: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(rename = "casoDeUsoIdTemplate")]
    pub template_id: Option<String>,
}

/// Body of `POST /api/hash-consulta/lote`: 1 to 500 checks at once.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsultarLote {
    #[schema(min_items = 1, max_items = 500)]
    #[serde(rename = "itens")]
    pub items: Vec<ConsultarConsentimento>,
}

/// One result per item of the batch, in the order sent, each as `POST /api/hash-consulta`
/// answers it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ResultadoLote {
    #[serde(rename = "itens")]
    pub items: Vec<ResultadoConsulta>,
}

impl ResultadoConsulta {
    /// The answer of a check (`check.request` already has its effective status).
    pub fn of_check(check: &application::ConsentCheck) -> Self {
        match &check.request {
            Some(request) if check.valid => ResultadoConsulta::of(request),
            _ => ResultadoConsulta::none(),
        }
    }

    /// The consent a hash names, with `valido` as the check decided it (an integrity incident
    /// makes an `ativo` consent not valid); `none` when nothing was found.
    pub fn of_found(check: &application::ConsentCheck) -> Self {
        match &check.request {
            Some(request) => ResultadoConsulta {
                valid: check.valid,
                ..ResultadoConsulta::of(request)
            },
            None => ResultadoConsulta::none(),
        }
    }

    pub fn none() -> Self {
        ResultadoConsulta {
            valid: false,
            id: None,
            status: None,
            consent_expires_at: None,
            hash: None,
            template_id: None,
        }
    }

    /// `request.status` must already be the effective status.
    pub fn of(request: &ConsentRequest) -> Self {
        ResultadoConsulta {
            valid: request.status == domain::ConsentStatus::Active,
            id: Some(request.id),
            status: Some(request.status.as_str().to_owned()),
            consent_expires_at: Some(request.content.consent_expires_at),
            hash: Some(request.hash.clone()),
            template_id: Some(request.content.template_id.clone()),
        }
    }
}
