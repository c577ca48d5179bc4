//! Consent requests (solicitações de consentimento): the input draft, its validation rules and the
//! stored entity.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::{Cnpj, CompanyId, ConsentStatus, Cpf, ValidationErrors};

/// Which creation endpoint was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CreationVariant {
    /// `criar/ativo`: the subject has already answered.
    Active,
    /// `criar/pendente`: the service waits for the subject's answer.
    Pending,
}

/// The access modality (`modalidadeAcesso`). `Indireto` requires `cnpjAnuente`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModalidadeAcesso {
    Direto,
    Indireto,
}

impl ModalidadeAcesso {
    pub fn as_str(self) -> &'static str {
        match self {
            ModalidadeAcesso::Direto => "Direto",
            ModalidadeAcesso::Indireto => "Indireto",
        }
    }
}

/// The kind of data subject (`tipoTitular`): only natural persons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TipoTitular {
    PessoaFisica,
}

impl TipoTitular {
    pub fn as_str(self) -> &'static str {
        "PessoaFisica"
    }
}

/// The body of a creation request as received: every field optional and the enumerations as
/// text, so that each broken rule is reported by field (422) instead of failing decoding (400).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsentRequestDraft {
    pub caso_de_uso_id_template: Option<String>,
    pub cpf_titular: Option<String>,
    pub modalidade_acesso: Option<String>,
    pub tipo_titular: Option<String>,
    pub data_expiracao_consentimento: Option<DateTime<Utc>>,
    pub data_titular_respondeu_consentimento: Option<DateTime<Utc>>,
    pub prova_coleta: Option<String>,
    pub cnpj_anuente: Option<String>,
}

/// The subject's answer, present only on requests created active.
#[derive(Clone, PartialEq, Eq)]
pub struct ActiveAnswer {
    pub data_titular_respondeu_consentimento: DateTime<Utc>,
    /// Proof of consent: personal data, never logged.
    pub prova_coleta: String,
}

impl std::fmt::Debug for ActiveAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActiveAnswer")
            .field("data_titular_respondeu_consentimento", &self.data_titular_respondeu_consentimento)
            .field("prova_coleta", &"<redacted>")
            .finish()
    }
}

/// A draft that passed every rule of its variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidConsentRequest {
    pub variant: CreationVariant,
    pub caso_de_uso_id_template: String,
    pub cpf_titular: Cpf,
    pub modalidade_acesso: ModalidadeAcesso,
    pub tipo_titular: TipoTitular,
    pub data_expiracao_consentimento: DateTime<Utc>,
    /// `Some` exactly when `variant` is `Active`.
    pub resposta: Option<ActiveAnswer>,
    pub cnpj_anuente: Option<Cnpj>,
}

impl ConsentRequestDraft {
    /// Checks every rule of `variant` at instant `now` and reports all broken ones, each under
    /// the JSON name of its field:
    /// - required (both variants): casoDeUsoIdTemplate (non-blank), cpfTitular (valid CPF),
    ///   modalidadeAcesso (`Direto` | `Indireto`), tipoTitular (`PessoaFisica` only),
    ///   dataExpiracaoConsentimento (after `now`);
    /// - cnpjAnuente: required and valid for `Indireto`; when given for `Direto`, must be valid;
    /// - active: dataTitularRespondeuConsentimento required, not after `now`, before the expiry;
    ///   provaColeta required and non-blank;
    /// - pending: dataTitularRespondeuConsentimento and provaColeta must be absent.
    pub fn validate(
        self,
        variant: CreationVariant,
        now: DateTime<Utc>,
    ) -> Result<ValidConsentRequest, ValidationErrors> {
        todo!("{variant:?} {now}")
    }
}

/// A stored consent request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentRequest {
    pub id: Uuid,
    pub empresa_id: CompanyId,
    pub caso_de_uso_id: Uuid,
    pub dados: ValidConsentRequest,
    pub status: ConsentStatus,
    pub pgcc_id: String,
    pub criado_em: DateTime<Utc>,
    pub atualizado_em: DateTime<Utc>,
}
