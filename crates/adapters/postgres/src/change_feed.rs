//! [`ChangeFeed`] on PostgreSQL `LISTEN`/`NOTIFY`. The service's writers (on any instance, and
//! the CLI) send the company's id on channel [`CHANNEL`] in the transaction that changes its use
//! cases or its API keys ([`announce_change`]). PostgreSQL delivers a notification only after its
//! transaction commits, once per distinct payload per transaction. Until migration
//! `notify_from_the_application` triggers sent them, so that an operator's SQL counted too; a
//! database distributed by company (Citus) cannot have them (issue 23), and an operator who
//! changes these tables by hand now tells the caches with the same `pg_notify`
//! (docs/operations.md, "Caches").
//!
//! The feed proves itself every round: it sends a probe (`pg_notify` on [`PROBE_CHANNEL`], a
//! token of its own) through the process's pool and answers `Ok` only once that probe came back
//! on its `LISTEN` connection. PostgreSQL delivers notifications in commit order, so the probe's
//! return also means every change committed before it was sent has been read. It also proves
//! that the listening connection reaches the database the pool writes to: `LISTEN` through a
//! transaction-mode pooler (PgBouncer) is accepted and then receives nothing, while a
//! `SELECT 1` keeps succeeding; the probe never returns there, and the caches are not trusted.

use std::time::{Duration, Instant};

use diesel::sql_types::Text;
use diesel::{Connection, PgConnection, QueryResult, RunQueryDsl};
use domain::CompanyId;
use ports::{CacheChange, ChangeFeed, RepoError};
use uuid::Uuid;

use crate::fixed_sql::statement;
use crate::pool::{with_connection_defaults, SessionSettings};
use crate::PgPool;

/// The notification channel the triggers send on.
pub const CHANNEL: &str = "consent_api_cache";

statement! {
    /// Tells every process's change feed that a company's cached answers changed.
    struct AnnounceChange {
        empresa: String as Text,
    }
    "SELECT pg_notify('consent_api_cache', $empresa)"
}

/// Tells every process's change feed, once `conn`'s transaction commits (never if it rolls
/// back), that `company`'s use cases or API keys changed. Call it inside the transaction that
/// writes them: outside one, the notification is sent at once, possibly before the change is
/// visible to the processes it reaches.
pub(crate) fn announce_change(conn: &mut PgConnection, company: CompanyId) -> QueryResult<()> {
    AnnounceChange {
        empresa: company.0.to_string(),
    }
    .execute(conn)
    .map(drop)
}

/// The channel of the feeds' probes: its own, so that no probe is taken for a change (on
/// [`CHANNEL`] anything but a company id means "everything changed", to this binary and to
/// older ones). Every feed hears every instance's probes and ignores those not its own.
pub const PROBE_CHANNEL: &str = "consent_api_cache_probe";

/// How often received notifications are read while waiting (a non-blocking read of the
/// socket, no query).
const READ_INTERVAL: Duration = Duration::from_millis(20);

/// How often they are read while the probe is on its way (it takes a millisecond or so).
const PROBE_READ_INTERVAL: Duration = Duration::from_millis(2);

/// One dedicated connection (not from the pool: it stays open, listening), and the pool its
/// probes are sent through.
pub struct PgChangeFeed {
    url: String,
    pool: PgPool,
    session: SessionSettings,
    probe_timeout: Duration,
    /// This feed's probes carry `<instance>:<n>`: unique to the process and to the round.
    instance: String,
    round: u64,
    conn: Option<PgConnection>,
}

impl PgChangeFeed {
    /// Listens on `url` (which must reach PostgreSQL itself, not a transaction-mode pooler) and
    /// probes through `pool`. Connects on the first [`ChangeFeed::next_changes`]. `url` is never
    /// logged nor put in an error.
    pub fn new(url: &str, pool: PgPool) -> Self {
        Self {
            url: with_connection_defaults(url),
            pool,
            session: SessionSettings::default(),
            probe_timeout: Duration::from_secs(1),
            instance: Uuid::new_v4().simple().to_string(),
            round: 0,
            conn: None,
        }
    }

    /// The timeouts set on the listening connection (prepared statements are not used on it).
    pub fn with_session(mut self, session: SessionSettings) -> Self {
        self.session = session;
        self
    }

