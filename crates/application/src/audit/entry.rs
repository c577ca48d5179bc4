//! What an entry says: its canonical JSON (written by the database function
//! `auditoria_entrada`, migration 2026-11-30-002501_create_auditoria), read back.

use serde::Deserialize;

/// The fields of an entry (docs/auditoria.md, "Entries"). Never the CPF.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryFields {
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
