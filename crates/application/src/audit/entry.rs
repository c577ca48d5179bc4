//! What an entry says: its canonical JSON (written by the database function
//! `auditoria_entrada`, migration 2026-11-30-002501_create_auditoria), read back.

use serde::Deserialize;

/// The fields of an entry (docs/auditoria.md, "Entries"). Never the CPF.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryFields {
    /// An evidence file's entry (`causa` `arquivo`): the file's lower-case hex SHA-256, its size
    /// in bytes (a decimal string) and its media type; absent from every other entry.
    #[serde(rename = "arquivoSha256", default)]
    pub file_sha256: Option<String>,
    #[serde(rename = "arquivoTamanho", default)]
    pub file_size: Option<String>,
    #[serde(rename = "arquivoTipo", default)]
    pub file_media_type: Option<String>,
    pub id: String,
    #[serde(rename = "pgccId")]
    pub pgcc_id: Option<String>,
    #[serde(rename = "cnpjEmpresa")]
    pub company_cnpj: String,
    #[serde(rename = "casoDeUsoIdTemplate")]
    pub template_id: String,
    #[serde(rename = "statusAnterior")]
    pub from: Option<String>,
    pub status: String,
    #[serde(rename = "causa")]
    pub cause: String,
    #[serde(rename = "motivoSha256")]
    pub reason_sha256: Option<String>,
    #[serde(rename = "provaColetaSha256")]
    pub proof_sha256: Option<String>,
    pub hash: String,
    #[serde(rename = "em")]
    pub at: String,
}

impl EntryFields {
    pub fn parse(bytes: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(bytes)
    }
}

/// The cause of the retention purge's blanking (the database writes it).
pub const CAUSE_RETENTION: &str = "retencao";

/// The cause of an evidence file's link to a request (`evidencia_vincular` writes it): a
/// non-move, naming the file.
pub const CAUSE_EVIDENCE: &str = "arquivo";
