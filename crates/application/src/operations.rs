//! The operator's side: readiness over the health probes, the gauges of a metrics scrape, and
//! [`ObservedPgcc`], a decorator of the PGCC gateway that reports each call's operation, outcome
//! and latency (so no business code counts anything).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use domain::{Cnpj, PgccUseCase};
use ports::{
    Backlog, Clock, HealthProbe, OperationalStats, PgccConsentCreated, PgccConsentStatus,
    PgccError, PgccGateway, PgccNewConsent, PoolState, ProbeReport, ReadRouting, RepoError,
};
use uuid::Uuid;

/// The answer of a readiness check: ready when every required check is up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness {
    pub ready: bool,
    pub checks: Vec<ProbeReport>,
}

/// The name of the check that says whether the database answers (see [`Operations::database_answers`]).
pub const DATABASE_CHECK: &str = "database";

/// How old a probe's answer may be and still be reported as it is: older, the probe is stuck
/// (a database that stopped answering holds its query), and its required checks count as down.
pub const FRESH_FOR: Duration = Duration::from_secs(1);

/// A probe and its latest answer. Probes are run by a watcher of the caller's (one thread per
/// probe, [`Operations::refresh`]), never by a request: `GET /health/ready` reads the answers.
struct WatchedProbe {
    probe: Arc<dyn HealthProbe>,
    latest: Mutex<Option<(Instant, Vec<ProbeReport>)>>,
    /// When the probe last said the database answers (only probes with a [`DATABASE_CHECK`]).
    database_answered_at: Mutex<Option<Instant>>,
}

/// Readiness, pool usage and backlogs: what `/health/ready` and `/metrics` ask.
#[derive(Clone)]
pub struct Operations {
    probes: Arc<Vec<WatchedProbe>>,
    stats: Option<Arc<dyn OperationalStats>>,
    clock: Arc<dyn Clock>,
}

impl Operations {
    pub fn new(
        probes: Vec<Arc<dyn HealthProbe>>,
        stats: Option<Arc<dyn OperationalStats>>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let probes = probes
            .into_iter()
            .map(|probe| WatchedProbe {
                probe,
                latest: Mutex::new(None),
                database_answered_at: Mutex::new(None),
            })
            .collect();
        Operations {
            probes: Arc::new(probes),
            stats,
            clock,
        }
    }

    /// How many probes there are (the watcher runs each with [`Operations::refresh`]).
    pub fn probe_count(&self) -> usize {
        self.probes.len()
    }

    /// Runs probe `index` now and records its answer (blocks as long as the probe does: call it
    /// from a watcher thread, never from a request).
    pub fn refresh(&self, index: usize) {
        let Some(watched) = self.probes.get(index) else {
            return;
        };
        let reports = watched.probe.check();
        let now = Instant::now();
        if reports.iter().any(|r| r.name == DATABASE_CHECK && r.up) {
            *lock(&watched.database_answered_at) = Some(now);
        }
        *lock(&watched.latest) = Some((now, reports));
    }

    /// Whether every probe has answered at least once.
    pub fn all_answered(&self) -> bool {
        self.probes.iter().all(|w| lock(&w.latest).is_some())
    }

    /// Readiness from the probes' latest answers, without running anything: never blocks, never
    /// takes a database connection. An answer older than [`FRESH_FOR`] (or none yet) turns the
    /// probe's required checks down.
    pub fn readiness(&self) -> Readiness {
        self.readiness_at(Instant::now())
    }

    pub fn readiness_at(&self, now: Instant) -> Readiness {
        let checks: Vec<ProbeReport> = self
            .probes
            .iter()
            .flat_map(|watched| match &*lock(&watched.latest) {
                Some((at, reports)) if now.saturating_duration_since(*at) <= FRESH_FOR => {
                    reports.clone()
                }
                Some((at, reports)) => stale(reports, now.saturating_duration_since(*at)),
                None => vec![ProbeReport {
                    name: "probes",
                    up: false,
                    required: true,
                    detail: "not checked yet".into(),
                }],
            })
            .collect();
        let ready = checks.iter().all(|c| c.up || !c.required);
        Readiness { ready, checks }
    }

    /// Whether the database answered a probe within `within` (true when no probe checks the
    /// database: nothing watches it, e.g. in tests of the API alone). Lets requests fail fast
    /// with 503 while the database does not answer, instead of each holding a connection on a
    /// dead path.
    pub fn database_answers(&self, within: Duration) -> bool {
        self.database_answers_at(within, Instant::now())
    }

