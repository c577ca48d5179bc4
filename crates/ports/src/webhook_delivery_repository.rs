//! The outbox side of webhooks: deliveries (one per event and URL) and their attempts. Events
//! and deliveries are written by the repositories whose change causes them, in the same
//! transaction; this port claims, records and reports them.

use chrono::{DateTime, Utc};
use domain::{CompanyId, WebhookEvent};
use uuid::Uuid;

use crate::{EncryptedSecret, RepoError};

/// A delivery claimed for an attempt, with everything needed to send it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueDelivery {
    pub id: Uuid,
    pub company_id: CompanyId,
    pub webhook_url_id: Uuid,
    pub url: String,
    /// The event id: the `webhook-id` header, the same on every attempt.
    pub event_id: Uuid,
    /// The exact body, serialized once when the event was written.
    pub payload: String,
    /// Attempts made before this one.
    pub attempts: u32,
    pub secret: EncryptedSecret,
    /// The previous secret while its rotation overlap lasts.
    pub previous_secret: Option<EncryptedSecret>,
    /// The token of this claim: [`WebhookDeliveryRepository::record_attempt`] records only
    /// while the delivery still carries it (no other sender claimed it since).
    pub lease: Uuid,
}

/// How much one claim may take: at most `limit` deliveries in all and, per company, at most
/// `per_company` less what this process already has in flight for it (`in_flight`), so one
/// company's slow receivers never hold every sender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimLimits {
    pub limit: u32,
    pub per_company: u32,
    /// Deliveries this process is sending now, by company (companies absent have none).
    pub in_flight: Vec<(CompanyId, u32)>,
}

impl ClaimLimits {
    /// `limit` deliveries, with no share per company.
    pub fn total(limit: u32) -> Self {
        Self {
            limit,
            per_company: u32::MAX,
            in_flight: Vec::new(),
        }
    }
}

/// What one attempt gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryAttempt {
    pub at: DateTime<Utc>,
    /// The receiver's HTTP status, if it answered.
    pub http_status: Option<u16>,
    pub latency_ms: u32,
    /// Why it failed, in a few words (never the body, never a secret).
    pub error: Option<String>,
}

/// Where the delivery goes after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryOutcome {
    Delivered,
    RetryAt(DateTime<Utc>),
    /// The retry schedule is exhausted (or the target is refused).
    Failed,
}

/// A delivery as the company sees it in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRecord {
    pub id: Uuid,
    pub event_id: Uuid,
    pub event_type: String,
    /// `pendente`, `entregue`, `falhou`, `cancelada`.
    pub status: String,
    pub created_at: DateTime<Utc>,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub attempts: Vec<DeliveryAttempt>,
}

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait WebhookDeliveryRepository: Send + Sync {
    /// Claims pending deliveries due at `now` whose URL is neither removed nor disabled, within
    /// `limits`: companies take turns (each company's soonest due first, the company waiting
    /// longest first), so a claim smaller than the backlog is shared out across companies.
    /// Each claimed delivery gets a new lease token and its next attempt pushed to
    /// `lease_until`, so a crashed sender's claim is retried then; one statement with
    /// `FOR UPDATE SKIP LOCKED`.
    fn claim_due(
        &self,
        limits: &ClaimLimits,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
    ) -> Result<Vec<DueDelivery>, RepoError>;

    /// Stores the attempt and moves the delivery (delivered, retry at, failed), in one
    /// transaction, if the delivery still carries the lease token `lease` (and clears it).
    /// `Ok(false)`, with nothing stored, when another claim has taken the delivery over (the
    /// lease had expired); an unknown delivery is `Unexpected`.
    fn record_attempt(
        &self,
        delivery_id: Uuid,
        lease: Uuid,
        attempt: &DeliveryAttempt,
        outcome: DeliveryOutcome,
    ) -> Result<bool, RepoError>;

    /// The newest `limit` deliveries to the company's URL `webhook_url_id` (removed URLs
    /// included), with their attempts; `None` when the URL is not the company's.
    fn list_for_url(
        &self,
        company: CompanyId,
        webhook_url_id: Uuid,
        limit: u32,
    ) -> Result<Option<Vec<DeliveryRecord>>, RepoError>;

    /// Makes the company's delivery due again now (whatever its status), if its URL is the
    /// company's and not removed. `false` when there is no such delivery.
    fn replay(
        &self,
        company: CompanyId,
        webhook_url_id: Uuid,
        delivery_id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<bool, RepoError>;

    /// Writes the company's test event `event` (`webhook.teste`) and its one delivery to the
    /// company's non-removed URL `webhook_url_id` (disabled or not), in one transaction, the
    /// delivery already claimed by the caller (leased until `lease_until`, so no background
    /// sender takes it), and answers it as [`Self::claim_due`] would; `None` (nothing written)
    /// when there is no such URL for the company. Record the attempt with
    /// [`Self::record_attempt`].
    fn begin_test(
        &self,
        webhook_url_id: Uuid,
        event: &WebhookEvent,
        lease_until: DateTime<Utc>,
    ) -> Result<Option<DueDelivery>, RepoError>;

    /// The signing secret of the most recently registered URL (any company, removed or not),
    /// if any: start-up decrypts it to prove the configured key is the one the stored secrets
    /// were encrypted with.
    fn newest_secret(&self) -> Result<Option<EncryptedSecret>, RepoError>;

    /// Disables (sets `desativado_em = now`) every active URL that had deliveries in the last
    /// `window` and none of them delivered, with at least one failed; returns how many.
    fn disable_failing_urls(
        &self,
        now: DateTime<Utc>,
        window: chrono::Duration,
    ) -> Result<u32, RepoError>;
}
