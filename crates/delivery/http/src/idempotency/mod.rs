//! Idempotent requests (header `Idempotency-Key`), an HTTP concern kept at the edge: the first
//! request with a key runs and its answer (status and bytes) is kept; a retry with the same key
//! and the same request gets that answer again, with `Idempotent-Replayed: true`, instead of
//! running twice (docs/decisions.md, "Idempotency").
//!
//! Keys are scoped by company. A request is identified by its fingerprint (SHA-256 of method,
//! path and body bytes): the same key with another request is refused (422). While a request
//! runs it holds the key for a lease (60 s): a concurrent retry is refused as in progress (409),
//! and a retry after its process died takes the key over once the lease is over. Only final
//! answers (200, 422) are kept; otherwise the key is released and the next retry runs again,
//! under the same reserved resource id, which the use case is given: so a retry can never
//! create a second resource.
//!
//! [`run_as_company`] is what a handler calls; the key's row lives behind
//! [`ports::IdempotencyRepository`], which keeps the answer as opaque bytes.

mod answer;
mod claims;
mod key;
mod request;

use actix_web::{web, HttpResponse};
use application::Services;
use domain::Company;
use serde::Serialize;
use uuid::Uuid;

pub use answer::StoredResponse;
pub use claims::{Completion, Idempotency, IdempotencyError, Idempotent};
pub use key::{
    request_fingerprint, IdempotencyKey, InvalidIdempotencyKey, IDEMPOTENCY_KEY_MAX_LEN,
};
pub use request::{IdempotentJson, IdempotentOptionalJson, IdempotentRequest};

use crate::api_key::ApiKeyHeader;
use crate::blocking::{as_caller, as_company, Call};
use crate::error::ApiError;
use crate::state::ApiState;

pub const IDEMPOTENCY_KEY_HEADER: &str = "Idempotency-Key";
pub const IDEMPOTENT_REPLAYED_HEADER: &str = "Idempotent-Replayed";

/// How long a running request holds its key before a retry may take it over.
pub const IDEMPOTENCY_LEASE_SECONDS: i64 = 60;

/// Runs `work` for the company in the request's one blocking hop and answers 200 with the JSON
/// it returns (or its error). With an `Idempotency-Key`, in the same hop: the key is claimed
/// first (a kept answer is replayed, a reuse refused, and `work` does not run), `work` gets the
/// resource id the key reserved (`Some`, the same on every retry), and its answer is kept if it
/// is final. Without one, `work` gets `None`: it picks a fresh id. A kept answer is given to
/// `replayed` in the hop before it goes out: a replay is a read of what the answer carries, by
/// whichever key of the company sent it, so a route whose answer may carry personal data records
/// it there (an error, 503 when it cannot be recorded, is answered instead of the replay).
pub async fn run_as_company<T, F, R>(
    state: &web::Data<ApiState>,
    key: ApiKeyHeader,
    idempotency: Option<IdempotentRequest>,
    replayed: R,
    work: F,
) -> Result<HttpResponse, ApiError>
where
    T: Serialize + Send + 'static,
    F: FnOnce(&Services, &Company, Option<Uuid>) -> Result<T, ApiError> + Send + 'static,
    R: FnOnce(&Services, &Call, &StoredResponse) -> Result<(), ApiError> + Send + 'static,
{
    let Some(request) = idempotency else {
        let answer = as_company(state, key, move |s, company| work(s, company, None)).await?;
        return Ok(HttpResponse::Ok().json(answer));
    };
    let keys = state.idempotency.clone();
    let outcome = as_caller(state, key, move |s, call| {
        let IdempotentRequest { key, fingerprint } = request;
        let company = call.company();
        let outcome = keys.run(company.id, &key, &fingerprint, |reserved| {
            settle(work(s, company, Some(reserved)))
        })?;
        if let Idempotent::Replayed(kept) = &outcome {
            replayed(s, call, kept)?;
        }
        Ok(outcome)
    })
    .await?;
    match outcome {
        Idempotent::Ran(answer) => answer.map(StoredResponse::answer),
        Idempotent::Replayed(kept) => Ok(kept.replay()),
    }
}

/// A run's answer, kept when final: a success, or an error whose answer is final (422).
fn settle<T: Serialize>(
    result: Result<T, ApiError>,
) -> Completion<Result<StoredResponse, ApiError>> {
    let kept = match result.and_then(|answer| StoredResponse::success(&answer)) {
        Ok(kept) => kept,
        Err(error) => match StoredResponse::of_final_error(&error) {
            Some(kept) => kept,
            None => {
                return Completion {
                    result: Err(error),
                    keep: None,
                }
            }
        },
    };
    Completion {
        result: Ok(kept.clone()),
        keep: Some(kept),
    }
}
