//! `GET /api/exportacoes`: the query of a scheduled pull of a period's requests.

use serde::Deserialize;
use utoipa::IntoParams;

/// A period of creation days and the form of its lines. Checked by the handler, so a bad
/// value is named in `data.erros`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FiltroExportacao {
    /// First day of creation, `AAAA-MM-DD` (from its midnight UTC).
    #[param(required = true, value_type = String, format = Date, max_length = 10)]
    #[serde(default)]
    pub de: String,
    /// Last day of creation, included.
    #[param(required = true, value_type = String, format = Date, max_length = 10)]
    #[serde(default)]
    pub ate: String,
    /// `jsonl` (default): the items of `GET /api/solicitacao-consentimento`, one a line (the CPF
    /// masked, the proof included). `registro`: each request's ISO/IEC TS 27560 record, as
    /// `GET /api/solicitacao-consentimento/{id}/registro` answers it, one a line.
    #[param(value_type = Option<String>, pattern = "^(jsonl|registro)$", max_length = 8)]
    pub formato: Option<String>,
    /// The `X-Proximo-Cursor` of the previous page.
    #[param(value_type = Option<String>, max_length = 512)]
    pub cursor: Option<String>,
}

/// A page of `GET /api/exportacoes`: gzip bytes (`application/octet-stream`), not an envelope.
pub struct PaginaExportacao;

impl utoipa::PartialSchema for PaginaExportacao {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .format(Some(utoipa::openapi::schema::SchemaFormat::KnownFormat(
                utoipa::openapi::schema::KnownFormat::Binary,
            )))
            .max_length(Some(1 << 30))
            .into()
    }
}

impl utoipa::ToSchema for PaginaExportacao {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("PaginaExportacao")
    }
}
