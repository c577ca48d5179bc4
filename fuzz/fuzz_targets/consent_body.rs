//! A request body of `criar/ativo` and `criar/pendente`, as the HTTP layer handles it: the
//! nesting-depth scan on the raw bytes, serde_json into the creation DTOs (the error description
//! given to clients included), then `ConsentRequestDraft::validate`. Never panics; the depth scan
//! never lets through a document deeper than its limit; what validates is normalized.
#![no_main]

use chrono::{TimeZone, Utc};
use delivery_http::dto::consent_request::{CriarSolicitacaoAtiva, CriarSolicitacaoPendente};
use delivery_http::media::{describe_serde_error, json_too_deep};
use domain::{Cnpj, ConsentRequestDraft, Cpf, CreationVariant};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const MAX_DEPTH: usize = 32;

fn depth(v: &Value) -> usize {
    match v {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fuzz_target!(|data: &[u8]| {
    let too_deep = json_too_deep(data, MAX_DEPTH);
    if let Ok(value) = serde_json::from_slice::<Value>(data) {
        assert_eq!(too_deep, depth(&value) > MAX_DEPTH, "depth scan disagrees");
    }
    if too_deep {
        return; // answered 400 before decoding
    }
    let now = Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0).unwrap();
    let drafts: [(Result<ConsentRequestDraft, _>, CreationVariant); 2] = [
        (
            serde_json::from_slice::<CriarSolicitacaoAtiva>(data).map(Into::into),
            CreationVariant::Active,
        ),
        (
            serde_json::from_slice::<CriarSolicitacaoPendente>(data).map(Into::into),
            CreationVariant::Pending,
        ),
    ];
    for (draft, variant) in drafts {
        let draft = match draft {
            Ok(draft) => draft,
            Err(e) => {
                let _ = describe_serde_error(&e);
                continue;
            }
        };
        match draft.validate(variant, now) {
            Ok(valid) => {
                assert!(!valid.template_id.trim().is_empty());
                assert_eq!(valid.template_id, valid.template_id.trim());
                assert!(Cpf::parse(valid.subject_cpf.as_str()).is_ok());
                if let Some(cnpj) = &valid.consenting_cnpj {
                    assert!(Cnpj::parse(cnpj.as_str()).is_ok());
                }
                assert!(valid.consent_expires_at > now);
                assert_eq!(valid.answer.is_some(), variant == CreationVariant::Active);
            }
            Err(errors) => assert!(!errors.fields().is_empty()),
        }
    }
});
