//! Idempotency keys (and the answers kept with them) are forgotten after the retention: the
//! purge worker's round. Running requests under their keys is the HTTP layer's business
//! (`delivery_http::idempotency`).

use std::sync::Arc;

use chrono::Duration;
use ports::{Clock, IdempotencyRepository, RepoError};

/// The purge worker's round: forgets keys older than the retention.
#[derive(Clone)]
pub struct PurgeIdempotencyKeys {
    keys: Arc<dyn IdempotencyRepository>,
    clock: Arc<dyn Clock>,
    retention: Duration,
}

impl PurgeIdempotencyKeys {
    pub fn new(
        keys: Arc<dyn IdempotencyRepository>,
        clock: Arc<dyn Clock>,
        retention: Duration,
    ) -> Self {
        Self {
            keys,
            clock,
            retention,
        }
    }

    /// Deletes up to `batch_size` keys created more than the retention ago; returns how many.
    pub fn run_once(&self, batch_size: u32) -> Result<u32, RepoError> {
        self.keys
            .purge_created_before(self.clock.now() - self.retention, batch_size)
    }
}

#[cfg(test)]
mod tests {
    use ports::MockIdempotencyRepository;

    use super::*;
    use crate::test_support::{fixed_clock, now};

    #[test]
    fn the_purge_forgets_keys_older_than_the_retention() {
        let mut keys = MockIdempotencyRepository::new();
        keys.expect_purge_created_before()
            .withf(|before, limit| *before == now() - Duration::hours(24) && *limit == 500)
            .times(1)
            .returning(|_, _| Ok(3));

        let purged = PurgeIdempotencyKeys::new(Arc::new(keys), fixed_clock(), Duration::hours(24))
            .run_once(500)
            .unwrap();

        assert_eq!(purged, 3);
    }
}
