//! The bytes of an answer, kept with its key for replays, and the replay itself.

use actix_web::body::MessageBody;
use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use ports::StoredOutcome;

use crate::error::ApiError;

/// An answer kept for replay: its HTTP status and its body, byte for byte.
#[derive(Clone, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    pub body: Vec<u8>,
}

/// The body may name a subject's data (a consent's id, a field in error): `Debug` shows its size.
impl std::fmt::Debug for StoredResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredResponse")
            .field("status", &self.status)
            .field("body_len", &self.body.len())
            .finish()
    }
}

impl From<StoredOutcome> for StoredResponse {
    fn from(outcome: StoredOutcome) -> Self {
        StoredResponse {
            status: outcome.status,
            body: outcome.body,
        }
    }
}

impl StoredResponse {
    /// As the repository keeps it.
    pub fn to_outcome(&self) -> StoredOutcome {
        StoredOutcome {
            status: self.status,
            body: self.body.clone(),
        }
    }

    /// The bytes of the success answer, as `HttpResponse::json` would write them.
    pub fn success<T: serde::Serialize>(envelope: &T) -> Result<StoredResponse, ApiError> {
        let body = serde_json::to_vec(envelope).map_err(|e| {
            ApiError::Internal(anyhow::Error::new(e).context("serializing an answer"))
        })?;
        Ok(StoredResponse { status: 200, body })
    }

    /// The bytes of an error's answer (its envelope, as its `ResponseError` writes it), when the
    /// error is a final outcome worth keeping: a 422 (a broken rule, or the PGCC's final
    /// refusal). Any other error (PGCC timeout, failure or "try later" (503), database, bug) is
    /// not final: `None`, the key is released and a retry runs again.
    pub fn of_final_error(error: &ApiError) -> Option<StoredResponse> {
        if error.status_code() != StatusCode::UNPROCESSABLE_ENTITY {
            return None;
        }
        let response = error.error_response();
        let status = response.status().as_u16();
        match response.into_body().try_into_bytes() {
            Ok(body) => Some(StoredResponse {
                status,
                body: body.to_vec(),
            }),
            Err(_) => None,
        }
    }

    /// The answer as kept: its status, its bytes, labelled JSON (the media type is negotiated
    /// afterwards like any other answer).
    pub fn answer(self) -> HttpResponse {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        HttpResponse::build(status)
            .insert_header((header::CONTENT_TYPE, "application/json"))
            .body(self.body)
    }

    /// The answer replayed: the same status and bytes, plus `Idempotent-Replayed: true`.
    pub fn replay(self) -> HttpResponse {
        let mut response = self.answer();
        response.headers_mut().insert(
            header::HeaderName::from_static("idempotent-replayed"),
            header::HeaderValue::from_static("true"),
        );
        response
    }
}

#[cfg(test)]
mod tests {
    use domain::ValidationErrors;

    use super::*;
    use crate::idempotency::IDEMPOTENT_REPLAYED_HEADER;

    #[test]
    fn only_422_answers_are_kept() {
        let kept = StoredResponse::of_final_error(&ApiError::Validation(ValidationErrors::single(
            "cpfTitular",
            "inválido",
        )))
        .unwrap();
        assert_eq!(kept.status, 422);
        let body: serde_json::Value = serde_json::from_slice(&kept.body).unwrap();
        assert_eq!(body["data"]["erros"][0]["campo"], "cpfTitular");

        for not_final in [
            ApiError::Pgcc(ports::PgccError::Timeout),
            ApiError::Pgcc(ports::PgccError::Failed { status: 503 }),
            ApiError::Pgcc(ports::PgccError::TryLater {
                status: 429,
                retry_after_seconds: Some(3),
            }),
            ApiError::Pgcc(ports::PgccError::TryLater {
                status: 408,
                retry_after_seconds: None,
            }),
            ApiError::Unavailable(anyhow::anyhow!("down")),
            ApiError::Internal(anyhow::anyhow!("bug")),
        ] {
            assert!(
                StoredResponse::of_final_error(&not_final).is_none(),
                "{not_final:?}"
            );
        }
        let refused = StoredResponse::of_final_error(&ApiError::Pgcc(ports::PgccError::Rejected {
            status: 404,
        }))
        .unwrap();
        assert_eq!(refused.status, 422);
    }

    #[test]
    fn a_replay_has_the_same_status_and_bytes_and_says_so() {
        let replayed = StoredResponse {
            status: 422,
            body: b"{\"x\":1}".to_vec(),
        }
        .replay();
        assert_eq!(replayed.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(
            replayed.headers().get(IDEMPOTENT_REPLAYED_HEADER).unwrap(),
            "true"
        );
        let body = replayed.into_body().try_into_bytes().unwrap();
        assert_eq!(&body[..], b"{\"x\":1}");
    }

    #[test]
    fn an_answer_goes_to_the_repository_and_back_unchanged() {
        let answer = StoredResponse {
            status: 200,
            body: b"{\"ok\":1}".to_vec(),
        };
        assert_eq!(StoredResponse::from(answer.to_outcome()), answer);
    }
}
