//! Consent requests as read back: detail (with history) and list pages. HashConsulta's shapes
//! are in `consent_check.rs`.

use chrono::{DateTime, Utc};
use domain::{ConsentRequest, StatusChange};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::consent_request::{AccessMode, SubjectType};
use super::enumerations::{CausaMudanca, StatusSolicitacao};
use super::text_rules::{Cpf, Cursor};

/// A consent request as stored, with its effective status (`expirado` as soon as the expiry
/// passed, even before the expiry worker stores it).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Solicitacao {
    pub id: Uuid,
    pub pgcc_id: String,
    /// `pendente`, `ativo`, `recusado`, `expirado` or `revogado`.
    #[schema(value_type = StatusSolicitacao, example = "ativo")]
    pub status: String,
    #[serde(rename = "casoDeUsoIdTemplate")]
    pub template_id: String,
    /// Masked (`***.456.789-**`) unless the request asked `mostrarCpf=true`.
    #[serde(rename = "cpfTitular")]
    pub subject_cpf: String,
    #[schema(value_type = SubjectType)]
    #[serde(rename = "tipoTitular")]
    pub subject_type: String,
    #[schema(value_type = AccessMode)]
    #[serde(rename = "modalidadeAcesso")]
    pub access_mode: String,
    #[serde(rename = "cnpjAnuente")]
    pub consenting_cnpj: Option<String>,
    #[serde(rename = "dataExpiracaoConsentimento")]
    pub consent_expires_at: DateTime<Utc>,
    #[serde(rename = "dataTitularRespondeuConsentimento")]
    pub subject_answered_at: Option<DateTime<Utc>>,
    #[serde(rename = "provaColeta")]
    pub proof_of_collection: Option<String>,
    /// SHA-256 of the request's canonical content, salted (docs/hash-consulta.md).
    pub hash: String,
    /// The hash's salt (32 hex digits), needed to recompute the hash; present only beside the
    /// whole CPF (`mostrarCpf=true`, the subject export), never with a masked one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(rename = "salHash")]
    pub hash_salt: Option<String>,
    #[serde(rename = "criadoEm")]
    pub created_at: DateTime<Utc>,
    #[serde(rename = "atualizadoEm")]
    pub updated_at: DateTime<Utc>,
    /// The version of the use case current when the request was created (1, 2, ...; see
    /// `GET /api/casos-de-uso/{id}/versoes`). Requests created before versions were recorded
    /// are at version 1.
    #[schema(format = Int64, minimum = 1, maximum = 9223372036854775807_i64, example = 1)]
    #[serde(rename = "versaoCasoDeUso")]
    pub use_case_version: i64,
    /// Every status change, oldest first; present on reads of one request.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(rename = "historico")]
    pub history: Option<Vec<MudancaDeStatus>>,
}

/// One status change.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MudancaDeStatus {
    /// `null` for the creation.
    #[schema(value_type = Option<StatusSolicitacao>)]
    #[serde(rename = "de")]
    pub from: Option<String>,
    #[schema(value_type = StatusSolicitacao)]
    #[serde(rename = "para")]
    pub to: String,
    #[serde(rename = "em")]
    pub at: DateTime<Utc>,
    /// `pgcc` (the subject, on the PGCC), `empresa` (through this API) or `expiracao`.
    #[schema(value_type = CausaMudanca)]
    #[serde(rename = "causa")]
    pub cause: String,
    /// The reason given with the change: the company's, sent with `revogar`, or the subject's,
    /// when the PGCC reports one for a refusal or revocation; `null` when none was given.
    #[schema(max_length = 500)]
    #[serde(rename = "motivo")]
    pub reason: Option<String>,
}

