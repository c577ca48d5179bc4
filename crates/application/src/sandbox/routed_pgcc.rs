//! Every PGCC call goes to the real PGCC or, for a sandbox company, to the simulated one: the
//! choice follows the company's flag (`empresas.sandbox_de`), never the key's prefix.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use domain::{Cnpj, PgccUseCase};
use ports::{
    PgccConsentCreated, PgccConsentStatus, PgccError, PgccGateway, PgccNewConsent,
    SandboxRepository, SANDBOX_PGCC_ID_PREFIX,
};
use uuid::Uuid;

/// A [`PgccGateway`] that sends each call where its company's PGCC is. The calls naming the
/// company (use cases, creation, lookup by reference) ask whether its CNPJ is a sandbox's; the
/// calls carrying only PGCC ids (status, revocation) go by the id, which only the sandbox mints
/// with [`SANDBOX_PGCC_ID_PREFIX`], so a sandbox request never reaches the real PGCC and a real
/// one never the sandbox. The sandbox's calls count toward nothing of the real PGCC's (health,
/// metrics): `real` carries those decorators, `sandbox` none.
pub struct SandboxRoutedPgcc {
    real: Arc<dyn PgccGateway>,
    sandbox: Arc<dyn PgccGateway>,
    sandboxes: Arc<dyn SandboxRepository>,
    /// Each CNPJ's answer, once read: a company is made a sandbox or not and never changes, so
    /// the answer is kept and a call needs no database read after the company's first (a
    /// database down then fails the request's own writes, a 503, not its PGCC call, a 502).
    /// Bounded: emptied when it reaches [`KNOWN_CNPJS`].
    known: Mutex<HashMap<Cnpj, bool>>,
}

/// How many companies' answers [`SandboxRoutedPgcc`] keeps at most.
const KNOWN_CNPJS: usize = 100_000;

impl SandboxRoutedPgcc {
    pub fn new(
        real: Arc<dyn PgccGateway>,
        sandbox: Arc<dyn PgccGateway>,
        sandboxes: Arc<dyn SandboxRepository>,
    ) -> Self {
        Self {
            real,
            sandbox,
            sandboxes,
            known: Mutex::default(),
        }
    }

    /// The PGCC of the company of `cnpj`. Not knowing is a failure to call (the call is not
    /// made): a sandbox's call must never reach the real PGCC by default.
    fn of_company(&self, cnpj: &Cnpj) -> Result<&dyn PgccGateway, PgccError> {
        let known = self
            .known
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(cnpj)
            .copied();
        let is_sandbox = match known {
            Some(is_sandbox) => is_sandbox,
            None => {
                let is_sandbox = self.sandboxes.is_sandbox_cnpj(cnpj).map_err(|e| {
                    PgccError::Unexpected(
                        anyhow::Error::new(e).context("reading whether the company is a sandbox"),
                    )
                })?;
                let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
                if known.len() >= KNOWN_CNPJS {
                    known.clear();
                }
                known.insert(cnpj.clone(), is_sandbox);
                is_sandbox
            }
        };
        Ok(if is_sandbox {
            self.sandbox.as_ref()
        } else {
            self.real.as_ref()
        })
    }

    fn of_id(&self, pgcc_id: &str) -> &dyn PgccGateway {
        if pgcc_id.starts_with(SANDBOX_PGCC_ID_PREFIX) {
            self.sandbox.as_ref()
        } else {
            self.real.as_ref()
        }
    }
}

impl PgccGateway for SandboxRoutedPgcc {
    fn list_use_cases(&self, company_cnpj: &Cnpj) -> Result<Vec<PgccUseCase>, PgccError> {
        self.of_company(company_cnpj)?.list_use_cases(company_cnpj)
    }

    fn create_consent_request(
        &self,
        consent: &PgccNewConsent,
    ) -> Result<PgccConsentCreated, PgccError> {
        self.of_company(&consent.company_cnpj)?
            .create_consent_request(consent)
    }

    /// Split by id: the sandbox's answered in process, the rest in one call to the real PGCC
    /// (none when the batch is all the sandbox's).
    fn consent_statuses(&self, pgcc_ids: &[String]) -> Result<Vec<PgccConsentStatus>, PgccError> {
        let (sandbox, real): (Vec<String>, Vec<String>) = pgcc_ids
            .iter()
            .cloned()
            .partition(|id| id.starts_with(SANDBOX_PGCC_ID_PREFIX));
        let mut answers = if real.is_empty() {
            Vec::new()
        } else {
            self.real.consent_statuses(&real)?
        };
        if !sandbox.is_empty() {
            answers.extend(self.sandbox.consent_statuses(&sandbox)?);
        }
        Ok(answers)
    }