    pub fn database_answers_at(&self, within: Duration, now: Instant) -> bool {
        let mut watched_any = false;
        for watched in self.probes.iter() {
            let latest = lock(&watched.latest);
            let checks_database = match &*latest {
                Some((_, reports)) => reports.iter().any(|r| r.name == DATABASE_CHECK),
                // not run yet: the database's state is unknown, so it is not held against it
                None => false,
            };
            if !checks_database {
                continue;
            }
            watched_any = true;
            if let Some(at) = *lock(&watched.database_answered_at) {
                if now.saturating_duration_since(at) <= within {
                    return true;
                }
            }
        }
        !watched_any
    }

    pub fn pool_state(&self) -> Option<PoolState> {
        self.stats.as_ref().map(|s| s.pool_state())
    }

    /// Where the lag-tolerant reads went and the replicas' lag.
    pub fn read_routing(&self) -> Option<ReadRouting> {
        self.stats.as_ref().map(|s| s.read_routing())
    }

    /// Companies' batches failed on their own account, by operation (see
    /// [`OperationalStats::company_batch_failures`]).
    pub fn company_batch_failures(&self) -> Vec<(&'static str, u64)> {
        self.stats
            .as_ref()
            .map(|s| s.company_batch_failures())
            .unwrap_or_default()
    }

    pub fn backlog(&self) -> Option<Result<Backlog, RepoError>> {
        self.stats.as_ref().map(|s| s.backlog(self.clock.now()))
    }
}

/// The reports of a probe stuck for `age`: its required checks down, the others as they were.
fn stale(reports: &[ProbeReport], age: Duration) -> Vec<ProbeReport> {
    reports
        .iter()
        .map(|r| ProbeReport {
            up: r.up && !r.required,
            detail: if r.required {
                format!("no answer for {} ms", age.as_millis())
            } else {
                r.detail.clone()
            },
            ..r.clone()
        })
        .collect()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Told of every PGCC call: `operation` (`list_use_cases`, `create_consent_request`, ...),
/// `outcome` (`ok`, `rejected`, `failed`, `unreachable`, `timeout`, `unexpected`) and how long
/// it took.
pub trait PgccCallObserver: Send + Sync {
    fn pgcc_call(&self, operation: &'static str, outcome: &'static str, elapsed: Duration);
}

/// A [`PgccGateway`] that forwards every call to `inner` and reports it to `observer`.
pub struct ObservedPgcc {
    inner: Arc<dyn PgccGateway>,
    observer: Arc<dyn PgccCallObserver>,
}

impl ObservedPgcc {
    pub fn new(inner: Arc<dyn PgccGateway>, observer: Arc<dyn PgccCallObserver>) -> Self {
        ObservedPgcc { inner, observer }
    }

    fn observe<T>(
        &self,
        operation: &'static str,
        call: impl FnOnce() -> Result<T, PgccError>,
    ) -> Result<T, PgccError> {
        let started = Instant::now();
        let result = call();
        self.observer
            .pgcc_call(operation, outcome(&result), started.elapsed());
        result
    }
}

/// The label of a call's result.
pub fn outcome<T>(result: &Result<T, PgccError>) -> &'static str {
    match result {
        Ok(_) => "ok",
        Err(PgccError::Rejected { .. }) => "rejected",
        Err(PgccError::TryLater { .. }) => "try_later",
        Err(PgccError::Failed { .. }) => "failed",
        Err(PgccError::Unreachable(_)) => "unreachable",
        Err(PgccError::Timeout) => "timeout",
        Err(PgccError::Unexpected(_)) => "unexpected",
    }
}

impl PgccGateway for ObservedPgcc {
    fn list_use_cases(&self, company_cnpj: &Cnpj) -> Result<Vec<PgccUseCase>, PgccError> {
        self.observe("list_use_cases", || self.inner.list_use_cases(company_cnpj))
    }

    fn create_consent_request(
        &self,
        consent: &PgccNewConsent,
    ) -> Result<PgccConsentCreated, PgccError> {
        self.observe("create_consent_request", || {
            self.inner.create_consent_request(consent)
        })
    }

    fn consent_statuses(&self, pgcc_ids: &[String]) -> Result<Vec<PgccConsentStatus>, PgccError> {
        self.observe("consent_statuses", || self.inner.consent_statuses(pgcc_ids))
    }

    fn revoke_consent_request(&self, pgcc_id: &str) -> Result<(), PgccError> {
        self.observe("revoke_consent_request", || {
            self.inner.revoke_consent_request(pgcc_id)
        })
    }

