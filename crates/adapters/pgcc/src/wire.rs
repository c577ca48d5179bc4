//! The JSON bodies of the PGCC contract (`docs/pgcc.md`), in its wire names.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// `GET /pgcc/v1/empresas/{cnpj}/casos-de-uso`
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CasosDeUsoResponse {
    pub vinculos: Vec<Vinculo>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Vinculo {
    pub id: Uuid,
    #[serde(default)]
    pub casos_de_uso: Vec<CasoDeUso>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CasoDeUso {
    pub template_id: String,
    pub titulo: String,
}

/// `POST /pgcc/v1/solicitacoes`. Holds the CPF and the proof of consent: no `Debug`, never
/// logged.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NovaSolicitacao<'a> {
    pub referencia_externa: Uuid,
    pub cnpj_empresa: &'a str,
    pub vinculo_id: Option<Uuid>,
    pub template_id: &'a str,
    pub cpf_titular: &'a str,
    pub tipo_titular: &'static str,
    pub modalidade_acesso: &'static str,
    pub cnpj_anuente: Option<&'a str>,
    pub data_expiracao_consentimento: String,
    pub status: &'static str,
    pub data_titular_respondeu_consentimento: Option<String>,
    pub prova_coleta: Option<&'a str>,
}

/// The answer to a creation (201, or 200 for a repeated `referenciaExterna`); other fields are
/// ignored.
#[derive(Debug, Deserialize)]
pub struct SolicitacaoCriada {
    pub id: String,
}

/// The answer to `GET /pgcc/v1/solicitacoes?cnpjEmpresa=...&referenciaExterna=...`: at most one
/// request; other fields of each are ignored.
#[derive(Debug, Deserialize)]
pub struct BuscaPorReferenciaResponse {
    pub solicitacoes: Vec<SolicitacaoEncontrada>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SolicitacaoEncontrada {
    pub id: String,
    pub referencia_externa: Uuid,
}

/// `POST /pgcc/v1/solicitacoes/status`
#[derive(Serialize)]
pub struct ConsultaStatus<'a> {
    pub ids: &'a [String],
}

/// The answer to a batch status call: the known ids only.
#[derive(Debug, Deserialize)]
pub struct ConsultaStatusResponse {
    pub solicitacoes: Vec<StatusSolicitacao>,
}

/// One request of a batch status answer; `atualizadoEm` is ignored. The status is kept as text
/// so that an unknown one is reported as such, not as an unreadable body.
#[derive(Debug, Deserialize)]
pub struct StatusSolicitacao {
    pub id: String,
    pub status: String,
    /// The reason of the last change, when the PGCC reports one. Read as any JSON value and
    /// kept only when it is a string: an odd reason must not make the whole batch unreadable
    /// (the status is what matters).
    #[serde(default)]
    pub motivo: Option<serde_json::Value>,
}
