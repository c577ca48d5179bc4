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
    /// The four keys only an imported consent's creation entry has (docs/auditoria.md,
    /// "Imported consents"); absent from every other entry, old ones included, whose bytes are
    /// what they always were. Flat, not a flattened struct: serde's `deny_unknown_fields` does
    /// not hold across `flatten`.
    #[serde(rename = "importacaoId", default)]
    pub import_id: Option<String>,
    #[serde(rename = "idExterno", default)]
    pub external_id: Option<String>,
    #[serde(rename = "origem", default)]
    pub origin: Option<String>,
    /// The subject's original answer date (`null` for a pending line, present all the same).
    #[serde(rename = "dataTitularRespondeuConsentimento", default)]
    pub answered_at: Option<String>,
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

#[cfg(test)]
mod tests {
    use super::*;

    const LIVE: &str = r#"{"casoDeUsoIdTemplate":"tpl","causa":"empresa","cnpjEmpresa":"11222333000181","em":"2026-01-10T12:00:05.000000Z","hash":"ab","id":"00000000-0000-0000-0000-000000000501","motivoSha256":null,"pgccId":"pgcc-1","provaColetaSha256":null,"status":"pendente","statusAnterior":null}"#;

    #[test]
    fn an_entry_without_provenance_reads_as_before_and_an_unknown_key_is_refused() {
        let live = EntryFields::parse(LIVE.as_bytes()).unwrap();
        assert_eq!(live.import_id, None);
        assert_eq!(live.origin, None);
        let odd = LIVE.replace(r#""causa""#, r#""extra":"x","causa""#);
        assert!(EntryFields::parse(odd.as_bytes()).is_err());
    }

    #[test]
    fn an_imported_creation_entry_reads_its_provenance() {
        let imported = LIVE.replace(
            r#""em""#,
            r#""dataTitularRespondeuConsentimento":"2019-03-01T10:00:00.000000Z","em""#,
        )
        .replace(
            r#""motivoSha256""#,
            r#""idExterno":"crm-1","importacaoId":"00000000-0000-0000-0000-000000000007","motivoSha256""#,
        )
        .replace(r#""pgccId""#, r#""origem":"crm-legado","pgccId""#);
        let fields = EntryFields::parse(imported.as_bytes()).unwrap();
        assert_eq!(fields.external_id.as_deref(), Some("crm-1"));
        assert_eq!(fields.origin.as_deref(), Some("crm-legado"));
        assert_eq!(
            fields.import_id.as_deref(),
            Some("00000000-0000-0000-0000-000000000007")
        );
        assert_eq!(
            fields.answered_at.as_deref(),
            Some("2019-03-01T10:00:00.000000Z")
        );
    }
}
