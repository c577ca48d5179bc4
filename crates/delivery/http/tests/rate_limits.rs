//! Rate limits through the real app (`HttpApp`, as `main` serves it) with mocked ports: the company over its quota gets 429 in the
//! envelope with `Retry-After` and the RateLimit headers; the repository is never reached then.

use std::sync::Arc;

use actix_web::test;
use application::hash_api_key;
use chrono::Utc;
use delivery_http::{ApiState, HttpApp, HttpSettings, Operability, RateLimitSettings};
use domain::{Cnpj, Company, CompanyId};
use ports::{MockApiKeyRepository, MockUseCaseRepository, ResolvedApiKey};
use serde_json::Value;
use uuid::Uuid;

mod common;

/// A key of the first format (no checksum), still accepted.
const KEY_A: &str = "cak_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
const KEY_B: &str = "cak_ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

fn company(n: u128) -> Company {
    Company {
        id: CompanyId(Uuid::from_u128(n)),
        name: format!("Empresa {n}"),
        cnpj: Cnpj::parse("11222333000181").unwrap(),
        created_at: Utc::now(),
    }
}

/// Company 1 owns KEY_A, company 2 KEY_B; the use-case list answers `[]` `lists` times at most.
fn services(lists: usize) -> Arc<ApiState> {
    let mut api_keys = MockApiKeyRepository::new();
    api_keys.expect_find_by_hash().returning(|hash| {
        let n = if hash == hash_api_key(KEY_A) {
            1
        } else if hash == hash_api_key(KEY_B) {
            2
        } else {
            return Ok(None);
        };
        Ok(Some(ResolvedApiKey {
            id: Uuid::from_u128(n),
            company: company(n),
            last_used_at: Some(Utc::now()),
            scopes: domain::Scopes::DEFAULT,
            quota_of: company(n).id,
        }))
    });
    let mut use_cases = MockUseCaseRepository::new();
    use_cases
        .expect_list()
        .times(..=lists)
        .returning(|_, _| Ok(vec![]));
    common::api_state(api_keys, use_cases)
}

struct Answer {
    status: u16,
    headers: actix_web::http::header::HeaderMap,
    body: Value,
}

impl Answer {
    fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    }
}

macro_rules! app {
    ($services:expr, $quota:expr) => {{
        let settings = HttpSettings {
            rate_limit: $quota,
            ..HttpSettings::default()
        };
        test::init_service(HttpApp::new($services, Operability::bare(), settings).app()).await
    }};
}

/// GET /api/casos-de-uso with `key` (a macro: the app's service type cannot be named).
macro_rules! get {
    ($app:expr, $key:expr) => {{
        let req = test::TestRequest::get()
            .uri("/api/casos-de-uso")
            .insert_header(("Api-Key", $key))
            .to_request();
        let res = test::call_service($app, req).await;
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let body: Value = test::read_body_json(res).await;
        Answer {
            status,
            headers,
            body,
        }
    }};
}

#[actix_web::test]
async fn over_its_quota_a_company_gets_429_in_the_envelope_with_retry_after_and_ratelimit_headers()
{
    let app = app!(
        services(2),
        RateLimitSettings {
            per_second: 1,
            burst: 2
        }
    );

    let first = get!(&app, KEY_A);
    let second = get!(&app, KEY_A);
    let third = get!(&app, KEY_A);

    assert_eq!((first.status, second.status, third.status), (200, 200, 429));
    assert_eq!(
        first.header("ratelimit").as_deref(),
        Some("limit=2, remaining=1, reset=1")
    );
    assert_eq!(
        first.header("ratelimit-policy").as_deref(),
        Some("1;w=1;burst=2")
    );
    assert_eq!(first.header("retry-after"), None);
    assert_eq!(
        second.header("ratelimit").as_deref(),
        Some("limit=2, remaining=0, reset=2")
    );

    let retry: u64 = third.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=2).contains(&retry), "{retry}");
    let current = third.header("ratelimit").unwrap();
    assert!(
        current.starts_with("limit=2, remaining=0, reset="),
        "{current}"
    );
    assert_eq!(
        third.header("ratelimit-policy").as_deref(),
        Some("1;w=1;burst=2")
    );
    assert_eq!(third.body["sucesso"], false);
    assert_eq!(third.body["isPgccErro"], false);
    assert_eq!(third.body["pgccCodigoErro"], "OK");
    assert_eq!(third.body["data"], serde_json::json!({}));
    assert!(third.body["mensagem"].as_str().unwrap().contains("Limite"));
}

#[actix_web::test]
async fn another_company_is_not_slowed_by_a_company_over_its_quota() {
    let app = app!(
        services(3),
        RateLimitSettings {
            per_second: 1,
            burst: 1
        }
    );

    assert_eq!(get!(&app, KEY_A).status, 200);
    assert_eq!(get!(&app, KEY_A).status, 429);
    let other = get!(&app, KEY_B);

    assert_eq!(other.status, 200);
    assert_eq!(
        other.header("ratelimit").as_deref(),
        Some("limit=1, remaining=0, reset=1")
    );
}

#[actix_web::test]
async fn an_unknown_key_is_401_and_counts_against_no_company() {
    let unknown = "cak_0000000000000000000000000000000000000000000000000000000000000001";
    let app = app!(
        services(1),
        RateLimitSettings {
            per_second: 1,
            burst: 1
        }
    );

    for _ in 0..3 {
        let refused = get!(&app, unknown);
        assert_eq!(refused.status, 401);
        assert_eq!(refused.header("ratelimit"), None);
    }
    assert_eq!(get!(&app, KEY_A).status, 200);
}

#[actix_web::test]
async fn with_rate_limiting_off_no_request_is_refused_and_no_header_is_sent() {
    let app = app!(services(5), RateLimitSettings::disabled());

    for _ in 0..5 {
        let answer = get!(&app, KEY_A);
        assert_eq!(answer.status, 200);
        assert_eq!(answer.header("ratelimit"), None);
    }
}
