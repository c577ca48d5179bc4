use chrono::{DateTime, Utc};
use domain::{Cnpj, ConsentStatus, PgccUseCase, ValidConsentRequest};
use uuid::Uuid;

/// Every PGCC id the sandbox's simulated PGCC mints starts with this (docs/decisions.md, "The
/// sandbox"): the calls that carry only ids (status, revocation) are routed by it; the real
/// PGCC's ids (`pgcc-...` in docs/pgcc.md) never start so.
pub const SANDBOX_PGCC_ID_PREFIX: &str = "sandbox-";

/// How a call to the PGCC failed. The adapter classifies; delivery maps to HTTP
/// (architecture page, section 3).
#[derive(Debug, thiserror::Error)]
pub enum PgccError {
    /// The PGCC answered a 4xx other than 401/403, 408, 425 and 429: it refused this request
    /// for good (the same request would be refused again).
    #[error("the PGCC refused the request with HTTP {status}")]
    Rejected { status: u16 },
    /// The PGCC answered 408 (Request Timeout), 425 (Too Early) or 429 (Too Many Requests): it
    /// did not take the request now and the same request may succeed later. Not a refusal: a
    /// creation may still be held (a 408 can come after the PGCC read the body), so it is
    /// settled like a timeout. `retry_after_seconds`: the PGCC's `Retry-After`, when it sent a
    /// usable one.
    #[error("the PGCC asked to try again later (HTTP {status})")]
    TryLater {
        status: u16,
        retry_after_seconds: Option<u64>,
    },
    /// The PGCC answered 401, 403 or 5xx: it (or our credentials with it) is failing.
    #[error("the PGCC failed with HTTP {status}")]
    Failed { status: u16 },
    /// No answer: connection refused, DNS, TLS, reset.
    #[error("the PGCC is unreachable")]
    Unreachable(#[source] anyhow::Error),
    /// Connected, but no complete answer within the configured timeout.
    #[error("the PGCC timed out")]
    Timeout,
    /// A 2xx whose body we could not read.
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// A consent request to create on the PGCC on behalf of the company of `company_cnpj`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgccNewConsent {
    /// Our id of the request, sent as the PGCC's external reference.
    pub referencia_externa: Uuid,
    pub company_cnpj: Cnpj,
    /// The PGCC link the use case belongs to.
    pub link_id: Option<Uuid>,
    pub request: ValidConsentRequest,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgccConsentCreated {
    pub pgcc_id: String,
}

/// A request's status as the PGCC holds it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgccConsentStatus {
    pub pgcc_id: String,
    /// `None`: the PGCC answered a status outside the five the contract names. Reported per
    /// request, so that one odd answer never hides its neighbours' in the same batch.
    pub status: Option<ConsentStatus>,
    /// The reason the PGCC reports for the request's last change (the subject's, when it
    /// refused or revoked), as it sent it; `None` when it reports none.
    pub reason: Option<String>,
    /// When the request's status will change next, if the platform knows it. The real PGCC
    /// never does (its subjects answer when they will); the sandbox's simulated PGCC plays a
    /// fixed timeline, so the status worker looks again then rather than at its steady pace.
    pub next_change_at: Option<DateTime<Utc>>,
    /// The CNPJ of the company the request belongs to, as the PGCC answered it (`None`: it did
    /// not say). Only the import reads it: a consent imported by its PGCC id must be the
    /// importing company's (docs/imports.md).
    pub company_cnpj: Option<String>,
}

/// The external consent platform. Contract: `docs/pgcc.md`.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait PgccGateway: Send + Sync {
    /// Every use case of every link of the company, as the PGCC holds them now.
    fn list_use_cases(&self, company_cnpj: &Cnpj) -> Result<Vec<PgccUseCase>, PgccError>;

    /// Creates the consent request (in its variant's initial status) and returns the PGCC id.
    fn create_consent_request(
        &self,
        consent: &PgccNewConsent,
    ) -> Result<PgccConsentCreated, PgccError>;

    /// The current status of each of these requests (at most 500 ids per call); ids the PGCC
    /// does not know are left out of the answer, and a status it names that we do not know is
    /// `status: None` for that request alone.
    fn consent_statuses(&self, pgcc_ids: &[String]) -> Result<Vec<PgccConsentStatus>, PgccError>;

    /// Revokes an active request on the PGCC, or withdraws a pending one (the company's
    /// decision). A request that is neither there is `Rejected { status: 409 }`.
    fn revoke_consent_request(&self, pgcc_id: &str) -> Result<(), PgccError>;

    /// The request the PGCC holds for the company of `company_cnpj` under our id `referencia_externa`
    /// (its external reference), or `None` when it holds none: a definite answer, never a
    /// failure in disguise (any failure to ask is an `Err`).
    fn find_by_external_reference(
        &self,
        company_cnpj: &Cnpj,
        referencia_externa: Uuid,
    ) -> Result<Option<PgccConsentCreated>, PgccError>;
}
