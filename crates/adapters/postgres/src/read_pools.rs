//! Where the reads that tolerate a replica's lag go (the use-case list, the consent list, the
//! events feed): to a streaming replica whose replay lag is within the bound, else to the
//! primary. Every other statement (writes, get-by-id, HashConsulta, key resolution) stays on the
//! primary: repositories use [`ReadPools`] only for the three lists.
//!
//! The lag is measured by [`ReadPools::spawn_lag_probe`], a thread of its own, every
//! [`LAG_PROBE_INTERVAL`]: it samples the primary's WAL insert position
//! (`pg_current_wal_insert_lsn()`, which every committed transaction's commit record is below)
//! and keeps the samples with their time; a replica whose replay position
//! (`pg_last_wal_replay_lsn()`) has reached the sample taken at time T holds everything the
//! primary had committed at T, so its lag is `now - T` for the newest such sample. An idle
//! primary writes no WAL: its replicas reach the newest sample and their lag is zero, however
//! long ago their last replayed transaction was (which is why `pg_last_xact_replay_timestamp()`
//! alone is not used: it would call an idle replica late). A replica measured `L` behind at time
//! `m` is read until `m + max_lag - L` only: if it replays nothing meanwhile, its lag then reaches
//! the bound, so no read sees data staler than the bound even between probes (or when the probe
//! stalls). A replica that does not answer, or is
//! not in recovery (promoted, or not a standby at all), is not used until the probe sees it
//! answer within the bound again; a replica read that fails as unavailable marks it so at once
//! and the read goes to the primary.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable};
use diesel::PgConnection;
use ports::{ReadRouting, ReplicaState, RepoError};

use crate::conn::{query_error, with_conn};
use crate::pool::{connect, with_connection_defaults, PoolSettings, SessionSettings};
use crate::PgPool;

/// How often the lag of every replica is measured: a replica falling behind is left within
/// this (plus one probe's time) of its lag passing the bound.
pub const LAG_PROBE_INTERVAL: Duration = Duration::from_millis(200);

/// Most samples of the primary's WAL position kept (about an hour at one per probe): a replica
/// stuck longer reports the age of the oldest kept one as its lag.
const MAX_SAMPLES: usize = 18_000;

/// `lag_ms` of a replica not known to be usable (not measured yet, not answering, not a
/// standby).
const UNKNOWN: u64 = u64::MAX;

/// The primary's pool and the replicas' pools, shared by the repositories (cheap to clone).
#[derive(Clone)]
pub struct ReadPools {
    inner: Arc<Inner>,
}

struct Inner {
    /// The clock of `Replica::usable_until_ms`.
    started: Instant,
    primary: PgPool,
    replicas: Vec<Replica>,
    max_lag: Duration,
    primary_reads: AtomicU64,
    replica_reads: AtomicU64,
    /// Round robin over the usable replicas.
    next: AtomicUsize,
}

struct Replica {
    /// `host:port` of the URL (no credentials): the metrics' label.
    name: String,
    url: String,
    pool: PgPool,
    /// Last measured lag in milliseconds, [`UNKNOWN`] when not measured (not answering).
    lag_ms: AtomicU64,
    /// Read it until then (milliseconds since `Inner::started`): its measured lag plus the time
    /// since the measurement stays within the bound until then, even if it replays nothing
    /// meanwhile. 0: not usable.
    usable_until_ms: AtomicU64,
}

impl ReadPools {
    /// Every read on `primary`: no replica configured.
    pub fn primary_only(primary: PgPool) -> Self {
        Self::build(primary, Vec::new(), Duration::from_secs(1))
    }

    /// `primary` and one pool per replica URL, sized and bounded as `settings` (a replica's
    /// checkout waits at most 500 ms: past it the read goes to the primary). Nothing connects
    /// here; replicas are not used before [`ReadPools::spawn_lag_probe`] has measured them.
    pub fn new(
        primary: PgPool,
        replica_urls: &[String],
        settings: &PoolSettings,
        max_lag: Duration,
    ) -> anyhow::Result<Self> {
        let replica_settings = PoolSettings {
            checkout_timeout: settings.checkout_timeout.min(Duration::from_millis(500)),
            ..settings.clone()
        };
        let replicas = replica_urls
            .iter()
            .map(|url| {
                Ok(Replica {
                    name: host_port(url),
                    url: url.clone(),
                    pool: connect(url, &replica_settings)?,
                    lag_ms: AtomicU64::new(UNKNOWN),
                    usable_until_ms: AtomicU64::new(0),
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Self::build(primary, replicas, max_lag))
    }

    fn build(primary: PgPool, replicas: Vec<Replica>, max_lag: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                started: Instant::now(),
                primary,
                replicas,
                max_lag,
                primary_reads: AtomicU64::new(0),
                replica_reads: AtomicU64::new(0),
                next: AtomicUsize::new(0),
            }),
        }
    }