impl Solicitacao {
    /// `request.status` must already be the effective status.
    pub fn from_domain(
        request: ConsentRequest,
        show_cpf: bool,
        history: Option<Vec<StatusChange>>,
    ) -> Self {
        let content = request.content;
        let (answered_at, proof) = match content.answer {
            Some(r) => (Some(r.subject_answered_at), Some(r.proof_of_collection)),
            None => (None, None),
        };
        Solicitacao {
            id: request.id,
            pgcc_id: request.pgcc_id,
            status: request.status.as_str().to_owned(),
            template_id: content.template_id,
            subject_cpf: if show_cpf {
                content.subject_cpf.as_str().to_owned()
            } else {
                content.subject_cpf.masked()
            },
            subject_type: content.subject_type.as_str().to_owned(),
            access_mode: content.access_mode.as_str().to_owned(),
            consenting_cnpj: content.consenting_cnpj.map(|c| c.as_str().to_owned()),
            consent_expires_at: content.consent_expires_at,
            subject_answered_at: answered_at,
            proof_of_collection: proof,
            hash: request.hash,
            hash_salt: show_cpf.then_some(request.hash_salt),
            created_at: request.created_at,
            updated_at: request.updated_at,
            // every stored request has one (`ConsentRequest::use_case_version`)
            use_case_version: request.use_case_version.unwrap_or(1),
            history: history.map(|h| {
                h.into_iter()
                    .map(|c| MudancaDeStatus {
                        from: c.from.map(|s| s.as_str().to_owned()),
                        to: c.to.as_str().to_owned(),
                        at: c.at,
                        cause: c.cause.as_str().to_owned(),
                        reason: c.reason.map(|m| m.as_str().to_owned()),
                    })
                    .collect()
            }),
        }
    }
}

/// `mostrarCpf`: the full CPF instead of the masked one.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct MostrarCpf {
    /// `true` to receive the subject's full CPF; masked otherwise.
    #[serde(default)]
    #[serde(rename = "mostrarCpf")]
    pub show_cpf: bool,
}

/// Filters and paging of `GET /api/solicitacao-consentimento`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct FiltroSolicitacoes {
    /// Effective status: `pendente`, `ativo`, `recusado`, `expirado`, `revogado`.
    #[param(value_type = Option<StatusSolicitacao>)]
    pub status: Option<String>,
    #[serde(rename = "casoDeUsoIdTemplate")]
    pub template_id: Option<String>,
    /// The subject's CPF (masked or not). Prefer POST /api/hash-consulta for single checks.
    #[param(value_type = Option<Cpf>, inline)]
    #[serde(rename = "cpfTitular")]
    pub subject_cpf: Option<String>,
    /// Created at or after (ISO 8601).
    #[serde(rename = "criadoDe")]
    pub created_from: Option<DateTime<Utc>>,
    /// Created before (ISO 8601).
    #[serde(rename = "criadoAte")]
    pub created_until: Option<DateTime<Utc>>,
    /// Last changed (created, or its status changed) at or after (ISO 8601): what changed while
    /// your webhook receiver was down.
    #[serde(rename = "atualizadoDe")]
    pub updated_from: Option<DateTime<Utc>>,
    /// Last changed before (ISO 8601).
    #[serde(rename = "atualizadoAte")]
    pub updated_until: Option<DateTime<Utc>>,
    /// `true`: only the requests whose use case has a newer version than the one they were
    /// created under (`versaoCasoDeUso`), whose subjects may need telling of the change. `false`
    /// or absent: no filter.
    #[serde(rename = "versaoDesatualizada")]
    pub outdated_version: Option<bool>,
    /// Only consents brought in by a bulk import with this `origem` (exact match; blank: no
    /// filter). Read along an index of the company's imported consents by origin.
    #[param(max_length = 200, example = "crm-legado")]
    #[serde(rename = "origem")]
    pub origin: Option<String>,
    /// `proximoCursor` of the previous page.
    #[param(value_type = Option<Cursor>, inline)]
    pub cursor: Option<String>,
    /// Page size, 1 to 500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    #[serde(rename = "limite")]
    pub limit: Option<u32>,
    /// `true` to receive full CPFs.
    #[serde(default)]
    #[serde(rename = "mostrarCpf")]
    pub show_cpf: bool,
}

/// A page of consent requests, oldest first.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaginaSolicitacoes {
    #[serde(rename = "itens")]
    pub items: Vec<Solicitacao>,
    /// Pass as `cursor` for the next page; `null` on the last page.
    #[serde(rename = "proximoCursor")]
    pub next_cursor: Option<String>,
}