    fn revoke_consent_request(&self, pgcc_id: &str) -> Result<(), PgccError> {
        self.of_id(pgcc_id).revoke_consent_request(pgcc_id)
    }

    fn find_by_external_reference(
        &self,
        company_cnpj: &Cnpj,
        referencia_externa: Uuid,
    ) -> Result<Option<PgccConsentCreated>, PgccError> {
        self.of_company(company_cnpj)?
            .find_by_external_reference(company_cnpj, referencia_externa)
    }
}

#[cfg(test)]
mod tests {
    use ports::{MockPgccGateway, MockSandboxRepository};

    use super::*;

    fn cnpj() -> Cnpj {
        Cnpj::parse("11222333000181").unwrap()
    }

    fn routed(
        real: MockPgccGateway,
        sandbox: MockPgccGateway,
        is_sandbox: bool,
    ) -> SandboxRoutedPgcc {
        let mut sandboxes = MockSandboxRepository::new();
        sandboxes
            .expect_is_sandbox_cnpj()
            .returning(move |_| Ok(is_sandbox));
        SandboxRoutedPgcc::new(Arc::new(real), Arc::new(sandbox), Arc::new(sandboxes))
    }

    #[test]
    fn a_sandbox_companys_use_cases_come_from_the_sandbox_and_never_the_real_pgcc() {
        let mut sandbox = MockPgccGateway::new();
        sandbox
            .expect_list_use_cases()
            .times(1)
            .returning(|_| Ok(vec![]));
        let routed = routed(MockPgccGateway::new(), sandbox, true);
        assert!(routed.list_use_cases(&cnpj()).unwrap().is_empty());
    }

    #[test]
    fn a_companys_answer_is_read_once_and_a_database_down_later_does_not_fail_its_calls() {
        let mut real = MockPgccGateway::new();
        real.expect_list_use_cases()
            .times(2)
            .returning(|_| Ok(vec![]));
        let mut sandboxes = MockSandboxRepository::new();
        sandboxes
            .expect_is_sandbox_cnpj()
            .times(1)
            .returning(|_| Ok(false));
        let routed = SandboxRoutedPgcc::new(
            Arc::new(real),
            Arc::new(MockPgccGateway::new()),
            Arc::new(sandboxes),
        );
        routed.list_use_cases(&cnpj()).unwrap();
        routed.list_use_cases(&cnpj()).unwrap();
    }

    #[test]
    fn not_knowing_whether_a_company_is_a_sandbox_makes_no_call() {
        let mut sandboxes = MockSandboxRepository::new();
        sandboxes
            .expect_is_sandbox_cnpj()
            .returning(|_| Err(ports::RepoError::Unavailable(anyhow::anyhow!("down"))));
        let routed = SandboxRoutedPgcc::new(
            Arc::new(MockPgccGateway::new()),
            Arc::new(MockPgccGateway::new()),
            Arc::new(sandboxes),
        );
        assert!(matches!(
            routed.list_use_cases(&cnpj()),
            Err(PgccError::Unexpected(_))
        ));
    }

    #[test]
    fn a_real_companys_use_cases_come_from_the_real_pgcc() {
        let mut real = MockPgccGateway::new();
        real.expect_list_use_cases()
            .times(1)
            .returning(|_| Ok(vec![]));
        let routed = routed(real, MockPgccGateway::new(), false);
        assert!(routed.list_use_cases(&cnpj()).unwrap().is_empty());
    }

    #[test]
    fn a_status_batch_is_split_by_id_and_the_real_pgcc_gets_only_its_own_ids() {
        let mut real = MockPgccGateway::new();
        real.expect_consent_statuses()
            .withf(|ids| ids == ["pgcc-1".to_owned()])
            .times(1)
            .returning(|_| Ok(vec![]));
        let mut sandbox = MockPgccGateway::new();
        sandbox
            .expect_consent_statuses()
            .withf(|ids| ids == ["sandbox-qa-1-2-x".to_owned()])
            .times(1)
            .returning(|_| Ok(vec![]));
        let routed = routed(real, sandbox, false);
        routed
            .consent_statuses(&["pgcc-1".to_owned(), "sandbox-qa-1-2-x".to_owned()])
            .unwrap();
    }

    #[test]
    fn an_all_sandbox_batch_makes_no_real_call() {
        let mut sandbox = MockPgccGateway::new();
        sandbox
            .expect_consent_statuses()
            .times(1)
            .returning(|_| Ok(vec![]));
        let routed = routed(MockPgccGateway::new(), sandbox, false);
        routed
            .consent_statuses(&["sandbox-qa-1-2-x".to_owned()])
            .unwrap();
    }
}
