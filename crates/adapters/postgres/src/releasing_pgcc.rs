//! The other half of the request's connection scope: a request holds one connection while it
//! talks to the database, never while it waits on the PGCC, so a slow PGCC cannot drain the pool
//! for the other requests.

use std::sync::Arc;

use domain::{Cnpj, PgccUseCase};
use ports::{PgccConsentCreated, PgccConsentStatus, PgccError, PgccGateway, PgccNewConsent};
use uuid::Uuid;

use crate::PgConnectionScope;

/// A [`PgccGateway`] that gives this thread's scoped connection back to the pool (see
/// [`PgConnectionScope::release`]) before forwarding each call to `inner`. Outside a scope
/// (the background jobs) there is nothing to give back and it only forwards.
pub struct ReleasingPgcc {
    inner: Arc<dyn PgccGateway>,
}

impl ReleasingPgcc {
    pub fn new(inner: Arc<dyn PgccGateway>) -> Self {
        Self { inner }
    }
}

impl PgccGateway for ReleasingPgcc {
    fn list_use_cases(&self, company_cnpj: &Cnpj) -> Result<Vec<PgccUseCase>, PgccError> {
        PgConnectionScope.release();
        self.inner.list_use_cases(company_cnpj)
    }

    fn create_consent_request(
        &self,
        consent: &PgccNewConsent,
    ) -> Result<PgccConsentCreated, PgccError> {
        PgConnectionScope.release();
        self.inner.create_consent_request(consent)
    }

    fn consent_statuses(&self, pgcc_ids: &[String]) -> Result<Vec<PgccConsentStatus>, PgccError> {
        PgConnectionScope.release();
        self.inner.consent_statuses(pgcc_ids)
    }

    fn revoke_consent_request(&self, pgcc_id: &str) -> Result<(), PgccError> {
        PgConnectionScope.release();
        self.inner.revoke_consent_request(pgcc_id)
    }

    fn find_by_external_reference(
        &self,
        company_cnpj: &Cnpj,
        referencia_externa: Uuid,
    ) -> Result<Option<PgccConsentCreated>, PgccError> {
        PgConnectionScope.release();
        self.inner
            .find_by_external_reference(company_cnpj, referencia_externa)
    }
}
