//! Counts of a company's consent requests over time (the console's chart, issue 26): per UTC day
//! of creation, by template and by status, over a bounded period. The period's bound is the
//! cost's: the count reads the company's creations of the period (one index range), so a year of
//! a large company is refused rather than read.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use domain::Company;
use ports::{ConsentRequestRepository, DailyCount, RepoError, RequestSummary};

/// The longest period counted, in days.
pub const MAX_COUNT_DAYS: i64 = 92;

/// The most a figure of the home page's summary counts (past it, "more than 10,000"): the bound
/// of its reads (docs/console.md, "The home page's reads").
pub const SUMMARY_CAP: u32 = 10_000;

#[derive(Debug, thiserror::Error)]
pub enum CountConsentError {
    /// The period is empty, reversed or longer than [`MAX_COUNT_DAYS`].
    #[error("the period must be 1 to {MAX_COUNT_DAYS} days")]
    Period,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct CountConsentRequests {
    consent_requests: Arc<dyn ConsentRequestRepository>,
}

impl CountConsentRequests {
    pub fn new(consent_requests: Arc<dyn ConsentRequestRepository>) -> Self {
        Self { consent_requests }
    }

    /// The company's confirmed requests created in `[from, until)`, by day, template and
    /// status, in day order.
    pub fn by_day(
        &self,
        company: &Company,
        from: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Vec<DailyCount>, CountConsentError> {
        if until <= from || until - from > chrono::Duration::days(MAX_COUNT_DAYS) {
            return Err(CountConsentError::Period);
        }
        Ok(self
            .consent_requests
            .counts_by_day(company.id, from, until)?)
    }

    /// The company's requests at a glance at `now` (the console's home page): by status,
    /// expiring in 30 days, revoked in 7 days, integrity incidents; each figure capped at
    /// [`SUMMARY_CAP`] + 1 rows read.
    pub fn summary(
        &self,
        company: &Company,
        now: DateTime<Utc>,
    ) -> Result<RequestSummary, RepoError> {
        self.consent_requests.summary(company.id, now, SUMMARY_CAP)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::company;
    use chrono::TimeZone;
    use ports::MockConsentRequestRepository;

    #[test]
    fn a_period_past_its_bound_or_reversed_reads_nothing() {
        let mut repo = MockConsentRequestRepository::new();
        repo.expect_counts_by_day().times(0);
        let counts = CountConsentRequests::new(Arc::new(repo));
        let day = |d| Utc.with_ymd_and_hms(2026, 1, d, 0, 0, 0).unwrap();
        let long = day(1) + chrono::Duration::days(MAX_COUNT_DAYS + 1);
        assert!(matches!(
            counts.by_day(&company(), day(2), day(1)),
            Err(CountConsentError::Period)
        ));
        assert!(matches!(
            counts.by_day(&company(), day(1), day(1)),
            Err(CountConsentError::Period)
        ));
        assert!(matches!(
            counts.by_day(&company(), day(1), long),
            Err(CountConsentError::Period)
        ));
    }

    #[test]
    fn a_period_within_its_bound_is_the_repositorys_count_of_the_company() {
        let mut repo = MockConsentRequestRepository::new();
        let acme = company();
        let id = acme.id;
        repo.expect_counts_by_day()
            .withf(move |c, _, _| *c == id)
            .times(1)
            .returning(|_, _, _| Ok(Vec::new()));
        let counts = CountConsentRequests::new(Arc::new(repo));
        let from = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let until = from + chrono::Duration::days(MAX_COUNT_DAYS);
        assert_eq!(counts.by_day(&acme, from, until).unwrap(), Vec::new());
    }
}
