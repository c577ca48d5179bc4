//! The HTTP layer's error mapping, driven through the real app (`HttpApp`, as `main` serves it) with mocked ports:
//! the failures an end-to-end run cannot provoke on demand (a database gone, a bug of ours).

use std::sync::Arc;

use actix_web::test;
use application::hash_api_key;
use chrono::Utc;
use delivery_http::{ApiState, HttpApp, HttpSettings, Operability};
use domain::{Cnpj, Company, CompanyId};
use ports::{MockApiKeyRepository, MockUseCaseRepository, RepoError, ResolvedApiKey};
use serde_json::Value;
use uuid::Uuid;

mod common;

const KEY: &str = "cak_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

fn company() -> Company {
    Company {
        id: CompanyId(Uuid::nil()),
        name: "Empresa".into(),
        cnpj: Cnpj::parse("11222333000181").unwrap(),
        created_at: Utc::now(),
    }
}

fn services(use_cases: MockUseCaseRepository) -> Arc<ApiState> {
    let mut api_keys = MockApiKeyRepository::new();
    api_keys
        .expect_find_by_hash()
        .withf(|h| h == hash_api_key(KEY))
        .returning(|_| {
            Ok(Some(ResolvedApiKey {
                id: Uuid::nil(),
                company: company(),
                // used a moment ago: no last-use write
                last_used_at: Some(Utc::now()),
                scopes: domain::Scopes::DEFAULT,
                quota_of: company().id,
            }))
        });
    common::api_state(api_keys, use_cases)
}

async fn list_with(use_cases: MockUseCaseRepository) -> (u16, Option<String>, Value) {
    let app = test::init_service(
        HttpApp::new(
            services(use_cases),
            Operability::bare(),
            HttpSettings::default(),
        )
        .app(),
    )
    .await;
    let req = test::TestRequest::get()
        .uri("/api/casos-de-uso")
        .insert_header(("Api-Key", KEY))
        .to_request();
    let res = test::call_service(&app, req).await;
    let status = res.status().as_u16();
    let retry_after = res
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let body: Value = test::read_body_json(res).await;
    (status, retry_after, body)
}

#[actix_web::test]
async fn a_database_that_cannot_be_reached_is_503_with_retry_after() {
    let mut use_cases = MockUseCaseRepository::new();
    use_cases
        .expect_list()
        .returning(|_, _| Err(RepoError::Unavailable(anyhow::anyhow!("pool timed out"))));
    let (status, retry_after, body) = list_with(use_cases).await;
    assert_eq!(status, 503);
    assert_eq!(retry_after.as_deref(), Some("1"));
    assert_eq!(body["sucesso"], false);
    assert_eq!(body["data"], serde_json::json!({}));
}

#[actix_web::test]
async fn an_unexpected_failure_is_500_and_tells_the_client_nothing_internal() {
    let mut use_cases = MockUseCaseRepository::new();
    use_cases.expect_list().returning(|_, _| {
        Err(RepoError::Unexpected(anyhow::anyhow!(
            "relation \"casos_de_uso\" does not exist"
        )))
    });
    let (status, _, body) = list_with(use_cases).await;
    assert_eq!(status, 500);
    assert_eq!(body["isPgccErro"], false);
    assert_eq!(body["pgccCodigoErro"], "OK");
    let text = body.to_string();
    assert!(
        !text.contains("relation") && !text.contains("casos_de_uso"),
        "{text}"
    );
}

#[actix_web::test]
async fn the_list_passes_the_callers_company_and_filter_to_the_repository() {
    let mut use_cases = MockUseCaseRepository::new();
    let vinculo = Uuid::from_u128(7);
    use_cases
        .expect_list()
        .withf(move |company, v| *company == CompanyId(Uuid::nil()) && *v == Some(vinculo))
        .times(1)
        .returning(|_, _| Ok(vec![]));
    let app = test::init_service(
        HttpApp::new(
            services(use_cases),
            Operability::bare(),
            HttpSettings::default(),
        )
        .app(),
    )
    .await;
    let req = test::TestRequest::get()
        .uri(&format!("/api/casos-de-uso?empresaVinculoPgccId={vinculo}"))
        .insert_header(("Api-Key", KEY))
        .to_request();
    let res = test::call_service(&app, req).await;
    assert_eq!(res.status().as_u16(), 200);
    let body: Value = test::read_body_json(res).await;
    assert_eq!(body["data"], serde_json::json!([]));
}
