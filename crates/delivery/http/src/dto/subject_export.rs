//! The subject export (`POST /api/titulares/consentimentos`): the subject in the body, the page
//! in the query.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::consent_read::Solicitacao;
use super::text_rules::{Cpf, Cursor};

/// Body of `POST /api/titulares/consentimentos`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExportarTitular {
    /// The subject's CPF, formatted (`529.982.247-25`) or digits only.
    #[schema(required = true, value_type = Cpf, inline, example = "529.982.247-25")]
    #[serde(rename = "cpfTitular")]
    pub subject_cpf: Option<String>,
}

/// Paging of the export.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PaginaExportacao {
    /// `proximoCursor` of the previous page.
    #[param(value_type = Option<Cursor>, inline)]
    pub cursor: Option<String>,
    /// Page size, 1 to 500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    #[serde(rename = "limite")]
    pub limit: Option<u32>,
}

/// A page of the subject's requests, oldest first, each with its history, its proof of
/// collection and the CPF in full.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConsentimentosDoTitular {
    #[serde(rename = "itens")]
    pub items: Vec<Solicitacao>,
    /// Pass as `cursor` for the next page; `null` on the last page.
    #[serde(rename = "proximoCursor")]
    pub next_cursor: Option<String>,
}
