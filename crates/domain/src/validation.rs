//! Field-level validation failures, reported to clients by the JSON name of the field.

use serde::Serialize;

/// One broken rule on one input field, serialized as `{"campo", "mensagem"}`; `field` is the
/// field's name on the wire (camelCase).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// The field's JSON name (`cpfTitular`); see [`crate::consent_request::field`].
    #[serde(rename = "campo")]
    pub field: String,
    /// What is wrong, for the client, in Portuguese; never quotes the submitted value.
    #[serde(rename = "mensagem")]
    pub message: String,
}

impl FieldError {
    /// The error `message` on the field `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Every broken rule of one input, so a client can fix them all in one round trip.
#[derive(Debug, Clone, PartialEq, Eq, Default, thiserror::Error)]
#[error("{}", count_of_fields(.0.len()))]
pub struct ValidationErrors(pub Vec<FieldError>);

/// "1 campo inválido", "2 campos inválidos": number agreement, not "campo(s)".
fn count_of_fields(n: usize) -> String {
    match n {
        1 => "1 campo inválido".to_owned(),
        n => format!("{n} campos inválidos"),
    }
}

impl ValidationErrors {
    /// Exactly one broken rule, for checks that have a single field.
    pub fn single(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self(vec![FieldError::new(field, message)])
    }

    /// Records one more broken rule.
    pub fn push(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError::new(field, message));
    }

    /// Whether no rule was broken.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The broken rules, in the order they were found.
    pub fn fields(&self) -> &[FieldError] {
        &self.0
    }

    /// `Ok(value)` when no rule was broken, the collected errors otherwise.
    pub fn into_result<T>(self, value: T) -> Result<T, ValidationErrors> {
        if self.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn field_error_serializes_as_campo_and_mensagem() {
        let e = FieldError::new("cpfTitular", "o CPF deve ter 11 dígitos");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"campo": "cpfTitular", "mensagem": "o CPF deve ter 11 dígitos"})
        );
    }

    #[test]
    fn validation_error_fields_serialize_as_a_list_of_field_errors() {
        let mut errors = ValidationErrors::single("a", "m1");
        errors.push("b", "m2");
        assert_eq!(
            serde_json::to_value(errors.fields()).unwrap(),
            json!([{"campo": "a", "mensagem": "m1"}, {"campo": "b", "mensagem": "m2"}])
        );
    }

    #[test]
    fn push_keeps_the_order_of_the_broken_rules() {
        let mut errors = ValidationErrors::default();
        assert!(errors.is_empty());
        errors.push("x", "1");
        errors.push("y", "2");
        let fields: Vec<&str> = errors.fields().iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["x", "y"]);
    }

    #[test]
    fn into_result_is_ok_when_no_rule_was_broken() {
        assert_eq!(ValidationErrors::default().into_result(7), Ok(7));
    }

    #[test]
    fn into_result_is_err_with_the_collected_errors_otherwise() {
        let errors = ValidationErrors::single("x", "m");
        assert_eq!(errors.clone().into_result(7), Err(errors));
    }

    #[test]
    fn display_counts_the_invalid_fields() {
        let mut errors = ValidationErrors::single("x", "m");
        errors.push("y", "n");
        assert_eq!(errors.to_string(), "2 campos inválidos");
    }
}
