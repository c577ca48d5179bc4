//! Creating a consent request (`criar/ativo`, `criar/pendente`): validated here, then created in
//! two phases so that no consent is lost or duplicated between the PGCC and us (docs/decisions.md,
//! "No consent lost or duplicated"):
//!
//! 1. our row is stored `em_andamento` (invisible to every read), its id being the PGCC's
//!    `referenciaExterna`;
//! 2. the PGCC is asked to create it; its success confirms the row (PGCC id, creation history and
//!    `solicitacao.criada` event in one transaction), its final refusal (a 4xx other than 408, 425
//!    and 429) cancels it, and anything else (a timeout, "try later" (408/425/429), 5xx,
//!    unreachable PGCC) leaves it for the reconciler ([`crate::ReconcileCreations`]), which asks
//!    the PGCC by external reference.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use domain::{
    Company, ConsentEvent, ConsentRequest, ConsentRequestDraft, ConsentStatus, CreationVariant,
    ValidationErrors,
};
use ports::{
    Clock, Confirmation, ConsentRequestRepository, CreationRecord, CreationStart, PgccError,
    PgccGateway, PgccNewConsent, RepoError,
};
use uuid::Uuid;

use crate::consent_requests::hash::consent_hash;

/// What the caller gets back: our id and the PGCC's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedConsentRequest {
    pub id: Uuid,
    pub pgcc_id: String,
}

#[derive(Debug, thiserror::Error)]
pub enum CreateConsentError {
    /// Broken field rules, by JSON field name; nothing was stored or sent to the PGCC.
    #[error(transparent)]
    Invalid(ValidationErrors),
    /// The PGCC failed or refused. A final refusal (`Rejected`) cancelled our row; any other
    /// failure (`TryLater` included) left it `em_andamento` for the reconciler. Either way no
    /// consent is visible.
    #[error(transparent)]
    Pgcc(PgccError),
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct CreateConsentRequest {
    pgcc: Arc<dyn PgccGateway>,
    consent_requests: Arc<dyn ConsentRequestRepository>,
    clock: Arc<dyn Clock>,
}

impl CreateConsentRequest {
    pub fn new(
        pgcc: Arc<dyn PgccGateway>,
        consent_requests: Arc<dyn ConsentRequestRepository>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            pgcc,
            consent_requests,
            clock,
        }
    }

    /// Creates a new request under a fresh id.
    pub fn execute(
        &self,
        company: &Company,
        draft: ConsentRequestDraft,
        variant: CreationVariant,
    ) -> Result<CreatedConsentRequest, CreateConsentError> {
        self.create_new(company, draft, variant, Uuid::new_v4())
    }

    /// Creates the request under `id`, the id an idempotency key reserved for it. An earlier
    /// attempt under the same key may have stored `id` already: if it is confirmed, its answer is
    /// returned at once (the PGCC is not called); if it is still `em_andamento`, the stored
    /// request is sent again (the PGCC answers the one it may already hold under that external
    /// reference) without validating the draft again; if it was cancelled, or never stored, the
    /// draft is validated and created as new.
    pub fn execute_with_id(
        &self,
        company: &Company,
        draft: ConsentRequestDraft,
        variant: CreationVariant,
        id: Uuid,
    ) -> Result<CreatedConsentRequest, CreateConsentError> {
        match self.consent_requests.find_creation(company.id, id)? {
            Some(CreationRecord::Confirmed { pgcc_id }) => {
                return Ok(CreatedConsentRequest { id, pgcc_id });
            }
            Some(CreationRecord::InProgress(stored)) => {
                // taking it over reads the link again: the use case may be gone since (then
                // it is sent without one)
                return self.attempt(company, &stored, self.clock.now());
            }
            Some(CreationRecord::Cancelled) | None => {}
        }
        self.create_new(company, draft, variant, id)
    }

