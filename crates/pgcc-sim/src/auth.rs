//! The bearer token check of the contract routes (only when the simulator has a token).

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::AUTHORIZATION;
use actix_web::http::StatusCode;
use actix_web::middleware::Next;
use actix_web::web;

use crate::errors::error_response;
use crate::state::AppState;

/// Middleware of the contract scope: 401 unless `Authorization: Bearer <token>` matches.
pub async fn require_token(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let expected = req
        .app_data::<web::Data<AppState>>()
        .and_then(|state| state.token.clone());
    if let Some(token) = expected {
        let given = req
            .headers()
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if given != Some(token.as_str()) {
            let response = error_response(StatusCode::UNAUTHORIZED, "token ausente ou inválido");
            return Ok(req.into_response(response));
        }
    }
    Ok(next.call(req).await?.map_into_boxed_body())
}