    /// The primary's pool (every read that must see the latest write).
    pub fn primary(&self) -> &PgPool {
        &self.inner.primary
    }

    /// Starts the thread measuring the replicas' lag (none without replicas). `primary_url`
    /// is the primary's (the WAL position is sampled on a connection of the probe's own);
    /// `session` bounds the probe's statements.
    pub fn spawn_lag_probe(&self, primary_url: &str, session: SessionSettings) {
        if self.inner.replicas.is_empty() {
            return;
        }
        let inner = self.inner.clone();
        let primary_url = primary_url.to_owned();
        let spawned = std::thread::Builder::new()
            .name("replica-lag".into())
            .spawn(move || LagProbe::new(inner, primary_url, session).run());
        if let Err(e) = spawned {
            tracing::error!(error = %e, "could not start the replica lag probe: reads stay on the primary");
        }
    }

    /// Reads per target and each replica's lag, for the metrics.
    pub fn routing(&self) -> ReadRouting {
        ReadRouting {
            primary_reads: self.inner.primary_reads.load(Ordering::Relaxed),
            replica_reads: self.inner.replica_reads.load(Ordering::Relaxed),
            replicas: self
                .inner
                .replicas
                .iter()
                .map(|r| {
                    let lag_ms = r.lag_ms.load(Ordering::Relaxed);
                    ReplicaState {
                        name: r.name.clone(),
                        lag: (lag_ms != UNKNOWN).then(|| Duration::from_millis(lag_ms)),
                        in_use: r.usable(self.inner.now_ms()),
                    }
                })
                .collect(),
        }
    }

    /// A replica within the bound, round robin.
    fn pick(&self) -> Option<&Replica> {
        let replicas = &self.inner.replicas;
        if replicas.is_empty() {
            return None;
        }
        let start = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let now_ms = self.inner.now_ms();
        (0..replicas.len())
            .map(|i| &replicas[(start + i) % replicas.len()])
            .find(|r| r.usable(now_ms))
    }

    /// Runs a lag-tolerant read: on a usable replica when there is one, else (or when the
    /// replica fails as unavailable) on the primary, through the request's connection scope.
    /// `query` may run twice (replica, then primary), so it must not write.
    pub(crate) fn read<T>(
        &self,
        operation: &'static str,
        query: impl Fn(&mut PgConnection) -> diesel::QueryResult<T>,
    ) -> Result<T, RepoError> {
        if let Some(replica) = self.pick() {
            match replica.pool.get() {
                Ok(mut conn) => match query(&mut conn) {
                    Ok(value) => {
                        self.inner.replica_reads.fetch_add(1, Ordering::Relaxed);
                        return Ok(value);
                    }
                    Err(e) => match query_error(e, operation) {
                        RepoError::Unavailable(e) => replica.skip(&format!("{e:#}")),
                        other => return Err(other),
                    },
                },
                Err(e) => replica.skip(&e.to_string()),
            }
        }
        self.inner.primary_reads.fetch_add(1, Ordering::Relaxed);
        with_conn(&self.inner.primary, operation, query)
    }
}

impl Inner {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

impl Replica {
    fn usable(&self, now_ms: u64) -> bool {
        now_ms < self.usable_until_ms.load(Ordering::Relaxed)
    }

    /// Records a measurement taken at `measured_ms`: `None`, not answering.
    fn measured(&self, lag: Option<Duration>, measured_ms: u64, max_lag: Duration) {
        let lag_ms = lag.map_or(UNKNOWN, |l| {
            u64::try_from(l.as_millis()).unwrap_or(UNKNOWN - 1)
        });
        self.lag_ms.store(lag_ms, Ordering::Relaxed);
        self.usable_until_ms
            .store(usable_until(lag, measured_ms, max_lag), Ordering::Relaxed);
    }

