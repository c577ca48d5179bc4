//! The hash of a consent request: a lower-case hex SHA-256 of its canonical content, the digest
//! HashConsulta answers so that a data user can prove later which consent they relied on.
//!
//! The canonical content is a compact JSON object (no whitespace) with exactly these keys, in
//! this order (which is also their lexicographic order):
//!
//! | key | value |
//! |---|---|
//! | `casoDeUsoIdTemplate` | string (as stored: trimmed) |
//! | `cnpjAnuente` | string (14 characters, unmasked, upper-case) or `null` |
//! | `cpfTitular` | string (11 digits, unmasked) |
//! | `criadoEm` | instant |
//! | `dataExpiracaoConsentimento` | instant |
//! | `dataTitularRespondeuConsentimento` | instant or `null` (pending requests) |
//! | `empresaId` | uuid |
//! | `id` | uuid |
//! | `modalidadeAcesso` | `"Direto"` or `"Indireto"` |
//! | `provaColeta` | string or `null` (pending requests) |
//! | `sal` | string: the request's salt, 32 lower-case hex digits drawn at random |
//! | `tipoTitular` | `"PessoaFisica"` |
//!
//! Instants are UTC with exactly six fractional digits (`2025-03-14T12:00:00.000000Z`); uuids are
//! lower-case and hyphenated. Strings are escaped by [`json_string`]. Only content fixed at
//! creation is hashed (not the status, the PGCC id or the update time), so the hash of a request
//! never changes.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use domain::ConsentRequest;
use sha2::{Digest, Sha256};

/// Lower-case hex SHA-256 (64 characters) of [`canonical_content`].
pub fn consent_hash(request: &ConsentRequest) -> String {
    hex::encode(Sha256::digest(canonical_content(request).as_bytes()))
}

/// The canonical content of `request`: see the module documentation.
pub fn canonical_content(request: &ConsentRequest) -> String {
    let content = &request.content;
    let answer = content.answer.as_ref();
    let fields: [(&str, Option<String>); 12] = [
        (
            "casoDeUsoIdTemplate",
            Some(json_string(&content.template_id)),
        ),
        (
            "cnpjAnuente",
            content
                .consenting_cnpj
                .as_ref()
                .map(|c| json_string(c.as_str())),
        ),
        (
            "cpfTitular",
            Some(json_string(content.subject_cpf.as_str())),
        ),
        ("criadoEm", Some(json_instant(request.created_at))),
        (
            "dataExpiracaoConsentimento",
            Some(json_instant(content.consent_expires_at)),
        ),
        (
            "dataTitularRespondeuConsentimento",
            answer.map(|r| json_instant(r.subject_answered_at)),
        ),
        (
            "empresaId",
            Some(json_string(&request.company_id.0.hyphenated().to_string())),
        ),
        (
            "id",
            Some(json_string(&request.id.hyphenated().to_string())),
        ),
        (
            "modalidadeAcesso",
            Some(json_string(content.access_mode.as_str())),
        ),
        (
            "provaColeta",
            answer.map(|r| json_string(&r.proof_of_collection)),
        ),
        ("sal", Some(json_string(&request.hash_salt))),
        (
            "tipoTitular",
            Some(json_string(content.subject_type.as_str())),
        ),
    ];

    let mut out = String::from("{");
    for (i, (key, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&json_string(key));
        out.push(':');
        out.push_str(value.as_deref().unwrap_or("null"));
    }
    out.push('}');
    out
}

