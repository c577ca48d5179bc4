//! OpenAPI schemas of the domain's wire values (feature `openapi`, turned on by the HTTP crate
//! for its document; off by default: the domain itself needs none of it). The closed sets of
//! strings the events and the API carry are documented here from the domain's own lists and
//! names, under the component names the document has always used; the event `data` types derive
//! theirs (`#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]`), so what the document
//! says a webhook carries is what serde writes.

use std::borrow::Cow;

use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

use crate::{AccessMode, ConsentStatus, PgccHealthCode, PgccOperation, SubjectType};

/// A string schema of `values`, described by `description`.
pub fn text_enumeration<'a>(
    description: &str,
    values: impl IntoIterator<Item = &'a str>,
) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
        .enum_values(Some(values.into_iter().map(str::to_owned)))
        .into()
}

/// `ToSchema` for a domain enumeration: its wire names under the component `$name`.
macro_rules! enumeration {
    ($type:ty, $name:literal, $description:expr, $values:expr) => {
        impl PartialSchema for $type {
            fn schema() -> RefOr<Schema> {
                text_enumeration($description, $values)
            }
        }

        impl ToSchema for $type {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed($name)
            }
        }
    };
}

enumeration!(
    ConsentStatus,
    "StatusSolicitacao",
    "Status (efetivo) de uma solicitação de consentimento.",
    ConsentStatus::ALL.map(ConsentStatus::as_str)
);
enumeration!(
    AccessMode,
    "ModalidadeAcesso",
    "Modalidade de acesso; `Indireto` exige `cnpjAnuente`.",
    [AccessMode::Direct.as_str(), AccessMode::Indirect.as_str()]
);
enumeration!(
    SubjectType,
    "TipoTitular",
    "Tipo de titular dos dados.",
    [SubjectType::NaturalPerson.as_str()]
);
enumeration!(
    PgccHealthCode,
    "CodigoStatusPgcc",
    "Saúde da PGCC vista pelo serviço: `OK`, `PARTIAL_FAILURE` (algumas operações indisponíveis) ou `UNAVAILABLE` (nenhuma chamada respondida).",
    [
        PgccHealthCode::Ok.as_str(),
        PgccHealthCode::PartialFailure.as_str(),
        PgccHealthCode::Unavailable.as_str()
    ]
);
enumeration!(
    PgccOperation,
    "OperacaoPgcc",
    "Uma operação da PGCC: `criacao`, `status`, `revogacao` ou `casos-de-uso`.",
    PgccOperation::ALL.map(PgccOperation::as_str)
);
