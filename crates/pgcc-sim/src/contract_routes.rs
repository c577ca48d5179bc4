//! The PGCC contract (`docs/pgcc.md`): routes under `/pgcc/v1`, behind the fault rule and the
//! token check.

use actix_web::http::StatusCode;
use actix_web::middleware::from_fn;
use actix_web::{web, HttpRequest, HttpResponse};
use chrono::Utc;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::auth::require_token;
use crate::errors::{error_response, SimError};
use crate::faults::apply_faults;
use crate::seed::SeedVinculo;
use crate::solicitacao::{NovaSolicitacao, SolicitacaoStatusView, SolicitacaoView};
use crate::state::{contar, AppState, Created, Move};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/pgcc/v1")
            // the last `wrap` runs first: faults, then the token check
            .wrap(from_fn(require_token))
            .wrap(from_fn(apply_faults))
            .route(
                "/empresas/{cnpj}/casos-de-uso",
                web::get().to(listar_casos_de_uso),
            )
            .route("/solicitacoes", web::post().to(criar_solicitacao))
            .route("/solicitacoes", web::get().to(buscar_por_referencia))
            // before `/solicitacoes/{id}`, which would otherwise take `status` for an id
            .route("/solicitacoes/status", web::post().to(consultar_status))
            .route("/solicitacoes/{id}", web::get().to(ler_solicitacao))
            .route(
                "/solicitacoes/{id}/revogar",
                web::post().to(revogar_solicitacao),
            )
            .default_service(web::to(rota_desconhecida)),
    );
}

#[derive(Serialize)]
struct CasosDeUsoResponse<'a> {
    vinculos: &'a [SeedVinculo],
}

/// `GET /pgcc/v1/empresas/{cnpj}/casos-de-uso`
async fn listar_casos_de_uso(
    state: web::Data<AppState>,
    cnpj: web::Path<String>,
) -> Result<HttpResponse, SimError> {
    let mut store = state.store();
    contar(&mut store.casos_de_uso_consultas, cnpj.as_str());
    let empresa = store
        .empresa(&cnpj)
        .ok_or_else(|| SimError::not_found("empresa não encontrada"))?;
    Ok(HttpResponse::Ok().json(CasosDeUsoResponse {
        vinculos: &empresa.vinculos,
    }))
}

/// `POST /pgcc/v1/solicitacoes`: 201 when created, 200 for a repeated `referenciaExterna`.
async fn criar_solicitacao(
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, SimError> {
    let nova = parse_json::<NovaSolicitacao>(&body)?;
    nova.validate().map_err(SimError::bad_request)?;
    let created = state.store().criar(nova)?;
    Ok(match created {
        Created::New(view) => HttpResponse::Created().json(view),
        Created::Existing(view) => HttpResponse::Ok().json(view),
    })
}

/// The query of `GET /pgcc/v1/solicitacoes`: both parameters required, nothing else.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct BuscaPorReferencia {
    cnpj_empresa: String,
    referencia_externa: String,
}

#[derive(Serialize)]
struct BuscaPorReferenciaResponse {
    solicitacoes: Vec<SolicitacaoView>,
}

/// `GET /pgcc/v1/solicitacoes?cnpjEmpresa=...&referenciaExterna=...`: the company's request
/// with that external reference, in a list of at most one (`[]` when there is none); 400 for a
/// missing or malformed parameter, 404 for an unknown company.
async fn buscar_por_referencia(
    state: web::Data<AppState>,
    query: HttpRequest,
) -> Result<HttpResponse, SimError> {
    let busca = web::Query::<BuscaPorReferencia>::from_query(query.query_string())
        .map_err(|_| {
            SimError::bad_request(
                "informe cnpjEmpresa e referenciaExterna (e nenhum outro parâmetro)",
            )
        })?
        .into_inner();
    let referencia = Uuid::parse_str(&busca.referencia_externa)
        .map_err(|_| SimError::bad_request("referenciaExterna deve ser um UUID"))?;
    let store = state.store();
    let solicitacoes = store
        .por_referencia(&busca.cnpj_empresa, referencia)?
        .into_iter()
        .collect();
    Ok(HttpResponse::Ok().json(BuscaPorReferenciaResponse { solicitacoes }))
}

/// `GET /pgcc/v1/solicitacoes/{id}`
async fn ler_solicitacao(
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<HttpResponse, SimError> {
    let store = state.store();
    let solicitacao = store
        .get(&id)
        .ok_or_else(|| SimError::not_found("solicitação não encontrada"))?;
    Ok(HttpResponse::Ok().json(solicitacao))
}

/// The most ids one batch status call may ask about.
const MAX_IDS_POR_CONSULTA: usize = 500;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConsultaStatus {
    ids: Vec<String>,
}

#[derive(Serialize)]
struct ConsultaStatusResponse {
    solicitacoes: Vec<SolicitacaoStatusView>,
}

/// `POST /pgcc/v1/solicitacoes/status`: the status of each known id, in the order asked; unknown
/// ids are left out. 400 unless 1 to 500 ids.
async fn consultar_status(
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, SimError> {
    let consulta = parse_json::<ConsultaStatus>(&body)?;
    if consulta.ids.is_empty() || consulta.ids.len() > MAX_IDS_POR_CONSULTA {
        return Err(SimError::bad_request(format!(
            "ids deve ter de 1 a {MAX_IDS_POR_CONSULTA} elementos"
        )));
    }
    let solicitacoes = state.store().consultar_status(&consulta.ids, Utc::now());
    Ok(HttpResponse::Ok().json(ConsultaStatusResponse { solicitacoes }))
}

/// `POST /pgcc/v1/solicitacoes/{id}/revogar`: revocation by the company of an `ativo` request,
/// or withdrawal of a `pendente` one; 409 otherwise, as read now (an expired request cannot be
/// revoked). The body, if any, is not read.
async fn revogar_solicitacao(
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<HttpResponse, SimError> {
    let mut store = state.store();
    let i = store.mover(&id, Move::RevogarPelaEmpresa, None)?;
    Ok(HttpResponse::Ok().json(store.view_at(i, Utc::now())))
}

async fn rota_desconhecida() -> HttpResponse {
    error_response(StatusCode::NOT_FOUND, "rota desconhecida")
}

/// Decodes a JSON body; 400 when it is not JSON of the expected shape. The message gives the
/// position only, never a value (it could be personal data).
pub fn parse_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, SimError> {
    serde_json::from_slice(body).map_err(|e| {
        SimError::bad_request(format!(
            "corpo JSON inválido (linha {}, coluna {})",
            e.line(),
            e.column()
        ))
    })
}
