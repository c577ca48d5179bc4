use std::borrow::Cow;

use chrono::{DateTime, Utc};
use domain::{
    AccessMode as DomainModalidade, ConsentRequestDraft, SubjectType as DomainTipoTitular,
};
use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

use super::text_rules::{Cnpj, Cpf, ProvaColeta, TemplateId};
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
    #[schema(required = true, value_type = TemplateId, inline)]
    #[serde(rename = "casoDeUsoIdTemplate")]
    pub template_id: Option<String>,
    /// The subject's CPF: 11 digits, masked (`123.456.789-09`) or not.
    #[schema(example = "529.982.247-25")]
    #[schema(required = true, value_type = Cpf, inline)]
    #[serde(rename = "cpfTitular")]
    pub subject_cpf: Option<String>,
    /// Access modality: `Direto` or `Indireto` (then `cnpjAnuente` is required).
    #[schema(example = "Direto")]
    #[schema(required = true, value_type = AccessMode)]
    #[serde(rename = "modalidadeAcesso")]
    pub access_mode: Option<AccessMode>,
    /// Kind of data subject: only `PessoaFisica`.
    #[schema(example = "PessoaFisica")]
    #[schema(required = true, value_type = SubjectType)]
    #[serde(rename = "tipoTitular")]
    pub subject_type: Option<SubjectType>,
    /// When the consent expires; must be in the future.
    #[schema(required = true, value_type = String, format = DateTime)]
    #[serde(rename = "dataExpiracaoConsentimento")]
    pub consent_expires_at: Option<DateTime<Utc>>,
    /// When the subject answered; not in the future, before the expiry.
    #[schema(required = true, value_type = String, format = DateTime)]
    #[serde(rename = "dataTitularRespondeuConsentimento")]
    pub subject_answered_at: Option<DateTime<Utc>>,
    /// Proof that the consent was collected.
    #[schema(required = true, value_type = ProvaColeta, inline)]
    #[serde(rename = "provaColeta")]
    pub proof_of_collection: Option<String>,
    /// CNPJ of the consenting party (numeric or alphanumeric, masked or not); required for `Indireto`.
    #[schema(value_type = Option<Cnpj>, inline)]
    #[serde(rename = "cnpjAnuente")]
    pub consenting_cnpj: Option<String>,
}

/// Body of `POST /api/solicitacao-consentimento/criar/pendente`: the service waits for the
/// subject's answer, so `dataTitularRespondeuConsentimento` and `provaColeta` are refused (422).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CriarSolicitacaoPendente {
    #[schema(example = "tpl-marketing-email")]
    #[schema(required = true, value_type = TemplateId, inline)]
    #[serde(rename = "casoDeUsoIdTemplate")]
    pub template_id: Option<String>,
    #[schema(example = "529.982.247-25")]
    #[schema(required = true, value_type = Cpf, inline)]
    #[serde(rename = "cpfTitular")]
    pub subject_cpf: Option<String>,
    #[schema(example = "Direto")]
    #[schema(required = true, value_type = AccessMode)]
    #[serde(rename = "modalidadeAcesso")]
    pub access_mode: Option<AccessMode>,
    #[schema(example = "PessoaFisica")]
    #[schema(required = true, value_type = SubjectType)]
    #[serde(rename = "tipoTitular")]
    pub subject_type: Option<SubjectType>,
    #[schema(required = true, value_type = String, format = DateTime)]
    #[serde(rename = "dataExpiracaoConsentimento")]
    pub consent_expires_at: Option<DateTime<Utc>>,
    #[schema(value_type = Option<Cnpj>, inline)]
    #[serde(rename = "cnpjAnuente")]
    pub consenting_cnpj: Option<String>,
    /// Not part of the pending variant: accepted only to answer a clear 422 instead of a 400.
    #[schema(ignore)]
    #[serde(rename = "dataTitularRespondeuConsentimento")]
    pub subject_answered_at: Option<DateTime<Utc>>,
    /// Not part of the pending variant: accepted only to answer a clear 422 instead of a 400.
    #[schema(ignore)]
    #[serde(rename = "provaColeta")]
    pub proof_of_collection: Option<String>,
}

/// `modalidadeAcesso`: documented as its enumeration, decoded as text so that a wrong value is a
/// 422 naming the field, like every other rule.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct AccessMode(pub String);

/// `tipoTitular`: documented as its enumeration, decoded as text (see [`AccessMode`]).
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct SubjectType(pub String);

// Documented as the domain's enumerations (their feature `openapi`): one definition of the
// values and of the component names (`ModalidadeAcesso`, `TipoTitular`).
impl PartialSchema for AccessMode {
    fn schema() -> RefOr<Schema> {
        <DomainModalidade as PartialSchema>::schema()
    }
}

impl ToSchema for AccessMode {
    fn name() -> Cow<'static, str> {
        <DomainModalidade as ToSchema>::name()
    }
}

impl PartialSchema for SubjectType {
    fn schema() -> RefOr<Schema> {
        <DomainTipoTitular as PartialSchema>::schema()
    }
}

impl ToSchema for SubjectType {
    fn name() -> Cow<'static, str> {
        <DomainTipoTitular as ToSchema>::name()
    }
}

impl From<CriarSolicitacaoAtiva> for ConsentRequestDraft {
    fn from(b: CriarSolicitacaoAtiva) -> Self {
        ConsentRequestDraft {
            template_id: b.template_id,
            subject_cpf: b.subject_cpf,
            access_mode: b.access_mode.map(|m| m.0),
            subject_type: b.subject_type.map(|t| t.0),
            consent_expires_at: b.consent_expires_at,
            subject_answered_at: b.subject_answered_at,
            proof_of_collection: b.proof_of_collection,
            consenting_cnpj: b.consenting_cnpj,
        }
    }
}

impl From<CriarSolicitacaoPendente> for ConsentRequestDraft {
    fn from(b: CriarSolicitacaoPendente) -> Self {
        ConsentRequestDraft {
            template_id: b.template_id,
            subject_cpf: b.subject_cpf,
            access_mode: b.access_mode.map(|m| m.0),
            subject_type: b.subject_type.map(|t| t.0),
            consent_expires_at: b.consent_expires_at,
            subject_answered_at: b.subject_answered_at,
            proof_of_collection: b.proof_of_collection,
            consenting_cnpj: b.consenting_cnpj,
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