    /// Stores under `id` a request the PGCC already holds as `pgcc_id` (a consent imported by
    /// its PGCC id, docs/imports.md): a creation's two phases with the PGCC's creation call left
    /// out, so the row, its history, its `solicitacao.criada` event and its log entry are a
    /// creation's, written by the same functions. An earlier attempt under `id` is taken over as
    /// [`Self::execute_with_id`] does (confirmed: nothing to do).
    pub fn record_held(
        &self,
        company: &Company,
        draft: ConsentRequestDraft,
        variant: CreationVariant,
        id: Uuid,
        pgcc_id: &str,
    ) -> Result<CreatedConsentRequest, CreateConsentError> {
        let now = self.clock.now();
        let stored = match self.consent_requests.find_creation(company.id, id)? {
            Some(CreationRecord::Confirmed { pgcc_id }) => {
                return Ok(CreatedConsentRequest { id, pgcc_id });
            }
            Some(CreationRecord::InProgress(stored)) => *stored,
            Some(CreationRecord::Cancelled) | None => {
                self.new_row(company, draft, variant, id, now)?
            }
        };
        match self.consent_requests.begin_creation(&stored, now)? {
            CreationStart::Started { .. } => {}
            CreationStart::AlreadyConfirmed { pgcc_id } => {
                return Ok(CreatedConsentRequest { id, pgcc_id });
            }
            CreationStart::UnknownTemplate => return Err(unknown_template()),
        }
        match self
            .consent_requests
            .confirm_creation(&stored, pgcc_id, now)?
        {
            Confirmation::Confirmed => {
                tracing::info!(
                    empresa_id = %company.id,
                    solicitacao_id = %id,
                    pgcc_id = %pgcc_id,
                    "consent request held by the PGCC recorded"
                );
                Ok(CreatedConsentRequest {
                    id,
                    pgcc_id: pgcc_id.to_owned(),
                })
            }
            Confirmation::AlreadyConfirmed { pgcc_id } => Ok(CreatedConsentRequest { id, pgcc_id }),
            Confirmation::Missing => Err(CreateConsentError::Repo(RepoError::Unexpected(
                anyhow::anyhow!(
                    "a consent request being recorded vanished before its confirmation"
                ),
            ))),
        }
    }

    fn create_new(
        &self,
        company: &Company,
        draft: ConsentRequestDraft,
        variant: CreationVariant,
        id: Uuid,
    ) -> Result<CreatedConsentRequest, CreateConsentError> {
        let now = self.clock.now();
        let stored = self.new_row(company, draft, variant, id, now)?;
        self.attempt(company, &stored, now)
    }

