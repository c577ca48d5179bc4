//! CPF (Cadastro de Pessoas Físicas), the data subject's tax identifier. Personal data: its
//! `Debug` is masked and it has no `Display`, so it cannot slip into a log line by accident.

#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Cpf(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpfError {
    #[error("o CPF deve ter 11 dígitos")]
    Length,
    #[error("o CPF contém caracteres inválidos")]
    Characters,
    #[error("o CPF não pode ter todos os dígitos iguais")]
    RepeatedDigits,
    #[error("os dígitos verificadores do CPF não conferem")]
    CheckDigits,
}

impl Cpf {
    /// Accepts `12345678909` or the masked `123.456.789-09`; verifies both check digits and
    /// refuses the ten repeated-digit numbers.
    pub fn parse(raw: &str) -> Result<Cpf, CpfError> {
        todo!("{raw}")
    }

    /// The 11 digits, unmasked.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The form that may be shown or logged: `***.456.789-**`.
    pub fn masked(&self) -> String {
        todo!()
    }
}

impl std::fmt::Debug for Cpf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cpf({})", self.masked())
    }
}
