use std::time::Duration;

use anyhow::ensure;
use diesel::connection::{CacheSize, SimpleConnection};
use diesel::r2d2::{ConnectionManager, CustomizeConnection, HandleError, Pool};
use diesel::{Connection, PgConnection};

/// The connection pool every repository shares (cheap to clone: an `Arc` inside).
pub type PgPool = Pool<ConnectionManager<PgConnection>>;

/// How the pool is sized, how long a caller waits for a connection, and what every connection
/// it opens is allowed to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolSettings {
    /// Most connections open at once (at least 1).
    pub max_size: u32,
    /// How long a checkout waits for a free (or new) connection before the repository answers
    /// `RepoError::Unavailable` (more than zero).
    pub checkout_timeout: Duration,
    /// The bounds set on every connection the pool opens.
    pub session: SessionSettings,
}

impl Default for PoolSettings {
    /// 10 connections, 2 s checkout, [`SessionSettings::default`].
    fn default() -> Self {
        Self {
            max_size: 10,
            checkout_timeout: Duration::from_secs(2),
            session: SessionSettings::default(),
        }
    }
}

/// What each connection (pooled, or the change feed's) is set up with once it is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionSettings {
    /// PostgreSQL `statement_timeout`: a statement running longer is cancelled by the server
    /// (and answered `RepoError::Unavailable`). Zero: no limit.
    pub statement_timeout: Duration,
    /// PostgreSQL `idle_in_transaction_session_timeout`: a session left idle inside a
    /// transaction this long is ended by the server, releasing its locks. Zero: no limit.
    pub idle_in_transaction_timeout: Duration,
    /// Named prepared statements, cached per connection. Off: every query goes as one unnamed
    /// statement, parsed on each call but sent in one round trip, which transaction-mode
    /// poolers (PgBouncer) can carry; a named statement prepared on one server connection does
    /// not exist on the next one the pooler hands out.
    pub prepared_statements: bool,
    /// Plan every prepared statement once, generically (`plan_cache_mode =
    /// force_generic_plan`), instead of letting PostgreSQL re-plan each call whenever it judges
    /// a custom plan cheaper. For the status worker's own pool only: its statements are the
    /// same few, each keyed by company with the same index whatever the values, and re-planning
    /// them was a third of the status work's database time at 10^6 (docs/scaling.md). The API's
    /// statements keep PostgreSQL's choice.
    pub generic_plans: bool,
}

/// The `application_name` of the service's connections when the database URL names none.
pub const APPLICATION_NAME: &str = "consent-api";

impl Default for SessionSettings {
    /// 5 s statements, 10 s idle in a transaction, prepared statements on, PostgreSQL's own
    /// choice of plans.
    fn default() -> Self {
        Self {
            statement_timeout: Duration::from_secs(5),
            idle_in_transaction_timeout: Duration::from_secs(10),
            prepared_statements: true,
            generic_plans: false,
        }
    }
}

impl SessionSettings {
    /// Applies the settings to a freshly opened connection. `SET` rather than the `options`
    /// startup parameter: PgBouncer refuses unknown startup parameters.
    pub(crate) fn apply(&self, conn: &mut PgConnection) -> diesel::QueryResult<()> {
        if !self.prepared_statements {
            conn.set_prepared_statement_cache_size(CacheSize::Disabled);
        }
        // `application_name` names the service in pg_stat_activity and the server's log (the
        // statement-scope check of issue 23 reads the log by it), unless the URL named it.
        conn.batch_execute(&format!(
            "SELECT set_config('application_name', '{APPLICATION_NAME}', false) \
             WHERE current_setting('application_name') = ''; \
             SET statement_timeout = {}; SET idle_in_transaction_session_timeout = {}",
            self.statement_timeout.as_millis(),
            self.idle_in_transaction_timeout.as_millis(),
        ))?;
        if self.generic_plans {
            conn.batch_execute("SET plan_cache_mode = force_generic_plan")?;
        }
        Ok(())
    }
}

/// Runs [`SessionSettings::apply`] once per connection the pool opens (not per checkout).
#[derive(Debug)]
struct SessionSetup(SessionSettings);

impl CustomizeConnection<PgConnection, diesel::r2d2::Error> for SessionSetup {
    fn on_acquire(&self, conn: &mut PgConnection) -> Result<(), diesel::r2d2::Error> {
        self.0.apply(conn).map_err(diesel::r2d2::Error::QueryError)
    }
}

