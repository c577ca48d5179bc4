use anyhow::{anyhow, Context};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::{
    AccessMode, ActiveAnswer, Cnpj, CompanyId, ConsentRequest, ConsentStatus, Cpf, CreationVariant,
    SubjectType, ValidConsentRequest,
};
use ports::UnfinishedCreation;
use uuid::Uuid;

use crate::schema::solicitacoes_consentimento;

/// A row of `solicitacoes_consentimento`: `ConsentRequest` with its `dados` flattened, and when
/// the status poller checks it next. Holds a CPF and a proof of consent (personal data): its
/// `Debug` hides both. `QueryableByName` reads it from the `RETURNING` of `expire_due`'s SQL.
#[derive(Clone, PartialEq, Eq, Queryable, Selectable, QueryableByName)]
#[diesel(table_name = solicitacoes_consentimento, check_for_backend(diesel::pg::Pg))]
pub struct SolicitacaoConsentimentoRow {
    pub id: Uuid,
    pub empresa_id: Uuid,
    pub caso_de_uso_id: Uuid,
    pub caso_de_uso_id_template: String,
    pub cpf_titular: String,
    pub tipo_titular: String,
    pub modalidade_acesso: String,
    pub cnpj_anuente: Option<String>,
    pub data_expiracao_consentimento: DateTime<Utc>,
    pub data_titular_respondeu_consentimento: Option<DateTime<Utc>>,
    pub prova_coleta: Option<String>,
    pub status: String,
    /// NULL until the PGCC holds the request (creation `em_andamento` or `cancelada`).
    pub pgcc_id: Option<String>,
    pub criado_em: DateTime<Utc>,
    pub atualizado_em: DateTime<Utc>,
    pub hash: String,
    /// When the status poller may check the request next (not part of `ConsentRequest`).
    pub proximo_status_em: DateTime<Utc>,
    /// The hash's salt (`ConsentRequest::hash_salt`).
    pub sal_hash: String,
    /// The version of the use case current when the row was stored
    /// (`ConsentRequest::use_case_version`).
    pub versao_caso_de_uso: i64,
    /// An imported request's `origem` (docs/imports.md, "Provenance"); NULL for one created
    /// through the API.
    pub origem: Option<String>,
}

impl std::fmt::Debug for SolicitacaoConsentimentoRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SolicitacaoConsentimentoRow")
            .field("id", &self.id)
            .field("empresa_id", &self.empresa_id)
            .field("caso_de_uso_id", &self.caso_de_uso_id)
            .field("caso_de_uso_id_template", &self.caso_de_uso_id_template)
            .field("cpf_titular", &"<redacted>")
            .field("tipo_titular", &self.tipo_titular)
            .field("modalidade_acesso", &self.modalidade_acesso)
            .field("cnpj_anuente", &self.cnpj_anuente)
            .field(
                "data_expiracao_consentimento",
                &self.data_expiracao_consentimento,
            )
            .field(
                "data_titular_respondeu_consentimento",
                &self.data_titular_respondeu_consentimento,
            )
            .field(
                "prova_coleta",
                &self.prova_coleta.as_ref().map(|_| "<redacted>"),
            )
            .field("status", &self.status)
            .field("pgcc_id", &self.pgcc_id)
            .field("criado_em", &self.criado_em)
            .field("atualizado_em", &self.atualizado_em)
            .field("hash", &self.hash)
            .field("proximo_status_em", &self.proximo_status_em)
            .field("sal_hash", &"<redacted>")
            .field("origem", &self.origem)
            .finish()
    }
}

impl SolicitacaoConsentimentoRow {
    /// The stored consent request, which must be confirmed (hold a PGCC id). The creation variant
    /// is not a column: a request carries the subject's answer exactly when it was created
    /// active. Error texts name the column, never its value.
    pub fn try_into_domain(self) -> anyhow::Result<ConsentRequest> {
        if self.pgcc_id.is_none() {
            return Err(anyhow!(
                "a stored consent request read as confirmed has no pgcc_id"
            ));
        }
        self.try_into_domain_any_creation()
    }

