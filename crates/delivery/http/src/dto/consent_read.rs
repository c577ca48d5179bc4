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
    pub caso_de_uso_id_template: String,
    /// Masked (`***.456.789-**`) unless the request asked `mostrarCpf=true`.
    pub cpf_titular: String,
    #[schema(value_type = SubjectType)]
    pub tipo_titular: String,
    #[schema(value_type = AccessMode)]
    pub modalidade_acesso: String,
    pub cnpj_anuente: Option<String>,
    pub data_expiracao_consentimento: DateTime<Utc>,
    pub data_titular_respondeu_consentimento: Option<DateTime<Utc>>,
    pub prova_coleta: Option<String>,
    /// SHA-256 of the request's canonical content, salted (docs/hash-consulta.md).
    pub hash: String,
    /// The hash's salt (32 hex digits), needed to recompute the hash; present only beside the
    /// whole CPF (`mostrarCpf=true`, the subject export), never with a masked one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sal_hash: Option<String>,
    pub criado_em: DateTime<Utc>,
    pub atualizado_em: DateTime<Utc>,
    /// Every status change, oldest first; present on reads of one request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub historico: Option<Vec<MudancaDeStatus>>,
}

/// One status change.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MudancaDeStatus {
    /// `null` for the creation.
    #[schema(value_type = Option<StatusSolicitacao>)]
    pub de: Option<String>,
    #[schema(value_type = StatusSolicitacao)]
    pub para: String,
    pub em: DateTime<Utc>,
    /// `pgcc` (the subject, on the PGCC), `empresa` (through this API) or `expiracao`.
    #[schema(value_type = CausaMudanca)]
    pub causa: String,
    /// The reason given with the change: the company's, sent with `revogar`, or the subject's,
    /// when the PGCC reports one for a refusal or revocation; `null` when none was given.
    #[schema(max_length = 500)]
    pub motivo: Option<String>,
}

impl Solicitacao {
    /// `request.status` must already be the effective status.
    pub fn from_domain(
        request: ConsentRequest,
        mostrar_cpf: bool,
        historico: Option<Vec<StatusChange>>,
    ) -> Self {
        let dados = request.content;
        let (respondeu, prova) = match dados.answer {
            Some(r) => (Some(r.subject_answered_at), Some(r.proof_of_collection)),
            None => (None, None),
        };
        Solicitacao {
            id: request.id,
            pgcc_id: request.pgcc_id,
            status: request.status.as_str().to_owned(),
            caso_de_uso_id_template: dados.template_id,
            cpf_titular: if mostrar_cpf {
                dados.subject_cpf.as_str().to_owned()
            } else {
                dados.subject_cpf.masked()
            },
            tipo_titular: dados.subject_type.as_str().to_owned(),
            modalidade_acesso: dados.access_mode.as_str().to_owned(),
            cnpj_anuente: dados.consenting_cnpj.map(|c| c.as_str().to_owned()),
            data_expiracao_consentimento: dados.consent_expires_at,
            data_titular_respondeu_consentimento: respondeu,
            prova_coleta: prova,
            hash: request.hash,
            sal_hash: mostrar_cpf.then_some(request.hash_salt),
            criado_em: request.created_at,
            atualizado_em: request.updated_at,
            historico: historico.map(|h| {
                h.into_iter()
                    .map(|c| MudancaDeStatus {
                        de: c.from.map(|s| s.as_str().to_owned()),
                        para: c.to.as_str().to_owned(),
                        em: c.at,
                        causa: c.cause.as_str().to_owned(),
                        motivo: c.reason.map(|m| m.as_str().to_owned()),
                    })
                    .collect()
            }),
        }
    }
}

/// `mostrarCpf`: the full CPF instead of the masked one.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct MostrarCpf {
    /// `true` to receive the subject's full CPF; masked otherwise.
    #[serde(default)]
    pub mostrar_cpf: bool,
}

/// Filters and paging of `GET /api/solicitacao-consentimento`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct FiltroSolicitacoes {
    /// Effective status: `pendente`, `ativo`, `recusado`, `expirado`, `revogado`.
    #[param(value_type = Option<StatusSolicitacao>)]
    pub status: Option<String>,
    pub caso_de_uso_id_template: Option<String>,
    /// The subject's CPF (masked or not). Prefer POST /api/hash-consulta for single checks.
    #[param(value_type = Option<Cpf>, inline)]
    pub cpf_titular: Option<String>,
    /// Created at or after (ISO 8601).
    pub criado_de: Option<DateTime<Utc>>,
    /// Created before (ISO 8601).
    pub criado_ate: Option<DateTime<Utc>>,
    /// Last changed (created, or its status changed) at or after (ISO 8601): what changed while
    /// your webhook receiver was down.
    pub atualizado_de: Option<DateTime<Utc>>,
    /// Last changed before (ISO 8601).
    pub atualizado_ate: Option<DateTime<Utc>>,
    /// `proximoCursor` of the previous page.
    #[param(value_type = Option<Cursor>, inline)]
    pub cursor: Option<String>,
    /// Page size, 1 to 500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    pub limite: Option<u32>,
    /// `true` to receive full CPFs.
    #[serde(default)]
    pub mostrar_cpf: bool,
}

/// A page of consent requests, oldest first.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaginaSolicitacoes {
    pub itens: Vec<Solicitacao>,
    /// Pass as `cursor` for the next page; `null` on the last page.
    pub proximo_cursor: Option<String>,
}
