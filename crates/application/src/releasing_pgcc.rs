//! Every PGCC call gives the request's database connection back to the pool first: a request
//! holds one connection while it talks to the database (see `ports::ConnectionScope`), never
//! while it waits on the PGCC, so a slow PGCC cannot drain the pool for the other requests.

use std::sync::Arc;

use domain::{Cnpj, PgccUseCase};
use ports::{
    ConnectionScope, PgccConsentCreated, PgccConsentStatus, PgccError, PgccGateway, PgccNewConsent,
};
use uuid::Uuid;

/// A [`PgccGateway`] decorator that calls [`ConnectionScope::release`] before each call.
pub struct ReleasingPgcc {
    inner: Arc<dyn PgccGateway>,
    scope: Arc<dyn ConnectionScope>,
}

impl ReleasingPgcc {
    pub fn new(inner: Arc<dyn PgccGateway>, scope: Arc<dyn ConnectionScope>) -> Self {
        Self { inner, scope }
    }
}

impl PgccGateway for ReleasingPgcc {
    fn list_use_cases(&self, cnpj_empresa: &Cnpj) -> Result<Vec<PgccUseCase>, PgccError> {
        self.scope.release();
        self.inner.list_use_cases(cnpj_empresa)
    }

    fn create_consent_request(
        &self,
        consent: &PgccNewConsent,
    ) -> Result<PgccConsentCreated, PgccError> {
        self.scope.release();
        self.inner.create_consent_request(consent)
    }

    fn consent_statuses(&self, pgcc_ids: &[String]) -> Result<Vec<PgccConsentStatus>, PgccError> {
        self.scope.release();
        self.inner.consent_statuses(pgcc_ids)
    }

    fn revoke_consent_request(&self, pgcc_id: &str) -> Result<(), PgccError> {
        self.scope.release();
        self.inner.revoke_consent_request(pgcc_id)
    }

    fn find_by_external_reference(
        &self,
        cnpj_empresa: &Cnpj,
        referencia_externa: Uuid,
    ) -> Result<Option<PgccConsentCreated>, PgccError> {
        self.scope.release();
        self.inner
            .find_by_external_reference(cnpj_empresa, referencia_externa)
    }
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
        let releasing = ReleasingPgcc::new(Arc::new(pgcc), Arc::new(scope));

        releasing.revoke_consent_request("pgcc-1").unwrap();
        releasing.consent_statuses(&["pgcc-1".to_owned()]).unwrap();

        assert_eq!(
            *order.lock().unwrap(),
            vec!["release", "revoke", "release", "statuses"]
        );
    }
}
