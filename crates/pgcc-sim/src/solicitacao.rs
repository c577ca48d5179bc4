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
    /// A status text set by `POST /_sim/solicitacoes/{id}/status`, reported by the contract
    /// routes exactly as given instead of the status (a PGCC answering a status the contract does
    /// not name); cleared by the next move. Listed as `statusBruto` when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_bruto: Option<String>,
    /// The reason given with the last move (`{"motivo"}` on the admin routes), reported by the
    /// status routes until the next move; listed as `motivo` when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub motivo: Option<String>,
}

/// The status a contract route reports: a known one, or the raw text a test set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum StatusInformado {
    Conhecido(SolicitacaoStatus),
    Bruto(String),
}

/// What the contract routes answer about a request.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SolicitacaoView {
    pub id: String,
    pub status: StatusInformado,
    pub referencia_externa: Uuid,
    pub atualizado_em: DateTime<Utc>,
    /// The reason given with the last move, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub motivo: Option<String>,
}

/// What the batch status route answers about one request.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SolicitacaoStatusView {
    pub id: String,
    pub status: StatusInformado,
    pub atualizado_em: DateTime<Utc>,
    /// The company the request belongs to (its CNPJ as created, 14 characters): what a GCC
    /// importing a consent by its PGCC id checks it against (docs/pgcc.md).
    pub cnpj_empresa: String,
    /// The reason given with the last move, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub motivo: Option<String>,
}

impl Solicitacao {
    /// The contract view, with the status as read now (see [`Solicitacao::status_em`]).
    pub fn view(&self) -> SolicitacaoView {
        self.view_em(Utc::now())
    }

    /// The contract view, with the status as read at `agora`.
    pub fn view_em(&self, agora: DateTime<Utc>) -> SolicitacaoView {
        let (status, atualizado_em) = self.status_e_atualizacao_em(agora);
        SolicitacaoView {
            id: self.id.clone(),
            status: self.informado(status),
            referencia_externa: self.dados.referencia_externa,
            atualizado_em,
            motivo: self.motivo.clone(),
        }
    }

    /// The batch status view, with the status as read at `agora`.
    pub fn status_view_em(&self, agora: DateTime<Utc>) -> SolicitacaoStatusView {
        let (status, atualizado_em) = self.status_e_atualizacao_em(agora);
        SolicitacaoStatusView {
            id: self.id.clone(),
            status: self.informado(status),
            atualizado_em,
            cnpj_empresa: self.dados.cnpj_empresa.clone(),
            motivo: self.motivo.clone(),
        }
    }

    /// What the contract routes report for `status`: the raw text when one was set.
    fn informado(&self, status: SolicitacaoStatus) -> StatusInformado {
        match &self.status_bruto {
            Some(bruto) => StatusInformado::Bruto(bruto.clone()),
            None => StatusInformado::Conhecido(status),
        }
    }

    /// `dataExpiracaoConsentimento` as an instant (`None` only if it is not RFC 3339, which
    /// creation refuses).
    pub fn expira_em(&self) -> Option<DateTime<Utc>> {
        DateTime::parse_from_rfc3339(&self.dados.data_expiracao_consentimento)
            .ok()
            .map(|d| d.with_timezone(&Utc))
    }

    /// The status as read at `agora`: a `pendente` or `ativo` request whose expiry is not after
    /// `agora` is `expirado`, whatever the stored status (`dados.status`) still says.
    pub fn status_em(&self, agora: DateTime<Utc>) -> SolicitacaoStatus {
        self.status_e_atualizacao_em(agora).0
    }

    /// The status read at `agora` and when it last changed: for a request expired at read time,
    /// the expiry instant (if later than the last stored change).
    fn status_e_atualizacao_em(&self, agora: DateTime<Utc>) -> (SolicitacaoStatus, DateTime<Utc>) {
        lido_em(
            self.dados.status,
            self.expira_em(),
            self.atualizado_em,
            agora,
        )
    }
}

