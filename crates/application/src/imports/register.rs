//! Registering the staged lines (docs/imports.md, "Registration"): one line per company in
//! turn (round-robin: one company's import never delays another's), each taking a call from the
//! imports' own PGCC budget (`importacao.pgcc_calls_per_second`, shared by every process, apart
//! from the status checks' and never taken by a live creation), each through the creation's own
//! function ([`CreateConsentRequest::execute_with_id`]: the same transaction, event and log
//! entry as `criar/ativo`) under the id fixed at staging.
//!
//! Exactly once: a line is claimed with a lease; a worker killed mid-line leaves it claimed
//! until the lease ends, and whoever claims it next creates it under the same id, which the
//! creation resumes (confirmed: no PGCC call; in progress: sent again under the same
//! `referenciaExterna`, which the PGCC answers with the consent it holds).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use domain::consent_request::field;
use domain::import::import_field;
use domain::{Company, ConsentStatus, CreationVariant, Reason, TransitionCause};
use ports::{
    ClaimedLine, Clock, CompanyRepository, ConsentRequestRepository, ImportRepository, LineOutcome,
    PgccCallBudget, PgccError, PgccGateway, RepoError,
};

use crate::{CreateConsentError, CreateConsentRequest};

/// Lines of a cancelled import cleared per statement: a statement of a few tens of
/// milliseconds, far inside the statement timeout.
const CLEAR_BATCH: u32 = 5_000;

/// What one round did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportRoundReport {
    pub registered: u32,
    pub failed: u32,
    /// Lines left claimed for a later try (the PGCC unavailable).
    pub retried: u32,
    /// The budget was spent: the next call is in about this long.
    pub throttled: Option<Duration>,
    /// Whether any company still had a line when the round ended.
    pub more: bool,
}

#[derive(Clone)]
pub struct RegisterImports {
    imports: Arc<dyn ImportRepository>,
    companies: Arc<dyn CompanyRepository>,
    create: CreateConsentRequest,
    /// A `pgccId` line's status call (the status worker's client) and its status afterwards.
    pgcc: Arc<dyn PgccGateway>,
    consent_requests: Arc<dyn ConsentRequestRepository>,
    budget: Arc<dyn PgccCallBudget>,
    clock: Arc<dyn Clock>,
    lease: chrono::Duration,
    turn: Arc<AtomicUsize>,
    evidence: Option<crate::EvidenceFiles>,
}

