//! Routes for tests and demos under `/_sim`: never behind faults or the token.

use actix_web::{web, HttpResponse};

use crate::contract_routes::parse_json;
use crate::errors::SimError;
use crate::faults::FaultSpec;
use crate::seed::Seed;
use crate::state::{AppState, Move};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/_sim")
            .route("/health", web::get().to(health))
            .route("/seed", web::put().to(replace_seed))
            .route("/solicitacoes", web::get().to(list_solicitacoes))
            .route(
                "/solicitacoes/{id}/aceitar",
                web::post().to(|s, id, body| mover(s, id, body, Move::Aceitar)),
            )
            .route(
                "/solicitacoes/{id}/recusar",
                web::post().to(|s, id, body| mover(s, id, body, Move::Recusar)),
            )
            .route(
                "/solicitacoes/{id}/revogar",
                web::post().to(|s, id, body| mover(s, id, body, Move::Revogar)),
            )
            .route("/solicitacoes/{id}/status", web::post().to(definir_status))
            .route("/solicitacoes/{id}", web::delete().to(esquecer))
            .route("/status-consultas", web::get().to(status_consultas))
            .route("/status-chamadas", web::get().to(status_chamadas))
            .route(
                "/status-consultas",
                web::delete().to(clear_status_consultas),
            )
            .route(
                "/casos-de-uso-consultas",
                web::get().to(casos_de_uso_consultas),
            )
            .route(
                "/casos-de-uso-consultas",
                web::delete().to(clear_casos_de_uso_consultas),
            )
            .route("/faults", web::post().to(set_fault))
            .route("/faults", web::delete().to(clear_fault)),
    );
}

/// `GET /_sim/health`
async fn health() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "status": "ok" }))
}

/// `PUT /_sim/seed`: replaces the seed; the requests received are kept.
async fn replace_seed(
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, SimError> {
    let seed = parse_json::<Seed>(&body)?;
    state.store().set_seed(seed);
    Ok(HttpResponse::NoContent().finish())
}

/// `GET /_sim/solicitacoes`: the requests created, in arrival order, with every field: the last
/// 10,000 (`JANELA_DE_DETALHES`; older ones keep only what the contract routes answer).
async fn list_solicitacoes(state: web::Data<AppState>) -> HttpResponse {
    let store = state.store();
    HttpResponse::Ok().json(store.solicitacoes())
}

/// The optional body of the subject's moves: the reason the subject gave.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Motivo {
    motivo: Option<String>,
}

/// `POST /_sim/solicitacoes/{id}/{aceitar|recusar|revogar}`, with an optional body
/// `{"motivo": "..."}` (no body, or an empty one: no reason). 400 bad body.
async fn mover(
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: web::Bytes,
    mv: Move,
) -> Result<HttpResponse, SimError> {
    let motivo = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        parse_json::<Motivo>(&body)?.motivo
    };
    let mut store = state.store();
    let i = store.mover(&id, mv, motivo)?;
    Ok(HttpResponse::Ok().json(store.registrada(i)))
}

/// The body of `POST /_sim/solicitacoes/{id}/status`: any text, reported as it is.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct StatusBruto {
    status: String,
}

/// `POST /_sim/solicitacoes/{id}/status`: the request reports `status` (any text) on the
/// contract routes from now on, until its next move. 404 unknown id; 400 bad body.
async fn definir_status(
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, SimError> {
    let StatusBruto { status } = parse_json::<StatusBruto>(&body)?;
    let mut store = state.store();
    let i = store.definir_status_bruto(&id, status)?;
    Ok(HttpResponse::Ok().json(store.registrada(i)))
}

/// `DELETE /_sim/solicitacoes/{id}`: the PGCC forgets the request (every contract route answers
/// it unknown from now on). 204; 404 unknown id.
async fn esquecer(
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<HttpResponse, SimError> {
    state.store().esquecer(&id)?;
    Ok(HttpResponse::NoContent().finish())
}

/// `GET /_sim/status-consultas`: `{"<pgccId>": <calls of the batch status route asking it>}`.
async fn status_consultas(state: web::Data<AppState>) -> HttpResponse {
    let store = state.store();
    HttpResponse::Ok().json(&store.status_consultas)
}

/// `GET /_sim/status-chamadas`: the last calls of the batch status route, oldest first:
/// `[{"em": "<when it arrived>", "ids": <ids it carried>}, ...]`.
async fn status_chamadas(state: web::Data<AppState>) -> HttpResponse {
    let store = state.store();
    let calls: Vec<serde_json::Value> = store
        .status_chamadas
        .iter()
        .map(|(em, ids)| serde_json::json!({"em": em, "ids": ids}))
        .collect();
    HttpResponse::Ok().json(calls)
}

/// `DELETE /_sim/status-consultas`: resets the counts (and the calls' list).
async fn clear_status_consultas(state: web::Data<AppState>) -> HttpResponse {
    state.store().status_chamadas.clear();
    state.store().status_consultas.clear();
    HttpResponse::NoContent().finish()
}

/// `GET /_sim/casos-de-uso-consultas`: `{"<cnpj as in the path>": <calls of the use-case list>}`.
async fn casos_de_uso_consultas(state: web::Data<AppState>) -> HttpResponse {
    let store = state.store();
    HttpResponse::Ok().json(&store.casos_de_uso_consultas)
}

/// `DELETE /_sim/casos-de-uso-consultas`: resets the counts.
async fn clear_casos_de_uso_consultas(state: web::Data<AppState>) -> HttpResponse {
    state.store().casos_de_uso_consultas.clear();
    HttpResponse::NoContent().finish()
}

/// `POST /_sim/faults`: replaces the fault rule.
async fn set_fault(state: web::Data<AppState>, body: web::Bytes) -> Result<HttpResponse, SimError> {
    let spec = parse_json::<FaultSpec>(&body)?;
    state.faults.set(spec)?;
    Ok(HttpResponse::NoContent().finish())
}

/// `DELETE /_sim/faults`
async fn clear_fault(state: web::Data<AppState>) -> HttpResponse {
    state.faults.clear();
    HttpResponse::NoContent().finish()
}
