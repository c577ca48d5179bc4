//! The subject export (`POST /api/titulares/consentimentos`): every request of one subject for
//! the calling company, with history and proof, for an LGPD art. 18 access request. The CPF
//! comes in the body, never in a URL, and is answered in full (the caller just sent it).

use std::sync::Arc;

use domain::{Company, Cpf, ValidationErrors};
use ports::{Clock, ConsentRequestRecord, ConsentRequestRepository, ListCursor, RepoError};

use crate::list_consent_requests::{campo, next_cursor, page_position};

/// The export's request: the subject (body) and the page (query).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubjectExportQuery {
    /// A CPF, formatted (`529.982.247-25`) or digits only.
    pub cpf_titular: Option<String>,
    /// The previous page's `proximo_cursor`.
    pub cursor: Option<String>,
    /// 1..=500, default 50.
    pub limite: Option<u32>,
}

/// One page of the subject's requests, oldest first, each with its effective status and history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubjectExportPage {
    pub itens: Vec<ConsentRequestRecord>,
    /// The cursor of the next page; `None` on the last page.
    pub proximo_cursor: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ExportSubjectError {
    /// Broken rules of the request, by wire name; the repository was not asked.
    #[error(transparent)]
    Invalid(ValidationErrors),
    #[error(transparent)]
    Repo(#[from] RepoError),
}

const MSG_CPF_OBRIGATORIO: &str = "cpfTitular é obrigatório";

#[derive(Clone)]
pub struct ExportSubject {
    consent_requests: Arc<dyn ConsentRequestRepository>,
    clock: Arc<dyn Clock>,
}

impl ExportSubject {
    pub fn new(consent_requests: Arc<dyn ConsentRequestRepository>, clock: Arc<dyn Clock>) -> Self {
        Self {
            consent_requests,
            clock,
        }
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
        let cpf = match query.cpf_titular.as_deref() {
            None => {
                errors.push(campo::CPF_TITULAR, MSG_CPF_OBRIGATORIO);
                None
            }
            Some(raw) => Cpf::parse(raw)
                .map_err(|e| errors.push(campo::CPF_TITULAR, e.to_string()))
                .ok(),
        };
        let (after, limite) = page_position(query.cursor.as_deref(), query.limite, &mut errors);
        let cpf = errors
            .into_result(cpf)
            .map_err(ExportSubjectError::Invalid)?
            .expect("a CPF when no rule is broken");

        let mut itens =
            self.consent_requests
                .list_of_subject(company.id, &cpf, after, limite + 1)?;
        let proximo_cursor = next_cursor(&mut itens, limite, |last| ListCursor {
            criado_em: last.request.criado_em,
            id: last.request.id,
        });
        let now = self.clock.now();
        for item in &mut itens {
            item.request.status = item.request.effective_status(now);
        }
        Ok(SubjectExportPage {
            itens,
            proximo_cursor,
        })
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
        request.criado_em = now() - Duration::days(1) + Duration::seconds(n as i64);
        ConsentRequestRecord {
            request,
            historico: Vec::new(),
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
            .returning(|_, _, _, _| Ok((1..=3).map(|n| record(n, ConsentStatus::Ativo)).collect()));

        let page = service(repo)
            .execute(
                &company(),
                SubjectExportQuery {
                    cpf_titular: Some(VALID_CPF.to_owned()),
                    cursor: None,
                    limite: Some(2),
                },
            )
            .unwrap();

        assert_eq!(page.itens.len(), 2);
        let next = crate::decode_cursor(page.proximo_cursor.as_deref().unwrap()).unwrap();
        assert_eq!(next.id, Uuid::from_u128(2));
    }

    #[test]
    fn answers_effective_statuses() {
        let mut repo = MockConsentRequestRepository::new();
        repo.expect_list_of_subject().returning(|_, _, _, _| {
            let mut expired = record(1, ConsentStatus::Ativo);
            expired.request.dados.data_expiracao_consentimento = now() - Duration::seconds(1);
            Ok(vec![expired])
        });

        let page = service(repo)
            .execute(
                &company(),
                SubjectExportQuery {
                    cpf_titular: Some(VALID_CPF.to_owned()),
                    ..Default::default()
                },
            )
            .unwrap();

        assert_eq!(page.itens[0].request.status, ConsentStatus::Expirado);
        assert_eq!(page.proximo_cursor, None);
    }

    #[test]
    fn every_broken_rule_is_reported_and_the_repository_not_asked() {
        let repo = MockConsentRequestRepository::new(); // any call would panic
        let missing = service(repo)
            .execute(
                &company(),
                SubjectExportQuery {
                    cpf_titular: None,
                    cursor: Some("garbage".into()),
                    limite: Some(0),
                },
            )
            .unwrap_err();
        let ExportSubjectError::Invalid(errors) = missing else {
            panic!("{missing:?}")
        };
        let fields: Vec<&str> = errors.0.iter().map(|e| e.campo.as_str()).collect();
        assert_eq!(fields, ["cpfTitular", "cursor", "limite"]);

        let repo = MockConsentRequestRepository::new();
        let invalid = service(repo)
            .execute(
                &company(),
                SubjectExportQuery {
                    cpf_titular: Some("111.111.111-11".into()),
                    ..Default::default()
                },
            )
            .unwrap_err();
        assert!(matches!(invalid, ExportSubjectError::Invalid(_)));
    }
}