impl RegisterImports {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        imports: Arc<dyn ImportRepository>,
        companies: Arc<dyn CompanyRepository>,
        create: CreateConsentRequest,
        pgcc: Arc<dyn PgccGateway>,
        consent_requests: Arc<dyn ConsentRequestRepository>,
        budget: Arc<dyn PgccCallBudget>,
        clock: Arc<dyn Clock>,
        lease: chrono::Duration,
    ) -> Self {
        Self {
            imports,
            companies,
            create,
            pgcc,
            consent_requests,
            budget,
            clock,
            lease,
            turn: Arc::new(AtomicUsize::new(0)),
            evidence: None,
        }
    }

    /// Registration that links each line's evidence files to the request it created.
    pub fn with_evidence(mut self, evidence: crate::EvidenceFiles) -> Self {
        self.evidence = Some(evidence);
        self
    }

    /// Links the line's evidence files to its request, each with its log entry; a file linked
    /// already (the line taken over after a crash) writes nothing. A file whose bytes retention
    /// deleted since the line was staged is logged and left out: the consent stands.
    fn link_files(&self, line: &ClaimedLine) -> Result<(), RepoError> {
        let Some(evidence) = &self.evidence else {
            return Ok(());
        };
        for hash in &line.evidence_sha256 {
            let linked = evidence.link(line.company_id, line.request_id, hash)?;
            if matches!(
                linked,
                domain::EvidenceLink::NoFile | domain::EvidenceLink::NoRequest
            ) {
                tracing::warn!(
                    empresa_id = %line.company_id,
                    importacao_id = %line.import_id,
                    linha = line.line,
                    "an imported line's evidence file could not be linked: {linked:?}"
                );
            }
        }
        Ok(())
    }

    /// One turn over the companies importing: at most one line each, while the budget lasts.
    pub fn run_round(&self) -> Result<ImportRoundReport, RepoError> {
        let mut report = ImportRoundReport::default();
        let mut companies = self.imports.companies_registering()?;
        if companies.is_empty() {
            return Ok(report);
        }
        // the next round starts one company further: no company always goes first
        let start = self.turn.fetch_add(1, Ordering::Relaxed) % companies.len();
        companies.rotate_left(start);
        for company in companies {
            let now = self.clock.now();
            if let Some(wait) = self.budget.try_take(now)? {
                report.throttled = Some(wait);
                report.more = true;
                return Ok(report);
            }
            let Some(line) = self.imports.claim_line(company, now, now + self.lease)? else {
                continue;
            };
            report.more = true;
            match self.register(&line)? {
                Some(outcome) => {
                    match outcome {
                        LineOutcome::Registered => report.registered += 1,
                        LineOutcome::Failed { .. } => report.failed += 1,
                    }
                    self.imports
                        .settle_line(&line, &outcome, self.clock.now())?;
                }
                None => report.retried += 1,
            }
        }
        Ok(report)
    }

    /// Clears a batch of a cancelled import's lines (their data dropped; docs/imports.md,
    /// "Cancelling"): the number cleared, 0 when no cancelled import has any left.
    pub fn clear_cancelled(&self) -> Result<u64, RepoError> {
        self.imports
            .clear_cancelled_lines(self.clock.now(), CLEAR_BATCH)
    }

    /// The line's creation; `None`: the PGCC did not answer for good, the line stays claimed
    /// until its lease ends and is tried again then.
    fn register(&self, line: &ClaimedLine) -> Result<Option<LineOutcome>, RepoError> {
        let Some(company) = self.companies.get(line.company_id)? else {
            return Ok(Some(LineOutcome::Failed {
                field: import_field::LINE.to_owned(),
                message: "empresa desconhecida".to_owned(),
            }));
        };
        if let Some(pgcc_id) = &line.pgcc_id {
            return self.record_held(&company, line, pgcc_id);
        }
        let created = self.create.execute_with_id(
            &company,
            line.draft.clone(),
            line.variant,
            line.request_id,
        );
        self.outcome(line, created.map(|_| ()))
    }

    /// A `pgccId` line (docs/imports.md, "Consents already on the PGCC"): the PGCC's status
    /// call (this line's call of the imports' budget, taken by the round) says whether it holds
    /// the consent for this company and in which status; the consent is then stored as held,
    /// never created again on the PGCC, and moved to the PGCC's status as the status worker
    /// would move it (cause `pgcc`), so its log is a lawful chain: creation, then the PGCC's word.
    fn record_held(
        &self,
        company: &Company,
        line: &ClaimedLine,
        pgcc_id: &str,
    ) -> Result<Option<LineOutcome>, RepoError> {
        // a consent the company holds already (created live, or imported under another
        // idExterno) is not stored twice; its own request (a line claimed again) goes on
        if let Some(held) = self.held_by_another(company, line, pgcc_id)? {
            return Ok(Some(held));
        }
        let answer = match self.pgcc.consent_statuses(&[pgcc_id.to_owned()]) {
            Ok(answer) => answer,
            Err(PgccError::Rejected { status }) => {
                return Ok(Some(failed(
                    import_field::PGCC_ID,
                    format!("o PGCC recusou a consulta de status (HTTP {status})"),
                )));
            }
            Err(error) => {
                tracing::warn!(
                    empresa_id = %line.company_id,
                    importacao_id = %line.import_id,
                    linha = line.line,
                    error = %error,
                    "an imported line's status call failed: tried again after its lease"
                );
                return Ok(None);
            }
        };
        // Unknown to the PGCC and another company's are one answer: a company cannot learn
        // from an import whether an id it does not hold exists elsewhere.
        let Some(held) = answer
            .into_iter()
            .find(|s| s.pgcc_id == pgcc_id)
            .filter(|s| {
                s.company_cnpj
                    .as_deref()
                    .is_some_and(|c| same_cnpj(c, company.cnpj.as_str()))
            })
        else {
            return Ok(Some(failed(
                import_field::PGCC_ID,
                "o PGCC não tem esta solicitação para a empresa".to_owned(),
            )));
        };
        let Some(status) = held.status else {
            return Ok(Some(failed(
                import_field::PGCC_ID,
                "o PGCC informa um status que o serviço não conhece".to_owned(),
            )));
        };
        let created = match line.variant {
            CreationVariant::Active => ConsentStatus::Active,
            CreationVariant::Pending => ConsentStatus::Pending,
        };
        if status != created && !ConsentStatus::allows_move(Some(created), status) {
            return Ok(Some(failed(
                import_field::PGCC_ID,
                format!(
                    "o PGCC informa o status {}, que não segue de uma solicitação {} como a linha a descreve",
                    status.as_str(),
                    created.as_str()
                ),
            )));
        }
        let recorded = self.create.record_held(
            company,
            line.draft.clone(),
            line.variant,
            line.request_id,
            pgcc_id,
        );
        // Two lines naming the same PGCC consent claimed at the same moment (two workers; two
        // imports of the company, or lines a file staged before the once-per-file check) both
        // pass the probe above; the company's unique (empresa_id, pgcc_id) refuses the second
        // confirmation. That is the line's error: retried, it would fail after every lease.
        // (Its row, left `em_andamento`, is the reconciler's: the PGCC holds nothing under its
        // id, so it is cancelled after the not-found window, as any unfinished creation.)
        let recorded = match recorded {
            Err(CreateConsentError::Repo(error)) => {
                match self.held_by_another(company, line, pgcc_id)? {
                    Some(held) => return Ok(Some(held)),
                    None => Err(CreateConsentError::Repo(error)),
                }
            }
            other => other,
        };
        if recorded.is_ok() && status != created {
            // `false`: moved already (an earlier attempt, or the status worker)
            self.consent_requests.transition(
                company.id,
                line.request_id,
                created,
                status,
                TransitionCause::Pgcc,
                Reason::from_pgcc(held.reason.as_deref()),
                self.clock.now(),
            )?;
        }
        self.outcome(line, recorded.map(|_| ()))
    }

    /// The line error of a `pgccId` line whose consent the company holds already under another
    /// request (created live, imported under another `idExterno`, or by another line registered
    /// at the same moment); `None` when nobody or the line's own request (claimed again) holds
    /// it. One probe of the unique index `(empresa_id, pgcc_id)`.
    fn held_by_another(
        &self,
        company: &Company,
        line: &ClaimedLine,
        pgcc_id: &str,
    ) -> Result<Option<LineOutcome>, RepoError> {
        Ok(self
            .imports
            .request_holding(company.id, pgcc_id)?
            .filter(|holder| *holder != line.request_id)
            .map(|holder| {
                failed(
                    import_field::PGCC_ID,
                    format!("a empresa já tem esta solicitação do PGCC (solicitação {holder})"),
                )
            }))
    }

    /// A creation's (or a held consent's recording's) result as the line's outcome.
    fn outcome(
        &self,
        line: &ClaimedLine,
        created: Result<(), CreateConsentError>,
    ) -> Result<Option<LineOutcome>, RepoError> {
        match created {
            Ok(()) => {
                self.link_files(line)?;
                Ok(Some(LineOutcome::Registered))
            }
            // e.g. the expiry passed between validation and registration, or the use case was
            // removed since
            Err(CreateConsentError::Invalid(errors)) => {
                let first = errors.0.into_iter().next();
                Ok(Some(LineOutcome::Failed {
                    field: first
                        .as_ref()
                        .map_or(field::TEMPLATE_ID.to_owned(), |e| e.field.clone()),
                    message: first.map_or_else(String::new, |e| e.message),
                }))
            }
            Err(CreateConsentError::Pgcc(PgccError::Rejected { status })) => {
                Ok(Some(LineOutcome::Failed {
                    field: import_field::LINE.to_owned(),
                    message: format!("o PGCC recusou a solicitação (HTTP {status})"),
                }))
            }
            Err(CreateConsentError::Pgcc(error)) => {
                tracing::warn!(
                    empresa_id = %line.company_id,
                    importacao_id = %line.import_id,
                    linha = line.line,
                    error = %error,
                    "an imported line was not registered: tried again after its lease"
                );
                Ok(None)
            }
            Err(CreateConsentError::Repo(e)) => Err(e),
        }
    }
}