/// Builds the pool without connecting: it is built with `build_unchecked`, so the process starts
/// even while the database is down (connections are opened in the background and on demand),
/// and each repository call then answers `RepoError::Unavailable` after `checkout_timeout`
/// until the database is back. Connections are not tested on checkout (no `SELECT 1` per
/// checkout); a connection found broken by a query is discarded by the pool. Each new
/// connection gets `settings.session` before its first use.
///
/// Errors only on invalid settings. `url` is never logged nor put in an error.
pub fn connect(url: &str, settings: &PoolSettings) -> anyhow::Result<PgPool> {
    ensure!(
        settings.max_size > 0,
        "database pool max_size must be at least 1"
    );
    ensure!(
        !settings.checkout_timeout.is_zero(),
        "database pool checkout_timeout must be more than zero"
    );
    ensure!(!url.trim().is_empty(), "database URL is empty");
    Ok(Pool::builder()
        .max_size(settings.max_size)
        .connection_timeout(settings.checkout_timeout)
        .test_on_check_out(false)
        .error_handler(Box::new(TracingErrorHandler::default()))
        .connection_customizer(Box::new(SessionSetup(settings.session)))
        .build_unchecked(ConnectionManager::new(with_connection_defaults(url))))
}

/// Client-side libpq parameters added to every URL that does not set them itself:
///
/// - `gssencmode=disable`: libpq otherwise tries GSSAPI encryption first wherever Kerberos
///   libraries are installed, and krb5's thread-local destructors then abort multi-threaded
///   processes at exit (`krb5int_getspecific` assertion). This service authenticates to
///   PostgreSQL by password or TLS, never Kerberos.
/// - `connect_timeout=2`: an unreachable database fails a connection attempt in 2 s instead of
///   the kernel's minutes, so checkouts (and the change feed) answer within their bounds.
/// - `keepalives=1`, `keepalives_idle=3`, `keepalives_interval=1`, `keepalives_count=3`: a
///   connection whose path died silently (no RST: a host, NAT or pooler gone) is found dead
///   after about 6 s of silence, instead of the kernel's default of over two hours.
/// - `tcp_user_timeout=6000`: data sent and not acknowledged for 6 s closes the connection
///   (keepalives do not cover a connection with unacknowledged data in flight).
///
/// All are read by libpq, not sent to the server, so poolers that refuse unknown startup
/// parameters accept them.
pub fn with_connection_defaults(url: &str) -> String {
    let mut url = url.to_owned();
    for (name, value) in CONNECTION_DEFAULTS {
        if !has_parameter(&url, name) {
            let separator = if url.contains('?') { '&' } else { '?' };
            url = format!("{url}{separator}{name}={value}");
        }
    }
    url
}

const CONNECTION_DEFAULTS: [(&str, &str); 7] = [
    ("gssencmode", "disable"),
    ("connect_timeout", "2"),
    ("keepalives", "1"),
    ("keepalives_idle", "3"),
    ("keepalives_interval", "1"),
    ("keepalives_count", "3"),
    ("tcp_user_timeout", "6000"),
];

