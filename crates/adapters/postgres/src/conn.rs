//! Checking a connection out and translating diesel failures into [`RepoError`].

use diesel::r2d2::{ConnectionManager, PooledConnection};
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::PgConnection;
use ports::RepoError;

use crate::scope;
use crate::PgPool;

pub(crate) type PgPooledConnection = PooledConnection<ConnectionManager<PgConnection>>;

/// A connection from the pool; a checkout timeout (database down, pool exhausted) is
/// `Unavailable`.
pub(crate) fn checkout(
    pool: &PgPool,
    operation: &'static str,
) -> Result<PgPooledConnection, RepoError> {
    pool.get().map_err(|e| {
        RepoError::Unavailable(
            anyhow::Error::new(e)
                .context("checking out a database connection")
                .context(operation),
        )
    })
}

/// Runs `query` on a pooled connection, translating every failure for `operation`. Inside a
/// connection scope (see `scope.rs`) the scope's one connection is used (checked out by the
/// first call); a call nested in another's `query` checks out its own.
pub(crate) fn with_conn<T>(
    pool: &PgPool,
    operation: &'static str,
    query: impl FnOnce(&mut PgConnection) -> diesel::QueryResult<T>,
) -> Result<T, RepoError> {
    match scope::borrow() {
        Some(lent) => {
            let mut conn = match lent.connection() {
                Some(conn) => conn,
                None => checkout(pool, operation)?,
            };
            let result = query(&mut conn);
            lent.give_back(conn);
            result.map_err(|e| query_error(e, operation))
        }
        None => {
            let mut conn = checkout(pool, operation)?;
            query(&mut conn).map_err(|e| query_error(e, operation))
        }
    }
}

/// A lost connection is `Unavailable`; anything else `Unexpected`. The text of a diesel error
/// is the server's message (constraint names, never the row's values: those are in the
/// details, which are not shown).
pub(crate) fn query_error(error: DieselError, operation: &'static str) -> RepoError {
    let lost = matches!(
        error,
        DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
            _
        )
    );
    let error = anyhow::Error::new(error).context(operation);
    if lost {
        RepoError::Unavailable(error)
    } else {
        RepoError::Unexpected(error)
    }
}

/// A count from the database as the domain's `u32` (saturating: never more than 4 billion).
pub(crate) fn count_u32(n: impl TryInto<u32>) -> u32 {
    n.try_into().unwrap_or(u32::MAX)
}
