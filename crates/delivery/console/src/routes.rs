//! The console's routes: each path, its methods (405 with `Allow` otherwise, as the API's), and
//! its handler; the stylesheet and the receipt check's script, compiled in.

use actix_web::{web, FromRequest, Handler, HttpResponse, Resource, Responder};
use delivery_http::routes::not_allowed;

use crate::{accesses, chart, export, health, layout, oidc_sign_in, operator, receipt, request};
use crate::{evidence_bundle, sign_in, subject_page, subjects, url_forms, url_page};
use crate::{import_form, imports_page};

const STYLESHEET: &str = include_str!("../assets/console/estilo.css");
/// The request page's receipt check, run in the browser (docs/console.md, "Receipts").
const RECEIPT_SCRIPT: &str = include_str!("../assets/console/recibo.js");

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(get("/console", sign_in::home))
        .service(get("/console/estilo.css", stylesheet))
        .service(get("/console/recibo.js", receipt_script))
        .service(get("/console/solicitacoes/{id}/recibo", receipt::download))
        .service(get(
            "/console/solicitacoes/{id}/verificacao",
            receipt::material,
        ))
        .service(post("/console/entrar", sign_in::sign_in))
        .service(get("/console/entrar/oidc", oidc_sign_in::begin))
        .service(get("/console/oidc/retorno", oidc_sign_in::finish))
        .service(post("/console/sair", sign_in::sign_out))
        .service(get("/console/solicitacoes/{id}", request::page))
        .service(get("/console/acessos", accesses::list))
        .service(
            web::resource("/console/titulares")
                .route(web::get().to(subjects::search_form))
                .route(web::post().to(subjects::search))
                .default_service(not_allowed("GET, POST")),
        )
        .service(get("/console/titulares/{token}", subject_page::page))
        .service(get(
            "/console/titulares/{token}/pacote",
            evidence_bundle::download,
        ))
        .service(get("/console/webhooks", operator::webhooks))
        .service(
            web::resource("/console/webhooks/nova")
                .route(web::get().to(url_forms::new_url))
                .route(web::post().to(url_forms::add_url))
                .default_service(not_allowed("GET, POST")),
        )
        .service(get("/console/webhooks/{id}/entregas", url_page::page))
        .service(post(
            "/console/webhooks/{id}/eventos",
            url_forms::choose_events,
        ))
        .service(post(
            "/console/webhooks/{id}/reenviar-falhas",
            url_forms::resend_failed,
        ))
        .service(post("/console/webhooks/{id}/testar", operator::test))
        .service(post("/console/webhooks/{id}/reativar", operator::reenable))
        .service(post(
            "/console/webhooks/{id}/segredo",
            operator::rotate_secret,
        ))
        .service(post(
            "/console/webhooks/{id}/entregas/{entrega}/reenviar",
            operator::replay,
        ))
        .service(
            web::resource("/console/importacoes")
                .route(web::get().to(imports_page::list))
                .route(web::post().to(import_form::upload))
                .default_service(not_allowed("GET, POST")),
        )
        .service(get("/console/importacoes/{id}", imports_page::page))
        .service(get("/console/importacoes/{id}/erros", imports_page::errors))
        .service(post(
            "/console/importacoes/{id}/cancelar",
            imports_page::cancel,
        ))
        .service(get("/console/painel", chart::page))
        .service(get("/console/exportar", export::export))
        .service(get("/console/pgcc", health::page));
}

/// A resource that takes only a GET (405 with `Allow: GET` otherwise).
fn get<F, Args>(path: &str, handler: F) -> Resource
where
    F: Handler<Args>,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    web::resource(path)
        .route(web::get().to(handler))
        .default_service(not_allowed("GET"))
}

/// A resource that takes only a POST (405 with `Allow: POST` otherwise).
fn post<F, Args>(path: &str, handler: F) -> Resource
where
    F: Handler<Args>,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    web::resource(path)
        .route(web::post().to(handler))
        .default_service(not_allowed("POST"))
}

async fn stylesheet() -> HttpResponse {
    let mut res = HttpResponse::Ok().body(STYLESHEET);
    layout::secure_headers(&mut res, "text/css; charset=utf-8");
    res
}

async fn receipt_script() -> HttpResponse {
    let mut res = HttpResponse::Ok().body(RECEIPT_SCRIPT);
    layout::secure_headers(&mut res, "text/javascript; charset=utf-8");
    res
}
