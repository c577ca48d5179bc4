//! `Cpf::parse` on any text: never panics; what it accepts is 11 ASCII digits, which parse again
//! to the same CPF, unmasked and in the `000.000.000-00` form.
#![no_main]

use domain::Cpf;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(cpf) = Cpf::parse(raw) {
        let digits = cpf.as_str();
        assert_eq!(digits.len(), 11, "{digits:?}");
        assert!(digits.bytes().all(|b| b.is_ascii_digit()), "{digits:?}");
        assert!(
            Cpf::parse(digits).as_ref() == Ok(&cpf),
            "normalized form does not parse to itself"
        );
        let formatted = format!(
            "{}.{}.{}-{}",
            &digits[..3],
            &digits[3..6],
            &digits[6..9],
            &digits[9..]
        );
        assert!(
            Cpf::parse(&formatted).as_ref() == Ok(&cpf),
            "the formatted CPF does not parse back"
        );
        // The privacy mask shows the middle six digits only.
        assert_eq!(
            cpf.masked(),
            format!("***.{}.{}-**", &digits[3..6], &digits[6..9])
        );
    }
});
