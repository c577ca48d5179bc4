//! Retention (docs/security.md, "Retention"): final webhook deliveries with their attempts, and
//! events, are deleted once older than the webhook retention; cancelled creations have their
//! personal data blanked once older than the cancelled retention; the record of reads of
//! personal data is deleted once older than its own retention. A worker calls
//! [`PurgeRetention::run_once`] until a round comes back short of the batch.

use std::sync::Arc;

use ports::{Clock, RepoError, RetentionRepository};

use crate::EvidenceFiles;

/// How long things are kept before the purge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionPeriods {
    /// Final webhook deliveries (from their last change), their attempts, and events (from
    /// their creation, once no delivery of theirs is left).
    pub webhook: chrono::Duration,
    /// Cancelled creations (from their last attempt), before their personal data is blanked.
    pub cancelled: chrono::Duration,
    /// The record of who read personal data (from when the read was recorded).
    pub access_log: chrono::Duration,
    /// Evidence files' bytes (from the last change of the last open request linking them, or
    /// from the upload for a file linked to none; docs/evidencias.md, "Retention").
    pub evidence: chrono::Duration,
}

/// `retention.evidence_days`' default: five years, the limitation period of a consumer's claim
/// (CDC art. 27) within which a company may have to prove a consent it relied on.
pub const DEFAULT_EVIDENCE_DAYS: i64 = 1_825;

/// What one round did; each count is at most the batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PurgeReport {
    pub deliveries: u32,
    pub events: u32,
    pub blanked: u32,
    /// Records of reads of personal data deleted.
    pub accesses: u32,
    /// Evidence files whose bytes were deleted.
    pub evidence_files: u32,
    /// Leftovers of evidence uploads cut short (a process killed mid-upload) deleted.
    pub abandoned_uploads: u32,
}

impl PurgeReport {
    /// Whether some kind filled its batch: more may be waiting, run another round.
    pub fn full(&self, batch: u32) -> bool {
        self.deliveries >= batch
            || self.events >= batch
            || self.blanked >= batch
            || self.accesses >= batch
            || self.evidence_files >= batch
            || self.abandoned_uploads >= batch
    }

    pub fn is_empty(&self) -> bool {
        *self == PurgeReport::default()
    }
}

#[derive(Clone)]
pub struct PurgeRetention {
    retention: Arc<dyn RetentionRepository>,
    clock: Arc<dyn Clock>,
    periods: RetentionPeriods,
    evidence: Option<EvidenceFiles>,
}

impl PurgeRetention {
    pub fn new(
        retention: Arc<dyn RetentionRepository>,
        clock: Arc<dyn Clock>,
        periods: RetentionPeriods,
    ) -> Self {
        Self {
            retention,
            clock,
            periods,
            evidence: None,
        }
    }

    /// The purge that also deletes evidence files' bytes past `periods.evidence`.
    pub fn with_evidence(mut self, evidence: EvidenceFiles) -> Self {
        self.evidence = Some(evidence);
        self
    }

    /// One round, each step its own transaction of at most `batch` rows: the deliveries first,
    /// so that the events they held can go in the same round; then the events; then the
    /// blanking; then the record of reads. The cutoffs are read from the clock once per round. A failing step stops the
    /// round (what earlier steps did stays done).
    pub fn run_once(&self, batch: u32) -> Result<PurgeReport, RepoError> {
        let now = self.clock.now();
        let webhook_cutoff = cutoff(now, self.periods.webhook);
        let cancelled_cutoff = cutoff(now, self.periods.cancelled);
        let deliveries = self
            .retention
            .purge_webhook_deliveries(webhook_cutoff, batch)?;
        let events = self.retention.purge_webhook_events(webhook_cutoff, batch)?;
        let blanked = self
            .retention
            .blank_cancelled_creations(cancelled_cutoff, now, batch)?;
        let accesses = self
            .retention
            .purge_access_log(cutoff(now, self.periods.access_log), batch)?;
        let (evidence_files, abandoned_uploads) = match &self.evidence {
            Some(evidence) => (
                evidence.expire(cutoff(now, self.periods.evidence), now, batch)?,
                evidence.sweep_abandoned(now, batch)?,
            ),
            None => (0, 0),
        };
        Ok(PurgeReport {
            deliveries,
            events,
            blanked,
            accesses,
            evidence_files,
            abandoned_uploads,
        })
    }
}

