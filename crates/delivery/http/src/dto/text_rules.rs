//! The rules on text fields that JSON Schema can state, written once and used by every DTO that
//! takes such a field (`#[schema(value_type = Cpf, inline)]`), so the document says what the
//! server enforces and a generator (or schemathesis) produces values the server accepts.
//!
//! What a schema cannot state stays with the server and is listed in docs/decisions.md
//! ("Contract fuzzing"): check digits, instants relative to now, templates the company has
//! synchronized, state (a full quota, a reused idempotency key), the PGCC's answer.

use std::borrow::Cow;

use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// A CPF as written: 11 digits, with or without the mask `000.000.000-00` (check digits are
/// the server's rule).
pub const CPF_PATTERN: &str = r"^[0-9]{3}\.?[0-9]{3}\.?[0-9]{3}-?[0-9]{2}$";

/// A CNPJ as written: 14 characters, numeric or alphanumeric (the last two digits), with or
/// without the mask `00.000.000/0000-00`.
pub const CNPJ_PATTERN: &str =
    r"^[0-9A-Za-z]{2}\.?[0-9A-Za-z]{3}\.?[0-9A-Za-z]{3}/?[0-9A-Za-z]{4}-?[0-9]{2}$";

/// No U+0000 (PostgreSQL text cannot hold it) and at least one character that is not white
/// space: the server trims with Rust's `str::trim` (Unicode `White_Space`), so the class lists
/// exactly those characters rather than `\s`, whose meaning differs between regex engines.
pub const NON_BLANK_PATTERN: &str = r"^[^\u0000]*[^\u0000\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^\u0000]*$";

/// A webhook URL the server accepts (`domain::WebhookUrl::validate_url` and the target guard's
/// parser): `http` or `https` in any case, an optional user info, a host name of ASCII letters,
/// digits, `-`, `_`, `.` (IDNs punycoded) or a bracketed IPv6 literal, an optional port up to
/// 65535, then a path, query or fragment of URI characters; no white space anywhere.
pub const WEBHOOK_URL_PATTERN: &str = concat!(
    r"^[Hh][Tt][Tt][Pp][Ss]?://",
    // user info: authority characters up to the last `@`
    r"(?:[A-Za-z0-9._~%!$&'()*+,;=:@\[\]-]*@)?",
    // host: a name, or an IPv6 literal (whether it parses is the server's rule)
    r"(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])",
    // port: empty or 0..65535, leading zeros allowed
    r"(?::0*(?:[0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])?)?",
    // path, query, fragment
    r"(?:[/?#][A-Za-z0-9._~%!$&'()*+,;=:@/?#\[\]-]*)?$",
);

/// Longest webhook URL, in characters (`domain::WebhookUrl::MAX_LEN`).
pub const WEBHOOK_URL_MAX_LENGTH: usize = domain::WebhookUrl::MAX_LEN;

/// A page cursor as the list issues it (`proximoCursor`): opaque to clients, but its shape is
/// stated so that tools only send well-formed ones.
pub const CURSOR_PATTERN: &str = r"^v1\.(?:0|-?[1-9][0-9]{0,15})\.[0-9a-f]{32}$";

/// The longest cursor [`CURSOR_PATTERN`] takes: `v1.`, a sign and 16 digits, `.`, 32 hex digits.
pub const CURSOR_MAX_LENGTH: usize = 3 + 17 + 1 + 32;

/// The event feed's cursor (`GET /api/eventos`): the transaction, the position and the event id
/// (`application::webhooks::event_cursor`). 18 digits at most each: within a bigint.
pub const EVENT_CURSOR_PATTERN: &str =
    r"^e1\.(?:0|[1-9][0-9]{0,17})\.(?:0|[1-9][0-9]{0,17})\.[0-9a-f]{32}$";

/// The longest cursor [`EVENT_CURSOR_PATTERN`] takes: `e1.`, 18 digits, `.`, 18 digits, `.`, 32
/// hex digits.
pub const EVENT_CURSOR_MAX_LENGTH: usize = 3 + 18 + 1 + 18 + 1 + 32;

/// A reason (`motivo`, `domain::Motivo::parse`): no control character but tab, line feed and
/// carriage return (Rust's `char::is_control`: U+0000-U+001F, U+007F-U+009F), and at least one
/// character that is not white space (the same `White_Space` list as [`NON_BLANK_PATTERN`]).
pub const MOTIVO_PATTERN: &str = concat!(
    r"^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]*",
    r"[^\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]",
    r"[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]*$",
);

