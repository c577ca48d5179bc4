//! The company's events as written by the outbox, read back for catch-up (`GET /api/eventos`).

use chrono::{DateTime, Utc};
use domain::{CompanyId, EventType};
use uuid::Uuid;

use crate::RepoError;

/// Filters of the event list; `None` = no filter. Combined with AND.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventFilter {
    /// Only events of this type.
    pub event_type: Option<EventType>,
    /// Only events whose timestamp is at or after this instant.
    pub since: Option<DateTime<Utc>>,
}

/// Where an event stands in the company's feed: the transaction that wrote it, the position it
/// took at insert, and its id (unique: the last word on order). Events are listed in this order,
/// and only once every transaction that could still add an earlier one has ended, so a reader
/// that resumes after a position never misses an event that commits late.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventPosition {
    pub transaction: i64,
    pub sequence: i64,
    pub id: Uuid,
}

/// One stored event: its id (the `webhook-id` of its deliveries), type, timestamp and the exact
/// body its deliveries send (`{"type", "timestamp", "data"}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub id: Uuid,
    pub event_type: String,
    pub timestamp: DateTime<Utc>,
    pub payload: String,
    /// Its place in the feed.
    pub position: EventPosition,
}

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait EventLog: Send + Sync {
    /// At most `limit` of the company's events matching `filter`, in feed order
    /// ([`EventPosition`]: commit order as far as a reader can tell), strictly after `after` when
    /// given, and only events no running transaction can precede (an event whose transaction
    /// has not ended yet, or that started after one still running, waits for it). Test sends
    /// (`webhook.teste`) are not events of the company's data and are never listed. Events are
    /// kept as long as the retention purge leaves them (`retention.webhook_days`).
    fn list(
        &self,
        company: CompanyId,
        filter: &EventFilter,
        after: Option<EventPosition>,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, RepoError>;
}
