//! The sandbox purge: every sandbox company's data older than `sandbox.retention_days` is
//! deleted, company by company, each kind in batches of at most `batch` rows (one short
//! transaction each, every statement scoped to that company). The simulated PGCC holds nothing
//! of its own (the PGCC ids carry it), so nothing else is left to purge.

use std::sync::Arc;

use ports::{Clock, RepoError, SandboxPurged, SandboxRepository};

/// Sandbox companies read per page of the walk.
const COMPANIES_PER_PAGE: u32 = 100;

/// What one round deleted, over every sandbox company.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SandboxPurgeReport {
    pub companies: u32,
    pub purged: SandboxPurged,
    /// Some company filled a batch of some kind: more may be waiting.
    pub full: bool,
}

#[derive(Clone)]
pub struct PurgeSandboxes {
    sandboxes: Arc<dyn SandboxRepository>,
    clock: Arc<dyn Clock>,
    retention: chrono::Duration,
}

impl PurgeSandboxes {
    pub fn new(
        sandboxes: Arc<dyn SandboxRepository>,
        clock: Arc<dyn Clock>,
        retention: chrono::Duration,
    ) -> Self {
        Self {
            sandboxes,
            clock,
            retention,
        }
    }

    /// One round over every sandbox company: up to `batch` rows of each kind each. A company
    /// whose batch fails is logged (by id) and left to the next round; the database being
    /// unreachable ends the round.
    pub fn run_once(&self, batch: u32) -> Result<SandboxPurgeReport, RepoError> {
        let now = self.clock.now();
        let before = now
            .checked_sub_signed(self.retention)
            .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
        let mut report = SandboxPurgeReport::default();
        let mut after = None;
        loop {
            let page = self.sandboxes.sandboxes_after(after, COMPANIES_PER_PAGE)?;
            for &company in &page {
                match self.sandboxes.purge_sandbox(company, before, batch) {
                    Ok(purged) => {
                        report.companies += 1;
                        report.purged.requests += purged.requests;
                        report.purged.events += purged.events;
                        report.purged.accesses += purged.accesses;
                        report.full |= purged.requests >= batch
                            || purged.events >= batch
                            || purged.accesses >= batch;
                    }
                    Err(e @ RepoError::Unavailable(_)) => return Err(e),
                    Err(_) => {
                        // ids only: the error's text may quote a row
                        tracing::warn!(empresa_id = %company, "sandbox purge: this company's batch failed; the others go on");
                    }
                }
            }
            if page.len() < COMPANIES_PER_PAGE as usize {
                return Ok(report);
            }
            after = page.last().copied();
        }
    }
}

#[cfg(test)]
mod tests {
    use ports::MockSandboxRepository;

    use super::*;
    use crate::test_support::{fixed_clock, now};
    use domain::CompanyId;
    use uuid::Uuid;

    #[test]
    fn each_sandbox_is_purged_of_what_is_older_than_the_retention() {
        let cutoff = now() - chrono::Duration::days(7);
        let mut repo = MockSandboxRepository::new();
        repo.expect_sandboxes_after().returning(|_, _| {
            Ok(vec![
                CompanyId(Uuid::from_u128(1)),
                CompanyId(Uuid::from_u128(2)),
            ])
        });
        repo.expect_purge_sandbox()
            .withf(move |_, before, limit| *before == cutoff && *limit == 10)
            .times(2)
            .returning(|company, _, _| {
                Ok(SandboxPurged {
                    requests: if company.0.as_u128() == 1 { 10 } else { 3 },
                    events: 1,
                    accesses: 0,
                })
            });
        let purge = PurgeSandboxes::new(Arc::new(repo), fixed_clock(), chrono::Duration::days(7));
        let report = purge.run_once(10).unwrap();
        assert_eq!(
            (
                report.companies,
                report.purged.requests,
                report.purged.events
            ),
            (2, 13, 2)
        );
        assert!(report.full);
    }
}
