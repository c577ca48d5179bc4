//! The wire shapes of the evidence files (`.../arquivos`; docs/evidencias.md).

use chrono::{DateTime, Utc};
use domain::EvidenceFile;
use serde::Serialize;
use utoipa::ToSchema;

/// One evidence file of the company: what is known of it whether or not its bytes are kept.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = ArquivoEvidencia)]
pub struct ArquivoEvidencia {
    /// The SHA-256 of its bytes, lower-case hex: its name within the company.
    #[schema(
        max_length = 64,
        min_length = 64,
        pattern = "^[0-9a-f]{64}$",
        example = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    )]
    pub sha256: String,
    /// Its size in bytes.
    #[schema(minimum = 0, maximum = 1099511627776.0, example = 48213)]
    pub tamanho: u64,
    /// Its media type, as it was uploaded.
    #[schema(max_length = 100, example = "application/pdf")]
    pub tipo: String,
    /// When the company first uploaded it.
    #[schema(value_type = String, format = DateTime, max_length = 40)]
    #[serde(rename = "criadoEm")]
    pub created_at: DateTime<Utc>,
    /// When retention deleted its bytes (it then answers 410 to a download); `null` while kept.
    #[schema(value_type = Option<String>, format = DateTime, max_length = 40)]
    #[serde(rename = "bytesApagadosEm")]
    pub bytes_deleted_at: Option<DateTime<Utc>>,
}

impl From<EvidenceFile> for ArquivoEvidencia {
    fn from(file: EvidenceFile) -> Self {
        ArquivoEvidencia {
            sha256: file.sha256,
            tamanho: file.size,
            tipo: file.media_type,
            created_at: file.created_at,
            bytes_deleted_at: file.bytes_deleted_at,
        }
    }
}

/// A request's evidence files, oldest link first.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = ArquivosEvidencia)]
pub struct ArquivosEvidencia {
    #[schema(max_items = 10000)]
    pub itens: Vec<ArquivoEvidencia>,
}

/// The bytes of an evidence file, as they are (a signed PDF, an image, a recording): bounded by
/// `evidencias.max_bytes`' default (20 MiB), the largest file the service takes unless an
/// operator raises it.
pub struct ArquivoBinario;

impl utoipa::PartialSchema for ArquivoBinario {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .format(Some(utoipa::openapi::schema::SchemaFormat::KnownFormat(
                utoipa::openapi::schema::KnownFormat::Binary,
            )))
            .max_length(Some(20 << 20))
            .into()
    }
}

impl utoipa::ToSchema for ArquivoBinario {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("ArquivoBinario")
    }
}