fn failed(field: &str, message: String) -> LineOutcome {
    LineOutcome::Failed {
        field: field.to_owned(),
        message,
    }
}

/// The same CNPJ, masked or not.
fn same_cnpj(a: &str, b: &str) -> bool {
    let digits = |s: &str| {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
    };
    digits(a).eq_ignore_ascii_case(&digits(b))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use domain::{CompanyId, ConsentRequestDraft, CreationVariant};
    use ports::{
        MockCompanyRepository, MockConsentRequestRepository, MockImportRepository,
        MockPgccCallBudget, MockPgccGateway,
    };
    use uuid::Uuid;

    use super::*;
    use crate::test_support::fixed_clock;

    fn company(n: u128) -> CompanyId {
        CompanyId(Uuid::from_u128(n))
    }

    /// A line already on the PGCC (`pgccId`) the PGCC does not hold: settled as a line error
    /// without a creation, so the round's order can be watched without the creation's ports.
    fn line_of(company: CompanyId) -> ClaimedLine {
        ClaimedLine {
            evidence_sha256: Vec::new(),
            company_id: company,
            import_id: Uuid::from_u128(7),
            line: 1,
            request_id: Uuid::new_v4(),
            variant: CreationVariant::Active,
            pgcc_id: Some("pgcc-1".to_owned()),
            draft: ConsentRequestDraft::default(),
        }
    }

    fn service(imports: MockImportRepository, budget: MockPgccCallBudget) -> RegisterImports {
        let clock = fixed_clock();
        let mut companies = MockCompanyRepository::new();
        companies.expect_get().returning(|id| {
            Ok(Some(Company {
                id,
                ..crate::test_support::company()
            }))
        });
        // a PGCC that holds none of the lines' ids: each a line error, no creation
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_consent_statuses().returning(|_| Ok(Vec::new()));
        RegisterImports::new(
            Arc::new(imports),
            Arc::new(companies),
            CreateConsentRequest::new(
                Arc::new(MockPgccGateway::new()),
                Arc::new(MockConsentRequestRepository::new()),
                clock.clone(),
            ),
            Arc::new(pgcc),
            Arc::new(MockConsentRequestRepository::new()),
            Arc::new(budget),
            clock,
            chrono::Duration::minutes(2),
        )
    }

    #[test]
    fn each_round_takes_one_line_per_company_starting_one_company_further() {
        let claimed = Arc::new(Mutex::new(Vec::new()));
        let mut imports = MockImportRepository::new();
        imports
            .expect_companies_registering()
            .returning(|| Ok(vec![company(1), company(2), company(3)]));
        let seen = claimed.clone();
        imports.expect_claim_line().returning(move |c, _, _| {
            seen.lock().unwrap().push(c);
            Ok(Some(line_of(c)))
        });
        imports.expect_settle_line().returning(|_, _, _| Ok(()));
        imports.expect_request_holding().returning(|_, _| Ok(None));
        let mut budget = MockPgccCallBudget::new();
        budget.expect_try_take().returning(|_| Ok(None));
        let register = service(imports, budget);

        let first = register.run_round().unwrap();
        register.run_round().unwrap();

        assert_eq!(
            first.failed, 3,
            "ids the PGCC does not hold are line errors"
        );
        assert!(first.more);
        assert_eq!(
            *claimed.lock().unwrap(),
            [
                company(1),
                company(2),
                company(3),
                company(2),
                company(3),
                company(1)
            ]
        );
    }

    /// Two lines of one file with the same `pgccId`, claimed at the same moment: the other
    /// line's confirmation lands between this line's probe and its own, whose confirmation the
    /// unique `(empresa_id, pgcc_id)` refuses. The line ends as an error on `pgccId` naming the
    /// request that holds the consent, not as a failure retried after every lease.
    #[test]
    fn a_pgcc_id_confirmed_by_another_line_meanwhile_is_a_line_error_not_a_retry() {
        use ports::{CreationStart, PgccConsentStatus};

        let company = crate::test_support::company();
        let holder = Uuid::from_u128(0xb0b);
        let line = ClaimedLine {
            draft: ConsentRequestDraft {
                template_id: Some("tpl-credito".to_owned()),
                subject_cpf: Some(crate::test_support::VALID_CPF.to_owned()),
                access_mode: Some("Direto".to_owned()),
                subject_type: Some("PessoaFisica".to_owned()),
                consent_expires_at: Some(crate::test_support::now() + chrono::Duration::days(365)),
                ..ConsentRequestDraft::default()
            },
            variant: CreationVariant::Pending,
            ..line_of(company.id)
        };
        let probes = Arc::new(Mutex::new(0));
        let mut imports = MockImportRepository::new();
        let seen = probes.clone();
        // the first probe finds nobody; by the second, the other line's request holds it
        imports.expect_request_holding().returning(move |_, _| {
            let mut n = seen.lock().unwrap();
            *n += 1;
            Ok((*n > 1).then_some(holder))
        });
        let mut companies = MockCompanyRepository::new();
        let found = company.clone();
        companies
            .expect_get()
            .returning(move |_| Ok(Some(found.clone())));
        let mut pgcc = MockPgccGateway::new();
        let cnpj = company.cnpj.as_str().to_owned();
        pgcc.expect_consent_statuses().returning(move |ids| {
            Ok(vec![PgccConsentStatus {
                pgcc_id: ids[0].clone(),
                status: Some(ConsentStatus::Pending),
                reason: None,
                next_change_at: None,
                company_cnpj: Some(cnpj.clone()),
            }])
        });
        let mut requests = MockConsentRequestRepository::new();
        requests.expect_find_creation().returning(|_, _| Ok(None));
        requests
            .expect_begin_creation()
            .returning(|_, _| Ok(CreationStart::Started { link: None }));
        requests.expect_confirm_creation().returning(|_, _, _| {
            Err(RepoError::Unexpected(anyhow::anyhow!(
                "duplicate key value violates unique constraint \
                 \"solicitacoes_consentimento_empresa_pgcc_id_key\""
            )))
        });
        let clock = fixed_clock();
        let register = RegisterImports::new(
            Arc::new(imports),
            Arc::new(companies),
            CreateConsentRequest::new(
                Arc::new(MockPgccGateway::new()),
                Arc::new(requests),
                clock.clone(),
            ),
            Arc::new(pgcc),
            Arc::new(MockConsentRequestRepository::new()),
            Arc::new(MockPgccCallBudget::new()),
            clock,
            chrono::Duration::minutes(2),
        );

        let outcome = register.register(&line).unwrap();

        assert_eq!(
            outcome,
            Some(LineOutcome::Failed {
                field: "pgccId".to_owned(),
                message: format!(
                    "a empresa já tem esta solicitação do PGCC (solicitação {holder})"
                ),
            })
        );
        assert_eq!(*probes.lock().unwrap(), 2);
    }

    #[test]
    fn a_spent_budget_claims_nothing_and_says_when_to_come_back() {
        let mut imports = MockImportRepository::new();
        imports
            .expect_companies_registering()
            .returning(|| Ok(vec![company(1)]));
        imports.expect_claim_line().never();
        let mut budget = MockPgccCallBudget::new();
        budget
            .expect_try_take()
            .returning(|_| Ok(Some(Duration::from_millis(100))));
        let report = service(imports, budget).run_round().unwrap();
        assert_eq!(report.throttled, Some(Duration::from_millis(100)));
        assert!(report.more);
    }
}
