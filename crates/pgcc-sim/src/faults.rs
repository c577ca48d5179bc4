//! Fault injection: the next N calls to `/pgcc/v1/...` wait a latency and/or answer a status.

use std::sync::Mutex;
use std::time::Duration;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::middleware::Next;
use actix_web::web;
use serde::Deserialize;

use crate::errors::{error_response, SimError};
use crate::state::AppState;

/// The body of `POST /_sim/faults`: `{"status":503,"count":2}`, `{"latencyMs":3000}`, or both;
/// `retryAfter` (with `status`): the `Retry-After` header value of the faulty answers, as given.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FaultSpec {
    pub status: Option<u16>,
    pub latency_ms: Option<u64>,
    pub retry_after: Option<String>,
    /// How many calls the rule applies to; 1 when absent.
    pub count: Option<u32>,
}

/// What one faulty call does.
#[derive(Debug, Clone)]
pub struct FaultAction {
    pub status: Option<StatusCode>,
    pub latency: Option<Duration>,
    pub retry_after: Option<HeaderValue>,
}

#[derive(Debug)]
struct FaultRule {
    action: FaultAction,
    remaining: u32,
}

/// The current rule (at most one).
#[derive(Debug, Default)]
pub struct Faults {
    rule: Mutex<Option<FaultRule>>,
}

impl Faults {
    /// Replaces the rule.
    pub fn set(&self, spec: FaultSpec) -> Result<(), SimError> {
        let status = spec
            .status
            .map(|code| {
                StatusCode::from_u16(code)
                    .map_err(|_| SimError::bad_request("status deve ser um código HTTP"))
            })
            .transpose()?;
        if status.is_none() && spec.latency_ms.is_none() {
            return Err(SimError::bad_request("informe status, latencyMs ou ambos"));
        }
        let retry_after = match spec.retry_after {
            Some(_) if status.is_none() => {
                return Err(SimError::bad_request("retryAfter exige status"));
            }
            Some(value) => Some(HeaderValue::from_str(&value).map_err(|_| {
                SimError::bad_request("retryAfter deve ser um valor de cabeçalho válido")
            })?),
            None => None,
        };
        let remaining = spec.count.unwrap_or(1);
        if remaining == 0 {
            return Err(SimError::bad_request("count deve ser ao menos 1"));
        }
        *self.lock() = Some(FaultRule {
            action: FaultAction {
                status,
                latency: spec.latency_ms.map(Duration::from_millis),
                retry_after,
            },
            remaining,
        });
        Ok(())
    }

    pub fn clear(&self) {
        *self.lock() = None;
    }

    /// The action for the call arriving now, counting it down.
    pub fn take(&self) -> Option<FaultAction> {
        let mut rule = self.lock();
        let current = rule.as_mut()?;
        let action = current.action.clone();
        current.remaining -= 1;
        if current.remaining == 0 {
            *rule = None;
        }
        Some(action)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<FaultRule>> {
        self.rule
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Middleware of the contract scope: applies the fault rule, if any, before anything else.
pub async fn apply_faults(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let action = req
        .app_data::<web::Data<AppState>>()
        .and_then(|state| state.faults.take());
    if let Some(action) = action {
        if let Some(latency) = action.latency {
            tokio::time::sleep(latency).await;
        }
        if let Some(status) = action.status {
            let mut response = error_response(status, "falha simulada");
            if let Some(value) = action.retry_after {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            return Ok(req.into_response(response));
        }
    }
    Ok(next.call(req).await?.map_into_boxed_body())
}
