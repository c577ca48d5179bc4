//! The operator's side: readiness over the health probes, the gauges of a metrics scrape, and
//! [`ObservedPgcc`], a decorator of the PGCC gateway that reports each call's operation, outcome
//! and latency (so no business code counts anything).

use std::sync::Arc;
use std::time::{Duration, Instant};

use domain::{Cnpj, PgccUseCase};
use ports::{
    Backlog, Clock, HealthProbe, OperationalStats, PgccConsentCreated, PgccConsentStatus,
    PgccError, PgccGateway, PgccNewConsent, PoolState, ProbeReport, RepoError,
};
use uuid::Uuid;

/// The answer of a readiness check: ready when every required check is up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness {
    pub ready: bool,
    pub checks: Vec<ProbeReport>,
}

/// Readiness, pool usage and backlogs: what `/health/ready` and `/metrics` ask.
#[derive(Clone)]
pub struct Operations {
    probes: Vec<Arc<dyn HealthProbe>>,
    stats: Option<Arc<dyn OperationalStats>>,
    clock: Arc<dyn Clock>,
}

impl Operations {
    pub fn new(
        probes: Vec<Arc<dyn HealthProbe>>,
        stats: Option<Arc<dyn OperationalStats>>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Operations {
            probes,
            stats,
            clock,
        }
    }

    /// Runs every probe (each bounded in time by its adapter).
    pub fn readiness(&self) -> Readiness {
        let checks: Vec<ProbeReport> = self.probes.iter().flat_map(|p| p.check()).collect();
        let ready = checks.iter().all(|c| c.up || !c.required);
        Readiness { ready, checks }
    }

    pub fn pool_state(&self) -> Option<PoolState> {
        self.stats.as_ref().map(|s| s.pool_state())
    }

    pub fn backlog(&self) -> Option<Result<Backlog, RepoError>> {
        self.stats.as_ref().map(|s| s.backlog(self.clock.now()))
    }
}

/// Told of every PGCC call: `operation` (`list_use_cases`, `create_consent_request`, ...),
/// `outcome` (`ok`, `rejected`, `failed`, `unreachable`, `timeout`, `unexpected`) and how long
/// it took.
pub trait PgccCallObserver: Send + Sync {
    /// Just before the call (nothing by default).
    fn before_call(&self, _operation: &'static str) {}

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
        self.observer.before_call(operation);
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
        Err(PgccError::Failed { .. }) => "failed",
        Err(PgccError::Unreachable(_)) => "unreachable",
        Err(PgccError::Timeout) => "timeout",
        Err(PgccError::Unexpected(_)) => "unexpected",
    }
}

impl PgccGateway for ObservedPgcc {
    fn list_use_cases(&self, cnpj_empresa: &Cnpj) -> Result<Vec<PgccUseCase>, PgccError> {
        self.observe("list_use_cases", || self.inner.list_use_cases(cnpj_empresa))
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
        cnpj_empresa: &Cnpj,
        referencia_externa: Uuid,
    ) -> Result<Option<PgccConsentCreated>, PgccError> {
        self.observe("find_by_external_reference", || {
            self.inner
                .find_by_external_reference(cnpj_empresa, referencia_externa)
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

    #[test]
    fn ready_when_every_required_check_is_up_whatever_the_optional_ones_say() {
        let ops = operations(vec![
            probe(vec![report("database", true, true)]),
            probe(vec![report("pgcc", false, false)]),
        ]);
        let readiness = ops.readiness();
        assert!(readiness.ready);
        assert_eq!(readiness.checks.len(), 2, "every check is listed");
    }

    #[test]
    fn not_ready_when_a_required_check_is_down() {
        let ops = operations(vec![probe(vec![
            report("database", true, true),
            report("migrations", false, true),
        ])]);
        assert!(!ops.readiness().ready);
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
