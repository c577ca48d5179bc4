//! The subject export (`POST /api/titulares/consentimentos`): every request of one subject for
//! the calling company, with history and proof, for an LGPD art. 18 access request. The CPF
//! comes in the body, never in a URL, and is answered in full (the caller just sent it).

use std::sync::Arc;

use domain::{Company, Cpf, ValidationErrors};
use ports::{Clock, ConsentRequestRecord, ConsentRequestRepository, RepoError};

use crate::consent_requests::list::{field, page_position};
use crate::consent_requests::page_bytes::{
    fetch_within, history_bytes, plain_bytes, position, DEFAULT_PAGE_MAX_BYTES,
};

/// The export's request: the subject (body) and the page (query).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubjectExportQuery {
    /// A CPF, formatted (`529.982.247-25`) or digits only.
    pub subject_cpf: Option<String>,
    /// The previous page's `next_cursor` (`proximoCursor` on the wire).
    pub cursor: Option<String>,
    /// 1..=500, default 50.
    pub limit: Option<u32>,
}

/// One page of the subject's requests, oldest first, each with its effective status and history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubjectExportPage {
    pub items: Vec<ConsentRequestRecord>,
    /// The cursor of the next page; `None` on the last page.
    pub next_cursor: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ExportSubjectError {
    /// Broken rules of the request, by wire name; the repository was not asked.
    #[error(transparent)]
    Invalid(ValidationErrors),
    #[error(transparent)]
    Repo(#[from] RepoError),
}

const MSG_CPF_REQUIRED: &str = "cpfTitular é obrigatório";

#[derive(Clone)]
pub struct ExportSubject {
    consent_requests: Arc<dyn ConsentRequestRepository>,
    clock: Arc<dyn Clock>,
    page_max_bytes: usize,
}

impl ExportSubject {
    pub fn new(consent_requests: Arc<dyn ConsentRequestRepository>, clock: Arc<dyn Clock>) -> Self {
        Self {
            consent_requests,
            clock,
            page_max_bytes: DEFAULT_PAGE_MAX_BYTES,
        }
    }

    /// Pages stop reading once their items hold `max_bytes` of text (see
    /// [`crate::consent_requests::page_bytes`]).
    pub fn within_bytes(mut self, max_bytes: usize) -> Self {
        self.page_max_bytes = max_bytes;
        self
    }

    /// A page of the company's requests for the subject, ordered by (criado_em, id). Every rule
    /// is checked first and all broken ones reported together: `cpfTitular` present and a
    /// valid CPF, `cursor` one the list or this export wrote, `limite` within 1..=500.
    pub fn execute(
        &self,
        company: &Company,
        query: SubjectExportQuery,
    ) -> Result<SubjectExportPage, ExportSubjectError> {
        let mut errors = ValidationErrors::default();
        let cpf = match query.subject_cpf.as_deref() {
            None => {
                errors.push(field::SUBJECT_CPF, MSG_CPF_REQUIRED);
                None
            }
            Some(raw) => Cpf::parse(raw)
                .map_err(|e| errors.push(field::SUBJECT_CPF, e.to_string()))
                .ok(),
        };
        let (after, limit) = page_position(query.cursor.as_deref(), query.limit, &mut errors);
        let cpf = errors
            .into_result(cpf)
            .map_err(ExportSubjectError::Invalid)?
            .expect("a CPF when no rule is broken");

        let (mut items, next_cursor) = fetch_within(
            limit,
            self.page_max_bytes,
            after,
            |r: &ConsentRequestRecord| position(&r.request),
            |r| plain_bytes(&r.request) + history_bytes(&r.history),
            |after, n| {
                self.consent_requests
                    .list_of_subject(company.id, &cpf, after, n)
            },
        )?;
        let now = self.clock.now();
        for item in &mut items {
            item.request.status = item.request.effective_status(now);
        }
        Ok(SubjectExportPage { items, next_cursor })
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;
    use domain::ConsentStatus;
    use ports::MockConsentRequestRepository;
    use uuid::Uuid;

    use super::*;
    use crate::test_support::{company, consent_request, fixed_clock, now, VALID_CPF};

    fn record(n: u128, status: ConsentStatus) -> ConsentRequestRecord {
        let mut request = consent_request(Uuid::from_u128(n), status);
        request.created_at = now() - Duration::days(1) + Duration::seconds(n as i64);
        ConsentRequestRecord {
            request,
            history: Vec::new(),
            provenance: None,
        }
    }

    fn service(repo: MockConsentRequestRepository) -> ExportSubject {
        ExportSubject::new(Arc::new(repo), fixed_clock())
    }

    #[test]
    fn asks_one_more_than_the_page_and_gives_the_next_cursor() {
        let mut repo = MockConsentRequestRepository::new();
        repo.expect_list_of_subject()
            .withf(|_, cpf, after, limit| {
                cpf.as_str() == "52998224725" && after.is_none() && *limit == 3
            })
            .times(1)
            .returning(|_, _, _, _| {
                Ok((1..=3).map(|n| record(n, ConsentStatus::Active)).collect())
            });

        let page = service(repo)
            .execute(
                &company(),
                SubjectExportQuery {
                    subject_cpf: Some(VALID_CPF.to_owned()),
                    cursor: None,
                    limit: Some(2),
                },
            )
            .unwrap();

        assert_eq!(page.items.len(), 2);
        let next = crate::decode_cursor(page.next_cursor.as_deref().unwrap()).unwrap();
        assert_eq!(next.id, Uuid::from_u128(2));
    }

    #[test]
    fn answers_effective_statuses() {
        let mut repo = MockConsentRequestRepository::new();
        repo.expect_list_of_subject().returning(|_, _, _, _| {
            let mut expired = record(1, ConsentStatus::Active);
            expired.request.content.consent_expires_at = now() - Duration::seconds(1);
            Ok(vec![expired])
        });

        let page = service(repo)
            .execute(
                &company(),
                SubjectExportQuery {
                    subject_cpf: Some(VALID_CPF.to_owned()),
                    ..Default::default()
                },
            )
            .unwrap();

        assert_eq!(page.items[0].request.status, ConsentStatus::Expired);
        assert_eq!(page.next_cursor, None);
    }

    #[test]
    fn every_broken_rule_is_reported_and_the_repository_not_asked() {
        let repo = MockConsentRequestRepository::new(); // any call would panic
        let missing = service(repo)
            .execute(
                &company(),
                SubjectExportQuery {
                    subject_cpf: None,
                    cursor: Some("garbage".into()),
                    limit: Some(0),
                },
            )
            .unwrap_err();
        let ExportSubjectError::Invalid(errors) = missing else {
            panic!("{missing:?}")
        };
        let fields: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["cpfTitular", "cursor", "limite"]);

        let repo = MockConsentRequestRepository::new();
        let invalid = service(repo)
            .execute(
                &company(),
                SubjectExportQuery {
                    subject_cpf: Some("111.111.111-11".into()),
                    ..Default::default()
                },
            )
            .unwrap_err();
        assert!(matches!(invalid, ExportSubjectError::Invalid(_)));
    }
}
