//! [`ChangeFeed`] on PostgreSQL `LISTEN`/`NOTIFY`. Triggers (migration
//! `notify_cache_changes`) send the company's id on channel [`CHANNEL`] when its use cases, its
//! API keys' revocation, or the company row change, whoever writes: this service on any
//! instance, the CLI, or an operator's SQL. PostgreSQL delivers a notification only after its
//! transaction commits, once per distinct payload per transaction.

use std::time::{Duration, Instant};

use diesel::{Connection, PgConnection, RunQueryDsl};
use domain::CompanyId;
use ports::{CacheChange, ChangeFeed, RepoError};
use uuid::Uuid;

use crate::pool::with_connection_defaults;

/// The notification channel the triggers send on.
pub const CHANNEL: &str = "consent_api_cache";

/// How often received notifications are read while waiting (a non-blocking read of the
/// socket, no query).
const READ_INTERVAL: Duration = Duration::from_millis(20);

/// One dedicated connection (not from the pool: it stays open, listening).
pub struct PgChangeFeed {
    url: String,
    conn: Option<PgConnection>,
}

impl PgChangeFeed {
    /// Connects on the first [`ChangeFeed::next_changes`]. `url` is never logged nor put in an
    /// error.
    pub fn new(url: &str) -> Self {
        let mut url = with_connection_defaults(url);
        if !url.contains("connect_timeout=") {
            // an unreachable database must not stall the feed (and so the caches' verdict)
            url.push_str("&connect_timeout=2");
        }
        Self { url, conn: None }
    }

    fn connect(&mut self) -> Result<(), RepoError> {
        let mut conn = PgConnection::establish(&self.url).map_err(|e| {
            RepoError::Unavailable(anyhow::Error::new(e).context("connecting the change feed"))
        })?;
        diesel::sql_query(format!("LISTEN {CHANNEL}"))
            .execute(&mut conn)
            .map_err(|e| lost(e, "listening for changes"))?;
        self.conn = Some(conn);
        Ok(())
    }
}

impl ChangeFeed for PgChangeFeed {
    /// Reads what arrived every 20 ms until `wait` is over or something arrived, then confirms
    /// the connection with a round trip (a half-open connection would otherwise look like
    /// silence). A failure drops the connection; the next call reconnects and answers
    /// `Everything`.
    fn next_changes(&mut self, wait: Duration) -> Result<Vec<CacheChange>, RepoError> {
        if self.conn.is_none() {
            self.connect()?;
            return Ok(vec![CacheChange::Everything]);
        }
        let result = self.read(wait);
        if result.is_err() {
            self.conn = None;
        }
        result
    }
}

impl PgChangeFeed {
    fn read(&mut self, wait: Duration) -> Result<Vec<CacheChange>, RepoError> {
        let conn = self.conn.as_mut().expect("connected above");
        let deadline = Instant::now() + wait;
        let mut changes = Vec::new();
        loop {
            drain(conn, &mut changes)?;
            let now = Instant::now();
            if !changes.is_empty() || now >= deadline {
                break;
            }
            std::thread::sleep(READ_INTERVAL.min(deadline - now));
        }
        diesel::sql_query("SELECT 1")
            .execute(conn)
            .map_err(|e| lost(e, "checking the change feed's connection"))?;
        drain(conn, &mut changes)?;
        Ok(changes)
    }
}

fn drain(conn: &mut PgConnection, changes: &mut Vec<CacheChange>) -> Result<(), RepoError> {
    for notification in conn.notifications_iter() {
        let notification = notification.map_err(|e| lost(e, "reading notifications"))?;
        changes.push(parse(&notification.payload));
    }
    Ok(())
}

/// A company id, or anything else (a truncation sends `*`): everything.
fn parse(payload: &str) -> CacheChange {
    match Uuid::parse_str(payload) {
        Ok(id) => CacheChange::Company(CompanyId(id)),
        Err(_) => CacheChange::Everything,
    }
}

fn lost(error: diesel::result::Error, operation: &'static str) -> RepoError {
    RepoError::Unavailable(anyhow::Error::new(error).context(operation))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_is_a_company_or_everything() {
        let id = Uuid::from_u128(7);
        assert_eq!(parse(&id.to_string()), CacheChange::Company(CompanyId(id)));
        assert_eq!(parse("*"), CacheChange::Everything);
        assert_eq!(parse(""), CacheChange::Everything);
    }
}