/// `value` as a JSON string literal, quotes included: `"` and `\` escaped with a backslash;
/// backspace, form feed, line feed, carriage return and tab as `\b` `\f` `\n` `\r` `\t`; every
/// other character below U+0020 as `\u00xx` (lower-case hex); everything else, non-ASCII
/// included, as is (UTF-8).
pub fn json_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if c < '\u{20}' => {
                // writing to a String cannot fail
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// An instant as a JSON string: UTC, six fractional digits, `Z`.
fn json_instant(at: DateTime<Utc>) -> String {
    json_string(&at.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string())
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};
    use domain::{
        AccessMode, ActiveAnswer, Cnpj, CompanyId, ConsentStatus, Cpf, CreationVariant,
        SubjectType, ValidConsentRequest,
    };
    use uuid::Uuid;

    use super::*;

    fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32, micros: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap() + Duration::microseconds(micros)
    }

    /// The documented test vector: an active, indirect request whose proof needs escaping.
    fn vector_request() -> ConsentRequest {
        ConsentRequest {
            id: Uuid::parse_str("0f8d5b7e-3c1a-4f2b-9d6e-5a4b3c2d1e0f").unwrap(),
            company_id: CompanyId(Uuid::parse_str("6f1c2a4e-8b3d-4c5a-9e7f-1a2b3c4d5e01").unwrap()),
            content: ValidConsentRequest {
                variant: CreationVariant::Active,
                template_id: "tpl-credito-consignado".to_owned(),
                subject_cpf: Cpf::parse("529.982.247-25").unwrap(),
                access_mode: AccessMode::Indirect,
                subject_type: SubjectType::NaturalPerson,
                consent_expires_at: at(2030, 1, 2, 3, 4, 5, 0),
                answer: Some(ActiveAnswer {
                    subject_answered_at: at(2025, 3, 4, 5, 6, 7, 890_000),
                    proof_of_collection: "aceite \"eletrônico\"\nlinha 2".to_owned(),
                }),
                consenting_cnpj: Some(Cnpj::parse("11.222.333/0001-81").unwrap()),
            },
            status: ConsentStatus::Active,
            pgcc_id: "pgcc-3b9f".to_owned(),
            hash: String::new(),
            hash_salt: "3f2a9c1e5b7d40a8b6c2e9f1d3a5b7c9".into(),
            created_at: at(2025, 3, 14, 12, 0, 0, 123_456),
            updated_at: at(2025, 3, 14, 12, 0, 0, 123_456),
            use_case_version: Some(1),
        }
    }

    const VECTOR_CANONICAL: &str = concat!(
        r#"{"casoDeUsoIdTemplate":"tpl-credito-consignado","cnpjAnuente":"11222333000181","#,
        r#""cpfTitular":"52998224725","criadoEm":"2025-03-14T12:00:00.123456Z","#,
        r#""dataExpiracaoConsentimento":"2030-01-02T03:04:05.000000Z","#,
        r#""dataTitularRespondeuConsentimento":"2025-03-04T05:06:07.890000Z","#,
        r#""empresaId":"6f1c2a4e-8b3d-4c5a-9e7f-1a2b3c4d5e01","#,
        r#""id":"0f8d5b7e-3c1a-4f2b-9d6e-5a4b3c2d1e0f","modalidadeAcesso":"Indireto","#,
        r#""provaColeta":"aceite \"eletrônico\"\nlinha 2","#,
        r#""sal":"3f2a9c1e5b7d40a8b6c2e9f1d3a5b7c9","tipoTitular":"PessoaFisica"}"#,
    );
    /// `printf '%s' "$VECTOR_CANONICAL" | sha256sum`
    const VECTOR_HASH: &str = "6a796a2fc8f8c79006d11e1f3f53a8dee4a555bf617b817c25f5b0d757363972";

    /// A pending, direct request: no CNPJ, no answer.
    fn pending_request() -> ConsentRequest {
        let mut request = vector_request();
        request.content.variant = CreationVariant::Pending;
        request.content.access_mode = AccessMode::Direct;
        request.content.consenting_cnpj = None;
        request.content.answer = None;
        request.status = ConsentStatus::Pending;
        request
    }

    const PENDING_CANONICAL: &str = concat!(
        r#"{"casoDeUsoIdTemplate":"tpl-credito-consignado","cnpjAnuente":null,"#,
        r#""cpfTitular":"52998224725","criadoEm":"2025-03-14T12:00:00.123456Z","#,
        r#""dataExpiracaoConsentimento":"2030-01-02T03:04:05.000000Z","#,
        r#""dataTitularRespondeuConsentimento":null,"#,
        r#""empresaId":"6f1c2a4e-8b3d-4c5a-9e7f-1a2b3c4d5e01","#,
        r#""id":"0f8d5b7e-3c1a-4f2b-9d6e-5a4b3c2d1e0f","modalidadeAcesso":"Direto","#,
        r#""provaColeta":null,"sal":"3f2a9c1e5b7d40a8b6c2e9f1d3a5b7c9","tipoTitular":"PessoaFisica"}"#,
    );
    const PENDING_HASH: &str = "706c206b900152c7884f2c6d8d56edc2c882d965704acb9aa8cba4d4c06acbd4";

    #[test]
    fn the_test_vector_has_the_documented_canonical_content() {
        assert_eq!(canonical_content(&vector_request()), VECTOR_CANONICAL);
    }

    #[test]
    fn the_test_vector_has_the_documented_hash() {
        assert_eq!(consent_hash(&vector_request()), VECTOR_HASH);
    }

    #[test]
    fn a_pending_request_has_nulls_for_the_cnpj_and_the_answer() {
        assert_eq!(canonical_content(&pending_request()), PENDING_CANONICAL);
        assert_eq!(consent_hash(&pending_request()), PENDING_HASH);
    }

    #[test]
    fn the_hash_is_64_lower_case_hex_characters() {
        let hash = consent_hash(&vector_request());
        assert_eq!(hash.len(), 64);
        assert!(hash
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)));
    }

    #[test]
    fn the_keys_are_in_lexicographic_order() {
        let content = canonical_content(&vector_request());
        let keys = [
            "casoDeUsoIdTemplate",
            "cnpjAnuente",
            "cpfTitular",
            "criadoEm",
            "dataExpiracaoConsentimento",
            "dataTitularRespondeuConsentimento",
            "empresaId",
            "id",
            "modalidadeAcesso",
            "provaColeta",
            "tipoTitular",
        ];
        let mut sorted = keys;
        sorted.sort_unstable();
        assert_eq!(keys, sorted);
        let positions: Vec<usize> = keys
            .iter()
            .map(|k| content.find(&format!("\"{k}\":")).unwrap())
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    }

    #[test]
    fn status_pgcc_id_and_update_time_do_not_change_the_hash() {
        let original = consent_hash(&vector_request());
        let mut changed = vector_request();
        changed.status = ConsentStatus::Revoked;
        changed.pgcc_id = "another".to_owned();
        changed.updated_at += Duration::days(3);
        changed.hash = "stale".to_owned();
        assert_eq!(consent_hash(&changed), original);
    }

    #[test]
    fn every_hashed_field_changes_the_hash() {
        let original = consent_hash(&vector_request());
        type Edit = (&'static str, fn(&mut ConsentRequest));
        let edits: Vec<Edit> = vec![
            ("template", |r| r.content.template_id.push('x')),
            ("cnpj", |r| {
                r.content.consenting_cnpj = Some(Cnpj::parse("12.ABC.345/01DE-35").unwrap())
            }),
            ("cpf", |r| {
                r.content.subject_cpf = Cpf::parse("111.444.777-35").unwrap()
            }),
            ("criadoEm", |r| r.created_at += Duration::microseconds(1)),
            ("expiry", |r| {
                r.content.consent_expires_at += Duration::microseconds(1)
            }),
            ("answer date", |r| {
                if let Some(a) = r.content.answer.as_mut() {
                    a.subject_answered_at += Duration::microseconds(1)
                }
            }),
            ("empresa", |r| r.company_id = CompanyId(Uuid::from_u128(9))),
            ("id", |r| r.id = Uuid::from_u128(9)),
            ("modalidade", |r| r.content.access_mode = AccessMode::Direct),
            ("prova", |r| {
                if let Some(a) = r.content.answer.as_mut() {
                    a.proof_of_collection.push(' ')
                }
            }),
        ];
        for (name, edit) in edits {
            let mut request = vector_request();
            edit(&mut request);
            assert_ne!(consent_hash(&request), original, "{name}");
        }
    }

    #[test]
    fn instants_are_written_in_utc_with_six_fractional_digits() {
        assert_eq!(
            json_instant(at(2025, 1, 2, 3, 4, 5, 0)),
            "\"2025-01-02T03:04:05.000000Z\""
        );
        assert_eq!(
            json_instant(at(2025, 1, 2, 3, 4, 5, 7)),
            "\"2025-01-02T03:04:05.000007Z\""
        );
    }

    #[test]
    fn sub_microsecond_digits_are_not_written() {
        let at = at(2025, 1, 2, 3, 4, 5, 1) + Duration::nanoseconds(999);
        assert_eq!(json_instant(at), "\"2025-01-02T03:04:05.000001Z\"");
    }

    #[test]
    fn json_string_quotes_plain_text_unchanged() {
        assert_eq!(json_string("tpl-credito 123"), r#""tpl-credito 123""#);
        assert_eq!(json_string(""), r#""""#);
    }

    #[test]
    fn json_string_escapes_quotes_and_backslashes() {
        assert_eq!(json_string(r#"a"b\c"#), r#""a\"b\\c""#);
    }

    #[test]
    fn json_string_uses_the_short_escapes_for_the_five_common_controls() {
        assert_eq!(json_string("\u{08}\u{0c}\n\r\t"), r#""\b\f\n\r\t""#);
    }

    #[test]
    fn json_string_writes_other_controls_as_lower_case_unicode_escapes() {
        assert_eq!(json_string("\u{00}"), r#""\u0000""#);
        assert_eq!(json_string("\u{01}\u{0b}"), r#""\u0001\u000b""#);
        assert_eq!(json_string("\u{1f}"), r#""\u001f""#);
    }

    #[test]
    fn json_string_keeps_space_delete_slash_and_non_ascii_as_is() {
        assert_eq!(json_string(" \u{7f}/"), "\" \u{7f}/\"");
        assert_eq!(json_string("ção €😀"), "\"ção €😀\"");
    }

    #[test]
    fn json_string_escapes_every_control_character_and_nothing_above() {
        for code in 0u32..0x20 {
            let c = char::from_u32(code).unwrap();
            let escaped = json_string(&c.to_string());
            assert!(escaped.starts_with("\"\\"), "{code:#x}: {escaped}");
        }
        for code in 0x20u32..0x80 {
            let c = char::from_u32(code).unwrap();
            if c == '"' || c == '\\' {
                continue;
            }
            assert_eq!(json_string(&c.to_string()), format!("\"{c}\""), "{code:#x}");
        }
    }
}