    /// Not used until the probe measures it again.
    fn skip(&self, why: &str) {
        self.lag_ms.store(UNKNOWN, Ordering::Relaxed);
        if self.usable_until_ms.swap(0, Ordering::Relaxed) != 0 {
            tracing::warn!(replica = %self.name, error = why, "replica read failed: reads go to the primary until it answers again");
        }
    }
}

/// Until when (milliseconds, the clock of `measured_ms`) a replica measured `lag` behind at
/// `measured_ms` may be read: until its lag would reach `max_lag` if it replayed nothing more;
/// 0 (never) when past the bound or not measured.
fn usable_until(lag: Option<Duration>, measured_ms: u64, max_lag: Duration) -> u64 {
    match lag {
        Some(lag) if lag <= max_lag => measured_ms
            .saturating_add(u64::try_from((max_lag - lag).as_millis()).unwrap_or(u64::MAX)),
        _ => 0,
    }
}

/// `host:port` (or the hosts list) of a `postgres://` URL, without user or password.
fn host_port(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, hosts)| hosts)
        .to_owned()
}

#[derive(QueryableByName)]
struct Lsn {
    #[diesel(sql_type = Nullable<BigInt>)]
    lsn: Option<i64>,
}

const PRIMARY_LSN: &str = "SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint AS lsn";
/// NULL when the server is not in recovery (not a standby).
const REPLAY_LSN: &str = "SELECT (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint AS lsn";

/// WAL page size and segment size (PostgreSQL's defaults) and the headers that start them.
const WAL_PAGE: i64 = 8192;
const WAL_SEGMENT: i64 = 16 * 1024 * 1024;
const SHORT_PAGE_HEADER: i64 = 24;
const LONG_PAGE_HEADER: i64 = 40;

/// Whether a replay position has reached an insert position. The insert position of an idle
/// primary whose last record ended on a page boundary points past the next page's header,
/// which no replayed record ends at: a replay position just before that header has it all.
fn reached(replay: i64, insert: i64) -> bool {
    if replay >= insert {
        return true;
    }
    let header = if insert % WAL_SEGMENT == LONG_PAGE_HEADER {
        LONG_PAGE_HEADER
    } else if insert % WAL_PAGE == SHORT_PAGE_HEADER {
        SHORT_PAGE_HEADER
    } else {
        return false;
    };
    replay >= insert - header
}

/// The lag of a replay position against the samples (oldest first): `now` minus the time of the
/// newest sample it has reached; at least the age of the oldest when it reached none.
fn lag_of(samples: &VecDeque<(Instant, i64)>, replay: i64, now: Instant) -> Option<Duration> {
    let newest_reached = samples.iter().rev().find(|(_, lsn)| reached(replay, *lsn));
    match newest_reached {
        Some((at, _)) => Some(now.saturating_duration_since(*at)),
        None => samples
            .front()
            .map(|(at, _)| now.saturating_duration_since(*at)),
    }
}

struct LagProbe {
    inner: Arc<Inner>,
    primary_url: String,
    session: SessionSettings,
    primary: Option<PgConnection>,
    replicas: Vec<Option<PgConnection>>,
    samples: VecDeque<(Instant, i64)>,
}

impl LagProbe {
    fn new(inner: Arc<Inner>, primary_url: String, session: SessionSettings) -> Self {
        let replicas = inner.replicas.iter().map(|_| None).collect();
        Self {
            inner,
            primary_url,
            session: SessionSettings {
                statement_timeout: session
                    .statement_timeout
                    .min(Duration::from_secs(1))
                    .max(Duration::from_millis(100)),
                ..session
            },
            primary: None,
            replicas,
            samples: VecDeque::new(),
        }
    }

    fn run(mut self) {
        loop {
            let started = Instant::now();
            self.round();
            std::thread::sleep(LAG_PROBE_INTERVAL.saturating_sub(started.elapsed()));
        }
    }

    fn round(&mut self) {
        let sampled_at = Instant::now();
        // Without a fresh sample the replicas' lag keeps growing from the last one: they are
        // left once it passes the bound (the primary's state is unknown).
        if let Ok(Some(lsn)) = query_lsn(
            &mut self.primary,
            &self.primary_url,
            self.session,
            PRIMARY_LSN,
        ) {
            self.samples.push_back((sampled_at, lsn));
        }
        while self.samples.len() > MAX_SAMPLES {
            self.samples.pop_front();
        }
        let mut oldest_needed: Option<usize> = None;
        for (i, replica) in self.inner.replicas.iter().enumerate() {
            let measured = query_lsn(
                &mut self.replicas[i],
                &replica.url,
                self.session,
                REPLAY_LSN,
            );
            let measured_at = Instant::now();
            let measured_ms = u64::try_from(
                measured_at
                    .saturating_duration_since(self.inner.started)
                    .as_millis(),
            )
            .unwrap_or(u64::MAX);
            let lag = match measured {
                Ok(Some(replay)) => {
                    if let Some(index) = self
                        .samples
                        .iter()
                        .rposition(|(_, lsn)| reached(replay, *lsn))
                    {
                        oldest_needed = Some(oldest_needed.map_or(index, |o| o.min(index)));
                    } else {
                        oldest_needed = Some(0);
                    }
                    lag_of(&self.samples, replay, measured_at)
                }
                Ok(None) => {
                    tracing::debug!(replica = %replica.name, "not in recovery: not used as a replica");
                    None
                }
                Err(_) => None,
            };
            replica.measured(lag, measured_ms, self.inner.max_lag);
        }
        // Samples older than what every answering replica has reached are not needed again;
        // without any answering replica only the newest is kept.
        let keep_from = oldest_needed.unwrap_or(self.samples.len().saturating_sub(1));
        self.samples.drain(..keep_from);
    }
}

