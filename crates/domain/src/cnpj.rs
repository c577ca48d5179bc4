//! CNPJ, a company's tax identifier: numeric, or the alphanumeric form (first 12 characters
//! A-Z or 0-9, two numeric check digits; character value = ASCII code - 48; mod 11, weights 2..9
//! from the right).

use serde::{Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cnpj(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CnpjError {
    #[error("o CNPJ deve ter 14 caracteres")]
    Length,
    #[error("o CNPJ contém caracteres inválidos")]
    Characters,
    #[error("o CNPJ não pode ter todos os caracteres iguais")]
    RepeatedDigits,
    #[error("os dígitos verificadores do CNPJ não conferem")]
    CheckDigits,
}

impl Cnpj {
    /// Accepts `11222333000181`, `11.222.333/0001-81`, and the alphanumeric `12.ABC.345/01DE-35`
    /// (letters upper-cased); returns the 14 characters unmasked.
    pub fn parse(raw: &str) -> Result<Cnpj, CnpjError> {
        todo!("{raw}")
    }

    /// The 14 characters, unmasked.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Serialize for Cnpj {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}
