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
        company: &Company,
        link_id: Option<Uuid>,
    ) -> Result<Vec<UseCase>, RepoError> {
        self.use_cases.list(company.id, link_id)
    }

    /// The title of the company's use case of PGCC template `template_id` (one row by its
    /// key; `None` when no use case has it, e.g. removed since): what the console shows where
    /// a request names its template.
    pub fn title_of(
        &self,
        company: &Company,
        template_id: &str,
    ) -> Result<Option<String>, RepoError> {
        Ok(self
            .use_cases
            .find_by_template(company.id, template_id)?
            .map(|use_case| use_case.title))
    }
}

#[cfg(test)]
mod tests {
    use ports::MockUseCaseRepository;

    use super::*;
    use crate::test_support::{company, now};

    fn use_case(title: &str, link_id: Uuid) -> UseCase {
        UseCase {
            id: Uuid::new_v4(),
            company_id: company().id,
            link_id: Some(link_id),
            title: title.to_owned(),
            pgcc_provider_template_id: Some(format!("tpl-{title}")),
            added_at: now(),
            last_synced_at: Some(now()),
        }
    }

    #[test]
    fn listing_returns_the_companys_use_cases_in_the_repository_order() {
        let link = Uuid::new_v4();
        let expected = vec![use_case("A", link), use_case("B", link)];
        let answer = expected.clone();
        let company_id = company().id;
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_list()
            .withf(move |company, link| *company == company_id && link.is_none())
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
        let link = Uuid::new_v4();
        let expected = vec![use_case("A", link)];
        let answer = expected.clone();
        let company_id = company().id;
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_list()
            .withf(move |company, v| *company == company_id && *v == Some(link))
            .times(1)
            .returning(move |_, _| Ok(answer.clone()));

        let listed = ListUseCases::new(Arc::new(use_cases))
            .execute(&company(), Some(link))
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
