//! The heartbeat the `serve` processes keep in `replicas_ativas`, so that each one knows how many
//! replicas share every company's rate limit (see `crates/app/src/replica_heartbeat.rs`).

use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Uuid as SqlUuid};
use ports::RepoError;
use uuid::Uuid;

use crate::conn::with_conn;
use crate::PgPool;

/// One statement per beat: $1 the replica, $2 the time-to-live in milliseconds, $3 whether it
/// served a request since its last beat, $4 how recently (milliseconds) a replica must have
/// served to count. Writes the replica's row (`atendeu_em` moved to now when it served),
/// deletes rows silent for ten times the time-to-live (replicas that died without saying
/// goodbye), and counts the others seen within the time-to-live that served within $4, plus
/// itself (when it serves nothing, its own share does not matter). The count reads the
/// snapshot the statement started with, which may not hold this replica's new row yet: hence
/// `id <> $1` and `+ 1`.
const BEAT: &str = "\
WITH batida AS (
    INSERT INTO replicas_ativas (id, visto_em, atendeu_em)
    VALUES ($1, now(), CASE WHEN $3 THEN now() END)
    ON CONFLICT (id) DO UPDATE
    SET visto_em = now(),
        atendeu_em = CASE WHEN $3 THEN now() ELSE replicas_ativas.atendeu_em END
), esquecidas AS (
    DELETE FROM replicas_ativas
    WHERE id <> $1 AND visto_em < now() - make_interval(secs => $2 * 10 / 1000.0)
)
SELECT 1 + count(*) AS vivas
FROM replicas_ativas
WHERE id <> $1 AND visto_em >= now() - make_interval(secs => $2 / 1000.0)
  AND atendeu_em >= now() - make_interval(secs => $4 / 1000.0)";

#[derive(QueryableByName)]
struct Live {
    #[diesel(sql_type = BigInt)]
    vivas: i64,
}

/// `replicas_ativas`, read and written by one replica.
#[derive(Clone)]
pub struct PgReplicaHeartbeat {
    pool: PgPool,
    replica: Uuid,
}

impl PgReplicaHeartbeat {
    /// A heartbeat for a new replica (a fresh id per process).
    pub fn new(pool: PgPool) -> Self {
        Self {
            pool,
            replica: Uuid::new_v4(),
        }
    }

    /// Says this replica is alive (and whether it `served` requests since its last beat) and
    /// answers how many replicas share the quota (itself included, so at least 1): those seen
    /// within `time_to_live` that served requests within `serving_window`.
    pub fn beat(
        &self,
        time_to_live: Duration,
        serving_window: Duration,
        served: bool,
    ) -> Result<u32, RepoError> {
        let ttl_ms = i64::try_from(time_to_live.as_millis()).unwrap_or(i64::MAX);
        let window_ms = i64::try_from(serving_window.as_millis()).unwrap_or(i64::MAX);
        let live = with_conn(&self.pool, "replica heartbeat", |conn| {
            diesel::sql_query(BEAT)
                .bind::<SqlUuid, _>(self.replica)
                .bind::<BigInt, _>(ttl_ms)
                .bind::<Bool, _>(served)
                .bind::<BigInt, _>(window_ms)
                .get_result::<Live>(conn)
        })?;
        Ok(u32::try_from(live.vivas).unwrap_or(u32::MAX).max(1))
    }

    /// Removes this replica's row (on a clean stop), so the others take its share at once.
    pub fn leave(&self) -> Result<(), RepoError> {
        with_conn(&self.pool, "replica leaving", |conn| {
            diesel::sql_query("DELETE FROM replicas_ativas WHERE id = $1")
                .bind::<SqlUuid, _>(self.replica)
                .execute(conn)
        })?;
        Ok(())
    }
}
