use chrono::{DateTime, Utc};
use domain::{CompanyId, EventSelection, WebhookUrl};
use uuid::Uuid;

use crate::RepoError;

/// A webhook URL's signing secret, as stored: encrypted by the `SecretCipher` (never plaintext).
#[derive(Clone, PartialEq, Eq)]
pub struct EncryptedSecret(pub String);

impl std::fmt::Debug for EncryptedSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EncryptedSecret(..)")
    }
}

/// Why a registration was not stored.
#[derive(Debug, thiserror::Error)]
pub enum InsertWebhookUrlError {
    /// The company already has `max_active` URLs not removed (disabled ones count).
    #[error("the company has reached its limit of webhook URLs")]
    LimitReached,
    /// The company already has this URL (compared by [`WebhookUrl::normalized`]) not removed.
    #[error("the company already has this webhook URL")]
    Duplicate,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

/// Every operation is scoped by the company.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait WebhookUrlRepository: Send + Sync {
    /// Stores a new URL with its (encrypted) signing secret, unless the company already has
    /// `max_active` URLs not removed (`LimitReached`) or already has this URL not removed
    /// (`Duplicate`). Both rules hold under concurrent registrations of one company.
    fn insert(
        &self,
        webhook: &WebhookUrl,
        secret: &EncryptedSecret,
        max_active: u32,
    ) -> Result<(), InsertWebhookUrlError>;

    /// The company's webhook URLs not removed (disabled ones included, flagged), oldest first.
    fn list_active(&self, company: CompanyId) -> Result<Vec<WebhookUrl>, RepoError>;

    /// The company's non-removed URL `id`.
    fn get(&self, company: CompanyId, id: Uuid) -> Result<Option<WebhookUrl>, RepoError>;

    /// Sets the removal time of the company's non-removed URL `id` and marks it for
    /// [`crate::WebhookDeliveryRepository::settle_url`], which cancels its pending deliveries in
    /// bounded batches behind (none is claimed meanwhile): the call costs the same however many
    /// are pending. `false` (and nothing changed) when there is no such URL for this company, or
    /// it was already removed.
    fn soft_delete(
        &self,
        company: CompanyId,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<bool, RepoError>;

    /// Clears the disabling of the company's non-removed URL `id` (same id, secret and log),
    /// recording `now` as its re-enabling when it was disabled and marking it for
    /// [`crate::WebhookDeliveryRepository::settle_url`] (its parked deliveries come back in
    /// batches behind); an active URL is left as it is.
    /// The URL as it is afterwards; `None` when there is no such URL for this company.
    fn reenable(
        &self,
        company: CompanyId,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<Option<WebhookUrl>, RepoError>;

    /// Sets which events the company's non-removed URL `id` receives, from the next event on
    /// (deliveries already written are kept). The URL as it is afterwards; `None` when there is
    /// no such URL for this company.
    fn set_events(
        &self,
        company: CompanyId,
        id: Uuid,
        events: &EventSelection,
    ) -> Result<Option<WebhookUrl>, RepoError>;

    /// Replaces the signing secret of the company's non-removed URL `id`; the previous one keeps
    /// signing (alongside) until `previous_valid_until`. `false` when there is no such URL.
    fn rotate_secret(
        &self,
        company: CompanyId,
        id: Uuid,
        secret: &EncryptedSecret,
        previous_valid_until: DateTime<Utc>,
    ) -> Result<bool, RepoError>;
}
