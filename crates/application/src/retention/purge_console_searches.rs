//! The console's CPF searches (issue 38, part 2) are deleted once expired: a search's token opens
//! the subject's page for `console.search_seconds`, and its row (the CPF sealed under the token)
//! has no use after. The purge worker's round, on the idempotency keys' schedule: both are
//! short-lived server-side state of requests.

use std::sync::Arc;

use ports::{Clock, ConsoleSearchStore, RepoError};

/// The purge worker's round: forgets expired searches.
#[derive(Clone)]
pub struct PurgeConsoleSearches {
    searches: Arc<dyn ConsoleSearchStore>,
    clock: Arc<dyn Clock>,
}

impl PurgeConsoleSearches {
    pub fn new(searches: Arc<dyn ConsoleSearchStore>, clock: Arc<dyn Clock>) -> Self {
        Self { searches, clock }
    }

    /// Deletes up to `batch_size` searches expired now; returns how many.
    pub fn run_once(&self, batch_size: u32) -> Result<u32, RepoError> {
        self.searches.purge_expired(self.clock.now(), batch_size)
    }
}

#[cfg(test)]
mod tests {
    use ports::MockConsoleSearchStore;

    use super::*;
    use crate::test_support::{fixed_clock, now};

    #[test]
    fn the_purge_forgets_the_searches_expired_now() {
        let mut searches = MockConsoleSearchStore::new();
        searches
            .expect_purge_expired()
            .withf(|at, limit| *at == now() && *limit == 500)
            .times(1)
            .returning(|_, _| Ok(2));

        let purged = PurgeConsoleSearches::new(Arc::new(searches), fixed_clock())
            .run_once(500)
            .unwrap();

        assert_eq!(purged, 2);
    }
}
