//! Listing the company's consent requests: filtered, oldest first, a keyset page at a time.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use domain::{Company, ConsentRequest, ConsentStatus, Cpf, ValidationErrors};
use ports::{Clock, ConsentFilter, ConsentRequestRepository, ListCursor, RepoError};

use crate::consent_requests::cursor::{decode_cursor, encode_cursor};

/// Page size when the query names none.
pub const DEFAULT_LIMITE: u32 = 50;
/// Largest page a query may ask for.
pub const MAX_LIMITE: u32 = 500;

/// The list's query as received: every filter optional, as text where a rule applies, so each
/// broken rule is reported by its wire name (422).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsentListQuery {
    /// An effective status (`pendente`, `ativo`, ...).
    pub status: Option<String>,
    /// Exact template; blank means no filter.
    pub caso_de_uso_id_template: Option<String>,
    /// A CPF, masked or not.
    pub cpf_titular: Option<String>,
    /// Created at or after.
    pub criado_de: Option<DateTime<Utc>>,
    /// Created strictly before.
    pub criado_ate: Option<DateTime<Utc>>,
    /// Last changed at or after (a status change moves it): catching up after an outage.
    pub atualizado_de: Option<DateTime<Utc>>,
    /// Last changed strictly before.
    pub atualizado_ate: Option<DateTime<Utc>>,
    /// The previous page's `proximo_cursor`.
    pub cursor: Option<String>,
    /// 1..=500, default 50.
    pub limite: Option<u32>,
}