/// A consent's hash: 64 lower-case hex digits.
pub const HASH_PATTERN: &str = r"^[0-9a-f]{64}$";

/// A string schema with `description` and the given rules.
fn text(
    description: &str,
    pattern: Option<&str>,
    min_length: Option<usize>,
    max_length: Option<usize>,
    format: Option<utoipa::openapi::SchemaFormat>,
) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
        .pattern(pattern)
        .min_length(min_length)
        .max_length(max_length)
        .format(format)
        .into()
}

macro_rules! text_rule {
    ($name:ident, $doc:expr, $schema:expr) => {
        #[doc = $doc]
        pub struct $name;

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                $schema
            }
        }

        impl ToSchema for $name {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }
        }
    };
}

text_rule!(
    MotivoTexto,
    "A reason: 1 to 500 characters, not only white space, no control characters but line breaks and tabs.",
    text(
        "Motivo: de 1 a 500 caracteres, não só espaços, sem caracteres de controle (quebras de linha e tabulações são aceitas).",
        Some(MOTIVO_PATTERN),
        Some(1),
        Some(domain::reason::REASON_MAX_CHARS),
        None,
    )
);

text_rule!(
    Cpf,
    "The subject's CPF: 11 digits, masked (`529.982.247-25`) or not.",
    text(
        "CPF do titular: 11 dígitos, com ou sem máscara (`529.982.247-25`); os dígitos verificadores devem conferir.",
        Some(CPF_PATTERN),
        Some(11),
        Some(14),
        None,
    )
);

text_rule!(
    Cnpj,
    "A CNPJ, numeric or alphanumeric, masked or not.",
    text(
        "CNPJ numérico ou alfanumérico, com ou sem máscara (`12.ABC.345/01DE-35`); os dígitos verificadores devem conferir.",
        Some(CNPJ_PATTERN),
        Some(14),
        Some(18),
        None,
    )
);

text_rule!(
    TemplateId,
    "A use case template id (`pgccProviderTemplateId`): not blank, at most 200 characters.",
    text(
        "`pgccProviderTemplateId` de um dos casos de uso sincronizados da empresa: não vazio, no máximo 200 caracteres.",
        Some(NON_BLANK_PATTERN),
        Some(1),
        Some(domain::MAX_TEMPLATE_ID),
        None,
    )
);

text_rule!(
    TemplateIdConsulta,
    "A template id to check: not blank (an unknown one is simply not valid).",
    text(
        "`pgccProviderTemplateId` do caso de uso: não vazio (um template desconhecido responde `valido: false`).",
        Some(NON_BLANK_PATTERN),
        Some(1),
        None,
        None,
    )
);

text_rule!(
    ProvaColeta,
    "The proof of collection: not blank, at most 100000 characters.",
    text(
        "Prova de que o consentimento foi coletado: não vazia, no máximo 100000 caracteres.",
        Some(NON_BLANK_PATTERN),
        Some(1),
        Some(domain::MAX_PROOF_OF_COLLECTION),
        None,
    )
);

text_rule!(
    WebhookUrlText,
    "An absolute http(s) URL with a host, at most 2048 characters.",
    text(
        "URL absoluta http(s) com host (nomes internacionalizados em punycode), sem espaços, no máximo 2048 caracteres.",
        Some(WEBHOOK_URL_PATTERN),
        Some("http://a".len()),
        Some(WEBHOOK_URL_MAX_LENGTH),
        Some(utoipa::openapi::SchemaFormat::Custom("uri".to_owned())),
    )
);

text_rule!(
    Cursor,
    "The `proximoCursor` of the previous page.",
    text(
        "`proximoCursor` da página anterior (opaco: envie-o como recebido).",
        Some(CURSOR_PATTERN),
        Some(1),
        Some(CURSOR_MAX_LENGTH),
        None,
    )
);

text_rule!(
    EventCursor,
    "The `proximoCursor` of the previous page of events.",
    text(
        "`proximoCursor` da página anterior de eventos (opaco: envie-o como recebido).",
        Some(EVENT_CURSOR_PATTERN),
        Some(1),
        Some(EVENT_CURSOR_MAX_LENGTH),
        None,
    )
);

