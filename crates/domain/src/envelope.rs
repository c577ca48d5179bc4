//! The response envelope of spec 2.4: every response body of the public API has this shape.

use serde::Serialize;

use crate::PgccStatusCode;

/// Exactly the five fields of the spec, in its wire names.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Envelope<T> {
    pub sucesso: bool,
    pub is_pgcc_erro: bool,
    /// `OK` whenever `is_pgcc_erro` is false; the PGCC's status name otherwise.
    pub pgcc_codigo_erro: PgccStatusCode,
    pub mensagem: Option<String>,
    pub data: T,
}

impl<T> Envelope<T> {
    /// A success: `sucesso: true`, `pgccCodigoErro: OK`, no message.
    pub fn ok(data: T) -> Self {
        todo!()
    }

    /// A success with a message for the human reading it.
    pub fn ok_with_message(data: T, mensagem: impl Into<String>) -> Self {
        todo!()
    }

    /// A failure of ours (validation, auth, not found...): `isPgccErro: false`, code `OK`.
    pub fn failure(mensagem: impl Into<String>, data: T) -> Self {
        todo!()
    }

    /// A failure that came from the PGCC, carrying the PGCC's status name.
    pub fn pgcc_failure(codigo: PgccStatusCode, mensagem: impl Into<String>, data: T) -> Self {
        todo!()
    }
}
