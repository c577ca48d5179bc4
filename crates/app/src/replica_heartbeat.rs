//! One quota across replicas: every `serve` process says it is alive in PostgreSQL each
//! `rate_limit.replica_heartbeat_ms` and counts the replicas seen within three periods that
//! served requests within ten (a replica out of the load balancer takes no share); the rate
//! limiter then counts each request that many times, so each replica takes `1 / N` of every
//! company's quota and together they allow it once (docs/operations.md, "Replicas").
//!
//! A beat that fails (database unreachable) keeps the last count: the replicas that could not
//! beat either are still there, and guessing 1 would let each take the whole quota.

use std::thread::JoinHandle;
use std::time::Duration;

use delivery_http::LiveReplicas;
use postgres_adapter::{PgPool, PgReplicaHeartbeat};

use crate::workers::Stop;

/// A replica unseen for this many periods no longer counts.
const PERIODS_ALIVE: u32 = 3;
/// Nor does one that served no request for this many periods (out of the load balancer): long
/// enough that a replica between two bursts of a company keeps its share.
const PERIODS_SERVING: u32 = 10;

/// Starts the heartbeat thread (ends with `stop`, deleting its row); `None` when
/// `heartbeat_ms` is 0 (each process takes the whole quota).
pub fn start(
    pool: PgPool,
    heartbeat_ms: u64,
    replicas: LiveReplicas,
    stop: &Stop,
) -> Option<JoinHandle<()>> {
    if heartbeat_ms == 0 {
        return None;
    }
    let period = Duration::from_millis(heartbeat_ms);
    let heartbeat = PgReplicaHeartbeat::new(pool);
    // The first beat before serving: a replica joining a running fleet starts with its share.
    beat(&heartbeat, period, &replicas);
    let stop = stop.clone();
    let thread = std::thread::Builder::new()
        .name("replica-heartbeat".into())
        .spawn(move || {
            while !stop.sleep(period) {
                beat(&heartbeat, period, &replicas);
            }
            if let Err(error) = heartbeat.leave() {
                tracing::warn!(error = %error, "could not remove this replica's heartbeat");
            }
        })
        .expect("spawn the replica heartbeat thread");
    Some(thread)
}

fn beat(heartbeat: &PgReplicaHeartbeat, period: Duration, replicas: &LiveReplicas) {
    match heartbeat.beat(
        period * PERIODS_ALIVE,
        period * PERIODS_SERVING,
        replicas.take_served(),
    ) {
        Ok(live) => {
            let before = replicas.set(live);
            if before != live {
                tracing::info!(
                    live_replicas = live,
                    "replicas sharing the rate limit changed: this one takes 1/{live} of each company's quota"
                );
            }
        }
        Err(error) => {
            tracing::warn!(error = %error, "replica heartbeat failed; keeping the last count")
        }
    }
}
