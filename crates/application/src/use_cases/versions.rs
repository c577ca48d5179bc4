//! The versions of one of a company's use cases (issue 25, part 1): what its purpose-stating
//! fields were, and when, so a company can find the consents given under wording since changed.

use std::sync::Arc;

use domain::{Company, UseCaseVersion};
use ports::{RepoError, UseCaseRepository};
use uuid::Uuid;

#[derive(Debug, thiserror::Error)]
pub enum UseCaseVersionsError {
    /// No use case with this id for the company (another company's is unknown alike).
    #[error("no such use case")]
    NotFound,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct ListUseCaseVersions {
    use_cases: Arc<dyn UseCaseRepository>,
}

impl ListUseCaseVersions {
    pub fn new(use_cases: Arc<dyn UseCaseRepository>) -> Self {
        Self { use_cases }
    }

    /// The versions of the company's use case `id` (our id, as the use-case list shows it),
    /// oldest first; a removed use case keeps its versions.
    pub fn execute(
        &self,
        company: &Company,
        id: Uuid,
    ) -> Result<Vec<UseCaseVersion>, UseCaseVersionsError> {
        self.use_cases
            .versions(company.id, id)?
            .ok_or(UseCaseVersionsError::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use ports::MockUseCaseRepository;

    use super::*;
    use crate::test_support::{company, now};

    #[test]
    fn the_versions_are_read_for_the_calling_company_only() {
        let id = Uuid::from_u128(9);
        let company_id = company().id;
        let version = UseCaseVersion {
            version: 1,
            title: "Crédito".to_owned(),
            link_id: None,
            other_fields: "{}".to_owned(),
            fingerprint: None,
            started_at: now(),
            ended_at: None,
        };
        let answer = vec![version.clone()];
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_versions()
            .withf(move |c, u| *c == company_id && *u == id)
            .times(1)
            .returning(move |_, _| Ok(Some(answer.clone())));

        let versions = ListUseCaseVersions::new(Arc::new(use_cases))
            .execute(&company(), id)
            .unwrap();

        assert_eq!(versions, vec![version]);
    }

    #[test]
    fn an_unknown_or_foreign_use_case_is_not_found() {
        let mut use_cases = MockUseCaseRepository::new();
        use_cases.expect_versions().returning(|_, _| Ok(None));

        let result = ListUseCaseVersions::new(Arc::new(use_cases)).execute(&company(), Uuid::nil());

        assert!(
            matches!(result, Err(UseCaseVersionsError::NotFound)),
            "{result:?}"
        );
    }
}
