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
//! coordinator. Writers of these logs touch one company's shards, so Citus commits them on the
//! worker before the coordinator (one-phase commit): once the coordinator's id is below the
//! watermark the worker has the rows (docs/decisions.md, "What Citus changed in the SQL").

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::Int8;

/// The oldest transaction still running, as the log's `transacao` counts (`xid8` as bigint).
pub(crate) fn watermark(conn: &mut PgConnection) -> QueryResult<i64> {
    diesel::select(sql::<Int8>(
        "(pg_snapshot_xmin(pg_current_snapshot())::text)::bigint",
    ))
    .get_result(conn)
}