/// One page of requests, each with its effective status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentPage {
    pub itens: Vec<ConsentRequest>,
    /// The cursor of the next page; `None` on the last page.
    pub proximo_cursor: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ListConsentError {
    /// Broken rules of the query, by wire name; the repository was not asked.
    #[error(transparent)]
    Invalid(ValidationErrors),
    #[error(transparent)]
    Repo(#[from] RepoError),
}

/// The wire names of the query's fields, as reported in [`ValidationErrors`].
pub mod campo {
    pub const STATUS: &str = "status";
    pub const CPF_TITULAR: &str = "cpfTitular";
    pub const CRIADO_ATE: &str = "criadoAte";
    pub const ATUALIZADO_ATE: &str = "atualizadoAte";
    pub const CURSOR: &str = "cursor";
    pub const LIMITE: &str = "limite";
}

const MSG_STATUS: &str = "o status deve ser pendente, ativo, recusado, expirado ou revogado";
const MSG_PERIODO: &str = "criadoAte deve ser igual ou posterior a criadoDe";
const MSG_PERIODO_ATUALIZADO: &str = "atualizadoAte deve ser igual ou posterior a atualizadoDe";
const MSG_CURSOR: &str = "cursor inválido: use o proximoCursor da página anterior";
const MSG_LIMITE: &str = "o limite deve estar entre 1 e 500";

#[derive(Clone)]
pub struct ListConsentRequests {
    consent_requests: Arc<dyn ConsentRequestRepository>,
    clock: Arc<dyn Clock>,
}

impl ListConsentRequests {
    pub fn new(consent_requests: Arc<dyn ConsentRequestRepository>, clock: Arc<dyn Clock>) -> Self {
        Self {
            consent_requests,
            clock,
        }
    }

    /// A page of the company's requests matching `query`, ordered by (criado_em, id). Every rule
    /// of the query is checked first and all broken ones reported together: `status` a known
    /// status, `cpfTitular` a valid CPF, `criadoDe` not after `criadoAte`, `cursor` one this
    /// service wrote, `limite` within 1..=500.
    pub fn execute(
        &self,
        company: &Company,
        query: ConsentListQuery,
    ) -> Result<ConsentPage, ListConsentError> {
        let (filter, after, limite) = validate(query).map_err(ListConsentError::Invalid)?;
        let now = self.clock.now();
        // one more than asked tells whether a next page exists
        let mut itens = self
            .consent_requests
            .list(company.id, &filter, after, limite + 1, now)?;
        let proximo_cursor = next_cursor(&mut itens, limite, |last| ListCursor {
            criado_em: last.criado_em,
            id: last.id,
        });
        for item in &mut itens {
            item.status = item.effective_status(now);
        }
        Ok(ConsentPage {
            itens,
            proximo_cursor,
        })
    }
}

/// The repository's filter, position and page size, or every broken rule.
fn validate(
    query: ConsentListQuery,
) -> Result<(ConsentFilter, Option<ListCursor>, u32), ValidationErrors> {
    let mut errors = ValidationErrors::default();

    let status = query.status.as_deref().and_then(|raw| {
        let parsed = ConsentStatus::parse(raw);
        if parsed.is_none() {
            errors.push(campo::STATUS, MSG_STATUS);
        }
        parsed
    });
    let caso_de_uso_id_template = query
        .caso_de_uso_id_template
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    let cpf_titular = query.cpf_titular.as_deref().and_then(|raw| {
        Cpf::parse(raw)
            .map_err(|e| errors.push(campo::CPF_TITULAR, e.to_string()))
            .ok()
    });
    if let (Some(de), Some(ate)) = (query.criado_de, query.criado_ate) {
        if de > ate {
            errors.push(campo::CRIADO_ATE, MSG_PERIODO);
        }
    }
    if let (Some(de), Some(ate)) = (query.atualizado_de, query.atualizado_ate) {
        if de > ate {
            errors.push(campo::ATUALIZADO_ATE, MSG_PERIODO_ATUALIZADO);
        }
    }
    let (after, limite) = page_position(query.cursor.as_deref(), query.limite, &mut errors);

    errors.into_result((
        ConsentFilter {
            status,
            caso_de_uso_id_template,
            cpf_titular,
            criado_de: query.criado_de,
            criado_ate: query.criado_ate,
            atualizado_de: query.atualizado_de,
            atualizado_ate: query.atualizado_ate,
        },
        after,
        limite,
    ))
}

/// The position and size of a page (`cursor`, `limite`): every keyset-paged read checks them
/// alike, each broken rule pushed to `errors` by its wire name.
pub(crate) fn page_position(
    cursor: Option<&str>,
    limite: Option<u32>,
    errors: &mut ValidationErrors,
) -> (Option<ListCursor>, u32) {
    let after = cursor.and_then(|raw| {
        decode_cursor(raw)
            .map_err(|_| errors.push(campo::CURSOR, MSG_CURSOR))
            .ok()
    });
    let limite = limite.unwrap_or(DEFAULT_LIMITE);
    if !(1..=MAX_LIMITE).contains(&limite) {
        errors.push(campo::LIMITE, MSG_LIMITE);
    }
    (after, limite)
}

/// The cursor of the page after `items`, when more than `limite` were read (one more than asked
/// tells that a next page exists); truncates `items` to `limite`.
pub(crate) fn next_cursor<T>(
    items: &mut Vec<T>,
    limite: u32,
    position: impl Fn(&T) -> ListCursor,
) -> Option<String> {
    if items.len() <= limite as usize {
        return None;
    }
    items.truncate(limite as usize);
    items.last().map(|last| encode_cursor(&position(last)))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use chrono::Duration;
    use ports::MockConsentRequestRepository;
    use uuid::Uuid;

    use super::*;
    use crate::test_support::{company, consent_request, fixed_clock, now, VALID_CPF};

    /// What the repository was asked: filter, position, limit, instant.
    type ListCall = (ConsentFilter, Option<ListCursor>, u32, DateTime<Utc>);

    /// `n` active requests created one second apart, oldest first.
    fn requests(n: u128) -> Vec<ConsentRequest> {
        (1..=n)
            .map(|i| {
                let mut r = consent_request(Uuid::from_u128(i), ConsentStatus::Ativo);
                r.criado_em = now() - Duration::days(1) + Duration::seconds(i as i64);
                r
            })
            .collect()
    }

    fn recording_repository(
        answer: Vec<ConsentRequest>,
        calls: Arc<Mutex<Vec<ListCall>>>,
    ) -> MockConsentRequestRepository {
        let empresa_id = company().id;
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests
            .expect_list()
            .withf(move |company, _, _, _, _| *company == empresa_id)
            .times(1)
            .returning(move |_, filter, after, limit, now| {
                calls
                    .lock()
                    .unwrap()
                    .push((filter.clone(), after, limit, now));
                Ok(answer.clone())
            });
        consent_requests
    }

    fn untouched_repository() -> MockConsentRequestRepository {
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests.expect_list().times(0);
        consent_requests
    }

    fn list(
        consent_requests: MockConsentRequestRepository,
        query: ConsentListQuery,
    ) -> Result<ConsentPage, ListConsentError> {
        ListConsentRequests::new(Arc::new(consent_requests), fixed_clock())
            .execute(&company(), query)
    }

    fn invalid_fields(result: Result<ConsentPage, ListConsentError>) -> Vec<String> {
        match result {
            Err(ListConsentError::Invalid(errors)) => {
                errors.fields().iter().map(|f| f.campo.clone()).collect()
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn without_filters_the_first_page_of_50_is_asked_with_one_more_row_at_the_clock_time() {
        let calls = Arc::new(Mutex::new(Vec::new()));

        let page = list(
            recording_repository(requests(3), calls.clone()),
            ConsentListQuery::default(),
        )
        .unwrap();

        assert_eq!(page.itens, requests(3));
        assert_eq!(page.proximo_cursor, None);
        assert_eq!(
            *calls.lock().unwrap(),
            vec![(ConsentFilter::default(), None, 51, now())]
        );
    }

    #[test]
    fn every_filter_reaches_the_repository_parsed_and_normalized() {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let de = now() - Duration::days(10);
        let ate = now();
        let position = ListCursor {
            criado_em: now() - Duration::days(2),
            id: Uuid::from_u128(77),
        };

        list(
            recording_repository(Vec::new(), calls.clone()),
            ConsentListQuery {
                status: Some("expirado".to_owned()),
                caso_de_uso_id_template: Some("  tpl-credito ".to_owned()),
                cpf_titular: Some("529.982.247-25".to_owned()),
                criado_de: Some(de),
                criado_ate: Some(ate),
                atualizado_de: Some(de),
                atualizado_ate: Some(ate),
                cursor: Some(encode_cursor(&position)),
                limite: Some(10),
            },
        )
        .unwrap();

        assert_eq!(
            *calls.lock().unwrap(),
            vec![(
                ConsentFilter {
                    status: Some(ConsentStatus::Expirado),
                    caso_de_uso_id_template: Some("tpl-credito".to_owned()),
                    cpf_titular: Some(Cpf::parse(VALID_CPF).unwrap()),
                    criado_de: Some(de),
                    criado_ate: Some(ate),
                    atualizado_de: Some(de),
                    atualizado_ate: Some(ate),
                },
                Some(position),
                11,
                now()
            )]
        );
    }

    #[test]
    fn a_blank_template_filter_is_no_filter() {
        let calls = Arc::new(Mutex::new(Vec::new()));

        list(
            recording_repository(Vec::new(), calls.clone()),
            ConsentListQuery {
                caso_de_uso_id_template: Some("   ".to_owned()),
                ..ConsentListQuery::default()
            },
        )
        .unwrap();

        assert_eq!(calls.lock().unwrap()[0].0.caso_de_uso_id_template, None);
    }

    #[test]
    fn when_one_more_row_than_the_limit_exists_the_page_is_cut_and_points_after_its_last_item() {
        let calls = Arc::new(Mutex::new(Vec::new()));

        let page = list(
            recording_repository(requests(3), calls.clone()),
            ConsentListQuery {
                limite: Some(2),
                ..ConsentListQuery::default()
            },
        )
        .unwrap();

        assert_eq!(calls.lock().unwrap()[0].2, 3);
        let expected = requests(2);
        assert_eq!(page.itens, expected);
        let cursor = page.proximo_cursor.expect("a next page");
        assert_eq!(
            decode_cursor(&cursor),
            Ok(ListCursor {
                criado_em: expected[1].criado_em,
                id: expected[1].id,
            })
        );
    }

    #[test]
    fn a_page_exactly_as_long_as_the_limit_is_the_last_page() {
        let page = list(
            recording_repository(requests(2), Arc::new(Mutex::new(Vec::new()))),
            ConsentListQuery {
                limite: Some(2),
                ..ConsentListQuery::default()
            },
        )
        .unwrap();

        assert_eq!(page.itens.len(), 2);
        assert_eq!(page.proximo_cursor, None);
    }

    #[test]
    fn an_empty_result_is_an_empty_last_page() {
        let page = list(
            recording_repository(Vec::new(), Arc::new(Mutex::new(Vec::new()))),
            ConsentListQuery::default(),
        )
        .unwrap();

        assert_eq!(
            page,
            ConsentPage {
                itens: Vec::new(),
                proximo_cursor: None
            }
        );
    }

    #[test]
    fn the_limits_1_and_500_are_accepted() {
        for limite in [1, 500] {
            let calls = Arc::new(Mutex::new(Vec::new()));
            list(
                recording_repository(Vec::new(), calls.clone()),
                ConsentListQuery {
                    limite: Some(limite),
                    ..ConsentListQuery::default()
                },
            )
            .unwrap();
            assert_eq!(calls.lock().unwrap()[0].2, limite + 1);
        }
    }

    #[test]
    fn items_past_their_expiry_are_listed_as_expired() {
        let mut expired = requests(2);
        expired[0].dados.data_expiracao_consentimento = now();
        expired[1].status = ConsentStatus::Pendente;
        expired[1].dados.data_expiracao_consentimento = now() - Duration::hours(1);
        let mut revoked = requests(1).remove(0);
        revoked.id = Uuid::from_u128(9);
        revoked.status = ConsentStatus::Revogado;
        revoked.dados.data_expiracao_consentimento = now() - Duration::hours(1);
        let answer = vec![expired[0].clone(), expired[1].clone(), revoked];

        let page = list(
            recording_repository(answer, Arc::new(Mutex::new(Vec::new()))),
            ConsentListQuery::default(),
        )
        .unwrap();

        let statuses: Vec<_> = page.itens.iter().map(|r| r.status).collect();
        assert_eq!(
            statuses,
            [
                ConsentStatus::Expirado,
                ConsentStatus::Expirado,
                ConsentStatus::Revogado
            ]
        );
    }

    #[test]
    fn an_unknown_status_is_invalid_and_the_repository_is_not_asked() {
        for raw in ["", "Ativo", "cancelado"] {
            let result = list(
                untouched_repository(),
                ConsentListQuery {
                    status: Some(raw.to_owned()),
                    ..ConsentListQuery::default()
                },
            );
            assert_eq!(invalid_fields(result), ["status"], "{raw:?}");
        }
    }

    #[test]
    fn an_invalid_cpf_is_invalid_with_the_cpf_message_and_the_repository_is_not_asked() {
        let result = list(
            untouched_repository(),
            ConsentListQuery {
                cpf_titular: Some("529.982.247-24".to_owned()),
                ..ConsentListQuery::default()
            },
        );

        match result {
            Err(ListConsentError::Invalid(errors)) => {
                assert_eq!(errors.fields().len(), 1);
                assert_eq!(errors.fields()[0].campo, "cpfTitular");
                assert_eq!(
                    errors.fields()[0].mensagem,
                    domain::CpfError::CheckDigits.to_string()
                );
                assert!(!errors.to_string().contains("52998224724"));
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn a_limit_of_0_or_above_500_is_invalid_and_the_repository_is_not_asked() {
        for limite in [0, 501, u32::MAX] {
            let result = list(
                untouched_repository(),
                ConsentListQuery {
                    limite: Some(limite),
                    ..ConsentListQuery::default()
                },
            );
            assert_eq!(invalid_fields(result), ["limite"], "{limite}");
        }
    }

    #[test]
    fn a_cursor_that_does_not_decode_is_invalid_and_the_repository_is_not_asked() {
        for raw in ["", "abc", "v1.x.y", "v2.1.00000000000000000000000000000000"] {
            let result = list(
                untouched_repository(),
                ConsentListQuery {
                    cursor: Some(raw.to_owned()),
                    ..ConsentListQuery::default()
                },
            );
            assert_eq!(invalid_fields(result), ["cursor"], "{raw:?}");
        }
    }

    #[test]
    fn criado_de_after_criado_ate_is_invalid_and_the_repository_is_not_asked() {
        let result = list(
            untouched_repository(),
            ConsentListQuery {
                criado_de: Some(now()),
                criado_ate: Some(now() - Duration::microseconds(1)),
                ..ConsentListQuery::default()
            },
        );

        assert_eq!(invalid_fields(result), ["criadoAte"]);
    }

    #[test]
    fn criado_de_equal_to_criado_ate_is_accepted() {
        let calls = Arc::new(Mutex::new(Vec::new()));

        list(
            recording_repository(Vec::new(), calls.clone()),
            ConsentListQuery {
                criado_de: Some(now()),
                criado_ate: Some(now()),
                ..ConsentListQuery::default()
            },
        )
        .unwrap();

        assert_eq!(calls.lock().unwrap().len(), 1);
    }

    #[test]
    fn every_broken_rule_is_reported_together_in_the_order_of_the_query() {
        let result = list(
            untouched_repository(),
            ConsentListQuery {
                status: Some("ativa".to_owned()),
                caso_de_uso_id_template: Some("tpl".to_owned()),
                cpf_titular: Some("123".to_owned()),
                criado_de: Some(now()),
                criado_ate: Some(now() - Duration::days(1)),
                atualizado_de: Some(now()),
                atualizado_ate: Some(now() - Duration::days(1)),
                cursor: Some("garbage".to_owned()),
                limite: Some(0),
            },
        );

        assert_eq!(
            invalid_fields(result),
            [
                "status",
                "cpfTitular",
                "criadoAte",
                "atualizadoAte",
                "cursor",
                "limite"
            ]
        );
    }

    #[test]
    fn a_failing_repository_is_a_repository_error() {
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests
            .expect_list()
            .times(1)
            .returning(|_, _, _, _, _| Err(RepoError::Unavailable(anyhow::anyhow!("timeout"))));

        let result = list(consent_requests, ConsentListQuery::default());

        assert!(
            matches!(
                result,
                Err(ListConsentError::Repo(RepoError::Unavailable(_)))
            ),
            "{result:?}"
        );
    }
}
