//! The reason given for a status change (`motivo` on the wire): by the company when it revokes
//! or withdraws a request, or by the subject on the PGCC when it refuses or revokes.

use serde::Serialize;

/// The longest reason kept, in characters (Unicode scalar values, as JSON Schema's `maxLength`
/// counts them).
pub const REASON_MAX_CHARS: usize = 500;

/// A reason: 1 to [`REASON_MAX_CHARS`] characters, free text. It may hold anything a person
/// typed, so it is never logged (its `Debug` shows only its length).
#[derive(Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Reason(String);

/// Why a company's `motivo` was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReasonError {
    /// Empty, or only white space.
    #[error("o motivo não pode ser vazio")]
    Empty,
    /// Over [`REASON_MAX_CHARS`] characters.
    #[error("o motivo deve ter no máximo 500 caracteres")]
    TooLong,
    /// A control character (other than line breaks and tabs): nothing a person types.
    #[error("o motivo não pode conter caracteres de controle")]
    ControlCharacter,
}

impl Reason {
    /// A company's reason, kept exactly as sent when it has 1 to 500 characters, not all white
    /// space, and no control character other than `\n`, `\r` and `\t`.
    pub fn parse(raw: &str) -> Result<Reason, ReasonError> {
        if raw.trim().is_empty() {
            return Err(ReasonError::Empty);
        }
        if raw.chars().count() > REASON_MAX_CHARS {
            return Err(ReasonError::TooLong);
        }
        if raw
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
        {
            return Err(ReasonError::ControlCharacter);
        }
        Ok(Reason(raw.to_owned()))
    }

    /// The PGCC's reason, as far as we keep it: its first 500 characters; `None` when it gave
    /// none or only white space. The PGCC's text is taken, not judged: an over-long one is cut,
    /// not refused, so that the status change it came with is never lost.
    pub fn from_pgcc(raw: Option<&str>) -> Option<Reason> {
        let raw = raw?;
        if raw.trim().is_empty() {
            return None;
        }
        Some(Reason(raw.chars().take(REASON_MAX_CHARS).collect()))
    }

    /// A reason read back from storage, where it was checked on the way in.
    pub fn stored(raw: String) -> Reason {
        Reason(raw)
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Motivo({} caracteres)", self.0.chars().count())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_of_one_to_500_characters_is_kept_as_sent() {
        for raw in ["x", " cliente pediu\nno balcão ", &"é".repeat(500)] {
            assert_eq!(Reason::parse(raw).unwrap().as_str(), raw);
        }
    }

    #[test]
    fn an_empty_blank_long_or_control_reason_is_refused() {
        assert_eq!(Reason::parse(""), Err(ReasonError::Empty));
        assert_eq!(Reason::parse(" \n\t"), Err(ReasonError::Empty));
        assert_eq!(Reason::parse(&"é".repeat(501)), Err(ReasonError::TooLong));
        assert_eq!(Reason::parse("a\u{0}b"), Err(ReasonError::ControlCharacter));
        assert_eq!(
            Reason::parse("a\u{1b}[31m"),
            Err(ReasonError::ControlCharacter)
        );
    }

    #[test]
    fn the_pgccs_reason_is_cut_to_500_characters_and_a_blank_one_is_none() {
        assert_eq!(Reason::from_pgcc(None), None);
        assert_eq!(Reason::from_pgcc(Some("  ")), None);
        let long = "ã".repeat(700);
        let kept = Reason::from_pgcc(Some(&long)).unwrap();
        assert_eq!(kept.as_str().chars().count(), 500);
        assert_eq!(
            Reason::from_pgcc(Some("mudei de ideia")).unwrap().as_str(),
            "mudei de ideia"
        );
    }

    #[test]
    fn debug_shows_the_length_only_and_json_the_text() {
        let reason = Reason::parse("meu CPF é 529.982.247-25").unwrap();
        assert_eq!(format!("{reason:?}"), "Motivo(24 caracteres)");
        assert_eq!(
            serde_json::to_string(&reason).unwrap(),
            r#""meu CPF é 529.982.247-25""#
        );
    }
}
