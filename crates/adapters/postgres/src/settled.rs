//! The watermark of the logs ordered by writing transaction (the events feed, the audit log):
//! every transaction whose id is below it has ended, committed or not, so the entries below it
//! are all there will ever be there.
//!
//! It is read in a statement of its own, before the read it bounds, and bound there as a
//! parameter. On one node that is the same number the read's own snapshot would give, or an
//! older one: the entries below it committed before it was read, so the later read sees them.
//! On a Citus coordinator it is the only way to get the right number: Citus evaluates a
//! modification's functions on the coordinator (an entry's `transacao` default is the
//! coordinator's transaction id) but sends a `SELECT`'s functions to the worker with the shard,
//! whose transaction ids are another count. A statement naming no table runs on the
//! coordinator.
//!
//! On Citus the snapshot's xmin alone is not enough. A transaction that wrote through `COPY`
//! (every `INSERT ... SELECT` Citus pulls to the coordinator) or on several nodes commits in two
//! phases: prepared on the workers, committed on the coordinator (its id leaves the running set
//! there), and only then committed on the workers. A reader in between would pass its entries
//! without seeing them. The coordinator's backend keeps the lock on its transaction id until
//! the workers have committed (PostgreSQL releases a transaction's locks after the commit
//! callbacks, where Citus sends `COMMIT PREPARED`), so on a Citus coordinator the watermark is
//! also kept below every transaction id whose lock is still held (docs/decisions.md, "What Citus
//! changed in the SQL").
//!
//! The other side, the entry's `transacao`, must be the coordinator's id too. A column default
//! is, when Citus evaluates the row on the coordinator (`INSERT ... VALUES`, or a `SELECT` from
//! a CTE's rows); but an `INSERT ... SELECT` from a distributed table, which Citus pulls to the
//! coordinator, has its `SELECT`, default included, run on the worker. Those writers bind
//! [`transaction_id`], read by a statement naming no table.

use diesel::prelude::*;
use diesel::sql_types::Int8;

use crate::fixed_sql::statement;

statement! {
    /// The oldest transaction still running, as the log's `transacao` counts (`xid8` as
    /// bigint).
    struct OneNode;
    "SELECT (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint AS least"
}

statement! {
    /// [`OneNode`], lowered to the oldest transaction that has left the running set but still
    /// holds the lock on its id (a two-phase commit still committing on the workers). `pg_locks`
    /// names a 32-bit id: `d` is how far it is behind the xmin's low 32 bits, modulo 2^32, and
    /// ids behind it (0 < d < 2^31) are the xmin minus `d`; ids at or past the xmin are running,
    /// covered already. The snapshot is the statement's, taken before `pg_locks` is read: a lock
    /// released in between belongs to a transaction committed everywhere before the read that
    /// follows.
    struct Coordinator;
    "\
SELECT least(s.x, min(s.x - l.d) FILTER (WHERE l.d > 0 AND l.d < 2147483648))
FROM (SELECT (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint AS x) s
LEFT JOIN LATERAL (
    SELECT (s.x % 4294967296 - l.transactionid::text::bigint + 4294967296) % 4294967296 AS d
    FROM pg_locks l
    WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
) l ON true
GROUP BY s.x"
}

statement! {
    /// The current transaction's id, as the log's `transacao` counts: the expression of the
    /// column's default (and of the one-node creation's audit entry, `creation.rs`).
    struct TransactionId;
    "SELECT (pg_current_xact_id()::text)::bigint AS least"
}

/// The watermark, on one node or (`distributed`) on a Citus coordinator.
pub(crate) fn watermark(conn: &mut PgConnection, distributed: bool) -> QueryResult<i64> {
    if distributed {
        Coordinator
            .load::<Watermark>(conn)
            .map(|rows| rows.first().map_or(0, |w| w.least))
    } else {
        OneNode.get_result::<Watermark>(conn).map(|w| w.least)
    }
}

/// The one number [`OneNode`], [`Coordinator`] and [`TransactionId`] answer.
#[derive(QueryableByName)]
struct Watermark {
    #[diesel(sql_type = Int8)]
    least: i64,
}

/// The current transaction's id, as the log's `transacao` counts: on a Citus coordinator the
/// coordinator's (a statement naming no table runs there), on one node the column default's.
pub(crate) fn transaction_id(conn: &mut PgConnection) -> QueryResult<i64> {
    TransactionId.get_result::<Watermark>(conn).map(|w| w.least)
}
