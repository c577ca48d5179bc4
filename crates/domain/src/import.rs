//! Bulk import (`POST /api/importacoes`, docs/imports.md): one line of an imported file, its
//! rules, and the import's status.
//!
//! A line is a creation body ([`ConsentRequestDraft`], validated by its own
//! [`ConsentRequestDraft::validate`]: the very rules of `criar/ativo` and `criar/pendente`) plus
//! the import's fields: `idExterno` (the company's id of the consent, the line's idempotency
//! key), `origem`, optionally `provaColetaSha256` in place of `provaColeta`, and optionally
//! `pgccId` (a consent already on the PGCC).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::consent_request::NUL_CHARACTER_MESSAGE;
use crate::{CompanyId, ConsentRequestDraft, CreationVariant, ValidationErrors};

/// Longest `idExterno` and `origem`, in characters.
pub const MAX_EXTERNAL_ID: usize = 200;
/// Longest `pgccId`, in characters.
pub const MAX_PGCC_ID: usize = 200;

/// The JSON names of the import's own fields of a line.
pub mod import_field {
    /// `idExterno`.
    pub const EXTERNAL_ID: &str = "idExterno";
    /// `origem`.
    pub const ORIGIN: &str = "origem";
    /// `provaColetaSha256`.
    pub const PROOF_SHA256: &str = "provaColetaSha256";
    /// `pgccId`.
    pub const PGCC_ID: &str = "pgccId";
    /// `arquivosSha256`: evidence files the company uploaded first (docs/evidencias.md).
    pub const EVIDENCE_FILES: &str = "arquivosSha256";
    /// The line as a whole: not UTF-8, not JSON, too long, a NUL byte.
    pub const LINE: &str = "linha";
}

/// One line as read from the file: every field optional, so that each broken rule is named.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportLineDraft {
    /// `idExterno`: the company's id of the consent.
    pub external_id: Option<String>,
    /// `origem`: the system or channel it came from.
    pub origin: Option<String>,
    /// `provaColetaSha256`: the proof's SHA-256, in place of `provaColeta`.
    pub proof_sha256: Option<String>,
    /// `pgccId`: the consent's id on the PGCC, when it is there already.
    pub pgcc_id: Option<String>,
    /// `arquivosSha256`: the SHA-256 of evidence files the company uploaded first
    /// (`PUT /api/arquivos/{sha256}`), linked to the request the line creates.
    pub evidence_sha256: Vec<String>,
    /// The creation's fields, as `criar/ativo` / `criar/pendente` take them.
    pub consent: ConsentRequestDraft,
}

/// Evidence files one line may name.
pub const MAX_EVIDENCE_FILES_PER_LINE: usize = 20;

/// A line whose rules hold: what is staged for registration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidImportLine {
    /// `idExterno`, trimmed.
    pub external_id: String,
    /// `origem`, trimmed.
    pub origin: String,
    /// `pgccId`, trimmed: confirmed with the PGCC instead of created.
    pub pgcc_id: Option<String>,
    /// `criar/ativo` or `criar/pendente`.
    pub variant: CreationVariant,
    /// The creation draft (with `provaColeta` set from `provaColetaSha256` when only the hash
    /// was given); validated, kept as a draft so registration runs the creation as it is.
    pub consent: ConsentRequestDraft,
    /// `arquivosSha256`, lower-case, each once: linked to the request once it is created.
    pub evidence_sha256: Vec<String>,
}

impl ImportLineDraft {
    /// `criar/ativo` when the line carries an answer (`dataTitularRespondeuConsentimento`, a
    /// proof or its hash), `criar/pendente` otherwise.
    pub fn variant(&self) -> CreationVariant {
        let c = &self.consent;
        if c.subject_answered_at.is_some()
            || c.proof_of_collection.is_some()
            || self.proof_sha256.is_some()
        {
            CreationVariant::Active
        } else {
            CreationVariant::Pending
        }
    }

