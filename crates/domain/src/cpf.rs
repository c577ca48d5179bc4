//! CPF (Cadastro de Pessoas Físicas), the data subject's tax identifier. Personal data: its
//! `Debug` is masked and it has no `Display`, so it cannot slip into a log line by accident.

/// A valid CPF, held as its 11 digits (unmasked).
///
/// Only [`Cpf::parse`] builds one, so holding a `Cpf` means the number passed every rule.
/// `Debug` prints [`Cpf::masked`]; the full number is only reachable through [`Cpf::as_str`].
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Cpf(String);

/// Why [`Cpf::parse`] refused its input. The messages (`Display`) are for the API client, in
/// Portuguese, and never quote the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpfError {
    /// Not 11 digits once the mask characters are stripped.
    #[error("o CPF deve ter 11 dígitos")]
    Length,
    /// A character other than an ASCII digit, `.` or `-` (surrounding whitespace aside).
    #[error("o CPF contém caracteres inválidos")]
    Characters,
    /// All 11 digits equal (`111.111.111-11`): the check digits would match, but no such CPF
    /// is issued.
    #[error("o CPF não pode ter todos os dígitos iguais")]
    RepeatedDigits,
    /// One of the two check digits does not match the first nine digits.
    #[error("os dígitos verificadores do CPF não conferem")]
    CheckDigits,
}

impl Cpf {
    /// Accepts `12345678909` or the masked `123.456.789-09`; verifies both check digits and
    /// refuses the ten repeated-digit numbers.
    ///
    /// Only surrounding whitespace and the mask characters `.` and `-` are stripped; any other
    /// character (letters, inner spaces, `/`, non-ASCII digits) is [`CpfError::Characters`].
    /// The checks run in this order: characters, length, repeated digits, check digits.
    pub fn parse(raw: &str) -> Result<Cpf, CpfError> {
        let mut digits = [0u8; 11];
        let mut len = 0usize;
        for c in raw.trim().chars() {
            match c {
                '.' | '-' => {}
                '0'..='9' => {
                    if len < digits.len() {
                        digits[len] = c as u8 - b'0';
                    }
                    len += 1;
                }
                _ => return Err(CpfError::Characters),
            }
        }
        if len != digits.len() {
            return Err(CpfError::Length);
        }
        if digits.iter().all(|&d| d == digits[0]) {
            return Err(CpfError::RepeatedDigits);
        }
        if check_digit(&digits[..9]) != digits[9] || check_digit(&digits[..10]) != digits[10] {
            return Err(CpfError::CheckDigits);
        }
        Ok(Cpf(digits.iter().map(|&d| char::from(b'0' + d)).collect()))
    }

    /// The 11 digits, unmasked.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The form that may be shown or logged: `***.456.789-**`.
    pub fn masked(&self) -> String {
        format!("***.{}.{}-**", &self.0[3..6], &self.0[6..9])
    }
}

/// The CPF check digit over `digits` (9 for the first, 10 for the second): weights from
/// `len + 1` down to 2, then `sum * 10 mod 11`, where 10 counts as 0.
fn check_digit(digits: &[u8]) -> u8 {
    let weight_of_first = digits.len() as u32 + 1;
    let sum: u32 = digits
        .iter()
        .zip((2..=weight_of_first).rev())
        .map(|(&d, w)| u32::from(d) * w)
        .sum();
    match (sum * 10 % 11) as u8 {
        10 => 0,
        d => d,
    }
}

impl std::fmt::Debug for Cpf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cpf({})", self.masked())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmasked_cpf_with_valid_check_digits_is_accepted() {
        let cpf = Cpf::parse("12345678909").unwrap();
        assert_eq!(cpf.as_str(), "12345678909");
    }

    #[test]
    fn masked_cpf_with_valid_check_digits_is_accepted_and_normalized() {
        let cpf = Cpf::parse("123.456.789-09").unwrap();
        assert_eq!(cpf.as_str(), "12345678909");
    }

    #[test]
    fn surrounding_whitespace_is_stripped() {
        assert_eq!(
            Cpf::parse("  123.456.789-09\t\n").unwrap().as_str(),
            "12345678909"
        );
    }

    #[test]
    fn other_known_valid_cpfs_are_accepted() {
        // 39053344705 has a first check digit of 0 from a remainder of 10
        for raw in [
            "52998224725",
            "111.444.777-35",
            "39053344705",
            "00000000191",
        ] {
            assert!(Cpf::parse(raw).is_ok(), "{raw}");
        }
    }

    #[test]
    fn wrong_first_check_digit_is_rejected() {
        assert_eq!(Cpf::parse("12345678919"), Err(CpfError::CheckDigits));
    }

    #[test]
    fn wrong_second_check_digit_is_rejected() {
        assert_eq!(Cpf::parse("12345678900"), Err(CpfError::CheckDigits));
        assert_eq!(Cpf::parse("123.456.789-08"), Err(CpfError::CheckDigits));
    }

    #[test]
    fn every_single_digit_change_breaks_the_check_digits() {
        let valid = b"52998224725";
        for position in 0..11 {
            for replacement in b'0'..=b'9' {
                if replacement == valid[position] {
                    continue;
                }
                let mut changed = *valid;
                changed[position] = replacement;
                let raw = std::str::from_utf8(&changed).unwrap();
                assert_eq!(Cpf::parse(raw), Err(CpfError::CheckDigits), "{raw}");
            }
        }
    }

    #[test]
    fn the_ten_repeated_digit_numbers_are_rejected() {
        for d in '0'..='9' {
            let raw: String = std::iter::repeat_n(d, 11).collect();
            assert_eq!(Cpf::parse(&raw), Err(CpfError::RepeatedDigits), "{raw}");
        }
        assert_eq!(Cpf::parse("111.111.111-11"), Err(CpfError::RepeatedDigits));
    }

    #[test]
    fn too_few_or_too_many_digits_are_a_length_error() {
        for raw in [
            "",
            "   ",
            "1234567890",
            "123456789091",
            "123.456.789-0",
            ".-",
        ] {
            assert_eq!(Cpf::parse(raw), Err(CpfError::Length), "{raw:?}");
        }
    }

    #[test]
    fn letters_and_other_characters_are_a_characters_error() {
        for raw in [
            "1234567890a",
            "123.456.789/09",
            "123 456 789 09",
            "123_456_789_09",
            "+12345678909",
            "１２３４５６７８９０９",
            "12345678909x",
        ] {
            assert_eq!(Cpf::parse(raw), Err(CpfError::Characters), "{raw:?}");
        }
    }

    #[test]
    fn masked_shows_only_digits_four_to_nine() {
        let cpf = Cpf::parse("12345678909").unwrap();
        assert_eq!(cpf.masked(), "***.456.789-**");
    }

    #[test]
    fn debug_never_shows_the_full_cpf() {
        let cpf = Cpf::parse("529.982.247-25").unwrap();
        let debug = format!("{cpf:?}");
        assert_eq!(debug, "Cpf(***.982.247-**)");
        assert!(!debug.contains("52998224725"));
        assert!(!debug.contains("529"));
        let pretty = format!("{:#?}", Some(cpf));
        assert!(!pretty.contains("52998224725"));
    }

    #[test]
    fn error_messages_never_contain_the_input() {
        let raw = "12345678900";
        let message = Cpf::parse(raw).unwrap_err().to_string();
        assert!(!message.contains(raw));
    }
}