    fn find_by_external_reference(
        &self,
        company_cnpj: &Cnpj,
        referencia_externa: Uuid,
    ) -> Result<Option<PgccConsentCreated>, PgccError> {
        self.observe("find_by_external_reference", || {
            self.inner
                .find_by_external_reference(company_cnpj, referencia_externa)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use ports::{MockClock, MockHealthProbe, MockPgccGateway};

    use super::*;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<(&'static str, &'static str)>>);

    impl PgccCallObserver for Recorder {
        fn pgcc_call(&self, operation: &'static str, outcome: &'static str, _: Duration) {
            self.0.lock().unwrap().push((operation, outcome));
        }
    }

    fn probe(reports: Vec<ProbeReport>) -> Arc<dyn HealthProbe> {
        let mut probe = MockHealthProbe::new();
        probe.expect_check().return_const(reports);
        Arc::new(probe)
    }

    fn report(name: &'static str, up: bool, required: bool) -> ProbeReport {
        ProbeReport {
            name,
            up,
            required,
            detail: String::new(),
        }
    }

    fn operations(probes: Vec<Arc<dyn HealthProbe>>) -> Operations {
        Operations::new(probes, None, Arc::new(MockClock::new()))
    }

    fn refreshed(probes: Vec<Arc<dyn HealthProbe>>) -> Operations {
        let ops = operations(probes);
        (0..ops.probe_count()).for_each(|i| ops.refresh(i));
        ops
    }

    #[test]
    fn ready_when_every_required_check_is_up_whatever_the_optional_ones_say() {
        let ops = refreshed(vec![
            probe(vec![report("database", true, true)]),
            probe(vec![report("pgcc", false, false)]),
        ]);
        let readiness = ops.readiness();
        assert!(readiness.ready);
        assert_eq!(readiness.checks.len(), 2, "every check is listed");
    }

    #[test]
    fn not_ready_when_a_required_check_is_down() {
        let ops = refreshed(vec![probe(vec![
            report("database", true, true),
            report("migrations", false, true),
        ])]);
        assert!(!ops.readiness().ready);
    }

    #[test]
    fn readiness_never_runs_a_probe_and_is_down_until_one_answered() {
        let mut never_run = MockHealthProbe::new();
        never_run.expect_check().never();
        let ops = operations(vec![Arc::new(never_run)]);
        let readiness = ops.readiness();
        assert!(!readiness.ready);
        assert_eq!(readiness.checks[0].detail, "not checked yet");
    }

    #[test]
    fn a_stuck_probe_turns_its_required_checks_down_and_keeps_the_optional_ones() {
        let ops = refreshed(vec![probe(vec![
            report("database", true, true),
            report("pgcc", true, false),
        ])]);
        let later = Instant::now() + FRESH_FOR + Duration::from_millis(500);
        let readiness = ops.readiness_at(later);
        assert!(!readiness.ready);
        assert!(!readiness.checks[0].up);
        assert!(readiness.checks[0].detail.starts_with("no answer for "));
        assert!(readiness.checks[1].up, "optional checks keep their answer");
    }

    #[test]
    fn the_database_answers_while_a_probe_said_so_recently() {
        let ops = refreshed(vec![probe(vec![report("database", true, true)])]);
        let now = Instant::now();
        assert!(ops.database_answers_at(Duration::from_secs(2), now));
        assert!(!ops.database_answers_at(Duration::from_secs(2), now + Duration::from_secs(3)));

        let down = refreshed(vec![probe(vec![report("database", false, true)])]);
        assert!(!down.database_answers(Duration::from_secs(2)));
    }

    #[test]
    fn without_a_database_probe_the_database_is_not_held_down() {
        assert!(operations(Vec::new()).database_answers(Duration::from_secs(2)));
        let unrun = operations(vec![probe(vec![report("database", false, true)])]);
        assert!(
            unrun.database_answers(Duration::from_secs(2)),
            "not run yet"
        );
    }

    #[test]
    fn every_pgcc_call_is_reported_with_its_operation_and_outcome_and_forwarded_unchanged() {
        let mut inner = MockPgccGateway::new();
        inner
            .expect_revoke_consent_request()
            .returning(|_| Err(PgccError::Rejected { status: 409 }));
        inner
            .expect_consent_statuses()
            .returning(|_| Ok(Vec::new()));
        inner
            .expect_find_by_external_reference()
            .returning(|_, _| Err(PgccError::Timeout));
        let recorder = Arc::new(Recorder::default());
        let observed = ObservedPgcc::new(Arc::new(inner), recorder.clone());
        assert!(matches!(
            observed.revoke_consent_request("x"),
            Err(PgccError::Rejected { status: 409 })
        ));
        assert!(observed.consent_statuses(&[]).unwrap().is_empty());
        let cnpj = Cnpj::parse("12.ABC.345/01DE-35").unwrap();
        assert!(matches!(
            observed.find_by_external_reference(&cnpj, Uuid::nil()),
            Err(PgccError::Timeout)
        ));
        assert_eq!(
            *recorder.0.lock().unwrap(),
            vec![
                ("revoke_consent_request", "rejected"),
                ("consent_statuses", "ok"),
                ("find_by_external_reference", "timeout"),
            ]
        );
    }
}
