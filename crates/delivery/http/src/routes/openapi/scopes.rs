//! Each `/api` operation states the scopes that grant it (from the one grant table,
//! `routes::grants`): an `x-escopos` list, a line at the end of its description, and its 403.

use serde_json::{json, Value};

use crate::routes::grants;

/// Written into the serialized document: utoipa's model holds no extension per operation.
pub fn apply(doc: &mut Value) {
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        if !path.starts_with("/api/") {
            continue;
        }
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, operation) in item.iter_mut() {
            let Some(grant) = grants::find(method, path) else {
                continue;
            };
            let names = grant.scopes.names();
            let line = format!(
                "Escopos: {} (a chave precisa de um deles; fora deles, 403).",
                names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let description = match operation["description"].as_str() {
                Some(text) if !text.is_empty() => format!("{text}\n\n{line}"),
                _ => line,
            };
            operation["description"] = Value::String(description);
            operation["x-escopos"] = json!(names);
            // the 403 answers in the same media types as the 401 every operation has, with
            // the message the server gives
            let mut content = operation["responses"]["401"]["content"].clone();
            let example = json!({"sem_escopo": {
                "summary": "The key holds none of the operation's scopes",
                "value": {"sucesso": false, "isPgccErro": false, "pgccCodigoErro": "OK",
                    "mensagem": format!(
                        "A Api-Key não tem escopo para esta operação; escopos que a permitem: {}.",
                        names.join(", ")
                    ),
                    "data": {}},
            }});
            for media in content
                .as_object_mut()
                .into_iter()
                .flat_map(|c| c.values_mut())
            {
                media["examples"] = example.clone();
            }
            operation["responses"]["403"] = json!({
                "description": "The key holds none of the scopes this operation requires (see x-escopos); nothing was done.",
                "content": content,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::routes::openapi::document_json;

    #[test]
    fn every_api_operation_states_its_scopes_and_its_403() {
        let doc = document_json();
        let mut seen = 0;
        for (path, item) in doc["paths"].as_object().unwrap() {
            if !path.starts_with("/api/") {
                continue;
            }
            for (method, op) in item.as_object().unwrap() {
                let scopes = op["x-escopos"].as_array();
                assert!(
                    scopes.is_some_and(|s| !s.is_empty()),
                    "{method} {path}: {op}"
                );
                assert!(op["description"].as_str().unwrap().contains("Escopos: "));
                assert!(
                    op["responses"]["403"]["content"].is_object(),
                    "{method} {path}"
                );
                seen += 1;
            }
        }
        assert!(seen >= 20);
        let export = &doc["paths"]["/api/titulares/consentimentos"]["post"];
        assert_eq!(
            export["x-escopos"],
            serde_json::json!(["integracao", "auditor"])
        );
    }
}
