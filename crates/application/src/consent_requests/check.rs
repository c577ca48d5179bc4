//! HashConsulta: "may I use this subject's data for this use case right now?", and the consent a
//! hash names. Both act on the caller's company only.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use domain::{Company, ConsentRequest, Cpf, ValidationErrors};
use ports::{AuditLogRepository, Clock, ConsentRequestRepository, RepoError};

/// The answer to a check: `request` is present exactly when `valido`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentCheck {
    pub valid: bool,
    /// The valid consent, its status the effective one (`ativo`).
    pub request: Option<ConsentRequest>,
}

#[derive(Debug, thiserror::Error)]
pub enum CheckConsentError {
    /// Broken field rules, by JSON field name; the repository was not asked.
    #[error(transparent)]
    Invalid(ValidationErrors),
    /// No consent of the company has this hash (or it is not a hash at all).
    #[error("no consent with this hash")]
    NotFound,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

/// Most items of one batch check.
pub const MAX_BATCH: usize = 500;

/// The subject's CPF and the template, both required and the CPF valid; field errors are named
/// `<prefix><field>` (`itens[3].cpfTitular` in a batch).
fn validate<'a>(
    subject_cpf: Option<&str>,
    template_id: Option<&'a str>,
    prefix: &str,
) -> Result<(Cpf, &'a str), ValidationErrors> {
    let mut errors = ValidationErrors::default();
    let prefixed = |name: &str| format!("{prefix}{name}");
    let cpf = match subject_cpf.filter(|raw| !raw.trim().is_empty()) {
        None => {
            errors.push(prefixed(field::SUBJECT_CPF), MSG_REQUIRED);
            None
        }
        Some(raw) => Cpf::parse(raw)
            .map_err(|e| errors.push(prefixed(field::SUBJECT_CPF), e.to_string()))
            .ok(),
    };
    let template = template_id.map(str::trim).filter(|t| !t.is_empty());
    let template = match template {
        None => {
            errors.push(prefixed(field::TEMPLATE_ID), MSG_REQUIRED);
            None
        }
        // PostgreSQL text cannot hold it: refused here rather than failing the lookup
        Some(t) if t.contains('\0') => {
            errors.push(prefixed(field::TEMPLATE_ID), domain::NUL_CHARACTER_MESSAGE);
            None
        }
        Some(t) => Some(t),
    };
    match (cpf, template) {
        (Some(cpf), Some(template)) => Ok((cpf, template)),
        _ => Err(errors),
    }
}

/// The JSON names of the check's fields, as reported in [`ValidationErrors`].
pub mod field {
    pub const SUBJECT_CPF: &str = "cpfTitular";
    pub const TEMPLATE_ID: &str = "casoDeUsoIdTemplate";
    /// The items of a batch check.
    pub const ITEMS: &str = "itens";
}

const MSG_REQUIRED: &str = "o campo é obrigatório";

#[derive(Clone)]
pub struct CheckConsent {
    consent_requests: Arc<dyn ConsentRequestRepository>,
    clock: Arc<dyn Clock>,
    /// Where integrity incidents are read: a request with one is never valid (the checks by
    /// subject leave it out in their query; the lookup by hash asks here).
    incidents: Option<Arc<dyn AuditLogRepository>>,
}

impl CheckConsent {
    pub fn new(consent_requests: Arc<dyn ConsentRequestRepository>, clock: Arc<dyn Clock>) -> Self {
        Self {
            consent_requests,
            clock,
            incidents: None,
        }
    }

    /// Reads integrity incidents from `log`: the consent a hash names is not valid while its
    /// request has one (docs/hash-consulta.md).
    pub fn with_incidents(mut self, log: Arc<dyn AuditLogRepository>) -> Self {
        self.incidents = Some(log);
        self
    }

    /// Whether the company holds a valid consent of this subject for this use case now.
    /// Both fields are required; a broken one is `Invalid` and the repository is not asked.
    pub fn check(
        &self,
        company: &Company,
        subject_cpf: Option<&str>,
        template_id: Option<&str>,
    ) -> Result<ConsentCheck, CheckConsentError> {
        let (cpf, template) =
            validate(subject_cpf, template_id, "").map_err(CheckConsentError::Invalid)?;
        self.find(company, &cpf, template)
    }

