//! Rules between fields of one body that JSON Schema states with `if`/`then` and utoipa's model
//! cannot hold, added to the serialized document here, in one place.

use domain::AccessMode;
use serde_json::{json, Value};

/// `modalidadeAcesso: Indireto` requires `cnpjAnuente` (a CNPJ, not `null`): both creation
/// bodies.
pub(super) fn apply(doc: &mut Value) {
    for body in ["CriarSolicitacaoAtiva", "CriarSolicitacaoPendente"] {
        let schema = &mut doc["components"]["schemas"][body];
        if let Some(schema) = schema.as_object_mut() {
            schema.insert(
                "if".into(),
                json!({"properties": {"modalidadeAcesso": {"const": AccessMode::Indirect.as_str()}},
                       "required": ["modalidadeAcesso"]}),
            );
            schema.insert(
                "then".into(),
                json!({"required": ["cnpjAnuente"],
                       "properties": {"cnpjAnuente": {"type": "string", "maxLength": 18}}}),
            );
        }
    }
}