    /// Every broken rule of the line, the creation's included. `provaColetaSha256` stands for
    /// the proof as `sha256:<hex>` (the proof kept elsewhere, named by its digest).
    pub fn validate(self, now: DateTime<Utc>) -> Result<ValidImportLine, ValidationErrors> {
        let variant = self.variant();
        let mut errors = ValidationErrors::default();
        let external_id = short_text(
            &mut errors,
            import_field::EXTERNAL_ID,
            self.external_id,
            MAX_EXTERNAL_ID,
        );
        let origin = short_text(
            &mut errors,
            import_field::ORIGIN,
            self.origin,
            MAX_EXTERNAL_ID,
        );
        let pgcc_id = match self.pgcc_id {
            None => None,
            Some(p) => short_text(&mut errors, import_field::PGCC_ID, Some(p), MAX_PGCC_ID),
        };
        let mut consent = self.consent;
        if let Some(hash) = self.proof_sha256 {
            let hex = hash.trim().to_ascii_lowercase();
            if consent.proof_of_collection.is_some() {
                errors.push(
                    import_field::PROOF_SHA256,
                    "informe provaColeta ou provaColetaSha256, não ambos",
                );
            } else if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                errors.push(
                    import_field::PROOF_SHA256,
                    "deve ter 64 dígitos hexadecimais (SHA-256)",
                );
            } else {
                consent.proof_of_collection = Some(format!("sha256:{hex}"));
            }
        }
        if let Err(e) = consent.clone().validate(variant, now) {
            errors.0.extend(e.0);
        }
        let evidence_sha256 = evidence_hashes(&mut errors, self.evidence_sha256);
        match (external_id, origin) {
            (Some(external_id), Some(origin)) if errors.is_empty() => Ok(ValidImportLine {
                external_id,
                origin,
                pgcc_id,
                variant,
                consent,
                evidence_sha256,
            }),
            _ => Err(errors),
        }
    }
}

/// `arquivosSha256`: at most [`MAX_EVIDENCE_FILES_PER_LINE`] hashes of 64 hex digits, each
/// named once (lower-cased); whether the company has them is checked when the line is staged.
fn evidence_hashes(errors: &mut ValidationErrors, raw: Vec<String>) -> Vec<String> {
    if raw.len() > MAX_EVIDENCE_FILES_PER_LINE {
        errors.push(
            import_field::EVIDENCE_FILES,
            format!("no máximo {MAX_EVIDENCE_FILES_PER_LINE} arquivos por linha"),
        );
        return Vec::new();
    }
    let mut hashes: Vec<String> = Vec::with_capacity(raw.len());
    for (i, hash) in raw.iter().enumerate() {
        let hex = hash.trim().to_ascii_lowercase();
        if !crate::is_sha256_hex(&hex) {
            errors.push(
                format!("{}[{i}]", import_field::EVIDENCE_FILES),
                "deve ter 64 dígitos hexadecimais (SHA-256)",
            );
        } else if !hashes.contains(&hex) {
            hashes.push(hex);
        }
    }
    hashes
}

fn short_text(
    errors: &mut ValidationErrors,
    field: &str,
    value: Option<String>,
    max: usize,
) -> Option<String> {
    match value.as_deref().map(str::trim) {
        None | Some("") => errors.push(field, "obrigatório"),
        Some(v) if v.chars().count() > max => {
            errors.push(field, format!("no máximo {max} caracteres"))
        }
        Some(v) if v.contains('\0') => errors.push(field, NUL_CHARACTER_MESSAGE),
        Some(v) => return Some(v.to_owned()),
    }
    None
}

/// Where an imported consent came from (docs/imports.md, "Provenance"): what its creation's
/// log entry, its record and its receipt say besides the subject's original answer date (the
/// request's own `dataTitularRespondeuConsentimento`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportProvenance {
    /// The import that brought it in.
    pub import_id: Uuid,
    /// `idExterno`: the company's own id of the consent.
    pub external_id: String,
    /// `origem`: the system or channel it came from.
    pub origin: String,
}

/// Where an import stands (`status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = StatusImportacao))]
#[serde(rename_all = "lowercase")]
pub enum ImportStatus {
    /// The file is being read; every line validated and staged, nothing registered yet.
    Validando,
    /// Its valid lines are being registered on the PGCC.
    Registrando,
    /// Every valid line was registered or failed.
    Concluida,
    /// Cancelled: no further line is registered.
    Cancelada,
}

impl ImportStatus {
    /// The wire and database name.
    pub fn as_str(self) -> &'static str {
        match self {
            ImportStatus::Validando => "validando",
            ImportStatus::Registrando => "registrando",
            ImportStatus::Concluida => "concluida",
            ImportStatus::Cancelada => "cancelada",
        }
    }

    /// Parses the wire and database name.
    pub fn parse(raw: &str) -> Option<ImportStatus> {
        [
            ImportStatus::Validando,
            ImportStatus::Registrando,
            ImportStatus::Concluida,
            ImportStatus::Cancelada,
        ]
        .into_iter()
        .find(|s| s.as_str() == raw)
    }
}