    /// [`CheckConsent::check`] for each of `items` (`(cpfTitular, casoDeUsoIdTemplate)`), in
    /// their order: 1 to [`MAX_BATCH`] items. Every item is validated before any is looked up;
    /// a broken field is reported as `itens[<index>].<field>` (the batch as `itens`), and then
    /// nothing is asked.
    pub fn check_batch(
        &self,
        company: &Company,
        items: &[(Option<&str>, Option<&str>)],
    ) -> Result<Vec<ConsentCheck>, CheckConsentError> {
        if items.is_empty() || items.len() > MAX_BATCH {
            return Err(CheckConsentError::Invalid(ValidationErrors::single(
                field::ITEMS,
                format!("deve ter de 1 a {MAX_BATCH} itens"),
            )));
        }
        let mut errors = ValidationErrors::default();
        let mut valid = Vec::with_capacity(items.len());
        for (index, (cpf, template)) in items.iter().enumerate() {
            match validate(*cpf, *template, &format!("{}[{index}].", field::ITEMS)) {
                Ok(checked) => valid.push(checked),
                Err(broken) => broken
                    .fields()
                    .iter()
                    .for_each(|f| errors.push(f.field.clone(), f.message.clone())),
            }
        }
        if !errors.is_empty() {
            return Err(CheckConsentError::Invalid(errors));
        }
        // one statement for the whole batch (one round trip, one statement timeout)
        let now = self.clock.now();
        let subjects: Vec<(Cpf, String)> = valid
            .into_iter()
            .map(|(cpf, template)| (cpf, template.to_owned()))
            .collect();
        let found = self
            .consent_requests
            .find_valid_many(company.id, &subjects, now)?;
        if found.len() != subjects.len() {
            return Err(CheckConsentError::Repo(RepoError::Unexpected(
                anyhow::anyhow!(
                    "a batch check answered {} results for {} items",
                    found.len(),
                    subjects.len()
                ),
            )));
        }
        Ok(found
            .into_iter()
            .map(|request| checked(request, now))
            .collect())
    }

    fn find(
        &self,
        company: &Company,
        cpf: &Cpf,
        template: &str,
    ) -> Result<ConsentCheck, CheckConsentError> {
        let now = self.clock.now();
        let found = self
            .consent_requests
            .find_valid(company.id, cpf, template, now)?;
        Ok(checked(found, now))
    }

    /// The company's consent with `hash`, its status the effective one now. A `hash` that is not
    /// 64 lower-case hex characters names nothing: `NotFound`, without asking the repository.
    pub fn by_hash(
        &self,
        company: &Company,
        hash: &str,
    ) -> Result<ConsentCheck, CheckConsentError> {
        if !looks_like_consent_hash(hash) {
            return Err(CheckConsentError::NotFound);
        }
        let mut request = self
            .consent_requests
            .find_by_hash(company.id, hash)?
            .ok_or(CheckConsentError::NotFound)?;
        request.status = request.effective_status(self.clock.now());
        let mut valid = request.status == domain::ConsentStatus::Active;
        if valid {
            if let Some(log) = &self.incidents {
                valid = log.integrity_incident(company.id, request.id)?.is_none();
            }
        }
        Ok(ConsentCheck {
            valid,
            request: Some(request),
        })
    }
}

/// The answer for what the repository found: it promises a valid one; checked again so that a
/// lax adapter can never make us answer "valid" for an expired or revoked consent.
fn checked(found: Option<ConsentRequest>, now: DateTime<Utc>) -> ConsentCheck {
    let request = found.filter(|r| r.is_valid_at(now)).map(|mut r| {
        r.status = r.effective_status(now);
        r
    });
    ConsentCheck {
        valid: request.is_some(),
        request,
    }
}

