//! The watermark of the logs ordered by writing transaction (the events feed, the audit log):
//! every transaction of this database whose id is below it has ended, committed or not, so the
//! entries below it are all there will ever be there.
//!
//! Transactions of other databases of the cluster do not count: they never write here, and a
//! long one (another application's report, another test's seed) held every company's feed and
//! checkpoints for as long as it ran while the watermark was the cluster's oldest running id.
//! Which running ids are another database's is read from `pg_stat_activity` and `pg_locks`
//! (`snapshot_and_elsewhere!`); an id not provably elsewhere counts, so a race between those
//! reads only lowers the watermark.
//!
//! It is read in a statement of its own, before the read it bounds, and bound there as a
//! parameter: the entries below it committed before it was read, so the later read sees them.
//! On a Citus coordinator it is the only way to get the right number: Citus evaluates a
//! modification's functions on the coordinator (an entry's `transacao` default is the
//! coordinator's transaction id) but sends a `SELECT`'s functions to the worker with the shard,
//! whose transaction ids are another count. A statement naming no table runs on the
//! coordinator.
//!
//! On Citus the snapshot alone is not enough. A transaction that wrote through `COPY`
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

/// The CTEs both watermarks start from: `s`, the statement's snapshot, and `elsewhere`, the
/// running transactions (32-bit ids) that are provably another database's: their id is the
/// `backend_xid` of a backend connected to another database, holding the lock on that id. Those
/// never write this database's logs, so they hold nothing back here; any other id of the
/// snapshot counts (one whose backend is this database's, a prepared transaction, one not yet
/// holding its lock, one ended since the snapshot, every id on a standby, whose
/// `pg_stat_activity` knows none of the primary's): the rule errs only to the low side.
macro_rules! snapshot_and_elsewhere {
    () => {
        "WITH s AS MATERIALIZED (SELECT pg_current_snapshot() AS snap),
elsewhere AS MATERIALIZED (
    SELECT (a.backend_xid::text)::bigint AS xid
    FROM pg_stat_activity a
    JOIN pg_locks l ON l.pid = a.pid AND l.locktype = 'transactionid'
        AND l.mode = 'ExclusiveLock' AND l.granted AND l.transactionid = a.backend_xid
    WHERE a.datid <> (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())),
w AS (
    SELECT least(
        (SELECT (pg_snapshot_xmax(s.snap)::text)::bigint FROM s),
        (SELECT min((x::text)::bigint) FROM s, pg_snapshot_xip(s.snap) AS x
         WHERE NOT EXISTS (
             SELECT 1 FROM elsewhere e WHERE e.xid = (x::text)::bigint % 4294967296))) AS x)
"
    };
}

statement! {
    /// The oldest transaction still running on this database, as the log's `transacao` counts
    /// (`xid8` as bigint): the snapshot's oldest running id but those of other databases
    /// (`snapshot_and_elsewhere!`), or the next id when none runs. A long transaction in
    /// another database of the cluster (another application's, another test's) no longer holds
    /// this one's feed and checkpoints back.
    struct OneNode;
    concat!(snapshot_and_elsewhere!(), "SELECT w.x AS least FROM w")
}

statement! {
    /// [`OneNode`], lowered to the oldest transaction that has left the running set but still
    /// holds the lock on its id (a two-phase commit still committing on the workers), unless it
    /// is provably another database's. `pg_locks` names a 32-bit id: `d` is how far it is behind
    /// the watermark's low 32 bits, modulo 2^32, and ids behind it (0 < d < 2^31) are the
    /// watermark minus `d`; ids at or past it are running, covered already. The snapshot is the
    /// statement's, taken before `pg_locks` is read: a lock released in between belongs to a
    /// transaction committed everywhere before the read that follows.
    struct Coordinator;
    concat!(
        snapshot_and_elsewhere!(),
        "SELECT least(w.x, min(w.x - l.d) FILTER (WHERE l.d > 0 AND l.d < 2147483648)) AS least
FROM w
LEFT JOIN LATERAL (
    SELECT (w.x % 4294967296 - l.transactionid::text::bigint + 4294967296) % 4294967296 AS d
    FROM pg_locks l
    WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
      AND NOT EXISTS (
          SELECT 1 FROM elsewhere e WHERE e.xid = l.transactionid::text::bigint)
) l ON true
GROUP BY w.x"
    )
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