/// One probe query on the probe's own connection, opened (or opened again after a failure) as
/// needed; a failure drops the connection.
fn query_lsn(
    conn: &mut Option<PgConnection>,
    url: &str,
    session: SessionSettings,
    sql: &str,
) -> Result<Option<i64>, ()> {
    if conn.is_none() {
        let mut opened = PgConnection::establish(&with_connection_defaults(url)).map_err(|_| ())?;
        session.apply(&mut opened).map_err(|_| ())?;
        *conn = Some(opened);
    }
    let Some(open) = conn.as_mut() else {
        return Err(());
    };
    match diesel::sql_query(sql).get_result::<Lsn>(open) {
        Ok(row) => Ok(row.lsn),
        Err(_) => {
            *conn = None;
            Err(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_position_reaches_an_insert_position_at_or_below_it() {
        assert!(reached(1000, 1000));
        assert!(reached(1001, 1000));
        assert!(!reached(999, 1000));
    }

    #[test]
    fn an_insert_position_past_a_page_header_is_reached_at_the_page_boundary() {
        let page = 5 * WAL_PAGE;
        assert!(reached(page, page + SHORT_PAGE_HEADER));
        assert!(!reached(page - 8, page + SHORT_PAGE_HEADER));
        let segment = 3 * WAL_SEGMENT;
        assert!(reached(segment, segment + LONG_PAGE_HEADER));
        // 40 bytes into a page that does not start a segment is no header
        assert!(!reached(page, page + LONG_PAGE_HEADER));
    }

    #[test]
    fn the_lag_is_the_age_of_the_newest_sample_reached() {
        let now = Instant::now();
        let samples: VecDeque<_> = [
            (now - Duration::from_millis(900), 100),
            (now - Duration::from_millis(500), 200),
            (now - Duration::from_millis(100), 300),
        ]
        .into();
        assert_eq!(lag_of(&samples, 300, now), Some(Duration::from_millis(100)));
        assert_eq!(lag_of(&samples, 250, now), Some(Duration::from_millis(500)));
        // behind every sample: at least the oldest's age
        assert_eq!(lag_of(&samples, 50, now), Some(Duration::from_millis(900)));
        assert_eq!(lag_of(&VecDeque::new(), 50, now), None);
    }

    #[test]
    fn an_idle_primary_leaves_a_caught_up_replica_without_lag() {
        let now = Instant::now();
        // the primary wrote nothing for ten seconds: every sample holds the same position
        let samples: VecDeque<_> = (0..50)
            .map(|i| (now - Duration::from_millis(10_000 - i * 200), 4242))
            .collect();
        assert!(lag_of(&samples, 4242, now).unwrap() <= Duration::from_millis(200));
    }

    #[test]
    fn a_replica_is_read_only_until_its_lag_would_reach_the_bound() {
        let bound = Duration::from_millis(1000);
        // 300 ms behind when measured at 5000: fresh enough until 5700
        assert_eq!(
            usable_until(Some(Duration::from_millis(300)), 5000, bound),
            5700
        );
        assert_eq!(usable_until(Some(bound), 5000, bound), 5000);
        assert_eq!(
            usable_until(Some(Duration::from_millis(1001)), 5000, bound),
            0
        );
        assert_eq!(usable_until(None, 5000, bound), 0);
    }

    #[test]
    fn the_metrics_label_has_no_credentials() {
        assert_eq!(
            host_port("postgres://user:secret@db-r1:5433/app?sslmode=require"),
            "db-r1:5433"
        );
        assert_eq!(host_port("postgresql://h1:1,h2:2/db"), "h1:1,h2:2");
    }
}
