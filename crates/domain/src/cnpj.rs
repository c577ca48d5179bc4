//! CNPJ, a company's tax identifier: numeric, or the alphanumeric form (first 12 characters
//! A-Z or 0-9, two numeric check digits; character value = ASCII code - 48; mod 11, weights 2..9
//! from the right).

use serde::{Serialize, Serializer};

/// A valid CNPJ, held as its 14 characters (unmasked, letters upper-cased).
///
/// Only [`Cnpj::parse`] builds one. A CNPJ identifies a company, not a person, so unlike
/// [`Cpf`](crate::Cpf) its `Debug` is not masked. Serialized as its 14 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cnpj(String);

/// Why [`Cnpj::parse`] refused its input. The messages (`Display`) are for the API client, in
/// Portuguese, and never quote the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CnpjError {
    /// Not 14 characters once the mask characters and whitespace are stripped.
    #[error("o CNPJ deve ter 14 caracteres")]
    Length,
    /// A character that is not an ASCII letter or digit (nor `.`, `/`, `-`, whitespace), or a
    /// letter in one of the two check-digit positions.
    #[error("o CNPJ contém caracteres inválidos")]
    Characters,
    /// All 14 characters equal: no such CNPJ is issued.
    #[error("o CNPJ não pode ter todos os caracteres iguais")]
    RepeatedDigits,
    /// One of the two check digits does not match the characters before it.
    #[error("os dígitos verificadores do CNPJ não conferem")]
    CheckDigits,
}

impl Cnpj {
    /// Accepts `11222333000181`, `11.222.333/0001-81`, and the alphanumeric `12.ABC.345/01DE-35`
    /// (letters upper-cased); returns the 14 characters unmasked.
    ///
    /// `.`, `/`, `-` and whitespace are stripped wherever they appear; any other character that
    /// is not an ASCII letter or digit is [`CnpjError::Characters`], as is a letter in one of the
    /// two check-digit positions. The checks run in this order: characters, length, numeric
    /// check-digit positions, repeated characters, check digits.
    pub fn parse(raw: &str) -> Result<Cnpj, CnpjError> {
        let mut normalized = String::with_capacity(14);
        for c in raw.chars() {
            match c {
                '.' | '/' | '-' => {}
                c if c.is_whitespace() => {}
                c if c.is_ascii_alphanumeric() => normalized.push(c.to_ascii_uppercase()),
                _ => return Err(CnpjError::Characters),
            }
        }
        let chars = normalized.as_bytes();
        if chars.len() != 14 {
            return Err(CnpjError::Length);
        }
        if !chars[12..].iter().all(u8::is_ascii_digit) {
            return Err(CnpjError::Characters);
        }
        if chars.iter().all(|&c| c == chars[0]) {
            return Err(CnpjError::RepeatedDigits);
        }
        if check_digit(&chars[..12]) != chars[12] || check_digit(&chars[..13]) != chars[13] {
            return Err(CnpjError::CheckDigits);
        }
        Ok(Cnpj(normalized))
    }

    /// The 14 characters, unmasked.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The CNPJ check digit (as an ASCII digit) over `chars` (12 for the first, 13 for the second):
/// each character is worth its ASCII code - 48, weighted 2..9 cycling from the right; the digit
/// is 0 when `sum mod 11 < 2`, `11 - sum mod 11` otherwise.
fn check_digit(chars: &[u8]) -> u8 {
    let sum: u32 = chars
        .iter()
        .rev()
        .zip((2..=9).cycle())
        .map(|(&c, w)| u32::from(c - b'0') * w)
        .sum();
    match sum % 11 {
        0 | 1 => b'0',
        r => b'0' + (11 - r) as u8,
    }
}

impl Serialize for Cnpj {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmasked_numeric_cnpj_with_valid_check_digits_is_accepted() {
        assert_eq!(
            Cnpj::parse("11222333000181").unwrap().as_str(),
            "11222333000181"
        );
    }

    #[test]
    fn masked_numeric_cnpj_is_accepted_and_normalized() {
        assert_eq!(
            Cnpj::parse("11.222.333/0001-81").unwrap().as_str(),
            "11222333000181"
        );
    }

    #[test]
    fn whitespace_is_stripped() {
        assert_eq!(
            Cnpj::parse(" 11.222.333/0001-81\n").unwrap().as_str(),
            "11222333000181"
        );
        assert_eq!(
            Cnpj::parse("11 222 333 0001 81").unwrap().as_str(),
            "11222333000181"
        );
    }

