//! `Cnpj::parse` on any text: never panics; what it accepts is 14 upper-case ASCII letters or
//! digits (the last two digits) and parses again to itself.
#![no_main]

use domain::Cnpj;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(cnpj) = Cnpj::parse(raw) {
        let chars = cnpj.as_str();
        assert_eq!(chars.len(), 14, "{chars:?}");
        assert!(
            chars
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase()),
            "{chars:?}"
        );
        assert!(chars[12..].bytes().all(|b| b.is_ascii_digit()), "{chars:?}");
        assert!(
            Cnpj::parse(chars).as_ref() == Ok(&cnpj),
            "normalized form does not parse to itself"
        );
    }
});