/// Whether `raw` has the shape of a consent hash: 64 lower-case hex characters.
pub fn looks_like_consent_hash(raw: &str) -> bool {
    raw.len() == 64 && raw.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use chrono::{DateTime, Duration, Utc};
    use domain::ConsentStatus;
    use ports::MockConsentRequestRepository;
    use uuid::Uuid;

    use super::*;
    use crate::test_support::{company, consent_request, fixed_clock, now, VALID_CPF};

    fn active() -> ConsentRequest {
        consent_request(Uuid::from_u128(0xc0), ConsentStatus::Active)
    }

    type FindValidCall = (Cpf, String, DateTime<Utc>);

    fn find_valid_answering(
        answer: Option<ConsentRequest>,
        calls: Arc<Mutex<Vec<FindValidCall>>>,
    ) -> MockConsentRequestRepository {
        let company_id = company().id;
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests
            .expect_find_valid()
            .withf(move |company, _, _, _| *company == company_id)
            .times(1)
            .returning(move |_, cpf, template, now| {
                calls
                    .lock()
                    .unwrap()
                    .push((cpf.clone(), template.to_owned(), now));
                Ok(answer.clone())
            });
        consent_requests.expect_find_by_hash().times(0);
        consent_requests
    }

    fn untouched_repository() -> MockConsentRequestRepository {
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests.expect_find_valid().times(0);
        consent_requests.expect_find_by_hash().times(0);
        consent_requests
    }

    fn service(consent_requests: MockConsentRequestRepository) -> CheckConsent {
        CheckConsent::new(Arc::new(consent_requests), fixed_clock())
    }

    #[test]
    fn a_batch_never_answers_valid_for_what_a_lax_repository_returns_expired_nor_a_short_answer() {
        let mut expired = active();
        expired.content.consent_expires_at = now();
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests
            .expect_find_valid_many()
            .times(1)
            .returning(move |_, _, _| Ok(vec![Some(expired.clone())]));
        let answers = service(consent_requests)
            .check_batch(&company(), &[(Some(VALID_CPF), Some("t"))])
            .unwrap();
        assert!(!answers[0].valid);

        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests
            .expect_find_valid_many()
            .returning(|_, _, _| Ok(Vec::new()));
        let short =
            service(consent_requests).check_batch(&company(), &[(Some(VALID_CPF), Some("t"))]);
        assert!(matches!(short, Err(CheckConsentError::Repo(_))));
    }

    #[test]
    fn a_batch_names_each_broken_field_by_its_index_and_asks_nothing() {
        let items = [
            (Some(VALID_CPF), Some("tpl-1")),
            (Some("111.111.111-11"), Some("tpl-1")),
            (Some(VALID_CPF), None),
        ];
        let Err(CheckConsentError::Invalid(errors)) =
            service(untouched_repository()).check_batch(&company(), &items)
        else {
            panic!("not invalid");
        };
        let fields: Vec<&str> = errors.fields().iter().map(|f| f.field.as_str()).collect();
        assert_eq!(
            fields,
            ["itens[1].cpfTitular", "itens[2].casoDeUsoIdTemplate"]
        );
    }

    #[test]
    fn a_batch_answers_each_item_in_order_and_holds_1_to_500_items() {
        let mut consent_requests = MockConsentRequestRepository::new();
        // one repository call for the whole batch, the pairs in order
        consent_requests
            .expect_find_valid_many()
            .withf(|_, subjects, _| {
                subjects
                    .iter()
                    .map(|(cpf, t)| (cpf.as_str(), t.as_str()))
                    .eq([("52998224725", "tpl-nenhum"), ("52998224725", "tpl-ativo")])
            })
            .times(1)
            .returning(|_, subjects, _| {
                Ok(subjects
                    .iter()
                    .map(|(_, t)| (t == "tpl-ativo").then(active))
                    .collect())
            });
        let answers = service(consent_requests)
            .check_batch(
                &company(),
                &[
                    (Some(VALID_CPF), Some("tpl-nenhum")),
                    (Some(VALID_CPF), Some("tpl-ativo")),
                ],
            )
            .unwrap();
        assert_eq!(
            answers.iter().map(|a| a.valid).collect::<Vec<_>>(),
            [false, true]
        );

        for items in [
            Vec::new(),
            vec![(Some(VALID_CPF), Some("t")); MAX_BATCH + 1],
        ] {
            let result = service(untouched_repository()).check_batch(&company(), &items);
            assert!(
                matches!(&result, Err(CheckConsentError::Invalid(e)) if e.fields()[0].field == "itens"),
                "{} items",
                items.len()
            );
        }
    }

    fn invalid(result: Result<ConsentCheck, CheckConsentError>) -> Vec<(String, String)> {
        match result {
            Err(CheckConsentError::Invalid(errors)) => errors
                .fields()
                .iter()
                .map(|f| (f.field.clone(), f.message.clone()))
                .collect(),
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    // --- check ---

    #[test]
    fn a_valid_consent_is_answered_valid_with_the_request() {
        let calls = Arc::new(Mutex::new(Vec::new()));

        let answer = service(find_valid_answering(Some(active()), calls.clone()))
            .check(&company(), Some("529.982.247-25"), Some(" tpl-credito "))
            .unwrap();

        assert_eq!(
            answer,
            ConsentCheck {
                valid: true,
                request: Some(active())
            }
        );
        assert_eq!(
            *calls.lock().unwrap(),
            vec![(
                Cpf::parse(VALID_CPF).unwrap(),
                "tpl-credito".to_owned(),
                now()
            )]
        );
    }

    #[test]
    fn no_valid_consent_is_answered_not_valid_without_a_request() {
        let answer = service(find_valid_answering(None, Arc::new(Mutex::new(Vec::new()))))
            .check(&company(), Some(VALID_CPF), Some("tpl-credito"))
            .unwrap();

        assert_eq!(
            answer,
            ConsentCheck {
                valid: false,
                request: None
            }
        );
    }

    #[test]
    fn an_expired_or_revoked_consent_from_a_lax_repository_is_answered_not_valid() {
        let mut expired = active();
        expired.content.consent_expires_at = now();
        let revoked = consent_request(Uuid::from_u128(0xc1), ConsentStatus::Revoked);
        for wrong in [expired, revoked] {
            let answer = service(find_valid_answering(
                Some(wrong),
                Arc::new(Mutex::new(Vec::new())),
            ))
            .check(&company(), Some(VALID_CPF), Some("tpl-credito"))
            .unwrap();

            assert_eq!(
                answer,
                ConsentCheck {
                    valid: false,
                    request: None
                }
            );
        }
    }

    #[test]
    fn a_missing_or_blank_cpf_and_template_are_both_required() {
        for (cpf, template) in [(None, None), (Some(""), Some("  "))] {
            let result = service(untouched_repository()).check(&company(), cpf, template);

            assert_eq!(
                invalid(result),
                [
                    ("cpfTitular".to_owned(), "o campo é obrigatório".to_owned()),
                    (
                        "casoDeUsoIdTemplate".to_owned(),
                        "o campo é obrigatório".to_owned()
                    ),
                ]
            );
        }
    }

    #[test]
    fn a_template_with_a_nul_character_is_refused_and_the_repository_is_not_asked() {
        let result = service(untouched_repository()).check(
            &company(),
            Some("529.982.247-25"),
            Some("tpl\0x"),
        );

        assert_eq!(
            invalid(result),
            [(
                "casoDeUsoIdTemplate".to_owned(),
                domain::NUL_CHARACTER_MESSAGE.to_owned()
            )]
        );
    }

    #[test]
    fn an_invalid_cpf_is_reported_with_the_cpf_message_and_the_repository_is_not_asked() {
        let result =
            service(untouched_repository()).check(&company(), Some("52998224724"), Some("tpl"));

        assert_eq!(
            invalid(result),
            [(
                "cpfTitular".to_owned(),
                domain::CpfError::CheckDigits.to_string()
            )]
        );
    }

    #[test]
    fn a_missing_template_alone_is_reported_and_the_repository_is_not_asked() {
        let result = service(untouched_repository()).check(&company(), Some(VALID_CPF), None);

        assert_eq!(
            invalid(result),
            [(
                "casoDeUsoIdTemplate".to_owned(),
                "o campo é obrigatório".to_owned()
            )]
        );
    }

    #[test]
    fn a_failing_repository_during_a_check_is_a_repository_error() {
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests
            .expect_find_valid()
            .times(1)
            .returning(|_, _, _, _| Err(RepoError::Unavailable(anyhow::anyhow!("timeout"))));

        let result = service(consent_requests).check(&company(), Some(VALID_CPF), Some("tpl"));

        assert!(
            matches!(
                result,
                Err(CheckConsentError::Repo(RepoError::Unavailable(_)))
            ),
            "{result:?}"
        );
    }

    // --- by_hash ---

    fn find_by_hash_answering(
        hash: String,
        answer: Option<ConsentRequest>,
    ) -> MockConsentRequestRepository {
        let company_id = company().id;
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests
            .expect_find_by_hash()
            .withf(move |company, h| *company == company_id && h == hash)
            .times(1)
            .returning(move |_, _| Ok(answer.clone()));
        consent_requests.expect_find_valid().times(0);
        consent_requests
    }

    #[test]
    fn a_known_hash_returns_the_companys_consent() {
        let request = active();

        let found = service(find_by_hash_answering(
            request.hash.clone(),
            Some(request.clone()),
        ))
        .by_hash(&company(), &request.hash)
        .unwrap();

        assert_eq!(found.request, Some(request));
        assert!(found.valid);
    }

    #[test]
    fn a_consent_found_by_hash_with_an_integrity_incident_is_not_valid() {
        let request = active();
        let mut log = ports::MockAuditLogRepository::new();
        let id = request.id;
        log.expect_integrity_incident()
            .withf(move |_, r| *r == id)
            .times(1)
            .returning(move |_, _| {
                Ok(Some(ports::IntegrityIncident {
                    request: id,
                    pgcc_id: "pgcc".to_owned(),
                    not_found_since: now(),
                    recorded_at: now(),
                }))
            });
        let found = service(find_by_hash_answering(
            request.hash.clone(),
            Some(request.clone()),
        ))
        .with_incidents(Arc::new(log))
        .by_hash(&company(), &request.hash)
        .unwrap();

        assert!(!found.valid);
        assert_eq!(found.request.unwrap().status, ConsentStatus::Active);
    }

    #[test]
    fn a_consent_found_by_hash_past_its_expiry_is_reported_expired() {
        let mut request = active();
        request.content.consent_expires_at = now() - Duration::days(1);

        let found = service(find_by_hash_answering(
            request.hash.clone(),
            Some(request.clone()),
        ))
        .by_hash(&company(), &request.hash)
        .unwrap();

        assert!(!found.valid);
        let found = found.request.unwrap();
        assert_eq!(found.status, ConsentStatus::Expired);
        assert_eq!(found.id, request.id);
    }

    #[test]
    fn an_unknown_or_another_companys_hash_is_not_found() {
        let hash = "a".repeat(64);

        let result = service(find_by_hash_answering(hash.clone(), None)).by_hash(&company(), &hash);

        assert!(
            matches!(result, Err(CheckConsentError::NotFound)),
            "{result:?}"
        );
    }

    #[test]
    fn a_text_that_is_not_a_hash_is_not_found_without_asking_the_repository() {
        let upper = active().hash.to_uppercase();
        let short = "a".repeat(63);
        let long = "a".repeat(65);
        let non_hex = format!("{}g", "a".repeat(63));
        let non_ascii = format!("{}é", "a".repeat(62));
        for raw in ["", upper.as_str(), &short, &long, &non_hex, &non_ascii] {
            let result = service(untouched_repository()).by_hash(&company(), raw);

            assert!(
                matches!(result, Err(CheckConsentError::NotFound)),
                "{raw:?}: {result:?}"
            );
        }
    }

    #[test]
    fn a_failing_repository_during_a_hash_lookup_is_a_repository_error() {
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests
            .expect_find_by_hash()
            .times(1)
            .returning(|_, _| Err(RepoError::Unexpected(anyhow::anyhow!("boom"))));

        let result = service(consent_requests).by_hash(&company(), &"0".repeat(64));

        assert!(
            matches!(
                result,
                Err(CheckConsentError::Repo(RepoError::Unexpected(_)))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn looks_like_consent_hash_accepts_only_64_lower_case_hex_characters() {
        assert!(looks_like_consent_hash(&active().hash));
        assert!(looks_like_consent_hash(&"0123456789abcdef".repeat(4)));
        assert!(!looks_like_consent_hash(&"0123456789ABCDEF".repeat(4)));
        assert!(!looks_like_consent_hash(&"0".repeat(40)));
    }
}
