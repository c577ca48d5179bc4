//! Every route of the service, registered in one `configure`.

pub mod audit;
pub mod consent_check;
pub mod consent_requests;
pub mod docs;
pub mod events;
pub mod evidence_files;
pub mod exports;
pub mod grants;
pub mod health;
pub mod imports;
pub mod openapi;
pub mod records;
pub mod status;
pub mod subjects;
pub mod use_cases;
pub mod webhook_urls;

use actix_web::middleware::from_fn;
use actix_web::{web, HttpResponse, Route};

use crate::error::ApiError;
use crate::media;

/// Routes, each resource answering 405 (with `Allow`) to the methods it does not have. The
/// resources that take a JSON body check its nesting depth before decoding it.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/api/casos-de-uso")
            .route(web::get().to(use_cases::list))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/api/casos-de-uso/sincronizar")
            .route(web::post().to(use_cases::sync))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/api/status")
            .route(web::get().to(status::get))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/api/casos-de-uso/{id}/versoes")
            .route(web::get().to(use_cases::versions))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/api/casos-de-uso/{id}/anotacoes")
            .route(web::put().to(records::annotate))
            .route(web::get().to(records::annotations))
            .wrap(from_fn(media::limit_json_depth))
            .default_service(not_allowed("GET, PUT")),
    )
    .service(
        web::resource("/api/solicitacao-consentimento/{id}/registro")
            .route(web::get().to(records::record))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/api/solicitacao-consentimento/{id}/arquivos")
            .route(web::put().to(evidence_files::upload))
            .route(web::get().to(evidence_files::list))
            .default_service(not_allowed("GET, PUT")),
    )
    .service(
        web::resource("/api/solicitacao-consentimento/{id}/arquivos/{sha256}")
            .route(web::put().to(evidence_files::upload_named))
            .route(web::get().to(evidence_files::download))
            .default_service(not_allowed("GET, PUT")),
    )
    .service(
        web::resource("/api/arquivos/{sha256}")
            .route(web::put().to(evidence_files::upload_to_company))
            .default_service(not_allowed("PUT")),
    )
    .service(
        web::resource("/api/exportacoes")
            .route(web::get().to(exports::export))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/contexts/consent-record-v1.jsonld")
            .route(web::get().to(records::context))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/api/solicitacao-consentimento/criar/ativo")
            .route(web::post().to(consent_requests::create_active))
            .wrap(from_fn(media::limit_json_depth))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/api/solicitacao-consentimento/criar/pendente")
            .route(web::post().to(consent_requests::create_pending))
            .wrap(from_fn(media::limit_json_depth))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/api/importacoes")
            .route(web::post().to(imports::create))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/api/importacoes/{id}")
            .route(web::get().to(imports::get))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/api/importacoes/{id}/erros")
            .route(web::get().to(imports::errors))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/api/importacoes/{id}/cancelar")
            .route(web::post().to(imports::cancel))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/api/solicitacao-consentimento")
            .route(web::get().to(consent_requests::list))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/api/solicitacao-consentimento/{id}")
            .route(web::get().to(consent_requests::get))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/api/solicitacao-consentimento/{id}/revogar")
            .route(web::post().to(consent_requests::revoke))
            .wrap(from_fn(media::limit_json_depth))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/api/hash-consulta")
            .route(web::post().to(consent_check::check))
            .wrap(from_fn(media::limit_json_depth))
            .default_service(not_allowed("POST")),
    )
    .service(
        // before `{hash}`, which would take `lote` for a hash
        web::resource("/api/hash-consulta/lote")
            .route(web::post().to(consent_check::check_batch))
            .wrap(from_fn(media::limit_json_depth))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/api/hash-consulta/{hash}")
            .route(web::get().to(consent_check::by_hash))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/api/titulares/consentimentos")
            .route(web::post().to(subjects::export))
            .wrap(from_fn(media::limit_json_depth))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/api/webhook-urls")
            .route(web::get().to(webhook_urls::list))
            .route(web::post().to(webhook_urls::register))
            .wrap(from_fn(media::limit_json_depth))
            .default_service(not_allowed("GET, POST")),
    )
    .service(
        web::resource("/api/webhook-urls/{webhookUrlId}")
            .route(web::delete().to(webhook_urls::delete))
            .route(web::patch().to(webhook_urls::choose_events))
            .wrap(from_fn(media::limit_json_depth))
            .default_service(not_allowed("DELETE, PATCH")),
    )
    .service(
        web::resource("/api/webhook-urls/{webhookUrlId}/testar")
            .route(web::post().to(webhook_urls::test))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/api/webhook-urls/{webhookUrlId}/rotacionar-segredo")
            .route(web::post().to(webhook_urls::rotate_secret))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/api/webhook-urls/{webhookUrlId}/reativar")
            .route(web::post().to(webhook_urls::reenable))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/api/webhook-urls/{webhookUrlId}/entregas")
            .route(web::get().to(webhook_urls::deliveries))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/api/webhook-urls/{webhookUrlId}/entregas/{entregaId}/reenviar")
            .route(web::post().to(webhook_urls::replay))
            .default_service(not_allowed("POST")),
    )
    .service(
        web::resource("/api/eventos")
            .route(web::get().to(events::list))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/api/auditoria/acessos")
            .route(web::get().to(audit::accesses))
            .default_service(not_allowed("GET")),
    )
    .service(
        web::resource("/openapi.json")
            .route(web::get().to(openapi::document))
            .default_service(not_allowed("GET")),
    )
    .configure(audit::configure)
    .configure(docs::configure);
}

pub fn not_allowed(allow: &'static str) -> Route {
    web::to(move || async move { Err::<HttpResponse, _>(ApiError::MethodNotAllowed { allow }) })
}

/// Everything no route matched.
pub async fn not_found() -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound(crate::error::Resource::Route))
}
