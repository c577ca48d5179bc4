use std::time::Duration;

use anyhow::ensure;
use diesel::r2d2::{ConnectionManager, HandleError, Pool};
use diesel::PgConnection;

/// The connection pool every repository shares (cheap to clone: an `Arc` inside).
pub type PgPool = Pool<ConnectionManager<PgConnection>>;

/// How the pool is sized and how long a caller waits for a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolSettings {
    /// Most connections open at once (at least 1).
    pub max_size: u32,
    /// How long a checkout waits for a free (or new) connection before the repository answers
    /// `RepoError::Unavailable` (more than zero).
    pub checkout_timeout: Duration,
}

/// Builds the pool without connecting: it is built with `build_unchecked`, so the process starts
/// even while the database is down (connections are opened in the background and on demand),
/// and each repository call then answers `RepoError::Unavailable` after `checkout_timeout`
/// until the database is back. Connections are not tested on checkout (no `SELECT 1` per
/// checkout); a connection found broken by a query is discarded by the pool.
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
        .error_handler(Box::new(TracingErrorHandler))
        .build_unchecked(ConnectionManager::new(with_connection_defaults(url))))
}

/// `url` with `gssencmode=disable` unless it sets `gssencmode` itself. libpq otherwise tries
/// GSSAPI encryption first wherever Kerberos libraries are installed, and krb5's thread-local
/// destructors then abort multi-threaded processes at exit (`krb5int_getspecific` assertion).
/// This service authenticates to PostgreSQL by password or TLS, never Kerberos.
pub fn with_connection_defaults(url: &str) -> String {
    if url.contains("gssencmode=") {
        return url.to_owned();
    }
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}gssencmode=disable")
}

#[cfg(test)]
mod tests {
    use super::with_connection_defaults;

    #[test]
    fn gss_encryption_is_disabled_unless_the_url_chooses() {
        assert_eq!(
            with_connection_defaults("postgres://u@h/db"),
            "postgres://u@h/db?gssencmode=disable"
        );
        assert_eq!(
            with_connection_defaults("postgres://u@h/db?sslmode=require"),
            "postgres://u@h/db?sslmode=require&gssencmode=disable"
        );
        assert_eq!(
            with_connection_defaults("postgres://u@h/db?gssencmode=prefer"),
            "postgres://u@h/db?gssencmode=prefer"
        );
    }
}

/// Reports the pool's background connection failures through `tracing` (r2d2's default handler
/// uses the `log` crate, which this service does not set up).
#[derive(Debug)]
struct TracingErrorHandler;

impl HandleError<diesel::r2d2::Error> for TracingErrorHandler {
    fn handle_error(&self, error: diesel::r2d2::Error) {
        tracing::warn!(%error, "could not open a database connection");
    }
}