/// The status of a request read at `agora` and when it last changed, from its stored status,
/// expiry and last change: a `pendente` or `ativo` request whose expiry is not after `agora` is
/// `expirado` since its expiry instant (if later than the last stored change).
pub fn lido_em(
    stored: SolicitacaoStatus,
    expira: Option<DateTime<Utc>>,
    atualizado_em: DateTime<Utc>,
    agora: DateTime<Utc>,
) -> (SolicitacaoStatus, DateTime<Utc>) {
    match (stored, expira) {
        (SolicitacaoStatus::Pendente | SolicitacaoStatus::Ativo, Some(expira))
            if expira <= agora =>
        {
            (SolicitacaoStatus::Expirado, expira.max(atualizado_em))
        }
        _ => (stored, atualizado_em),
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

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn solicitacao(status: SolicitacaoStatus, expira: &str) -> Solicitacao {
        let criado = Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap();
        Solicitacao {
            id: "pgcc-1".into(),
            dados: NovaSolicitacao {
                referencia_externa: Uuid::nil(),
                cnpj_empresa: "11222333000181".into(),
                vinculo_id: None,
                template_id: "tpl".into(),
                cpf_titular: "52998224725".into(),
                tipo_titular: "PessoaFisica".into(),
                modalidade_acesso: "Direto".into(),
                cnpj_anuente: None,
                data_expiracao_consentimento: expira.into(),
                status,
                data_titular_respondeu_consentimento: None,
                prova_coleta: None,
            },
            criado_em: criado,
            atualizado_em: criado,
            status_bruto: None,
            motivo: None,
        }
    }

    #[test]
    fn pending_and_active_read_expirado_from_their_expiry_instant_on() {
        let expira = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let before = expira - chrono::Duration::milliseconds(1);
        for status in [SolicitacaoStatus::Pendente, SolicitacaoStatus::Ativo] {
            let s = solicitacao(status, "2026-01-01T00:00:00Z");
            assert_eq!(s.status_em(before), status);
            assert_eq!(s.status_em(expira), SolicitacaoStatus::Expirado);
            let view = s.status_view_em(expira);
            assert_eq!(view.atualizado_em, expira);
            assert_eq!(s.dados.status, status, "nothing stored");
        }
    }

    #[test]
    fn terminal_statuses_stay_after_the_expiry() {
        let after = Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap();
        for status in [SolicitacaoStatus::Recusado, SolicitacaoStatus::Revogado] {
            let s = solicitacao(status, "2026-01-01T00:00:00-03:00");
            assert_eq!(s.status_em(after), status);
            assert_eq!(s.view_em(after).atualizado_em, s.atualizado_em);
        }
    }

    #[test]
    fn a_raw_status_is_reported_as_it_is_whatever_the_stored_one() {
        let mut s = solicitacao(SolicitacaoStatus::Ativo, "2020-01-01T00:00:00Z");
        s.status_bruto = Some("suspenso".into());
        let view = serde_json::to_value(s.view()).unwrap();
        assert_eq!(view["status"], "suspenso");
        let batch = serde_json::to_value(s.status_view_em(Utc::now())).unwrap();
        assert_eq!(batch["status"], "suspenso");
        s.status_bruto = None;
        assert_eq!(
            serde_json::to_value(s.view()).unwrap()["status"],
            "expirado"
        );
    }

    #[test]
    fn an_offset_expiry_is_compared_as_an_instant() {
        let s = solicitacao(SolicitacaoStatus::Ativo, "2026-01-01T00:00:00-03:00");
        let utc_midnight = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        assert_eq!(s.status_em(utc_midnight), SolicitacaoStatus::Ativo);
        let three_am = Utc.with_ymd_and_hms(2026, 1, 1, 3, 0, 0).unwrap();
        assert_eq!(s.status_em(three_am), SolicitacaoStatus::Expirado);
    }
}
