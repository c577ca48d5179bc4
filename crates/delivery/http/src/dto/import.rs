//! The wire shapes of `/api/importacoes` (docs/imports.md): one line of an imported file and the
//! import's status.

use chrono::{DateTime, Utc};
use domain::{ConsentRequestDraft, ImportLineDraft, ImportStatus};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// One line of an imported file (a JSON Lines object, or a CSV row under a header of these
/// names): the fields of `criar/ativo` (with `dataTitularRespondeuConsentimento`, which may be in
/// the past, and a proof) or of `criar/pendente` (with neither), plus the import's own.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = LinhaImportacao)]
pub struct LinhaImportacao {
    /// The company's own id of the consent: the line's idempotency key, unique per company.
    #[schema(max_length = 200, min_length = 1, example = "crm-000123")]
    #[serde(rename = "idExterno")]
    pub id_externo: Option<String>,
    /// The system or channel the consent came from.
    #[schema(max_length = 200, min_length = 1, example = "crm-legado")]
    pub origem: Option<String>,
    /// The proof's SHA-256 (64 hexadecimal digits), in place of `provaColeta`.
    #[schema(max_length = 64, min_length = 64, pattern = "^[0-9a-fA-F]{64}$")]
    #[serde(rename = "provaColetaSha256")]
    pub prova_coleta_sha256: Option<String>,
    /// The consent's id on the PGCC, when it is there already (not created again).
    #[schema(max_length = 200)]
    #[serde(rename = "pgccId")]
    pub pgcc_id: Option<String>,
    /// As `criar/ativo`.
    #[schema(max_length = 200)]
    #[serde(rename = "casoDeUsoIdTemplate")]
    pub template_id: Option<String>,
    /// As `criar/ativo`.
    #[schema(max_length = 14, min_length = 11)]
    #[serde(rename = "cpfTitular")]
    pub subject_cpf: Option<String>,
    /// As `criar/ativo`: `Direto` or `Indireto`.
    #[schema(max_length = 8)]
    #[serde(rename = "modalidadeAcesso")]
    pub access_mode: Option<String>,
    /// As `criar/ativo`: `PessoaFisica`.
    #[schema(max_length = 12)]
    #[serde(rename = "tipoTitular")]
    pub subject_type: Option<String>,
    /// As `criar/ativo`.
    #[schema(value_type = Option<String>, format = DateTime, max_length = 40)]
    #[serde(rename = "dataExpiracaoConsentimento")]
    pub consent_expires_at: Option<DateTime<Utc>>,
    /// As `criar/ativo` (may be in the past); absent for a pending line.
    #[schema(value_type = Option<String>, format = DateTime, max_length = 40)]
    #[serde(rename = "dataTitularRespondeuConsentimento")]
    pub subject_answered_at: Option<DateTime<Utc>>,
    /// As `criar/ativo`; absent for a pending line.
    #[schema(max_length = 100000)]
    #[serde(rename = "provaColeta")]
    pub proof_of_collection: Option<String>,
    /// As `criar/ativo`.
    #[schema(max_length = 18)]
    #[serde(rename = "cnpjAnuente")]
    pub consenting_cnpj: Option<String>,
    /// Evidence files the company uploaded first (`PUT /api/arquivos/{sha256}`), by their
    /// SHA-256, linked to the request the line creates: a JSON list, or in a CSV cell the hashes
    /// separated by spaces. Each must be one of the company's files (docs/evidencias.md).
    #[schema(value_type = Option<Vec<HashArquivo>>, max_items = 20)]
    #[serde(rename = "arquivosSha256", default, deserialize_with = "hash_list")]
    pub evidence_sha256: Option<Vec<String>>,
}

/// `arquivosSha256`: a list, or one text of hashes separated by spaces (a CSV cell).
fn hash_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum ListOrText {
        List(Vec<String>),
        Text(String),
    }
    Ok(match Option::<ListOrText>::deserialize(d)? {
        None => None,
        Some(ListOrText::List(list)) => Some(list),
        Some(ListOrText::Text(text)) => Some(text.split_whitespace().map(str::to_owned).collect()),
    })
}

/// An evidence file's name: its SHA-256, 64 hex digits.
pub struct HashArquivo;

impl utoipa::PartialSchema for HashArquivo {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .min_length(Some(64))
            .max_length(Some(64))
            .pattern(Some("^[0-9a-fA-F]{64}$"))
            .into()
    }
}

impl utoipa::ToSchema for HashArquivo {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("HashArquivo")
    }
}

/// The column names a CSV header may use: the fields of [`LinhaImportacao`].
pub const COLUMNS: [&str; 13] = [
    "idExterno",
    "origem",
    "provaColetaSha256",
    "pgccId",
    "casoDeUsoIdTemplate",
    "cpfTitular",
    "modalidadeAcesso",
    "tipoTitular",
    "dataExpiracaoConsentimento",
    "dataTitularRespondeuConsentimento",
    "provaColeta",
    "cnpjAnuente",
    "arquivosSha256",
];

impl From<LinhaImportacao> for ImportLineDraft {
    fn from(l: LinhaImportacao) -> Self {
        ImportLineDraft {
            external_id: l.id_externo,
            origin: l.origem,
            proof_sha256: l.prova_coleta_sha256,
            pgcc_id: l.pgcc_id,
            evidence_sha256: l.evidence_sha256.unwrap_or_default(),
            consent: ConsentRequestDraft {
                template_id: l.template_id,
                subject_cpf: l.subject_cpf,
                access_mode: l.access_mode,
                subject_type: l.subject_type,
                consent_expires_at: l.consent_expires_at,
                subject_answered_at: l.subject_answered_at,
                proof_of_collection: l.proof_of_collection,
                consenting_cnpj: l.consenting_cnpj,
            },
        }
    }
}

/// An import and where it stands (`GET /api/importacoes/{id}`, and the answer of its `POST`).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Importacao)]
pub struct Importacao {
    /// The import's id.
    pub id: Uuid,
    /// `validando` (the file is being read), `registrando`, `concluida` or `cancelada`.
    pub status: ImportStatus,
    /// Lines read (a CSV's header not counted).
    #[schema(minimum = 0, maximum = 1000000000)]
    pub linhas: u64,
    /// Lines whose rules held, staged for registration.
    #[schema(minimum = 0, maximum = 1000000000)]
    pub validas: u64,
    /// Lines registered on the PGCC.
    #[schema(minimum = 0, maximum = 1000000000)]
    pub registradas: u64,
    /// Lines refused, at validation or registration (`GET /api/importacoes/{id}/erros`).
    #[schema(minimum = 0, maximum = 1000000000)]
    pub falhas: u64,
    /// `registrando`: when the last line should be registered, from the lines ahead of it and
    /// the imports' PGCC rate shared round-robin by the companies importing at once;
    /// `concluida` / `cancelada`: when it ended; `validando`: null.
    #[schema(value_type = Option<String>, format = DateTime, max_length = 40)]
    #[serde(rename = "fimEstimado")]
    pub fim_estimado: Option<DateTime<Utc>>,
}

/// The CSV file of `POST /api/importacoes`, as text: bounded by `importacao.max_bytes`' default
/// (2 GiB), the largest file the service takes unless an operator raises it.
pub struct ArquivoCsv;

impl utoipa::PartialSchema for ArquivoCsv {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .max_length(Some(2 << 30))
            .into()
    }
}

impl utoipa::ToSchema for ArquivoCsv {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("ArquivoCsv")
    }
}