    /// As [`SolicitacaoConsentimentoRow::try_into_domain`], for a request whose creation may be
    /// unfinished: without a PGCC id, `pgcc_id` is empty.
    pub fn try_into_domain_any_creation(self) -> anyhow::Result<ConsentRequest> {
        let cpf_titular = Cpf::parse(&self.cpf_titular)
            .context("a stored consent request has an invalid cpf_titular")?;
        let cnpj_anuente = self
            .cnpj_anuente
            .as_deref()
            .map(Cnpj::parse)
            .transpose()
            .context("a stored consent request has an invalid cnpj_anuente")?;
        let modalidade_acesso = match self.modalidade_acesso.as_str() {
            "Direto" => AccessMode::Direct,
            "Indireto" => AccessMode::Indirect,
            _ => {
                return Err(anyhow!(
                    "a stored consent request has an unknown modalidade_acesso"
                ))
            }
        };
        let tipo_titular = match self.tipo_titular.as_str() {
            "PessoaFisica" => SubjectType::NaturalPerson,
            _ => {
                return Err(anyhow!(
                    "a stored consent request has an unknown tipo_titular"
                ))
            }
        };
        let status = ConsentStatus::parse(&self.status)
            .ok_or_else(|| anyhow!("a stored consent request has an unknown status"))?;
        let resposta = match (self.data_titular_respondeu_consentimento, self.prova_coleta) {
            (Some(data), Some(prova_coleta)) => Some(ActiveAnswer {
                subject_answered_at: data,
                proof_of_collection: prova_coleta,
            }),
            (None, None) => None,
            _ => {
                return Err(anyhow!(
                    "a stored consent request has only one of data_titular_respondeu_consentimento \
                     and prova_coleta"
                ))
            }
        };
        let variant = if resposta.is_some() {
            CreationVariant::Active
        } else {
            CreationVariant::Pending
        };
        Ok(ConsentRequest {
            id: self.id,
            company_id: CompanyId(self.empresa_id),
            content: ValidConsentRequest {
                variant,
                template_id: self.caso_de_uso_id_template,
                subject_cpf: cpf_titular,
                access_mode: modalidade_acesso,
                subject_type: tipo_titular,
                consent_expires_at: self.data_expiracao_consentimento,
                answer: resposta,
                consenting_cnpj: cnpj_anuente,
            },
            status,
            pgcc_id: self.pgcc_id.unwrap_or_default(),
            hash: self.hash,
            hash_salt: self.sal_hash,
            created_at: self.criado_em,
            updated_at: self.atualizado_em,
            use_case_version: Some(self.versao_caso_de_uso),
        })
    }
}

/// The creation states of a row (column `criacao`).
pub const CRIACAO_EM_ANDAMENTO: &str = "em_andamento";
pub const CRIACAO_CONFIRMADA: &str = "confirmada";
pub const CRIACAO_CANCELADA: &str = "cancelada";

/// An unfinished creation claimed by the reconciler: the row `claim_unfinished_creations`
/// returns, with its company's CNPJ.
#[derive(Debug, Clone, PartialEq, Eq, QueryableByName)]
pub struct UnfinishedCreationRow {
    #[diesel(embed)]
    pub solicitacao: SolicitacaoConsentimentoRow,
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub cnpj: String,
    #[diesel(sql_type = diesel::sql_types::Timestamptz)]
    pub criacao_tentativa_em: DateTime<Utc>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Timestamptz>)]
    pub criacao_nao_encontrada_em: Option<DateTime<Utc>>,
}

impl UnfinishedCreationRow {
    pub fn try_into_domain(self) -> anyhow::Result<UnfinishedCreation> {
        let cnpj_empresa =
            Cnpj::parse(&self.cnpj).context("a stored company has an invalid cnpj")?;
        let request = self.solicitacao.try_into_domain_any_creation()?;
        Ok(UnfinishedCreation {
            id: request.id,
            company_id: request.company_id,
            company_cnpj: cnpj_empresa,
            claimed_at: self.criacao_tentativa_em,
            not_found_since: self.criacao_nao_encontrada_em,
            request: Box::new(request),
        })
    }
}
