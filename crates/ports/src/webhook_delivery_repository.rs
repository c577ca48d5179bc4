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
    /// The W3C `traceparent` of the change that wrote the event (telemetry on when it was
    /// written; `None` otherwise): sent on each attempt, so the attempt joins that trace.
    pub traceparent: Option<String>,
}

/// A company with pending deliveries due, and since when its soonest one waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompanyDue {
    pub company_id: CompanyId,
    pub since: DateTime<Utc>,
}

/// What one batch of [`WebhookDeliveryRepository::settle_url`] did to a URL's pending
/// deliveries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Settled {
    /// Deliveries cancelled (the URL was removed), parked (disabled) or brought back (enabled).
    pub changed: u32,
    /// Nothing is left to do for the URL (its mark is cleared).
    pub done: bool,
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
    /// The start of the receiver's answer body, as [`crate::SendReport::body`] kept it (at most
    /// [`RESPONSE_BODY_KEPT`] characters; `None`: no answer, or an empty one). Untrusted text:
    /// shown escaped, never logged.
    pub response_body: Option<String>,
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
    /// The request's body (the event as sent, the CPF masked in it), its first
    /// [`REQUEST_BODY_SHOWN`] characters.
    pub request_body: String,
}

/// The characters of a delivery's request body the log carries.
pub const REQUEST_BODY_SHOWN: usize = 2000;

/// The characters of a receiver's answer body an attempt keeps (issue 38, part 5).
pub const RESPONSE_BODY_KEPT: usize = 2000;

/// The bytes of a receiver's answer body the sender reads into memory to keep its start: a
/// receiver that streams forever holds no more than this (then the call's timeout).
pub const RESPONSE_BODY_READ_BYTES: usize = 4096;

/// The delivery statuses (`webhook_entregas.status`), the only values a log filter may name.
pub const DELIVERY_STATUSES: [&str; 4] = ["pendente", "entregue", "falhou", "cancelada"];

/// Filters of a URL's delivery log (the console's, issue 38 part 5); `None` = no filter, all
/// combined with AND.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeliveryFilter {
    /// One of [`DELIVERY_STATUSES`].
    pub status: Option<String>,
    /// The event's type (`consentimento.revogado`, ...), one of `domain::EventType`'s.
    pub event_type: Option<String>,
    /// Created at or after.
    pub created_from: Option<DateTime<Utc>>,
    /// Created strictly before.
    pub created_until: Option<DateTime<Utc>>,
    /// The next page: deliveries strictly older than this (created at, id), the log being
    /// newest first.
    pub before: Option<(DateTime<Utc>, Uuid)>,
}

