//! `PUT` and `GET /api/casos-de-uso/{id}/anotacoes`: the company's annotation of one of its
//! use cases (its LGPD legal basis, personal-data categories and notice).

use std::sync::Arc;

use domain::{Company, UseCaseAnnotation, UseCaseAnnotationDraft, ValidationErrors};
use ports::{Clock, RepoError, UseCaseRepository};
use uuid::Uuid;

#[derive(Debug, thiserror::Error)]
pub enum UseCaseAnnotationError {
    /// No use case with this id for the company (another company's is unknown alike).
    #[error("no such use case")]
    NotFound,
    /// The annotation breaks a rule: nothing was stored.
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct UseCaseAnnotations {
    use_cases: Arc<dyn UseCaseRepository>,
    clock: Arc<dyn Clock>,
}

impl UseCaseAnnotations {
    pub fn new(use_cases: Arc<dyn UseCaseRepository>, clock: Arc<dyn Clock>) -> Self {
        Self { use_cases, clock }
    }

    /// Validates `draft` (every broken rule named) and stores it as the annotation of the
    /// company's use case `id`, replacing any earlier one.
    pub fn set(
        &self,
        company: &Company,
        id: Uuid,
        draft: UseCaseAnnotationDraft,
    ) -> Result<UseCaseAnnotation, UseCaseAnnotationError> {
        let annotation = draft.validate(self.clock.now())?;
        if !self.use_cases.annotate(company.id, id, &annotation)? {
            return Err(UseCaseAnnotationError::NotFound);
        }
        Ok(annotation)
    }

    /// The annotation of the company's use case `id`; `NotFound` when there is no such use case
    /// or it was never annotated.
    pub fn get(
        &self,
        company: &Company,
        id: Uuid,
    ) -> Result<UseCaseAnnotation, UseCaseAnnotationError> {
        self.use_cases
            .annotation(company.id, id)?
            .ok_or(UseCaseAnnotationError::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use ports::MockUseCaseRepository;

    use super::*;
    use crate::test_support::{company, fixed_clock};

    fn draft() -> UseCaseAnnotationDraft {
        UseCaseAnnotationDraft {
            article: Some(7),
            hypothesis: Some("consentimento".to_owned()),
            categories: Some(vec!["pd:Name".to_owned()]),
            notice_url: Some("https://example.com/aviso".to_owned()),
            notice_language: Some("pt-BR".to_owned()),
        }
    }

    #[test]
    fn an_invalid_annotation_stores_nothing() {
        let mut use_cases = MockUseCaseRepository::new();
        use_cases.expect_annotate().never();
        let mut bad = draft();
        bad.notice_language = None;
        let result = UseCaseAnnotations::new(Arc::new(use_cases), fixed_clock()).set(
            &company(),
            Uuid::nil(),
            bad,
        );
        assert!(
            matches!(result, Err(UseCaseAnnotationError::Invalid(_))),
            "{result:?}"
        );
    }

    #[test]
    fn another_companys_use_case_is_not_found() {
        let company_id = company().id;
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_annotate()
            .withf(move |c, _, _| *c == company_id)
            .times(1)
            .returning(|_, _, _| Ok(false));
        let result = UseCaseAnnotations::new(Arc::new(use_cases), fixed_clock()).set(
            &company(),
            Uuid::nil(),
            draft(),
        );
        assert!(
            matches!(result, Err(UseCaseAnnotationError::NotFound)),
            "{result:?}"
        );
    }
}