    /// The row a creation stores first: validated, in its variant's first status, hashed.
    fn new_row(
        &self,
        company: &Company,
        draft: ConsentRequestDraft,
        variant: CreationVariant,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<ConsentRequest, CreateConsentError> {
        let request = draft
            .validate(variant, now)
            .map_err(CreateConsentError::Invalid)?;
        let event = match variant {
            CreationVariant::Active => ConsentEvent::CreatedActive,
            CreationVariant::Pending => ConsentEvent::CreatedPending,
        };
        // A creation is always legal from "not yet created": failing here is a bug of ours.
        let status = ConsentStatus::apply(None, event)
            .map_err(|e| RepoError::Unexpected(anyhow::Error::new(e)))?;
        let mut stored = ConsentRequest {
            id,
            company_id: company.id,
            content: request,
            status,
            // the PGCC's id is known once it created the request
            pgcc_id: String::new(),
            hash: String::new(),
            // drawn from the OS's random source (uuid v4: 122 random bits)
            hash_salt: Uuid::new_v4().simple().to_string(),
            created_at: now,
            updated_at: now,
            // the repository records the use case's version current when it stores the row
            use_case_version: None,
        };
        // the hash covers criado_em, so it is computed on the request as stored
        stored.hash = consent_hash(&stored);
        Ok(stored)
    }

    /// Stores (or takes over) the request `em_andamento` under its template's use case, asks
    /// the PGCC and settles the row by its answer.
    fn attempt(
        &self,
        company: &Company,
        request: &ConsentRequest,
        attempt_at: DateTime<Utc>,
    ) -> Result<CreatedConsentRequest, CreateConsentError> {
        let id = request.id;
        let link_id = match self.consent_requests.begin_creation(request, attempt_at)? {
            CreationStart::Started { link } => link,
            CreationStart::AlreadyConfirmed { pgcc_id } => {
                return Ok(CreatedConsentRequest { id, pgcc_id });
            }
            CreationStart::UnknownTemplate => return Err(unknown_template()),
        };
        let created = match self.pgcc.create_consent_request(&PgccNewConsent {
            referencia_externa: id,
            company_cnpj: company.cnpj.clone(),
            link_id,
            request: request.content.clone(),
        }) {
            Ok(created) => created,
            Err(error) => return Err(self.settle_failure(company, id, attempt_at, error)),
        };
        match self
            .consent_requests
            .confirm_creation(request, &created.pgcc_id, attempt_at)?
        {
            Confirmation::Confirmed => {
                tracing::info!(
                    empresa_id = %company.id,
                    solicitacao_id = %id,
                    pgcc_id = %created.pgcc_id,
                    status = ?request.status,
                    "consent request created"
                );
                Ok(CreatedConsentRequest {
                    id,
                    pgcc_id: created.pgcc_id,
                })
            }
            Confirmation::AlreadyConfirmed { pgcc_id } => {
                if pgcc_id != created.pgcc_id {
                    tracing::error!(
                        empresa_id = %company.id,
                        solicitacao_id = %id,
                        "the PGCC answered another id than the one the request was confirmed with"
                    );
                }
                Ok(CreatedConsentRequest { id, pgcc_id })
            }
            Confirmation::Missing => Err(CreateConsentError::Repo(RepoError::Unexpected(
                anyhow::anyhow!("a consent request being created vanished before its confirmation"),
            ))),
        }
    }

    /// A final refusal cancels our row (the PGCC holds nothing); any other failure leaves it for
    /// the reconciler. `TryLater` (408, 425, 429) is not a refusal: the PGCC did not say it will
    /// never hold the request (a 408 may come after it read it), and a retry under the same
    /// idempotency key takes the row over. A failure to cancel is logged: the reconciler
    /// settles the row then.
    fn settle_failure(
        &self,
        company: &Company,
        id: Uuid,
        attempt_at: DateTime<Utc>,
        error: PgccError,
    ) -> CreateConsentError {
        if matches!(error, PgccError::Rejected { .. }) {
            tracing::warn!(
                empresa_id = %company.id,
                solicitacao_id = %id,
                error = %error,
                "consent request: the PGCC refused it; cancelled"
            );
            if let Err(e) = self
                .consent_requests
                .cancel_creation(company.id, id, attempt_at)
            {
                tracing::warn!(
                    empresa_id = %company.id,
                    solicitacao_id = %id,
                    error = format!("{e:#}"),
                    "could not cancel a refused creation; the reconciler will settle it"
                );
            }
        } else {
            tracing::warn!(
                empresa_id = %company.id,
                solicitacao_id = %id,
                error = %error,
                "consent request: the PGCC failed; left for the reconciler"
            );
        }
        CreateConsentError::Pgcc(error)
    }
}

fn unknown_template() -> CreateConsentError {
    CreateConsentError::Invalid(ValidationErrors::single(
        "casoDeUsoIdTemplate",
        "nenhum caso de uso sincronizado da empresa tem este template",
    ))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use chrono::Duration;
    use domain::ValidConsentRequest;
    use ports::{MockConsentRequestRepository, MockPgccGateway, PgccConsentCreated};

    use super::*;
    use crate::test_support::{company, fixed_clock, now, VALID_CPF};

    const TEMPLATE: &str = "tpl-credito";

    fn link() -> Uuid {
        Uuid::from_u128(0xa11c)
    }

    fn pending_draft() -> ConsentRequestDraft {
        ConsentRequestDraft {
            template_id: Some(TEMPLATE.to_owned()),
            subject_cpf: Some(VALID_CPF.to_owned()),
            access_mode: Some("Direto".to_owned()),
            subject_type: Some("PessoaFisica".to_owned()),
            consent_expires_at: Some(now() + Duration::days(365)),
            ..ConsentRequestDraft::default()
        }
    }

    fn active_draft() -> ConsentRequestDraft {
        ConsentRequestDraft {
            subject_answered_at: Some(now() - Duration::hours(1)),
            proof_of_collection: Some("aceite eletrônico registrado".to_owned()),
            ..pending_draft()
        }
    }

    fn validated(draft: &ConsentRequestDraft, variant: CreationVariant) -> ValidConsentRequest {
        draft.clone().validate(variant, now()).unwrap()
    }

    /// The row `execute` stores first for `draft` under `id`: no PGCC id yet, hashed.
    /// The row a creation stores, with `salt` (drawn at random by the creation: the tests take
    /// it from the row they check, and check its shape with [`assert_a_fresh_salt`]).
    fn expected_row(
        id: Uuid,
        draft: &ConsentRequestDraft,
        variant: CreationVariant,
        status: ConsentStatus,
        salt: &str,
    ) -> ConsentRequest {
        let mut expected = ConsentRequest {
            id,
            company_id: company().id,
            content: validated(draft, variant),
            status,
            pgcc_id: String::new(),
            hash: String::new(),
            hash_salt: salt.to_owned(),
            created_at: now(),
            updated_at: now(),
            // chosen by the repository when it stores the row
            use_case_version: None,
        };
        expected.hash = consent_hash(&expected);
        expected
    }

    fn assert_a_fresh_salt(row: &ConsentRequest) {
        assert_eq!(row.hash_salt.len(), 32, "{}", row.hash_salt);
        assert!(row
            .hash_salt
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)));
        assert_ne!(row.hash_salt, "0".repeat(32));
    }

    /// A PGCC that records what it was sent and answers `pgcc-123`.
    fn recording_pgcc(sent: Arc<Mutex<Vec<PgccNewConsent>>>) -> MockPgccGateway {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_create_consent_request()
            .times(1)
            .returning(move |consent| {
                sent.lock().unwrap().push(consent.clone());
                Ok(PgccConsentCreated {
                    pgcc_id: "pgcc-123".to_owned(),
                })
            });
        pgcc.expect_list_use_cases().times(0);
        pgcc.expect_find_by_external_reference().times(0);
        pgcc
    }

    fn failing_pgcc(error: fn() -> PgccError) -> MockPgccGateway {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_create_consent_request()
            .times(1)
            .returning(move |_| Err(error()));
        pgcc
    }

    fn untouched_pgcc() -> MockPgccGateway {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_create_consent_request().times(0);
        pgcc.expect_list_use_cases().times(0);
        pgcc.expect_find_by_external_reference().times(0);
        pgcc
    }

    /// What the store was asked to do, in order.
    #[allow(clippy::large_enum_variant)] // a test record, compared whole
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Call {
        Begin(ConsentRequest, DateTime<Utc>),
        Confirm(Uuid, String, DateTime<Utc>),
        Cancel(Uuid, DateTime<Utc>),
    }

    /// A consent request store that records the creation calls and answers `begin` with
    /// `begin`, `confirm` with `confirm`; `find_creation` answers `found`.
    struct Store {
        calls: Arc<Mutex<Vec<Call>>>,
        begin: Option<fn() -> Result<CreationStart, RepoError>>,
        confirm: Option<fn() -> Result<Confirmation, RepoError>>,
        cancel: Option<fn() -> Result<bool, RepoError>>,
        found: Option<fn() -> Option<CreationRecord>>,
    }

    impl Store {
        fn new() -> Self {
            Store {
                calls: Arc::new(Mutex::new(Vec::new())),
                begin: Some(|| Ok(CreationStart::Started { link: Some(link()) })),
                confirm: Some(|| Ok(Confirmation::Confirmed)),
                cancel: None,
                found: None,
            }
        }

        fn calls(&self) -> Vec<Call> {
            self.calls.lock().unwrap().clone()
        }

        fn mock(&self) -> MockConsentRequestRepository {
            let company_id = company().id;
            let mut store = MockConsentRequestRepository::new();
            let calls = self.calls.clone();
            match self.begin {
                Some(answer) => {
                    store
                        .expect_begin_creation()
                        .times(1)
                        .returning(move |request, at| {
                            calls.lock().unwrap().push(Call::Begin(request.clone(), at));
                            answer()
                        });
                }
                None => {
                    store.expect_begin_creation().times(0);
                }
            }
            let calls = self.calls.clone();
            match self.confirm {
                Some(answer) => {
                    store
                        .expect_confirm_creation()
                        .withf(move |stored, _, _| stored.company_id == company_id)
                        .returning(move |stored, pgcc_id, at| {
                            calls.lock().unwrap().push(Call::Confirm(
                                stored.id,
                                pgcc_id.to_owned(),
                                at,
                            ));
                            answer()
                        });
                }
                None => {
                    store.expect_confirm_creation().times(0);
                }
            }
            let calls = self.calls.clone();
            match self.cancel {
                Some(answer) => {
                    store
                        .expect_cancel_creation()
                        .withf(move |company, _, _| *company == company_id)
                        .times(1)
                        .returning(move |_, id, at| {
                            calls.lock().unwrap().push(Call::Cancel(id, at));
                            answer()
                        });
                }
                None => {
                    store.expect_cancel_creation().times(0);
                }
            }
            match self.found {
                Some(answer) => {
                    store
                        .expect_find_creation()
                        .withf(move |company, _| *company == company_id)
                        .times(1)
                        .returning(move |_, _| Ok(answer()));
                }
                None => {
                    store.expect_find_creation().times(0);
                }
            }
            store
        }
    }

    fn untouched_store() -> Store {
        Store {
            begin: None,
            confirm: None,
            ..Store::new()
        }
    }

    fn service(pgcc: MockPgccGateway, store: &Store) -> CreateConsentRequest {
        CreateConsentRequest::new(Arc::new(pgcc), Arc::new(store.mock()), fixed_clock())
    }

    fn creates_and_confirms(variant: CreationVariant, draft: ConsentRequestDraft) -> ConsentStatus {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let store = Store::new();
        let expected_request = validated(&draft, variant);

        let created = service(recording_pgcc(sent.clone()), &store)
            .execute(&company(), draft.clone(), variant)
            .unwrap();

        assert_eq!(created.pgcc_id, "pgcc-123");
        assert_eq!(created.id.get_version_num(), 4);
        assert_eq!(
            *sent.lock().unwrap(),
            vec![PgccNewConsent {
                referencia_externa: created.id,
                company_cnpj: company().cnpj,
                link_id: Some(link()),
                request: expected_request,
            }]
        );
        let calls = store.calls();
        let Call::Begin(row, _) = &calls[0] else {
            panic!("the row is stored first: {calls:?}");
        };
        assert_a_fresh_salt(row);
        assert_eq!(
            *row,
            expected_row(created.id, &draft, variant, row.status, &row.hash_salt)
        );
        assert_eq!(row.hash.len(), 64);
        assert_eq!(
            calls,
            [
                Call::Begin(row.clone(), now()),
                Call::Confirm(created.id, "pgcc-123".to_owned(), now()),
            ]
        );
        row.status
    }

    #[test]
    fn an_active_request_is_stored_first_then_sent_to_the_pgcc_with_our_id_then_confirmed() {
        let status = creates_and_confirms(CreationVariant::Active, active_draft());

        assert_eq!(status, ConsentStatus::Active);
    }

    #[test]
    fn a_pending_request_is_stored_first_then_sent_to_the_pgcc_with_our_id_then_confirmed() {
        let status = creates_and_confirms(CreationVariant::Pending, pending_draft());

        assert_eq!(status, ConsentStatus::Pending);
    }

    #[test]
    fn a_use_case_without_a_link_is_sent_without_a_link() {
        let store = Store {
            begin: Some(|| Ok(CreationStart::Started { link: None })),
            ..Store::new()
        };
        let sent = Arc::new(Mutex::new(Vec::new()));

        service(recording_pgcc(sent.clone()), &store)
            .execute(&company(), pending_draft(), CreationVariant::Pending)
            .unwrap();

        assert_eq!(sent.lock().unwrap()[0].link_id, None);
    }

    #[test]
    fn an_invalid_draft_is_reported_by_field_and_nothing_else_is_called() {
        let draft = ConsentRequestDraft {
            subject_cpf: Some("52998224724".to_owned()),
            ..pending_draft()
        };

        let result = service(untouched_pgcc(), &untouched_store()).execute(
            &company(),
            draft,
            CreationVariant::Pending,
        );

        match result {
            Err(CreateConsentError::Invalid(errors)) => {
                let fields: Vec<_> = errors.fields().iter().map(|f| f.field.as_str()).collect();
                assert_eq!(fields, ["cpfTitular"]);
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn a_pending_draft_sent_to_the_active_endpoint_is_invalid_and_nothing_else_is_called() {
        let result = service(untouched_pgcc(), &untouched_store()).execute(
            &company(),
            pending_draft(),
            CreationVariant::Active,
        );

        assert!(
            matches!(result, Err(CreateConsentError::Invalid(_))),
            "{result:?}"
        );
    }

    #[test]
    fn an_unknown_template_is_invalid_on_its_field_and_nothing_is_sent_or_confirmed() {
        // the store checks the template as it stores (one round trip) and stores nothing
        let store = Store {
            begin: Some(|| Ok(CreationStart::UnknownTemplate)),
            confirm: None,
            ..Store::new()
        };

        let result = service(untouched_pgcc(), &store).execute(
            &company(),
            pending_draft(),
            CreationVariant::Pending,
        );

        match result {
            Err(CreateConsentError::Invalid(errors)) => {
                assert_eq!(errors.fields().len(), 1);
                assert_eq!(errors.fields()[0].field, "casoDeUsoIdTemplate");
                assert!(!errors.fields()[0].message.is_empty());
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
        assert!(
            matches!(store.calls()[..], [Call::Begin(..)]),
            "{:?}",
            store.calls()
        );
    }

    #[test]
    fn a_failing_first_store_is_a_repository_error_and_the_pgcc_is_not_called() {
        let store = Store {
            begin: Some(|| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout")))),
            confirm: None,
            ..Store::new()
        };

        let result = service(untouched_pgcc(), &store).execute(
            &company(),
            pending_draft(),
            CreationVariant::Pending,
        );

        assert!(
            matches!(
                result,
                Err(CreateConsentError::Repo(RepoError::Unavailable(_)))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn a_pgcc_refusal_cancels_the_stored_row_of_this_attempt_and_is_reported() {
        let store = Store {
            confirm: None,
            cancel: Some(|| Ok(true)),
            ..Store::new()
        };

        let result = service(failing_pgcc(|| PgccError::Rejected { status: 409 }), &store).execute(
            &company(),
            active_draft(),
            CreationVariant::Active,
        );

        assert!(
            matches!(
                result,
                Err(CreateConsentError::Pgcc(PgccError::Rejected {
                    status: 409
                }))
            ),
            "{result:?}"
        );
        let calls = store.calls();
        let Call::Begin(row, at) = &calls[0] else {
            panic!("{calls:?}");
        };
        assert_eq!(calls[1..], [Call::Cancel(row.id, *at)]);
    }

    #[test]
    fn a_refusal_whose_cancellation_fails_is_still_reported_as_the_pgccs_refusal() {
        let store = Store {
            confirm: None,
            cancel: Some(|| Err(RepoError::Unavailable(anyhow::anyhow!("gone")))),
            ..Store::new()
        };

        let result = service(failing_pgcc(|| PgccError::Rejected { status: 404 }), &store).execute(
            &company(),
            pending_draft(),
            CreationVariant::Pending,
        );

        assert!(
            matches!(
                result,
                Err(CreateConsentError::Pgcc(PgccError::Rejected {
                    status: 404
                }))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn a_pgcc_timeout_failure_try_later_or_unreachable_pgcc_leaves_the_row_for_the_reconciler() {
        let failures: [fn() -> PgccError; 7] = [
            || PgccError::Timeout,
            || PgccError::TryLater {
                status: 429,
                retry_after_seconds: Some(7),
            },
            || PgccError::TryLater {
                status: 408,
                retry_after_seconds: None,
            },
            || PgccError::TryLater {
                status: 425,
                retry_after_seconds: None,
            },
            || PgccError::Failed { status: 503 },
            || PgccError::Unreachable(anyhow::anyhow!("connection refused")),
            || PgccError::Unexpected(anyhow::anyhow!("unreadable body")),
        ];
        for failure in failures {
            let store = Store {
                confirm: None,
                ..Store::new()
            };

            let result = service(failing_pgcc(failure), &store).execute(
                &company(),
                pending_draft(),
                CreationVariant::Pending,
            );

            assert!(
                matches!(result, Err(CreateConsentError::Pgcc(_))),
                "{result:?}"
            );
            let calls = store.calls();
            assert_eq!(
                calls.len(),
                1,
                "stored, then neither confirmed nor cancelled"
            );
            assert!(matches!(calls[0], Call::Begin(..)), "{calls:?}");
        }
    }

    #[test]
    fn a_failing_confirmation_after_the_pgcc_created_it_is_a_repository_error() {
        let store = Store {
            confirm: Some(|| Err(RepoError::Unexpected(anyhow::anyhow!("disk full")))),
            ..Store::new()
        };

        let result = service(recording_pgcc(Arc::new(Mutex::new(Vec::new()))), &store).execute(
            &company(),
            pending_draft(),
            CreationVariant::Pending,
        );

        assert!(
            matches!(
                result,
                Err(CreateConsentError::Repo(RepoError::Unexpected(_)))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn a_row_confirmed_meanwhile_by_the_reconciler_answers_its_pgcc_id() {
        let store = Store {
            confirm: Some(|| {
                Ok(Confirmation::AlreadyConfirmed {
                    pgcc_id: "pgcc-123".to_owned(),
                })
            }),
            ..Store::new()
        };

        let created = service(recording_pgcc(Arc::new(Mutex::new(Vec::new()))), &store)
            .execute(&company(), pending_draft(), CreationVariant::Pending)
            .unwrap();

        assert_eq!(created.pgcc_id, "pgcc-123");
    }

    #[test]
    fn a_row_that_vanished_before_its_confirmation_is_unexpected() {
        let store = Store {
            confirm: Some(|| Ok(Confirmation::Missing)),
            ..Store::new()
        };

        let result = service(recording_pgcc(Arc::new(Mutex::new(Vec::new()))), &store).execute(
            &company(),
            pending_draft(),
            CreationVariant::Pending,
        );

        assert!(
            matches!(
                result,
                Err(CreateConsentError::Repo(RepoError::Unexpected(_)))
            ),
            "{result:?}"
        );
    }

    fn reserved_id() -> Uuid {
        Uuid::from_u128(0x1de4_0000_0000_4000_8000_0000_0000_0001)
    }

    #[test]
    fn with_an_id_already_confirmed_its_answer_comes_back_and_nothing_else_is_called() {
        let store = Store {
            found: Some(|| {
                Some(CreationRecord::Confirmed {
                    pgcc_id: "pgcc-first".to_owned(),
                })
            }),
            ..untouched_store()
        };

        let created = service(untouched_pgcc(), &store)
            .execute_with_id(
                &company(),
                ConsentRequestDraft::default(),
                CreationVariant::Pending,
                reserved_id(),
            )
            .unwrap();

        assert_eq!(
            created,
            CreatedConsentRequest {
                id: reserved_id(),
                pgcc_id: "pgcc-first".to_owned()
            }
        );
    }

    #[test]
    fn with_an_id_still_in_creation_the_stored_request_is_sent_again_without_revalidating() {
        let stored = || {
            let draft = pending_draft();
            Some(CreationRecord::InProgress(Box::new(expected_row(
                reserved_id(),
                &draft,
                CreationVariant::Pending,
                ConsentStatus::Pending,
                "00112233445566778899aabbccddeeff",
            ))))
        };
        let store = Store {
            found: Some(stored),
            ..Store::new()
        };
        let sent = Arc::new(Mutex::new(Vec::new()));

        // an empty draft would be invalid: it is not looked at
        let created = service(recording_pgcc(sent.clone()), &store)
            .execute_with_id(
                &company(),
                ConsentRequestDraft::default(),
                CreationVariant::Pending,
                reserved_id(),
            )
            .unwrap();

        assert_eq!(created.id, reserved_id());
        assert_eq!(sent.lock().unwrap()[0].referencia_externa, reserved_id());
        assert_eq!(sent.lock().unwrap()[0].link_id, Some(link()));
        let Some(CreationRecord::InProgress(row)) = stored() else {
            unreachable!()
        };
        assert_eq!(
            store.calls(),
            [
                Call::Begin(*row, now()),
                Call::Confirm(reserved_id(), "pgcc-123".to_owned(), now()),
            ]
        );
    }

    #[test]
    fn with_an_id_cancelled_or_never_stored_the_draft_is_validated_and_created_under_that_id() {
        let answers: [fn() -> Option<CreationRecord>; 2] =
            [|| Some(CreationRecord::Cancelled), || None];
        for found in answers {
            let store = Store {
                found: Some(found),
                ..Store::new()
            };
            let sent = Arc::new(Mutex::new(Vec::new()));

            let created = service(recording_pgcc(sent.clone()), &store)
                .execute_with_id(
                    &company(),
                    active_draft(),
                    CreationVariant::Active,
                    reserved_id(),
                )
                .unwrap();

            assert_eq!(created.id, reserved_id());
            assert_eq!(sent.lock().unwrap()[0].referencia_externa, reserved_id());
            let calls = store.calls();
            let Call::Begin(row, _) = &calls[0] else {
                panic!("the row is stored first: {calls:?}");
            };
            assert_a_fresh_salt(row);
            assert_eq!(
                calls[0],
                Call::Begin(
                    expected_row(
                        reserved_id(),
                        &active_draft(),
                        CreationVariant::Active,
                        ConsentStatus::Active,
                        &row.hash_salt,
                    ),
                    now()
                )
            );
        }
    }

    #[test]
    fn with_an_id_an_invalid_draft_is_invalid_when_nothing_was_stored_under_it() {
        let store = Store {
            found: Some(|| None),
            ..untouched_store()
        };

        let result = service(untouched_pgcc(), &store).execute_with_id(
            &company(),
            ConsentRequestDraft::default(),
            CreationVariant::Pending,
            reserved_id(),
        );

        assert!(
            matches!(result, Err(CreateConsentError::Invalid(_))),
            "{result:?}"
        );
    }

    #[test]
    fn a_begin_that_finds_the_id_confirmed_answers_it_without_calling_the_pgcc() {
        let store = Store {
            begin: Some(|| {
                Ok(CreationStart::AlreadyConfirmed {
                    pgcc_id: "pgcc-first".to_owned(),
                })
            }),
            confirm: None,
            ..Store::new()
        };

        let created = service(untouched_pgcc(), &store)
            .execute(&company(), pending_draft(), CreationVariant::Pending)
            .unwrap();

        assert_eq!(created.pgcc_id, "pgcc-first");
    }
}