/// A URL's health over a window (the console's, issue 38 part 5): its deliveries created in the
/// window (the newest, at most the cap asked), their attempts in the window, and its last
/// success whenever it was.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlHealth {
    /// The deliveries counted (at most the cap).
    pub deliveries: u32,
    /// Whether the window held more deliveries than the cap (the figures are the newest's).
    pub capped: bool,
    /// Their attempts in the window.
    pub attempts: u32,
    /// Those answered with a 2xx.
    pub successes: u32,
    /// The median latency of those attempts, in milliseconds.
    pub median_latency_ms: Option<u32>,
    /// The newest delivery delivered (its `entregue_em`), at any time.
    pub last_success: Option<DateTime<Utc>>,
}

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait WebhookDeliveryRepository: Send + Sync {
    /// The companies with pending deliveries due at `now` that are not parked, each with its
    /// soonest due time, in no particular order. Found without reading their deliveries: one
    /// index probe per company with pending deliveries (a loose index scan).
    fn companies_due(&self, now: DateTime<Utc>) -> Result<Vec<CompanyDue>, RepoError>;

    /// Claims up to `limit` of `company`'s pending deliveries due at `now` whose URL is neither
    /// removed nor disabled, soonest due first, skipping those another claim holds (`FOR UPDATE
    /// SKIP LOCKED`, within this one company). Each claimed delivery takes the lease token
    /// `lease` (chosen by the caller, new for each claim) and its next attempt is pushed to
    /// `lease_until`, so a crashed sender's claim is retried then.
    fn claim_due(
        &self,
        company: CompanyId,
        limit: u32,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        lease: Uuid,
    ) -> Result<Vec<DueDelivery>, RepoError>;

    /// Up to `limit` URLs marked as having pending deliveries to settle (removed, disabled or
    /// re-enabled since), with their company.
    fn urls_to_settle(&self, limit: u32) -> Result<Vec<(CompanyId, Uuid)>, RepoError>;

    /// One batch of at most `limit` of the URL's pending deliveries, under the URL's row lock:
    /// cancelled (`cancelada`, at `now`) when the URL is removed, parked when it is disabled,
    /// brought back (due as they were) otherwise. When fewer than `limit` were left, the URL's
    /// mark is cleared in the same transaction (`done`).
    fn settle_url(
        &self,
        company: CompanyId,
        webhook_url_id: Uuid,
        limit: u32,
        now: DateTime<Utc>,
    ) -> Result<Settled, RepoError>;

    /// The companies that have pending deliveries (parked ones included), in no particular order:
    /// one index probe per company.
    fn companies_with_pending(&self) -> Result<Vec<CompanyId>, RepoError>;

    /// When `company` has more than `keep` pending deliveries (parked included), fails up to
    /// `limit` of the soonest due beyond the newest `keep` (`falhou`, `motivo = reason`, at
    /// `now`) and answers how many; 0 when it is within `keep`. Reads at most `keep + 1` index
    /// entries to know, and only the rows it fails.
    fn fail_beyond_cap(
        &self,
        company: CompanyId,
        keep: u32,
        limit: u32,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<u32, RepoError>;

    /// Stores the attempt and moves the delivery (delivered, retry at, failed), in one
    /// transaction, if the delivery still carries the lease token `lease` (and clears it).
    /// `Ok(false)`, with nothing stored, when another claim has taken the delivery over (the
    /// lease had expired); an unknown delivery (of `company`) is `Unexpected`. The URL's
    /// `failing_since` follows in the same transaction (set by a failure when unset, cleared by
    /// a success; a test event's attempt leaves it alone).
    fn record_attempt(
        &self,
        company: CompanyId,
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

    /// At most `limit` deliveries to the company's URL `webhook_url_id` matching `filter`,
    /// newest first (by created at, then id), with their attempts; `None` when the URL is not
    /// the company's.
    fn page_for_url(
        &self,
        company: CompanyId,
        webhook_url_id: Uuid,
        filter: &DeliveryFilter,
        limit: u32,
    ) -> Result<Option<Vec<DeliveryRecord>>, RepoError>;

    /// The company's URL's [`UrlHealth`] since `since`, reading at most `cap` deliveries and
    /// their attempts; `None` when the URL is not the company's.
    fn url_health(
        &self,
        company: CompanyId,
        webhook_url_id: Uuid,
        since: DateTime<Utc>,
        cap: u32,
    ) -> Result<Option<UrlHealth>, RepoError>;

    /// Makes at most `limit` of the failed deliveries (`falhou`) to the company's live URL
    /// `webhook_url_id` created at or after `since` due again now, as [`Self::replay`] does to
    /// one (oldest first); how many.
    fn replay_failed_since(
        &self,
        company: CompanyId,
        webhook_url_id: Uuid,
        since: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<u32, RepoError>;

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
    /// sender takes it), and answers it as a claim would; `None` (nothing written)
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

    /// Disables (sets `desativado_em = now`, with the reason) every active URL that has failed
    /// without a single success for at least `window` since its first failure after its last
    /// success (kept by [`Self::record_attempt`]; test events never count), and marks it for
    /// [`Self::settle_url`] (its pending deliveries are parked behind); returns how many.
    fn disable_failing_urls(
        &self,
        now: DateTime<Utc>,
        window: chrono::Duration,
    ) -> Result<u32, RepoError>;
}
