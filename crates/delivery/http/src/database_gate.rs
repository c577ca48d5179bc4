//! Fails fast while the database does not answer. The readiness watcher probes it a few times a
//! second on a connection of its own (`application::Operations::database_answers`); when no probe
//! has had an answer for `within`, a request to `/api` is answered 503 (`Retry-After`) at once,
//! and one already waiting on the database is answered 503 as soon as that is known, instead of
//! holding its client until the network gives up (a dead path without a reset keeps a query
//! waiting for the kernel's retransmission timeout, about 15 minutes).
//!
//! An abandoned request's blocking work goes on in the background and ends when the database
//! answers or the connection fails; its result is dropped. Nothing acknowledged is lost: the
//! client got a 503, and a creation it retries with the same `Idempotency-Key` gets the one
//! answer, while the reconciler settles a creation left unconfirmed.

use std::time::Duration;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{web, Error, ResponseError};
use application::Operations;

use crate::error::ApiError;

/// How often a request waiting on the database looks at the probes' verdict.
const RECHECK: Duration = Duration::from_millis(100);

/// Middleware: 503 for `/api` requests while the database does not answer (see the module).
pub async fn gate(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
    within: Duration,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let operations = req.app_data::<web::Data<Operations>>().cloned();
    let Some(operations) = operations.filter(|_| req.path().starts_with("/api")) else {
        return Ok(next.call(req).await?.map_into_boxed_body());
    };
    if !operations.database_answers(within) {
        return Ok(unavailable(req));
    }
    let request = req.request().clone();
    let handled = next.call(req);
    tokio::pin!(handled);
    loop {
        tokio::select! {
            response = &mut handled => return Ok(response?.map_into_boxed_body()),
            _ = tokio::time::sleep(RECHECK) => {
                if !operations.database_answers(within) {
                    return Ok(ServiceResponse::new(request, database_down().error_response()));
                }
            }
        }
    }
}

fn unavailable(req: ServiceRequest) -> ServiceResponse<BoxBody> {
    req.into_response(database_down().error_response())
}

fn database_down() -> ApiError {
    ApiError::Unavailable(anyhow::anyhow!(
        "the database has not answered the readiness probe"
    ))
}
