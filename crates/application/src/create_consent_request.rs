//! Creating a consent request (`criar/ativo`, `criar/pendente`): validated here, created on the
//! PGCC, then stored with the PGCC's id.

use std::sync::Arc;

use domain::{
    Company, ConsentEvent, ConsentRequest, ConsentRequestDraft, ConsentStatus, CreationVariant,
    ValidationErrors,
};
use ports::{
    Clock, ConsentRequestRepository, PgccError, PgccGateway, PgccNewConsent, RepoError,
    UseCaseRepository,
};
use uuid::Uuid;

use crate::consent_hash;

/// What the caller gets back: our id and the PGCC's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedConsentRequest {
    pub id: Uuid,
    pub pgcc_id: String,
}

#[derive(Debug, thiserror::Error)]
pub enum CreateConsentError {
    /// Broken field rules, by JSON field name; nothing was sent to the PGCC.
    #[error(transparent)]
    Invalid(ValidationErrors),
    /// The PGCC failed or refused; nothing was stored.
    #[error(transparent)]
    Pgcc(PgccError),
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct CreateConsentRequest {
    use_cases: Arc<dyn UseCaseRepository>,
    pgcc: Arc<dyn PgccGateway>,
    consent_requests: Arc<dyn ConsentRequestRepository>,
    clock: Arc<dyn Clock>,
}

impl CreateConsentRequest {
    pub fn new(
        use_cases: Arc<dyn UseCaseRepository>,
        pgcc: Arc<dyn PgccGateway>,
        consent_requests: Arc<dyn ConsentRequestRepository>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            use_cases,
            pgcc,
            consent_requests,
            clock,
        }
    }

