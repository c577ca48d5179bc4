use chrono::{DateTime, Utc};
use domain::ConsentRequestDraft;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// Body of `POST /api/solicitacao-consentimento/criar/ativo`: the subject has already answered.
///
/// Every field is optional at decoding so that each broken rule comes back by name in a 422;
/// an unknown field or a value of the wrong JSON type is a 400.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CriarSolicitacaoAtiva {
    /// `pgccProviderTemplateId` of one of the company's use cases.
    #[schema(example = "tpl-marketing-email")]
    pub caso_de_uso_id_template: Option<String>,
    /// The subject's CPF: 11 digits, masked (`123.456.789-09`) or not.
    #[schema(example = "529.982.247-25")]
    pub cpf_titular: Option<String>,
    /// Access modality: `Direto` or `Indireto` (then `cnpjAnuente` is required).
    #[schema(example = "Direto")]
    pub modalidade_acesso: Option<ModalidadeAcesso>,
    /// Kind of data subject: only `PessoaFisica`.
    #[schema(example = "PessoaFisica")]
    pub tipo_titular: Option<TipoTitular>,
    /// When the consent expires; must be in the future.
    pub data_expiracao_consentimento: Option<DateTime<Utc>>,
    /// When the subject answered; not in the future, before the expiry.
    pub data_titular_respondeu_consentimento: Option<DateTime<Utc>>,
    /// Proof that the consent was collected.
    pub prova_coleta: Option<String>,
    /// CNPJ of the consenting party (numeric or alphanumeric, masked or not); required for `Indireto`.
    pub cnpj_anuente: Option<String>,
}

/// Body of `POST /api/solicitacao-consentimento/criar/pendente`: the service waits for the
/// subject's answer, so `dataTitularRespondeuConsentimento` and `provaColeta` are refused (422).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CriarSolicitacaoPendente {
    #[schema(example = "tpl-marketing-email")]
    pub caso_de_uso_id_template: Option<String>,
    #[schema(example = "529.982.247-25")]
    pub cpf_titular: Option<String>,
    #[schema(example = "Direto")]
    pub modalidade_acesso: Option<ModalidadeAcesso>,
    #[schema(example = "PessoaFisica")]
    pub tipo_titular: Option<TipoTitular>,
    pub data_expiracao_consentimento: Option<DateTime<Utc>>,
    pub cnpj_anuente: Option<String>,
    /// Not part of the pending variant: accepted only to answer a clear 422 instead of a 400.
    #[schema(ignore)]
    pub data_titular_respondeu_consentimento: Option<DateTime<Utc>>,
    /// Not part of the pending variant: accepted only to answer a clear 422 instead of a 400.
    #[schema(ignore)]
    pub prova_coleta: Option<String>,
}

/// Documented enumeration of `modalidadeAcesso`; decoded as text so a wrong value is a 422 by
/// field name, like every other rule.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(transparent)]
#[schema(value_type = String, example = "Direto")]
pub struct ModalidadeAcesso(pub String);

#[derive(Debug, Deserialize, ToSchema)]
#[serde(transparent)]
#[schema(value_type = String, example = "PessoaFisica")]
pub struct TipoTitular(pub String);

impl From<CriarSolicitacaoAtiva> for ConsentRequestDraft {
    fn from(b: CriarSolicitacaoAtiva) -> Self {
        ConsentRequestDraft {
            caso_de_uso_id_template: b.caso_de_uso_id_template,
            cpf_titular: b.cpf_titular,
            modalidade_acesso: b.modalidade_acesso.map(|m| m.0),
            tipo_titular: b.tipo_titular.map(|t| t.0),
            data_expiracao_consentimento: b.data_expiracao_consentimento,
            data_titular_respondeu_consentimento: b.data_titular_respondeu_consentimento,
            prova_coleta: b.prova_coleta,
            cnpj_anuente: b.cnpj_anuente,
        }
    }
}

impl From<CriarSolicitacaoPendente> for ConsentRequestDraft {
    fn from(b: CriarSolicitacaoPendente) -> Self {
        ConsentRequestDraft {
            caso_de_uso_id_template: b.caso_de_uso_id_template,
            cpf_titular: b.cpf_titular,
            modalidade_acesso: b.modalidade_acesso.map(|m| m.0),
            tipo_titular: b.tipo_titular.map(|t| t.0),
            data_expiracao_consentimento: b.data_expiracao_consentimento,
            data_titular_respondeu_consentimento: b.data_titular_respondeu_consentimento,
            prova_coleta: b.prova_coleta,
            cnpj_anuente: b.cnpj_anuente,
        }
    }
}

/// A created consent request (spec 2.3).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SolicitacaoCriada {
    /// Our id of the request.
    pub id: Uuid,
    /// The request's id on the PGCC.
    pub pgcc_id: String,
}
