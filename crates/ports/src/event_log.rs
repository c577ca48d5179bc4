//! The company's events as written by the outbox, read back for catch-up (`GET /api/eventos`).

use chrono::{DateTime, Utc};
use domain::{CompanyId, EventType};
use uuid::Uuid;

use crate::{ListCursor, RepoError};

/// Filters of the event list; `None` = no filter. Combined with AND.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventFilter {
    /// Only events of this type.
    pub event_type: Option<EventType>,
    /// Only events whose timestamp is at or after this instant.
    pub since: Option<DateTime<Utc>>,
}

/// One stored event: its id (the `webhook-id` of its deliveries), type, timestamp and the exact
/// body its deliveries send (`{"type", "timestamp", "data"}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub id: Uuid,
    pub event_type: String,
    pub timestamp: DateTime<Utc>,
    pub payload: String,
}

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait EventLog: Send + Sync {
    /// At most `limit` of the company's events matching `filter`, ordered by (timestamp, id),
    /// strictly after `after` when given. Test sends (`webhook.teste`) are not events of the
    /// company's data and are never listed. Events are kept as long as the retention purge
    /// leaves them (`retention.webhook_days`).
    fn list(
        &self,
        company: CompanyId,
        filter: &EventFilter,
        after: Option<ListCursor>,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, RepoError>;
}