/// Whether the URL's query string sets `name` (whatever its value).
fn has_parameter(url: &str, name: &str) -> bool {
    url.split_once('?').is_some_and(|(_, query)| {
        query
            .split('&')
            .any(|pair| pair.split('=').next() == Some(name))
    })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::{with_connection_defaults, Repeats, REPEAT_EVERY};

    #[test]
    fn the_same_connection_failure_is_reported_once_until_it_has_lasted_a_while() {
        let mut repeats = Repeats::default();
        let start = Instant::now();
        let refused = "connection to server at \"127.0.0.1\", port 5432 failed: Connection refused";
        assert_eq!(repeats.admit(refused, start), Some(0));
        for i in 1..24 {
            assert_eq!(
                repeats.admit(refused, start + Duration::from_millis(i * 80)),
                None
            );
        }
        assert_eq!(repeats.admit(refused, start + REPEAT_EVERY), Some(23));
        assert_eq!(repeats.admit(refused, start + REPEAT_EVERY), None);
    }

    #[test]
    fn another_connection_failure_is_reported_at_once() {
        let mut repeats = Repeats::default();
        let start = Instant::now();
        assert_eq!(repeats.admit("refused", start), Some(0));
        assert_eq!(repeats.admit("refused", start), None);
        assert_eq!(
            repeats.admit("password authentication failed", start),
            Some(0)
        );
        assert_eq!(repeats.admit("refused", start), Some(0));
    }

    const DEFAULTS: &str = "gssencmode=disable&connect_timeout=2&keepalives=1&keepalives_idle=3\
                            &keepalives_interval=1&keepalives_count=3&tcp_user_timeout=6000";

    #[test]
    fn every_default_is_added_to_a_url_without_parameters() {
        assert_eq!(
            with_connection_defaults("postgres://u@h/db"),
            format!("postgres://u@h/db?{DEFAULTS}")
        );
    }

    #[test]
    fn the_defaults_follow_the_parameters_the_url_has() {
        assert_eq!(
            with_connection_defaults("postgres://u@h/db?sslmode=require"),
            format!("postgres://u@h/db?sslmode=require&{DEFAULTS}")
        );
    }

    #[test]
    fn a_parameter_the_url_sets_is_kept_and_not_added_again() {
        let url = with_connection_defaults(
            "postgres://u@h/db?gssencmode=prefer&keepalives_idle=30&tcp_user_timeout=0",
        );

        assert_eq!(
            url,
            "postgres://u@h/db?gssencmode=prefer&keepalives_idle=30&tcp_user_timeout=0\
             &connect_timeout=2&keepalives=1&keepalives_interval=1&keepalives_count=3"
        );
    }

    #[test]
    fn a_parameter_is_recognised_by_its_whole_name_only() {
        // `keepalives_idle` set does not count as `keepalives` set
        let url = with_connection_defaults("postgres://u@h/db?keepalives_idle=9");

        assert!(url.contains("&keepalives=1&"), "{url}");
        assert_eq!(url.matches("keepalives_idle=").count(), 1, "{url}");
        assert!(url.contains("keepalives_idle=9"), "{url}");
    }

    #[test]
    fn adding_the_defaults_twice_changes_nothing() {
        let once = with_connection_defaults("postgres://u:p@h:5432/db");

        assert_eq!(with_connection_defaults(&once), once);
    }
}

/// Reports the pool's background connection failures through `tracing` (r2d2's default handler
/// uses the `log` crate, which this service does not set up), once per distinct failure: r2d2
/// opens the pool's connections in parallel and retries each with a backoff, so a database that
/// cannot be reached failed the same way 24 times within a command line's one checkout (eight
/// connections, three tries each), each a warning. A repeat of the same failure is reported
/// again after [`REPEAT_EVERY`], with how many were not.
#[derive(Debug, Default)]
struct TracingErrorHandler(std::sync::Mutex<Repeats>);

/// How long a failure, once reported, is not reported again.
const REPEAT_EVERY: Duration = Duration::from_secs(30);

impl HandleError<diesel::r2d2::Error> for TracingErrorHandler {
    fn handle_error(&self, error: diesel::r2d2::Error) {
        let mut repeats = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match repeats.admit(&error.to_string(), std::time::Instant::now()) {
            Some(0) => tracing::warn!(%error, "could not open a database connection"),
            Some(unreported) => tracing::warn!(
                %error,
                unreported,
                "could not open a database connection (again; unreported: the same failures since the last report)"
            ),
            None => {}
        }
    }
}

/// The last failure reported, and how many identical ones followed it unreported.
#[derive(Debug, Default)]
struct Repeats {
    last: Option<(String, std::time::Instant)>,
    unreported: u64,
}

impl Repeats {
    /// Whether `message` is to be reported at `now`: `Some(n)` with the `n` identical failures
    /// not reported since its last report (0 for a new failure), or `None`.
    fn admit(&mut self, message: &str, now: std::time::Instant) -> Option<u64> {
        match &self.last {
            Some((last, at)) if last == message && now.duration_since(*at) < REPEAT_EVERY => {
                self.unreported += 1;
                None
            }
            Some((last, _)) if last == message => {
                self.last = Some((message.to_owned(), now));
                Some(std::mem::take(&mut self.unreported))
            }
            _ => {
                self.last = Some((message.to_owned(), now));
                self.unreported = 0;
                Some(0)
            }
        }
    }
}

#[derive(diesel::QueryableByName)]
struct Distributed {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    citus: bool,
}

/// Whether the database is a Citus coordinator (the `citus` extension is installed). Citus
/// cannot plan a statement over several shards with parameters generically ("could not create
/// distributed plan"), so a pool that forces generic plans (`SessionSettings::generic_plans`)
/// must not on such a database (docs/scaling.md, "make test-citus").
pub fn is_distributed(pool: &PgPool) -> Result<bool, ports::RepoError> {
    use diesel::RunQueryDsl;
    crate::conn::with_conn(
        pool,
        "reading whether the database is distributed",
        |conn| {
            diesel::sql_query(
                "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus",
            )
            .get_result::<Distributed>(conn)
            .map(|d| d.citus)
        },
    )
}