    pub fn execute(
        &self,
        empresa: &Company,
        draft: ConsentRequestDraft,
        variant: CreationVariant,
    ) -> Result<CreatedConsentRequest, CreateConsentError> {
        let now = self.clock.now();
        let request = draft
            .validate(variant, now)
            .map_err(CreateConsentError::Invalid)?;
        let use_case = self
            .use_cases
            .find_by_template(empresa.id, &request.caso_de_uso_id_template)?
            .ok_or_else(|| {
                CreateConsentError::Invalid(ValidationErrors::single(
                    "casoDeUsoIdTemplate",
                    "nenhum caso de uso sincronizado da empresa tem este template",
                ))
            })?;
        let id = Uuid::new_v4();
        let event = match variant {
            CreationVariant::Active => ConsentEvent::CreatedActive,
            CreationVariant::Pending => ConsentEvent::CreatedPending,
        };
        // A creation is always legal from "not yet created": failing here is a bug of ours.
        let status = ConsentStatus::apply(None, event)
            .map_err(|e| RepoError::Unexpected(anyhow::Error::new(e)))?;

        let created = self
            .pgcc
            .create_consent_request(&PgccNewConsent {
                referencia_externa: id,
                cnpj_empresa: empresa.cnpj.clone(),
                vinculo_id: use_case.vinculo_id,
                request: request.clone(),
            })
            .inspect_err(|e| {
                tracing::warn!(
                    empresa_id = %empresa.id,
                    solicitacao_id = %id,
                    error = %e,
                    "consent request: PGCC failed"
                );
            })
            .map_err(CreateConsentError::Pgcc)?;

        let mut stored = ConsentRequest {
            id,
            empresa_id: empresa.id,
            caso_de_uso_id: use_case.id,
            dados: request,
            status,
            pgcc_id: created.pgcc_id.clone(),
            hash: String::new(),
            criado_em: now,
            atualizado_em: now,
        };
        // the hash covers criado_em, so it is computed on the request as stored
        stored.hash = consent_hash(&stored);
        self.consent_requests.insert(&stored)?;
        tracing::info!(
            empresa_id = %empresa.id,
            solicitacao_id = %id,
            status = ?status,
            "consent request created"
        );
        Ok(CreatedConsentRequest {
            id,
            pgcc_id: created.pgcc_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use chrono::Duration;
    use domain::{UseCase, ValidConsentRequest};
    use ports::{
        MockConsentRequestRepository, MockPgccGateway, MockUseCaseRepository, PgccConsentCreated,
    };

    use super::*;
    use crate::test_support::{company, fixed_clock, now, VALID_CPF};

    const TEMPLATE: &str = "tpl-credito";

    fn vinculo() -> Uuid {
        Uuid::from_u128(0xa11c)
    }

    fn use_case() -> UseCase {
        UseCase {
            id: Uuid::from_u128(0xca5e),
            empresa_id: company().id,
            vinculo_id: Some(vinculo()),
            titulo: "Análise de crédito".to_owned(),
            pgcc_provider_template_id: Some(TEMPLATE.to_owned()),
            data_inclusao: now(),
            data_ultima_sincronizacao_pgcc: Some(now()),
        }
    }

    fn pending_draft() -> ConsentRequestDraft {
        ConsentRequestDraft {
            caso_de_uso_id_template: Some(TEMPLATE.to_owned()),
            cpf_titular: Some(VALID_CPF.to_owned()),
            modalidade_acesso: Some("Direto".to_owned()),
            tipo_titular: Some("PessoaFisica".to_owned()),
            data_expiracao_consentimento: Some(now() + Duration::days(365)),
            ..ConsentRequestDraft::default()
        }
    }

    fn active_draft() -> ConsentRequestDraft {
        ConsentRequestDraft {
            data_titular_respondeu_consentimento: Some(now() - Duration::hours(1)),
            prova_coleta: Some("aceite eletrônico registrado".to_owned()),
            ..pending_draft()
        }
    }

    fn validated(draft: &ConsentRequestDraft, variant: CreationVariant) -> ValidConsentRequest {
        draft.clone().validate(variant, now()).unwrap()
    }

    /// A use case repository that knows `use_case()` under `TEMPLATE` for the test company.
    fn use_cases_knowing_the_template() -> MockUseCaseRepository {
        let empresa_id = company().id;
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_find_by_template()
            .withf(move |empresa, template| *empresa == empresa_id && template == TEMPLATE)
            .times(1)
            .returning(|_, _| Ok(Some(use_case())));
        use_cases
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
        pgcc
    }

    fn recording_store(stored: Arc<Mutex<Vec<ConsentRequest>>>) -> MockConsentRequestRepository {
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests
            .expect_insert()
            .times(1)
            .returning(move |request| {
                stored.lock().unwrap().push(request.clone());
                Ok(())
            });
        consent_requests
    }

    fn untouched_pgcc() -> MockPgccGateway {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_create_consent_request().times(0);
        pgcc.expect_list_use_cases().times(0);
        pgcc
    }

    fn untouched_store() -> MockConsentRequestRepository {
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests.expect_insert().times(0);
        consent_requests
    }

    fn service(
        use_cases: MockUseCaseRepository,
        pgcc: MockPgccGateway,
        consent_requests: MockConsentRequestRepository,
    ) -> CreateConsentRequest {
        CreateConsentRequest::new(
            Arc::new(use_cases),
            Arc::new(pgcc),
            Arc::new(consent_requests),
            fixed_clock(),
        )
    }

    fn creates_and_stores(variant: CreationVariant, draft: ConsentRequestDraft) -> ConsentStatus {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let stored = Arc::new(Mutex::new(Vec::new()));
        let expected_request = validated(&draft, variant);

        let created = service(
            use_cases_knowing_the_template(),
            recording_pgcc(sent.clone()),
            recording_store(stored.clone()),
        )
        .execute(&company(), draft, variant)
        .unwrap();

        assert_eq!(created.pgcc_id, "pgcc-123");
        assert_eq!(created.id.get_version_num(), 4);
        assert_eq!(
            *sent.lock().unwrap(),
            vec![PgccNewConsent {
                referencia_externa: created.id,
                cnpj_empresa: company().cnpj,
                vinculo_id: Some(vinculo()),
                request: expected_request.clone(),
            }]
        );
        let stored = stored.lock().unwrap();
        assert_eq!(stored.len(), 1);
        let row = &stored[0];
        let mut expected = ConsentRequest {
            id: created.id,
            empresa_id: company().id,
            caso_de_uso_id: use_case().id,
            dados: expected_request,
            status: row.status,
            pgcc_id: "pgcc-123".to_owned(),
            hash: String::new(),
            criado_em: now(),
            atualizado_em: now(),
        };
        expected.hash = consent_hash(&expected);
        assert_eq!(*row, expected);
        assert_eq!(row.hash.len(), 64);
        row.status
    }

    #[test]
    fn an_active_request_is_sent_to_the_pgcc_and_stored_active_with_its_pgcc_id() {
        let status = creates_and_stores(CreationVariant::Active, active_draft());

        assert_eq!(status, ConsentStatus::Ativo);
    }

    #[test]
    fn a_pending_request_is_sent_to_the_pgcc_and_stored_pending_with_its_pgcc_id() {
        let status = creates_and_stores(CreationVariant::Pending, pending_draft());

        assert_eq!(status, ConsentStatus::Pendente);
    }

    #[test]
    fn a_use_case_without_a_link_is_sent_without_a_link() {
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_find_by_template()
            .times(1)
            .returning(|_, _| {
                Ok(Some(UseCase {
                    vinculo_id: None,
                    ..use_case()
                }))
            });
        let sent = Arc::new(Mutex::new(Vec::new()));

        service(
            use_cases,
            recording_pgcc(sent.clone()),
            recording_store(Arc::new(Mutex::new(Vec::new()))),
        )
        .execute(&company(), pending_draft(), CreationVariant::Pending)
        .unwrap();

        assert_eq!(sent.lock().unwrap()[0].vinculo_id, None);
    }

    #[test]
    fn an_invalid_draft_is_reported_by_field_and_nothing_else_is_called() {
        let mut use_cases = MockUseCaseRepository::new();
        use_cases.expect_find_by_template().times(0);
        let draft = ConsentRequestDraft {
            cpf_titular: Some("52998224724".to_owned()),
            ..pending_draft()
        };

        let result = service(use_cases, untouched_pgcc(), untouched_store()).execute(
            &company(),
            draft,
            CreationVariant::Pending,
        );

        match result {
            Err(CreateConsentError::Invalid(errors)) => {
                let fields: Vec<_> = errors.fields().iter().map(|f| f.campo.as_str()).collect();
                assert_eq!(fields, ["cpfTitular"]);
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn a_pending_draft_sent_to_the_active_endpoint_is_invalid_and_nothing_else_is_called() {
        let mut use_cases = MockUseCaseRepository::new();
        use_cases.expect_find_by_template().times(0);

        let result = service(use_cases, untouched_pgcc(), untouched_store()).execute(
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
    fn an_unknown_template_is_invalid_on_its_field_and_nothing_is_sent_or_stored() {
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_find_by_template()
            .times(1)
            .returning(|_, _| Ok(None));

        let result = service(use_cases, untouched_pgcc(), untouched_store()).execute(
            &company(),
            pending_draft(),
            CreationVariant::Pending,
        );

        match result {
            Err(CreateConsentError::Invalid(errors)) => {
                assert_eq!(errors.fields().len(), 1);
                assert_eq!(errors.fields()[0].campo, "casoDeUsoIdTemplate");
                assert!(!errors.fields()[0].mensagem.is_empty());
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn a_failing_template_lookup_is_a_repository_error_and_nothing_is_sent() {
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_find_by_template()
            .times(1)
            .returning(|_, _| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));

        let result = service(use_cases, untouched_pgcc(), untouched_store()).execute(
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
    fn a_pgcc_refusal_is_reported_and_nothing_is_stored() {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_create_consent_request()
            .times(1)
            .returning(|_| Err(PgccError::Rejected { status: 409 }));

        let result = service(use_cases_knowing_the_template(), pgcc, untouched_store()).execute(
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
    }

    #[test]
    fn an_unreachable_pgcc_is_reported_and_nothing_is_stored() {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_create_consent_request()
            .times(1)
            .returning(|_| {
                Err(PgccError::Unreachable(anyhow::anyhow!(
                    "connection refused"
                )))
            });

        let result = service(use_cases_knowing_the_template(), pgcc, untouched_store()).execute(
            &company(),
            pending_draft(),
            CreationVariant::Pending,
        );

        assert!(
            matches!(
                result,
                Err(CreateConsentError::Pgcc(PgccError::Unreachable(_)))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_insert_after_the_pgcc_created_it_is_a_repository_error() {
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests
            .expect_insert()
            .times(1)
            .returning(|_| Err(RepoError::Unexpected(anyhow::anyhow!("disk full"))));

        let result = service(
            use_cases_knowing_the_template(),
            recording_pgcc(Arc::new(Mutex::new(Vec::new()))),
            consent_requests,
        )
        .execute(&company(), pending_draft(), CreationVariant::Pending);

        assert!(
            matches!(
                result,
                Err(CreateConsentError::Repo(RepoError::Unexpected(_)))
            ),
            "{result:?}"
        );
    }
}
