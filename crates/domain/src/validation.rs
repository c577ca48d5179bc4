//! Field-level validation failures, reported to clients by the JSON name of the field.

use serde::Serialize;

/// One broken rule on one input field. `campo` is the field's name on the wire (camelCase).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    pub campo: String,
    pub mensagem: String,
}

impl FieldError {
    pub fn new(campo: impl Into<String>, mensagem: impl Into<String>) -> Self {
        Self {
            campo: campo.into(),
            mensagem: mensagem.into(),
        }
    }
}

/// Every broken rule of one input, so a client can fix them all in one round trip.
#[derive(Debug, Clone, PartialEq, Eq, Default, thiserror::Error)]
#[error("{} campo(s) inválido(s)", .0.len())]
pub struct ValidationErrors(pub Vec<FieldError>);

impl ValidationErrors {
    pub fn single(campo: impl Into<String>, mensagem: impl Into<String>) -> Self {
        Self(vec![FieldError::new(campo, mensagem)])
    }

    pub fn push(&mut self, campo: impl Into<String>, mensagem: impl Into<String>) {
        self.0.push(FieldError::new(campo, mensagem));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

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
