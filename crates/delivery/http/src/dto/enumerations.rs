//! The closed sets of strings the API answers with, as OpenAPI enumerations built from the
//! domain's own lists (one source: a status or event type added to the domain appears here).
//! These types only describe the document (`value_type = ...`); the DTOs keep plain strings.

use std::borrow::Cow;

use domain::{EventType, TransitionCause};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// A string schema of `values`, described by `description` (the domain's helper: one way to
/// write an enumeration).
pub(crate) use domain::openapi::text_enumeration;

/// The enumerations the domain documents itself (its feature `openapi`), under the names the
/// DTOs' `value_type = ...` use.
pub use domain::ConsentStatus as StatusSolicitacao;
pub use domain::PgccHealthCode as CodigoStatusPgcc;
pub use domain::PgccOperation as OperacaoPgcc;

macro_rules! enumeration {
    ($name:ident, $description:expr, $values:expr) => {
        #[doc = $description]
        pub struct $name;

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                text_enumeration($description, $values)
            }
        }

        impl ToSchema for $name {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }
        }
    };
}

enumeration!(
    CausaMudanca,
    "Quem causou a mudança de status: `pgcc` (o titular, na PGCC), `empresa` (por esta API) ou `expiracao`.",
    TransitionCause::ALL.map(TransitionCause::as_str)
);
enumeration!(
    TipoEvento,
    "Tipo de um evento de webhook.",
    EventType::ALL.map(EventType::as_str)
);
enumeration!(
    TipoEventoAssinavel,
    "Tipo de um evento dos dados da empresa: o que uma URL pode assinar (`eventos`) e o que `GET /api/eventos` lista (todos menos `webhook.teste`).",
    EventType::SUBSCRIBABLE.map(EventType::as_str)
);
enumeration!(
    StatusEntrega,
    "Status de uma entrega de webhook: `cancelada` quando a URL foi removida.",
    ["pendente", "entregue", "falhou", "cancelada"]
);

#[cfg(test)]
mod tests {
    use super::*;

    fn values<T: PartialSchema>() -> Vec<String> {
        let schema = serde_json::to_value(T::schema()).unwrap();
        schema["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn the_enumerations_are_the_domains_wire_names() {
        assert_eq!(
            values::<StatusSolicitacao>(),
            ["pendente", "ativo", "recusado", "expirado", "revogado"]
        );
        assert_eq!(values::<CausaMudanca>(), ["pgcc", "empresa", "expiracao"]);
        assert_eq!(values::<TipoEvento>().len(), EventType::ALL.len());
        assert!(values::<TipoEvento>().contains(&"casos-de-uso.sincronizados".to_owned()));
        assert!(values::<TipoEvento>().contains(&"webhook.teste".to_owned()));
        assert_eq!(
            values::<TipoEventoAssinavel>().len(),
            EventType::SUBSCRIBABLE.len()
        );
        assert!(!values::<TipoEventoAssinavel>().contains(&"webhook.teste".to_owned()));
    }
}
