//! Consent requests (solicitações) as the simulated PGCC receives and stores them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::seed::normalize_cnpj;

/// The status of a request on the PGCC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SolicitacaoStatus {
    Pendente,
    Ativo,
    Recusado,
    Expirado,
    Revogado,
}

/// The body of `POST /pgcc/v1/solicitacoes`, kept as sent (dates as the text received) so that a
/// test sees exactly what the adapter put on the wire. Unknown fields are refused (400).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NovaSolicitacao {
    pub referencia_externa: Uuid,
    pub cnpj_empresa: String,
    pub vinculo_id: Option<Uuid>,
    pub template_id: String,
    pub cpf_titular: String,
    pub tipo_titular: String,
    pub modalidade_acesso: String,
    pub cnpj_anuente: Option<String>,
    pub data_expiracao_consentimento: String,
    /// On a stored request: its current status.
    pub status: SolicitacaoStatus,
    pub data_titular_respondeu_consentimento: Option<String>,
    pub prova_coleta: Option<String>,
}

/// A stored request: the body received, its PGCC id and times. `dados.status` is the current
/// status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Solicitacao {
    pub id: String,
    #[serde(flatten)]
    pub dados: NovaSolicitacao,
    pub criado_em: DateTime<Utc>,
    pub atualizado_em: DateTime<Utc>,
}

/// What the contract routes answer about a request.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SolicitacaoView {
    pub id: String,
    pub status: SolicitacaoStatus,
    pub referencia_externa: Uuid,
    pub atualizado_em: DateTime<Utc>,
}

impl Solicitacao {
    pub fn view(&self) -> SolicitacaoView {
        SolicitacaoView {
            id: self.id.clone(),
            status: self.dados.status,
            referencia_externa: self.dados.referencia_externa,
            atualizado_em: self.atualizado_em,
        }
    }
}

impl NovaSolicitacao {
    /// Checks the field rules of the contract; the message names the field, never its value.
    pub fn validate(&self) -> Result<(), String> {
        if !is_cnpj_shape(&self.cnpj_empresa) {
            return Err("cnpjEmpresa deve ter 14 caracteres".into());
        }
        if self.template_id.trim().is_empty() {
            return Err("templateId é obrigatório".into());
        }
        if self.cpf_titular.len() != 11 || !self.cpf_titular.bytes().all(|b| b.is_ascii_digit()) {
            return Err("cpfTitular deve ter 11 dígitos".into());
        }
        if self.tipo_titular != "PessoaFisica" {
            return Err("tipoTitular deve ser PessoaFisica".into());
        }
        match self.modalidade_acesso.as_str() {
            "Direto" => {}
            "Indireto" if self.cnpj_anuente.is_none() => {
                return Err("cnpjAnuente é obrigatório na modalidade Indireto".into());
            }
            "Indireto" => {}
            _ => return Err("modalidadeAcesso deve ser Direto ou Indireto".into()),
        }
        if let Some(anuente) = &self.cnpj_anuente {
            if !is_cnpj_shape(anuente) {
                return Err("cnpjAnuente deve ter 14 caracteres".into());
            }
        }
        is_rfc3339(
            &self.data_expiracao_consentimento,
            "dataExpiracaoConsentimento",
        )?;
        if let Some(data) = &self.data_titular_respondeu_consentimento {
            is_rfc3339(data, "dataTitularRespondeuConsentimento")?;
        }
        match self.status {
            SolicitacaoStatus::Ativo => {
                if self.data_titular_respondeu_consentimento.is_none() {
                    return Err(
                        "dataTitularRespondeuConsentimento é obrigatória para status ativo".into(),
                    );
                }
                if self
                    .prova_coleta
                    .as_deref()
                    .is_none_or(|p| p.trim().is_empty())
                {
                    return Err("provaColeta é obrigatória para status ativo".into());
                }
            }
            SolicitacaoStatus::Pendente => {}
            _ => return Err("status deve ser ativo ou pendente".into()),
        }
        Ok(())
    }
}

fn is_cnpj_shape(raw: &str) -> bool {
    let cnpj = normalize_cnpj(raw);
    cnpj.len() == 14 && cnpj.bytes().all(|b| b.is_ascii_alphanumeric())
}

fn is_rfc3339(raw: &str, campo: &str) -> Result<(), String> {
    DateTime::parse_from_rfc3339(raw)
        .map(|_| ())
        .map_err(|_| format!("{campo} deve ser uma data RFC 3339"))
}
