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

use std::future::Future;
use std::time::Duration;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{web, Error, ResponseError};
use application::Operations;

use crate::error::ApiError;

/// How often a request waiting on the database looks at the probes' verdict.
const RECHECK: Duration = Duration::from_millis(100);

/// What a request's blocking work checks while it waits (set by [`gate`]).
#[derive(Clone)]
struct Watch {
    operations: web::Data<Operations>,
    within: Duration,
}

impl Watch {
    fn database_answers(&self) -> bool {
        self.operations.database_answers(self.within)
    }
}

tokio::task_local! {
    static WATCH: Watch;
}

/// Middleware: 503 for `/api` requests while the database does not answer, and the watch that
/// `while_database_answers` uses for the rest of the request (see the module).
pub async fn gate(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
    within: Duration,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let operations = req.app_data::<web::Data<Operations>>().cloned();
    let Some(operations) = operations.filter(|_| req.path().starts_with("/api")) else {
        return Ok(next.call(req).await?.map_into_boxed_body());
    };
    let watch = Watch { operations, within };
    if !watch.database_answers() {
        return Ok(req.into_response(database_down().error_response()));
    }
    let response = WATCH.scope(watch, next.call(req)).await?;
    Ok(response.map_into_boxed_body())
}

/// Awaits `work` (a request's blocking hop), unless the database stops answering meanwhile:
/// then 503 at once, and `work` goes on in the background with its result dropped.
pub(crate) async fn while_database_answers<T>(
    work: impl Future<Output = Result<T, ApiError>>,
) -> Result<T, ApiError> {
    let Ok(watch) = WATCH.try_with(Watch::clone) else {
        return work.await;
    };
    tokio::pin!(work);
    loop {
        tokio::select! {
            answer = &mut work => return answer,
            _ = tokio::time::sleep(RECHECK) => {
                if !watch.database_answers() {
                    return Err(database_down());
                }
            }
        }
    }
}

fn database_down() -> ApiError {
    ApiError::Unavailable(anyhow::anyhow!(
        "the database has not answered the readiness probe"
    ))
}