    /// How long a probe may take to come back before the round fails (default 1 s; a later
    /// one could not keep the caches trusted anyway: use the caches' `max_silence`).
    pub fn with_probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }

    fn connect(&mut self) -> Result<(), RepoError> {
        let mut conn = PgConnection::establish(&self.url).map_err(|e| {
            RepoError::Unavailable(anyhow::Error::new(e).context("connecting the change feed"))
        })?;
        self.session
            .apply(&mut conn)
            .map_err(|e| lost(e, "setting up the change feed's connection"))?;
        for channel in [CHANNEL, PROBE_CHANNEL] {
            diesel::sql_query(format!("LISTEN {channel}"))
                .execute(&mut conn)
                .map_err(|e| lost(e, "listening for changes"))?;
        }
        self.conn = Some(conn);
        Ok(())
    }
}

impl ChangeFeed for PgChangeFeed {
    /// Sends a probe, reads what arrives every 20 ms until the probe is back and then until
    /// `wait` is over or something arrived. A failure (or a probe not back within the probe
    /// timeout) drops the connection; the next call reconnects and answers `Everything`.
    fn next_changes(&mut self, wait: Duration) -> Result<Vec<CacheChange>, RepoError> {
        let (mut changes, wait) = match self.conn {
            Some(_) => (Vec::new(), wait),
            None => {
                self.connect()?;
                // changes may have been missed while not listening; the probe still has to
                // come back before the feed counts as alive
                (vec![CacheChange::Everything], Duration::ZERO)
            }
        };
        let result = self.round(wait, &mut changes);
        if result.is_err() {
            self.conn = None;
        }
        result.map(|()| changes)
    }
}

impl PgChangeFeed {
    fn round(&mut self, wait: Duration, changes: &mut Vec<CacheChange>) -> Result<(), RepoError> {
        self.round += 1;
        let token = format!("{}:{}", self.instance, self.round);
        self.send_probe(&token)?;
        let sent = Instant::now();
        let (deadline, probe_deadline) = (sent + wait, sent + self.probe_timeout);
        let conn = self.conn.as_mut().expect("connected above");
        let mut probe_back = false;
        loop {
            drain(conn, &token, changes, &mut probe_back)?;
            let now = Instant::now();
            if probe_back && (!changes.is_empty() || now >= deadline) {
                return Ok(());
            }
            if !probe_back && now >= probe_deadline {
                return Err(RepoError::Unavailable(anyhow::anyhow!(
                    "the change feed's probe did not come back within {} ms: its connection \
                     does not hear what the pool's connections send (cache.feed_url through a \
                     transaction-mode pooler, or another database?) or the database is too slow",
                    self.probe_timeout.as_millis()
                )));
            }
            let pause = if probe_back {
                READ_INTERVAL.min(deadline - now)
            } else {
                PROBE_READ_INTERVAL.min(probe_deadline - now)
            };
            std::thread::sleep(pause);
        }
    }

    /// `pg_notify` through the pool: the path every request takes.
    fn send_probe(&self, token: &str) -> Result<(), RepoError> {
        let mut conn = self.pool.get_timeout(self.probe_timeout).map_err(|e| {
            RepoError::Unavailable(
                anyhow::Error::new(e).context("checking out a connection for the feed's probe"),
            )
        })?;
        diesel::sql_query("SELECT pg_notify($1, $2)")
            .bind::<Text, _>(PROBE_CHANNEL)
            .bind::<Text, _>(token)
            .execute(&mut conn)
            .map_err(|e| lost(e, "sending the change feed's probe"))?;
        Ok(())
    }
}

fn drain(
    conn: &mut PgConnection,
    token: &str,
    changes: &mut Vec<CacheChange>,
    probe_back: &mut bool,
) -> Result<(), RepoError> {
    for notification in conn.notifications_iter() {
        let notification = notification.map_err(|e| lost(e, "reading notifications"))?;
        if notification.channel == PROBE_CHANNEL {
            // another instance's probe, or an earlier one of ours: nothing to learn from it
            *probe_back |= notification.payload == token;
        } else {
            changes.push(parse(&notification.payload));
        }
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
