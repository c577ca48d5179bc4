//! Checking a connection out and translating diesel failures into [`RepoError`].

use diesel::r2d2::{ConnectionManager, PooledConnection};
use diesel::result::{DatabaseErrorInformation, DatabaseErrorKind, Error as DieselError};
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
///
/// A span `db` covers the checkout and the statements (exported with telemetry on; DEBUG, so
/// not in the logs at the usual levels): named by `operation`, never the SQL or its parameters.
#[doc(hidden)] // public for the adapter's tests; repositories are the API
pub fn with_conn<T>(
    pool: &PgPool,
    operation: &'static str,
    query: impl FnOnce(&mut PgConnection) -> diesel::QueryResult<T>,
) -> Result<T, RepoError> {
    let _span = statement_span(operation).entered();
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

/// The span of [`with_conn`]: only inside a traced unit of work (a request, a worker round, a
/// webhook attempt). The probes, heartbeats and claims that poll the database many times a
/// second outside any of them would otherwise each make a trace of one span.
fn statement_span(operation: &'static str) -> tracing::Span {
    // the level check first: with traces off it is all this costs (a cached call-site answer)
    if !tracing::span_enabled!(tracing::Level::DEBUG) || tracing::Span::current().is_none() {
        return tracing::Span::none();
    }
    tracing::debug_span!(
        "db",
        otel.name = operation,
        otel.kind = "client",
        db.system = "postgresql",
        db.operation = operation,
    )
}

/// A lost connection, a statement the server cancelled (statement timeout, lock timeout,
/// an operator's `pg_cancel_backend`, a conflict with recovery), or a Citus call refused while
/// the company's shards move ([`is_citus_moving`]), is `Unavailable`: the database
/// could not answer in time, and the same call may well succeed shortly (the API answers 503 with
/// `Retry-After`). Anything else is `Unexpected`. The text of a diesel error is the server's
/// message (constraint names, never the row's values: those are in the details, which are not
/// shown).
pub(crate) fn query_error(error: DieselError, operation: &'static str) -> RepoError {
    let unavailable = match &error {
        DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
            _,
        ) => true,
        DieselError::DatabaseError(_, info) => {
            is_cancelled(info.message()) || is_citus_moving(info.message())
        }
        _ => false,
    };
    let error = anyhow::Error::new(error).context(operation);
    if unavailable {
        RepoError::Unavailable(error)
    } else {
        RepoError::Unexpected(error)
    }
}

/// SQLSTATE 57014 (query_canceled). diesel keeps the SQLSTATE to itself (it maps a few codes
/// to `DatabaseErrorKind` and the rest to `Unknown`), so the server's message is matched: every
/// 57014 message starts so ("canceling statement due to statement timeout", "... lock timeout",
/// "... user request", "... conflict with recovery"). This assumes the server's messages in
/// English (`lc_messages` C or en_*), PostgreSQL's default.
fn is_cancelled(message: &str) -> bool {
    message.starts_with("canceling statement due to ")
}

/// A Citus refusal that only lasts while shards move (`citus_rebalance_start()`, a worker
/// added): a call delegated to the worker that held the company's shards when the coordinator
/// planned it finds them moved there, and Citus refuses to reach the new worker from inside it
/// rather than run it on another node. The same call, planned again after the move, runs on the
/// new worker (docs/scaling.md, "make test-citus under least privilege"). Citus raises it as
/// `XX000` (internal error, no code of its own), so it is known by its message, which no
/// PostgreSQL without Citus ever sends.
/// Also Citus's distributed deadlock, which a shard move's locks meet too: Citus cancels one
/// transaction of the cycle, rolled back whole, and the same call again goes through.
fn is_citus_moving(message: &str) -> bool {
    message.starts_with("cannot execute a distributed query from a query on a shard")
        || message.starts_with(
            "canceling the transaction since it was involved in a distributed deadlock",
        )
}

/// The constraint a database error names: its constraint field, or else the first quoted name
/// in its message. A Citus coordinator relays a shard's error with its message but without the
/// field (`duplicate key value violates unique constraint "empresas_cnpj_key_102008"`), and the
/// message quotes the name in every language PostgreSQL speaks.
pub(crate) fn violated_constraint(info: &dyn DatabaseErrorInformation) -> Option<String> {
    if let Some(name) = info.constraint_name() {
        return Some(name.to_owned());
    }
    let message = info.message();
    let start = message.find('"')? + 1;
    let end = start + message[start..].find('"')?;
    Some(message[start..end].to_owned())
}

