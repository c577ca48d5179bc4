//! Listing a company's use cases from our synchronized copy (never from the PGCC). The HTTP
//! layer keeps the rendered answer in memory (`delivery_http::use_case_lists`).

use std::sync::Arc;

use domain::{Company, UseCase};
use ports::{RepoError, UseCaseRepository};
use uuid::Uuid;

#[derive(Clone)]
pub struct ListUseCases {
    use_cases: Arc<dyn UseCaseRepository>,
}

impl ListUseCases {
    pub fn new(use_cases: Arc<dyn UseCaseRepository>) -> Self {
        Self { use_cases }
    }

    /// The company's non-removed use cases, optionally only those of PGCC link `vinculo_id`,
    /// in the repository's stable order.
    pub fn execute(
        &self,
        empresa: &Company,
        vinculo_id: Option<Uuid>,
    ) -> Result<Vec<UseCase>, RepoError> {
        self.use_cases.list(empresa.id, vinculo_id)
    }
}

#[cfg(test)]
mod tests {
    use ports::MockUseCaseRepository;

    use super::*;
    use crate::test_support::{company, now};

    fn use_case(titulo: &str, vinculo_id: Uuid) -> UseCase {
        UseCase {
            id: Uuid::new_v4(),
            empresa_id: company().id,
            vinculo_id: Some(vinculo_id),
            titulo: titulo.to_owned(),
            pgcc_provider_template_id: Some(format!("tpl-{titulo}")),
            data_inclusao: now(),
            data_ultima_sincronizacao_pgcc: Some(now()),
        }
    }

    #[test]
    fn listing_returns_the_companys_use_cases_in_the_repository_order() {
        let vinculo = Uuid::new_v4();
        let expected = vec![use_case("A", vinculo), use_case("B", vinculo)];
        let answer = expected.clone();
        let empresa_id = company().id;
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_list()
            .withf(move |empresa, vinculo| *empresa == empresa_id && vinculo.is_none())
            .times(1)
            .returning(move |_, _| Ok(answer.clone()));
        use_cases.expect_apply_sync().times(0);

        let listed = ListUseCases::new(Arc::new(use_cases))
            .execute(&company(), None)
            .unwrap();

        assert_eq!(listed, expected);
    }

    #[test]
    fn listing_by_link_passes_the_link_to_the_repository() {
        let vinculo = Uuid::new_v4();
        let expected = vec![use_case("A", vinculo)];
        let answer = expected.clone();
        let empresa_id = company().id;
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_list()
            .withf(move |empresa, v| *empresa == empresa_id && *v == Some(vinculo))
            .times(1)
            .returning(move |_, _| Ok(answer.clone()));

        let listed = ListUseCases::new(Arc::new(use_cases))
            .execute(&company(), Some(vinculo))
            .unwrap();

        assert_eq!(listed, expected);
    }

    #[test]
    fn a_company_without_use_cases_gets_an_empty_list() {
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_list()
            .times(1)
            .returning(|_, _| Ok(Vec::new()));

        let listed = ListUseCases::new(Arc::new(use_cases))
            .execute(&company(), None)
            .unwrap();

        assert!(listed.is_empty());
    }

    #[test]
    fn a_failing_repository_is_a_repository_error() {
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_list()
            .times(1)
            .returning(|_, _| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));

        let result = ListUseCases::new(Arc::new(use_cases)).execute(&company(), None);

        assert!(
            matches!(result, Err(RepoError::Unavailable(_))),
            "{result:?}"
        );
    }
}
