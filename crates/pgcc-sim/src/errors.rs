//! The error answer of every route: `{"codigo":"NotFound","mensagem":"..."}` with the status.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

#[derive(Debug, Serialize)]
struct ErrorBody<'a> {
    codigo: &'a str,
    mensagem: &'a str,
}

/// An error answer: the status and a human message (never personal data).
#[derive(Debug)]
pub struct SimError {
    pub status: StatusCode,
    pub mensagem: String,
}

impl SimError {
    pub fn new(status: StatusCode, mensagem: impl Into<String>) -> Self {
        Self {
            status,
            mensagem: mensagem.into(),
        }
    }

    pub fn bad_request(mensagem: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, mensagem)
    }

    pub fn not_found(mensagem: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, mensagem)
    }

    pub fn conflict(mensagem: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, mensagem)
    }
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.mensagem)
    }
}

impl ResponseError for SimError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        error_response(self.status, &self.mensagem)
    }
}

/// The error JSON for `status`.
pub fn error_response(status: StatusCode, mensagem: &str) -> HttpResponse {
    HttpResponse::build(status).json(ErrorBody {
        codigo: status_name(status.as_u16()),
        mensagem,
    })
}

/// The name of an HTTP status as the consent API spells them (`503` -> `ServiceUnavailable`);
/// `Unknown` for a code outside that list.
pub fn status_name(code: u16) -> &'static str {
    match code {
        100 => "Continue",
        101 => "SwitchingProtocols",
        102 => "Processing",
        103 => "EarlyHints",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "NonAuthoritativeInformation",
        204 => "NoContent",
        205 => "ResetContent",
        206 => "PartialContent",
        207 => "MultiStatus",
        208 => "AlreadyReported",
        226 => "IMUsed",
        300 => "MultipleChoices",
        301 => "MovedPermanently",
        302 => "Found",
        303 => "SeeOther",
        304 => "NotModified",
        305 => "UseProxy",
        306 => "Unused",
        307 => "TemporaryRedirect",
        308 => "PermanentRedirect",
        400 => "BadRequest",
        401 => "Unauthorized",
        402 => "PaymentRequired",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        406 => "NotAcceptable",
        407 => "ProxyAuthenticationRequired",
        408 => "RequestTimeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "LengthRequired",
        412 => "PreconditionFailed",
        413 => "RequestEntityTooLarge",
        414 => "RequestUriTooLong",
        415 => "UnsupportedMediaType",
        416 => "RequestedRangeNotSatisfiable",
        417 => "ExpectationFailed",
        421 => "MisdirectedRequest",
        422 => "UnprocessableEntity",
        423 => "Locked",
        424 => "FailedDependency",
        425 => "TooEarly",
        426 => "UpgradeRequired",
        428 => "PreconditionRequired",
        429 => "TooManyRequests",
        431 => "RequestHeaderFieldsTooLarge",
        451 => "UnavailableForLegalReasons",
        500 => "InternalServerError",
        501 => "NotImplemented",
        502 => "BadGateway",
        503 => "ServiceUnavailable",
        504 => "GatewayTimeout",
        505 => "HttpVersionNotSupported",
        506 => "VariantAlsoNegotiates",
        507 => "InsufficientStorage",
        508 => "LoopDetected",
        510 => "NotExtended",
        511 => "NetworkAuthenticationRequired",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::status_name;

    #[test]
    fn status_names_follow_the_consent_api_spelling() {
        assert_eq!(status_name(404), "NotFound");
        assert_eq!(status_name(503), "ServiceUnavailable");
        assert_eq!(status_name(413), "RequestEntityTooLarge");
        assert_eq!(status_name(299), "Unknown");
    }
}