/// Whether a violated constraint, as the error names it ([`violated_constraint`]), is
/// `constraint`. On Citus a constraint violated on a shard is named after the shard
/// (`empresas_cnpj_key_102008`), so that name counts too: the service tells a duplicate CNPJ or
/// URL from any other violation the same way on one node and on a distributed database.
pub(crate) fn is_constraint(violated: Option<&str>, constraint: &str) -> bool {
    violated.is_some_and(|name| {
        name == constraint
            || name
                .strip_prefix(constraint)
                .and_then(|rest| rest.strip_prefix('_'))
                .is_some_and(|shard| !shard.is_empty() && shard.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// A count from the database as the domain's `u32` (saturating: never more than 4 billion).
pub(crate) fn count_u32(n: impl TryInto<u32>) -> u32 {
    n.try_into().unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::is_constraint;

    #[test]
    fn a_violated_constraint_is_read_from_its_field_or_else_from_the_message() {
        use super::violated_constraint;
        struct Info(Option<&'static str>, &'static str);
        impl diesel::result::DatabaseErrorInformation for Info {
            fn message(&self) -> &str {
                self.1
            }
            fn details(&self) -> Option<&str> {
                None
            }
            fn hint(&self) -> Option<&str> {
                None
            }
            fn table_name(&self) -> Option<&str> {
                None
            }
            fn column_name(&self) -> Option<&str> {
                None
            }
            fn constraint_name(&self) -> Option<&str> {
                self.0
            }
            fn statement_position(&self) -> Option<i32> {
                None
            }
        }
        let relayed = "duplicate key value violates unique constraint \"empresas_cnpj_key_102008\"";
        assert_eq!(
            violated_constraint(&Info(None, relayed)).as_deref(),
            Some("empresas_cnpj_key_102008")
        );
        assert_eq!(
            violated_constraint(&Info(Some("empresas_cnpj_key"), relayed)).as_deref(),
            Some("empresas_cnpj_key")
        );
        assert_eq!(violated_constraint(&Info(None, "no name here")), None);
    }

    #[test]
    fn a_constraint_is_known_by_its_name_or_a_citus_shards_name() {
        assert!(is_constraint(
            Some("empresas_cnpj_key"),
            "empresas_cnpj_key"
        ));
        assert!(is_constraint(
            Some("empresas_cnpj_key_102008"),
            "empresas_cnpj_key"
        ));
        assert!(!is_constraint(
            Some("empresas_cnpj_key_x"),
            "empresas_cnpj_key"
        ));
        assert!(!is_constraint(
            Some("empresas_cnpj_key_"),
            "empresas_cnpj_key"
        ));
        assert!(!is_constraint(Some("empresas_pkey"), "empresas_cnpj_key"));
        assert!(!is_constraint(None, "empresas_cnpj_key"));
    }

    #[test]
    fn a_citus_call_refused_while_shards_move_is_unavailable_and_other_errors_are_not() {
        use super::query_error;
        use diesel::result::{DatabaseErrorKind, Error as DieselError};
        use ports::RepoError;
        let server_says = |message: &'static str| {
            query_error(
                DieselError::DatabaseError(
                    DatabaseErrorKind::Unknown,
                    Box::new(message.to_owned()),
                ),
                "testing",
            )
        };
        let moving = server_says("cannot execute a distributed query from a query on a shard");
        assert!(matches!(moving, RepoError::Unavailable(_)), "{moving:?}");
        let deadlock = server_says(
            "canceling the transaction since it was involved in a distributed deadlock",
        );
        assert!(
            matches!(deadlock, RepoError::Unavailable(_)),
            "{deadlock:?}"
        );
        let timeout = server_says("canceling statement due to statement timeout");
        assert!(matches!(timeout, RepoError::Unavailable(_)), "{timeout:?}");
        let other = server_says("division by zero");
        assert!(matches!(other, RepoError::Unexpected(_)), "{other:?}");
    }
}