/// An import and its counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The import's id.
    pub id: Uuid,
    /// The company that sent it.
    pub company_id: CompanyId,
    /// Where it stands.
    pub status: ImportStatus,
    /// Lines read (the header not counted).
    pub lines: u64,
    /// Lines whose rules held, staged for registration.
    pub valid: u64,
    /// Lines registered on the PGCC (or confirmed there).
    pub registered: u64,
    /// Lines refused at validation or at registration.
    pub failed: u64,
    /// When it was received.
    pub created_at: DateTime<Utc>,
    /// When it ended (concluded or cancelled).
    pub finished_at: Option<DateTime<Utc>>,
}

/// One broken rule of one line (`GET /api/importacoes/{id}/erros`): never a value of the line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportLineError {
    #[serde(rename = "linha")]
    /// The line's number in the file (1: its first line; a CSV's header is line 1).
    pub line: u64,
    #[serde(rename = "campo")]
    /// The field's JSON name, or `linha` for the line as a whole.
    pub field: String,
    #[serde(rename = "mensagem")]
    /// What is wrong, in Portuguese.
    pub message: String,
}

/// The `data` of `importacao.concluida`: the import's id and final counts (no personal data).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ImportacaoConcluida))]
pub struct ImportCompletedData {
    /// The import's id.
    #[serde(rename = "importacaoId")]
    pub import_id: Uuid,
    /// Lines read.
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 0, maximum = 9223372036854775807_i64)
    )]
    pub linhas: u64,
    /// Lines whose rules held.
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 0, maximum = 9223372036854775807_i64)
    )]
    pub validas: u64,
    /// Lines registered on the PGCC (or confirmed there).
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 0, maximum = 9223372036854775807_i64)
    )]
    pub registradas: u64,
    /// Lines refused.
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 0, maximum = 9223372036854775807_i64)
    )]
    pub falhas: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    fn active(now: DateTime<Utc>) -> ImportLineDraft {
        ImportLineDraft {
            external_id: Some("crm-1".into()),
            origin: Some("crm".into()),
            proof_sha256: None,
            pgcc_id: None,
            evidence_sha256: Vec::new(),
            consent: ConsentRequestDraft {
                template_id: Some("tpl".into()),
                subject_cpf: Some("529.982.247-25".into()),
                access_mode: Some("Direto".into()),
                subject_type: Some("PessoaFisica".into()),
                consent_expires_at: Some(now + Duration::days(30)),
                subject_answered_at: Some(now - Duration::days(400)),
                proof_of_collection: Some("papel".into()),
                consenting_cnpj: None,
            },
        }
    }

    #[test]
    fn a_line_with_a_past_answer_is_an_active_creation() {
        let now = Utc::now();
        let line = active(now).validate(now).unwrap();
        assert_eq!(line.variant, CreationVariant::Active);
        assert_eq!(line.external_id, "crm-1");
    }

    #[test]
    fn the_proofs_hash_stands_for_the_proof() {
        let now = Utc::now();
        let mut draft = active(now);
        draft.consent.proof_of_collection = None;
        draft.proof_sha256 = Some("AB".repeat(32));
        let line = draft.validate(now).unwrap();
        let expected = format!("sha256:{}", "ab".repeat(32));
        assert_eq!(
            line.consent.proof_of_collection.as_deref(),
            Some(expected.as_str())
        );
    }

    #[test]
    fn every_broken_rule_is_named_with_the_creations_own() {
        let now = Utc::now();
        let mut draft = active(now);
        draft.external_id = None;
        draft.consent.subject_cpf = Some("529.982.247-26".into());
        draft.consent.subject_answered_at = Some(now + Duration::days(1));
        let fields: Vec<String> = draft
            .validate(now)
            .unwrap_err()
            .0
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(
            fields,
            [
                "idExterno",
                "cpfTitular",
                "dataTitularRespondeuConsentimento"
            ]
        );
    }

    #[test]
    fn a_line_without_an_answer_is_pending() {
        let now = Utc::now();
        let mut draft = active(now);
        draft.consent.subject_answered_at = None;
        draft.consent.proof_of_collection = None;
        assert_eq!(
            draft.validate(now).unwrap().variant,
            CreationVariant::Pending
        );
    }
}