    #[test]
    fn masked_alphanumeric_cnpj_is_accepted_and_normalized() {
        assert_eq!(
            Cnpj::parse("12.ABC.345/01DE-35").unwrap().as_str(),
            "12ABC34501DE35"
        );
    }

    #[test]
    fn lower_case_letters_are_upper_cased() {
        assert_eq!(
            Cnpj::parse("12.abc.345/01de-35").unwrap().as_str(),
            "12ABC34501DE35"
        );
    }

    #[test]
    fn other_known_valid_cnpjs_are_accepted() {
        // 45723174000110 has a second check digit of 0 (remainder < 2)
        for raw in [
            "11.444.777/0001-61",
            "00.000.000/0001-91",
            "45.723.174/0001-10",
        ] {
            assert!(Cnpj::parse(raw).is_ok(), "{raw}");
        }
    }

    #[test]
    fn changing_the_first_check_digit_of_a_numeric_cnpj_makes_it_invalid() {
        assert_eq!(
            Cnpj::parse("11.222.333/0001-91"),
            Err(CnpjError::CheckDigits)
        );
    }

    #[test]
    fn changing_the_second_check_digit_of_a_numeric_cnpj_makes_it_invalid() {
        assert_eq!(
            Cnpj::parse("11.222.333/0001-82"),
            Err(CnpjError::CheckDigits)
        );
    }

    #[test]
    fn changing_the_first_check_digit_of_an_alphanumeric_cnpj_makes_it_invalid() {
        assert_eq!(
            Cnpj::parse("12.ABC.345/01DE-45"),
            Err(CnpjError::CheckDigits)
        );
    }

    #[test]
    fn changing_the_second_check_digit_of_an_alphanumeric_cnpj_makes_it_invalid() {
        assert_eq!(
            Cnpj::parse("12.ABC.345/01DE-36"),
            Err(CnpjError::CheckDigits)
        );
    }

    #[test]
    fn every_single_character_change_in_the_base_breaks_the_check_digits() {
        let valid = b"12ABC34501DE35";
        let alphabet: Vec<u8> = (b'0'..=b'9').chain(b'A'..=b'Z').collect();
        for position in 0..12 {
            for &replacement in &alphabet {
                if replacement == valid[position] {
                    continue;
                }
                let mut changed = *valid;
                changed[position] = replacement;
                let raw = std::str::from_utf8(&changed).unwrap();
                // the value is ASCII - 48 mod 11, so characters 11 apart collide on one weight
                let collides = (i16::from(replacement) - i16::from(valid[position])) % 11 == 0;
                if !collides {
                    assert_eq!(Cnpj::parse(raw), Err(CnpjError::CheckDigits), "{raw}");
                }
            }
        }
    }

    #[test]
    fn wrong_length_is_a_length_error() {
        for raw in [
            "",
            "1122233300018",
            "112223330001811",
            "11.222.333/0001-8",
            "ABC",
        ] {
            assert_eq!(Cnpj::parse(raw), Err(CnpjError::Length), "{raw:?}");
        }
    }

    #[test]
    fn letters_in_the_check_digit_positions_are_a_characters_error() {
        assert_eq!(
            Cnpj::parse("12.ABC.345/01DE-3A"),
            Err(CnpjError::Characters)
        );
        assert_eq!(
            Cnpj::parse("12.ABC.345/01DE-A5"),
            Err(CnpjError::Characters)
        );
        assert_eq!(Cnpj::parse("1122233300018a"), Err(CnpjError::Characters));
    }

    #[test]
    fn symbols_and_non_ascii_characters_are_a_characters_error() {
        for raw in [
            "11.222.333/0001_81",
            "11222333000181!",
            "1122233300018é",
            "11,222,333/0001-81",
        ] {
            assert_eq!(Cnpj::parse(raw), Err(CnpjError::Characters), "{raw:?}");
        }
    }

    #[test]
    fn all_equal_characters_are_a_repeated_digits_error() {
        for d in '0'..='9' {
            let raw: String = std::iter::repeat_n(d, 14).collect();
            assert_eq!(Cnpj::parse(&raw), Err(CnpjError::RepeatedDigits), "{raw}");
        }
        assert_eq!(
            Cnpj::parse("00.000.000/0000-00"),
            Err(CnpjError::RepeatedDigits)
        );
    }

    #[test]
    fn serializes_as_the_unmasked_characters() {
        let cnpj = Cnpj::parse("12.abc.345/01de-35").unwrap();
        assert_eq!(serde_json::to_string(&cnpj).unwrap(), "\"12ABC34501DE35\"");
    }
}
