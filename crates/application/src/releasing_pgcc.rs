//! Every PGCC call gives the request's database connection back to the pool first: a request
//! holds one connection while it talks to the database (see `ports::ConnectionScope`), never
//! while it waits on the PGCC, so a slow PGCC cannot drain the pool for the other requests.

use std::sync::Arc;
use std::time::Duration;

use ports::{ConnectionScope, PgccGateway};

use crate::operations::{ObservedPgcc, PgccCallObserver};

/// Releases the scope's connection before each call; observes nothing else.
struct ReleaseConnection(Arc<dyn ConnectionScope>);

impl PgccCallObserver for ReleaseConnection {
    fn before_call(&self, _operation: &'static str) {
        self.0.release();
    }

    fn pgcc_call(&self, _operation: &'static str, _outcome: &'static str, _elapsed: Duration) {}
}

/// `inner`, with [`ConnectionScope::release`] called before each of its calls.
pub fn releasing_pgcc(
    inner: Arc<dyn PgccGateway>,
    scope: Arc<dyn ConnectionScope>,
) -> Arc<dyn PgccGateway> {
    Arc::new(ObservedPgcc::new(inner, Arc::new(ReleaseConnection(scope))))
}

#[cfg(test)]
mod tests {
    use ports::{MockConnectionScope, MockPgccGateway};

    use super::*;

    #[test]
    fn the_connection_is_released_before_the_pgcc_is_called() {
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut scope = MockConnectionScope::new();
        let seen = order.clone();
        scope
            .expect_release()
            .times(2)
            .returning(move || seen.lock().unwrap().push("release"));
        let mut pgcc = MockPgccGateway::new();
        let seen = order.clone();
        pgcc.expect_revoke_consent_request()
            .times(1)
            .returning(move |_| {
                seen.lock().unwrap().push("revoke");
                Ok(())
            });
        let seen = order.clone();
        pgcc.expect_consent_statuses().times(1).returning(move |_| {
            seen.lock().unwrap().push("statuses");
            Ok(vec![])
        });
        let releasing = releasing_pgcc(Arc::new(pgcc), Arc::new(scope));

        releasing.revoke_consent_request("pgcc-1").unwrap();
        releasing.consent_statuses(&["pgcc-1".to_owned()]).unwrap();

        assert_eq!(
            *order.lock().unwrap(),
            vec!["release", "revoke", "release", "statuses"]
        );
    }
}