/// `now - period`; a period too long to subtract keeps everything.
fn cutoff(
    now: chrono::DateTime<chrono::Utc>,
    period: chrono::Duration,
) -> chrono::DateTime<chrono::Utc> {
    now.checked_sub_signed(period)
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use mockall::Sequence;
    use ports::MockRetentionRepository;

    use super::*;
    use crate::test_support::{fixed_clock, now};

    fn periods() -> RetentionPeriods {
        RetentionPeriods {
            webhook: chrono::Duration::days(30),
            cancelled: chrono::Duration::days(7),
            access_log: chrono::Duration::days(365),
            evidence: chrono::Duration::days(DEFAULT_EVIDENCE_DAYS),
        }
    }

    fn service(repo: MockRetentionRepository) -> PurgeRetention {
        PurgeRetention::new(Arc::new(repo), fixed_clock(), periods())
    }

    #[test]
    fn a_round_purges_deliveries_then_events_older_than_30_days_then_blanks_cancelled_creations_older_than_7(
    ) {
        let webhook_cutoff = now() - chrono::Duration::days(30);
        let cancelled_cutoff = now() - chrono::Duration::days(7);
        let mut seq = Sequence::new();
        let mut repo = MockRetentionRepository::new();
        repo.expect_purge_webhook_deliveries()
            .withf(move |before, limit| *before == webhook_cutoff && *limit == 100)
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _| Ok(100));
        repo.expect_purge_webhook_events()
            .withf(move |before, limit| *before == webhook_cutoff && *limit == 100)
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _| Ok(7));
        repo.expect_blank_cancelled_creations()
            .withf(move |before, at, limit| {
                *before == cancelled_cutoff && *at == now() && *limit == 100
            })
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _, _| Ok(2));
        let access_cutoff = now() - chrono::Duration::days(365);
        repo.expect_purge_access_log()
            .withf(move |before, limit| *before == access_cutoff && *limit == 100)
            .times(1)
            .in_sequence(&mut seq)
            .returning(|_, _| Ok(4));

        let report = service(repo).run_once(100).unwrap();

        assert_eq!(
            report,
            PurgeReport {
                deliveries: 100,
                events: 7,
                blanked: 2,
                accesses: 4,
                evidence_files: 0,
                abandoned_uploads: 0,
            }
        );
        assert!(
            report.full(100),
            "a full batch of deliveries asks for another round"
        );
        assert!(!report.full(101));
    }

    #[test]
    fn a_round_with_nothing_old_reports_nothing_and_is_not_full() {
        let mut repo = MockRetentionRepository::new();
        repo.expect_purge_webhook_deliveries()
            .times(1)
            .returning(|_, _| Ok(0));
        repo.expect_purge_webhook_events()
            .times(1)
            .returning(|_, _| Ok(0));
        repo.expect_blank_cancelled_creations()
            .times(1)
            .returning(|_, _, _| Ok(0));
        repo.expect_purge_access_log()
            .times(1)
            .returning(|_, _| Ok(0));

        let report = service(repo).run_once(200).unwrap();

        assert!(report.is_empty(), "{report:?}");
        assert!(!report.full(200));
    }

    #[test]
    fn the_cutoffs_follow_the_configured_periods_and_the_clock() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (a, b) = (seen.clone(), seen.clone());
        let mut repo = MockRetentionRepository::new();
        repo.expect_purge_webhook_deliveries()
            .returning(move |before, _| {
                a.lock().unwrap().push(("entregas", before));
                Ok(0)
            });
        repo.expect_purge_webhook_events().returning(|_, _| Ok(0));
        repo.expect_blank_cancelled_creations()
            .returning(move |before, _, _| {
                b.lock().unwrap().push(("canceladas", before));
                Ok(0)
            });
        let c = seen.clone();
        repo.expect_purge_access_log().returning(move |before, _| {
            c.lock().unwrap().push(("acessos", before));
            Ok(0)
        });
        let periods = RetentionPeriods {
            webhook: chrono::Duration::days(1),
            cancelled: chrono::Duration::zero(),
            access_log: chrono::Duration::days(2),
            evidence: chrono::Duration::days(3),
        };

        PurgeRetention::new(Arc::new(repo), fixed_clock(), periods)
            .run_once(10)
            .unwrap();

        assert_eq!(
            *seen.lock().unwrap(),
            vec![
                ("entregas", now() - chrono::Duration::days(1)),
                ("canceladas", now()),
                ("acessos", now() - chrono::Duration::days(2)),
            ]
        );
    }

    #[test]
    fn a_failing_step_stops_the_round_with_its_error() {
        let mut repo = MockRetentionRepository::new();
        repo.expect_purge_webhook_deliveries()
            .times(1)
            .returning(|_, _| Ok(3));
        repo.expect_purge_webhook_events()
            .times(1)
            .returning(|_, _| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));
        repo.expect_blank_cancelled_creations().times(0);

        let result = service(repo).run_once(10);

        assert!(
            matches!(result, Err(RepoError::Unavailable(_))),
            "{result:?}"
        );
    }
}
