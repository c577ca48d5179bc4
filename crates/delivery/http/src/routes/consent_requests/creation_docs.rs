//! What both creation operations (`criar/ativo`, `criar/pendente`) document alike: the
//! `Idempotency-Key` header and their answers. One definition, so the two cannot drift apart.

use serde::Deserialize;
use utoipa::{IntoParams, IntoResponses};

use crate::dto::consent_request::SolicitacaoCriada;
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro};

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)] // documentation only; the header is read by `IdempotentJson`
pub struct IdempotencyKeyParam {
    /// Optional, 1 to 255 visible ASCII characters, scoped to the company. A retry with the same
    /// key and the same request (method, path, body bytes) within 24 h answers the first answer
    /// again, byte for byte, with `Idempotent-Replayed: true`, and creates nothing. Kept answers:
    /// 200 and 422; any other answer (PGCC 5xx, timeout or "try later" (503), our 503) is not
    /// kept, so a retry runs again (under the same consent id: it cannot create a second consent). The same key with another
    /// request is 422; while the first request still runs, 409.
    #[serde(rename = "Idempotency-Key")]
    #[param(min_length = 1, max_length = 255, pattern = "^[!-~]+$")]
    idempotency_key: Option<String>,
}

#[derive(IntoResponses)]
#[allow(dead_code)] // documentation only; handlers answer through the envelope and ApiError
pub enum CreationResponses {
    #[response(
        status = 200,
        description = "Created on the PGCC and stored.",
        headers(("Idempotent-Replayed" = String, description = "`true` when this is the kept answer of an earlier request with the same Idempotency-Key."))
    )]
    Created(EnvelopeDoc<SolicitacaoCriada>),
    #[response(
        status = 400,
        description = "Malformed JSON, a value of the wrong type, an unknown field, or an invalid `Idempotency-Key` header."
    )]
    BadRequest(EnvelopeDoc<Erro>),
    #[response(
        status = 409,
        description = "A request with the same `Idempotency-Key` is still being processed; retry later."
    )]
    InProgress(EnvelopeDoc<Erro>),
    #[response(status = 413, description = "Body over the configured limit.")]
    TooLarge(EnvelopeDoc<Erro>),
    #[response(status = 415, description = "Content-Type is not JSON.")]
    NotJson(EnvelopeDoc<Erro>),
    #[response(
        status = 422,
        description = "A field rule is broken (`data.erros` names each field), the PGCC refused the request for good (`isPgccErro: true`; a PGCC 4xx other than 401, 403, 408, 425, 429), or the `Idempotency-Key` was used with another request (`data.erros` names the header).",
        headers(("Idempotent-Replayed" = String, description = "`true` when this is the kept answer of an earlier request with the same Idempotency-Key."))
    )]
    Refused(EnvelopeDoc<Erro>),
    #[response(
        status = 502,
        description = "The PGCC failed (its 5xx, 401, 403) or is unreachable (`isPgccErro: true`, `pgccCodigoErro` its status name, e.g. `ServiceUnavailable`); no consent visible (settled later by the reconciler); not kept under an `Idempotency-Key`: retry the same request."
    )]
    PgccFailed(EnvelopeDoc<Erro>),
    #[response(
        status = 504,
        description = "The PGCC timed out (`isPgccErro: true`); no consent visible yet (if the PGCC did create it, the reconciler confirms it)."
    )]
    PgccTimeout(EnvelopeDoc<Erro>),
}
