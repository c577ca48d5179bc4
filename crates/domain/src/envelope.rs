//! The response envelope of spec 2.4: every response body of the public API has this shape.

use serde::Serialize;

use crate::PgccStatusCode;

/// Exactly the five fields of the spec, in its wire names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Envelope<T> {
    /// `sucesso`: whether the request did what was asked.
    #[serde(rename = "sucesso")]
    pub success: bool,
    /// `isPgccErro`: whether the failure came from the PGCC rather than from this service.
    #[serde(rename = "isPgccErro")]
    pub is_pgcc_error: bool,
    /// `OK` whenever `is_pgcc_error` is false; the PGCC's status name otherwise.
    #[serde(rename = "pgccCodigoErro")]
    pub pgcc_error_code: PgccStatusCode,
    /// `mensagem`: a message for the human reading the answer; always set on failures.
    #[serde(rename = "mensagem")]
    pub message: Option<String>,
    /// `data`: the payload of the answer (an object, a list, field errors...).
    pub data: T,
}

impl<T> Envelope<T> {
    /// A success: `sucesso: true`, `pgccCodigoErro: OK`, no message.
    pub fn ok(data: T) -> Self {
        Self {
            success: true,
            is_pgcc_error: false,
            pgcc_error_code: PgccStatusCode::OK,
            message: None,
            data,
        }
    }

    /// A success with a message for the human reading it.
    pub fn ok_with_message(data: T, message: impl Into<String>) -> Self {
        Self {
            message: Some(message.into()),
            ..Self::ok(data)
        }
    }

    /// A failure of ours (validation, auth, not found...): `isPgccErro: false`, code `OK`.
    pub fn failure(message: impl Into<String>, data: T) -> Self {
        Self {
            success: false,
            is_pgcc_error: false,
            pgcc_error_code: PgccStatusCode::OK,
            message: Some(message.into()),
            data,
        }
    }

    /// A failure that came from the PGCC, carrying the PGCC's status name.
    pub fn pgcc_failure(code: PgccStatusCode, message: impl Into<String>, data: T) -> Self {
        Self {
            success: false,
            is_pgcc_error: true,
            pgcc_error_code: code,
            message: Some(message.into()),
            data,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn to_json<T: Serialize>(envelope: &Envelope<T>) -> Value {
        serde_json::to_value(envelope).unwrap()
    }

    #[test]
    fn ok_is_a_success_without_message_and_code_ok() {
        let e = Envelope::ok(42);
        assert!(e.success);
        assert!(!e.is_pgcc_error);
        assert_eq!(e.pgcc_error_code, PgccStatusCode::OK);
        assert_eq!(e.message, None);
        assert_eq!(e.data, 42);
    }

    #[test]
    fn ok_with_message_is_a_success_carrying_the_message() {
        let e = Envelope::ok_with_message("x", "tudo certo");
        assert!(e.success);
        assert!(!e.is_pgcc_error);
        assert_eq!(e.pgcc_error_code, PgccStatusCode::OK);
        assert_eq!(e.message.as_deref(), Some("tudo certo"));
        assert_eq!(e.data, "x");
    }

    #[test]
    fn failure_is_not_a_pgcc_error_and_keeps_code_ok() {
        let e = Envelope::failure("campo inválido", vec![1, 2]);
        assert!(!e.success);
        assert!(!e.is_pgcc_error);
        assert_eq!(e.pgcc_error_code, PgccStatusCode::OK);
        assert_eq!(e.message.as_deref(), Some("campo inválido"));
        assert_eq!(e.data, vec![1, 2]);
    }

    #[test]
    fn pgcc_failure_is_a_pgcc_error_carrying_the_given_code() {
        let e = Envelope::pgcc_failure(PgccStatusCode::Conflict, "conflito no PGCC", ());
        assert!(!e.success);
        assert!(e.is_pgcc_error);
        assert_eq!(e.pgcc_error_code, PgccStatusCode::Conflict);
        assert_eq!(e.message.as_deref(), Some("conflito no PGCC"));
    }

    #[test]
    fn serialized_envelope_has_exactly_the_five_wire_fields() {
        let value = to_json(&Envelope::ok(json!({})));
        let object = value.as_object().unwrap();
        let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "data",
                "isPgccErro",
                "mensagem",
                "pgccCodigoErro",
                "sucesso"
            ]
        );
    }

    #[test]
    fn serialized_success_writes_null_mensagem_and_code_ok() {
        let value = to_json(&Envelope::ok(json!({"id": 1})));
        assert_eq!(
            value,
            json!({
                "sucesso": true,
                "isPgccErro": false,
                "pgccCodigoErro": "OK",
                "mensagem": null,
                "data": {"id": 1}
            })
        );
    }

    #[test]
    fn serialized_list_success_carries_the_array_in_data() {
        let value = to_json(&Envelope::ok(vec!["a", "b"]));
        assert_eq!(value["data"], json!(["a", "b"]));
    }

    #[test]
    fn serialized_failure_writes_the_message_and_code_ok() {
        let value = to_json(&Envelope::failure("não encontrado", json!({})));
        assert_eq!(
            value,
            json!({
                "sucesso": false,
                "isPgccErro": false,
                "pgccCodigoErro": "OK",
                "mensagem": "não encontrado",
                "data": {}
            })
        );
    }

    #[test]
    fn serialized_pgcc_failure_writes_the_pgcc_status_name() {
        let value = to_json(&Envelope::pgcc_failure(
            PgccStatusCode::ServiceUnavailable,
            "o PGCC está indisponível",
            Vec::<u8>::new(),
        ));
        assert_eq!(
            value,
            json!({
                "sucesso": false,
                "isPgccErro": true,
                "pgccCodigoErro": "ServiceUnavailable",
                "mensagem": "o PGCC está indisponível",
                "data": []
            })
        );
    }
}
