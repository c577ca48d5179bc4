//! The envelope as documented in the OpenAPI. Responses are serialized with `domain::Envelope`;
//! a test checks that both have the same fields, so the two cannot drift apart.

use std::borrow::Cow;

use domain::PgccStatusCode;
use serde::Serialize;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// Every response body: success flag, PGCC error marker and code, message, payload.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Envelope<T: ToSchema> {
    /// Whether the operation succeeded.
    #[serde(rename = "sucesso")]
    pub success: bool,
    /// Whether the failure came from the PGCC (the external consent platform).
    #[serde(rename = "isPgccErro")]
    pub is_pgcc_error: bool,
    /// `OK` unless `isPgccErro`; then the name of the PGCC's HTTP status.
    #[serde(rename = "pgccCodigoErro")]
    pub pgcc_error_code: PgccCodigoErro,
    /// A sentence for people; never parse it.
    #[serde(rename = "mensagem")]
    pub message: Option<String>,
    pub data: T,
}

/// The HTTP status names of spec 2.4 (and `TooEarly`), taken from `domain::PgccStatusCode::ALL`.
#[derive(Serialize)]
pub struct PgccCodigoErro(pub PgccStatusCode);

impl PartialSchema for PgccCodigoErro {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("Nome do status HTTP associado a um erro da PGCC (`OK` quando não houve erro da PGCC)."))
            .enum_values(Some(PgccStatusCode::ALL.iter().map(|c| c.name())))
            .into()
    }
}

impl ToSchema for PgccCodigoErro {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("PgccCodigoErro")
    }
}

/// `data` of a failure: empty, or the broken field rules of a 422.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Erro {
    /// Present on 422 validation failures: one entry per broken rule.
    #[serde(rename = "erros")]
    pub errors: Option<Vec<CampoInvalido>>,
}

#[derive(Serialize, ToSchema)]
pub struct CampoInvalido {
    /// The JSON name of the field.
    #[serde(rename = "campo")]
    pub field: String,
    #[serde(rename = "mensagem")]
    pub message: String,
}

/// `data` of a success that has nothing to return.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Vazio {}