text_rule!(
    Hash,
    "A consent's hash: 64 lower-case hex digits.",
    text(
        "Hash de um consentimento: 64 dígitos hexadecimais minúsculos.",
        Some(HASH_PATTERN),
        Some(64),
        Some(64),
        None,
    )
);

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        regex_lite::Regex::new(pattern).unwrap().is_match(text)
    }

    #[test]
    fn the_cpf_pattern_takes_the_masked_and_bare_forms_only() {
        for ok in ["529.982.247-25", "52998224725", "529982247-25"] {
            assert!(matches(CPF_PATTERN, ok), "{ok}");
            assert!(domain::Cpf::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["", "5299822472", "529.982.247-2x", "529/982/247-25"] {
            assert!(!matches(CPF_PATTERN, bad), "{bad}");
        }
    }

    #[test]
    fn the_cnpj_pattern_takes_numeric_and_alphanumeric_forms() {
        for ok in ["11.222.333/0001-81", "11222333000181", "12.ABC.345/01DE-35"] {
            assert!(matches(CNPJ_PATTERN, ok), "{ok}");
            assert!(domain::Cnpj::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["", "12.ABC.345/01DE-3X", "11.222.333/0001"] {
            assert!(!matches(CNPJ_PATTERN, bad), "{bad}");
        }
    }

    #[test]
    fn non_blank_means_a_character_str_trim_keeps() {
        for blank in ["", " ", "\t\n", "\u{a0}\u{3000}", "\u{2028}\u{85}"] {
            assert!(!matches(NON_BLANK_PATTERN, blank), "{blank:?}");
            assert!(blank.trim().is_empty(), "{blank:?}");
        }
        for text in ["x", " x ", "\u{200b}", "\u{1c}"] {
            assert!(matches(NON_BLANK_PATTERN, text), "{text:?}");
            assert!(!text.trim().is_empty(), "{text:?}");
        }
        for nul in ["\0", "a\0", "\0 b"] {
            assert!(!matches(NON_BLANK_PATTERN, nul), "{nul:?}");
        }
    }

    #[test]
    fn every_url_the_pattern_takes_is_one_the_domain_takes() {
        for ok in [
            "https://exemplo.com.br/webhooks/consentimento",
            "HTTP://user:pw@host:8080/a?b=c#d",
            "http://[::1]:3000/",
            "https://a",
            "http://host:/x",
            "https://h_1.example:65535",
        ] {
            assert!(matches(WEBHOOK_URL_PATTERN, ok), "{ok}");
            assert!(domain::WebhookUrl::validate_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "é",
            "ftp://host/x",
            "https://",
            "https://host:65536/",
            "https://ho st/",
            "https://exemplo.com/ç",
            "https://:80/",
        ] {
            assert!(!matches(WEBHOOK_URL_PATTERN, bad), "{bad}");
        }
    }

    #[test]
    fn a_reason_the_motivo_pattern_takes_is_one_the_domain_takes_and_back() {
        let samples = [
            ("x", true),
            ("  cliente pediu\nno balcão\t", true),
            ("", false),
            (" \n\t\u{3000}", false),
            ("a\u{0}b", false),
            ("a\u{1b}[31m", false),
            ("a\u{85}", false),
            ("\u{a0}x", true),
        ];
        for (text, ok) in samples {
            assert_eq!(matches(MOTIVO_PATTERN, text), ok, "{text:?}");
            assert_eq!(domain::Reason::parse(text).is_ok(), ok, "{text:?}");
        }
    }

    #[test]
    fn the_cursor_pattern_takes_what_the_list_issues() {
        assert!(matches(
            CURSOR_PATTERN,
            "v1.1741953600123456.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f"
        ));
        assert!(matches(
            CURSOR_PATTERN,
            "v1.-5.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f"
        ));
        for bad in [
            "",
            "v1.01.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
            "v1.-0.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
            "v1.5.0F8D5B7E3C1A4F2B9D6E5A4B3C2D1E0F",
            "v2.5.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
        ] {
            assert!(!matches(CURSOR_PATTERN, bad), "{bad}");
        }
    }

    #[test]
    fn the_event_cursor_pattern_takes_what_the_feed_issues() {
        assert!(matches(
            EVENT_CURSOR_PATTERN,
            "e1.74021.0.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f"
        ));
        for bad in [
            "",
            "e1.074021.1.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
            "e1.-5.1.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
            "e1.5.0F8D5B7E3C1A4F2B9D6E5A4B3C2D1E0F",
            "v1.1741953600123456.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
        ] {
            assert!(!matches(EVENT_CURSOR_PATTERN, bad), "{bad}");
        }
    }
}
