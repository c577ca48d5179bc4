//! Listing the company's consent requests: filtered, oldest first, a keyset page at a time.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use domain::{Company, ConsentRequest, ConsentStatus, Cpf, ValidationErrors};
use ports::{Clock, ConsentFilter, ConsentRequestRepository, ListCursor, RepoError};

use crate::consent_requests::cursor::{decode_cursor, encode_cursor};
use crate::consent_requests::page_bytes::{
    fetch_within, plain_bytes, position, DEFAULT_PAGE_MAX_BYTES,
};

/// Page size when the query names none.
pub const DEFAULT_LIMIT: u32 = 50;
/// Largest page a query may ask for.
pub const MAX_LIMIT: u32 = 500;

/// The list's query as received: every filter optional, as text where a rule applies, so each
/// broken rule is reported by its wire name (422).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsentListQuery {
    /// An effective status (`pendente`, `ativo`, ...).
    pub status: Option<String>,
    /// Exact template; blank means no filter.
    pub template_id: Option<String>,
    /// A CPF, masked or not.
    pub subject_cpf: Option<String>,
    /// Created at or after.
    pub created_from: Option<DateTime<Utc>>,
    /// Created strictly before.
    pub created_until: Option<DateTime<Utc>>,
    /// Last changed at or after (a status change moves it): catching up after an outage.
    pub updated_from: Option<DateTime<Utc>>,
    /// Last changed strictly before.
    pub updated_until: Option<DateTime<Utc>>,
    /// `versaoDesatualizada`: `Some(true)` keeps only the requests whose use case has a newer
    /// version; `Some(false)` and `None` filter nothing (docs/api.md).
    pub outdated_version: Option<bool>,
    /// `origem`: only imported requests of this origin (exact match, after trimming, as the
    /// import stores it); blank means no filter.
    pub origin: Option<String>,
    /// The previous page's `next_cursor` (`proximoCursor` on the wire).
    pub cursor: Option<String>,
    /// 1..=500, default 50.
    pub limit: Option<u32>,
}

/// One page of requests, each with its effective status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentPage {
    pub items: Vec<ConsentRequest>,
    /// The cursor of the next page; `None` on the last page.
    pub next_cursor: Option<String>,
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
pub mod field {
    pub const STATUS: &str = "status";
    pub const SUBJECT_CPF: &str = "cpfTitular";
    pub const CREATED_UNTIL: &str = "criadoAte";
    pub const UPDATED_UNTIL: &str = "atualizadoAte";
    pub const CURSOR: &str = "cursor";
    pub const LIMIT: &str = "limite";
    pub const ORIGIN: &str = "origem";
}

const MSG_STATUS: &str = "o status deve ser pendente, ativo, recusado, expirado ou revogado";
const MSG_CREATED_PERIOD: &str = "criadoAte deve ser igual ou posterior a criadoDe";
const MSG_UPDATED_PERIOD: &str = "atualizadoAte deve ser igual ou posterior a atualizadoDe";
const MSG_CURSOR: &str = "cursor inválido: use o proximoCursor da página anterior";
const MSG_LIMIT: &str = "o limite deve estar entre 1 e 500";

#[derive(Clone)]
pub struct ListConsentRequests {
    consent_requests: Arc<dyn ConsentRequestRepository>,
    clock: Arc<dyn Clock>,
    page_max_bytes: usize,
}

impl ListConsentRequests {
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

    /// A page of the company's requests matching `query`, ordered by (criado_em, id). Every rule
    /// of the query is checked first and all broken ones reported together: `status` a known
    /// status, `cpfTitular` a valid CPF, `criadoDe` not after `criadoAte`, `cursor` one this
    /// service wrote, `limite` within 1..=500.
    pub fn execute(
        &self,
        company: &Company,
        query: ConsentListQuery,
    ) -> Result<ConsentPage, ListConsentError> {
        let (filter, after, limit) = validate(query).map_err(ListConsentError::Invalid)?;
        let now = self.clock.now();
        // one more than asked tells whether a next page exists; read in chunks, stopping at the
        // page's byte bound
        let (mut items, next_cursor) = fetch_within(
            limit,
            self.page_max_bytes,
            after,
            position,
            plain_bytes,
            |after, n| {
                self.consent_requests
                    .list(company.id, &filter, after, n, now)
            },
        )?;
        for item in &mut items {
            item.status = item.effective_status(now);
        }
        Ok(ConsentPage { items, next_cursor })
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
            errors.push(field::STATUS, MSG_STATUS);
        }
        parsed
    });
    let template_id = query
        .template_id
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    let subject_cpf = query.subject_cpf.as_deref().and_then(|raw| {
        Cpf::parse(raw)
            .map_err(|e| errors.push(field::SUBJECT_CPF, e.to_string()))
            .ok()
    });
    if let (Some(from), Some(until)) = (query.created_from, query.created_until) {
        if from > until {
            errors.push(field::CREATED_UNTIL, MSG_CREATED_PERIOD);
        }
    }
    if let (Some(from), Some(until)) = (query.updated_from, query.updated_until) {
        if from > until {
            errors.push(field::UPDATED_UNTIL, MSG_UPDATED_PERIOD);
        }
    }
    let origin = query
        .origin
        .as_deref()
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .and_then(|o| {
            if o.chars().count() > domain::import::MAX_EXTERNAL_ID {
                errors.push(
                    field::ORIGIN,
                    format!("no máximo {} caracteres", domain::import::MAX_EXTERNAL_ID),
                );
                None
            } else if o.contains('\0') {
                errors.push(field::ORIGIN, domain::NUL_CHARACTER_MESSAGE);
                None
            } else {
                Some(o.to_owned())
            }
        });
    let (after, limit) = page_position(query.cursor.as_deref(), query.limit, &mut errors);

    errors.into_result((
        ConsentFilter {
            status,
            template_id,
            subject_cpf,
            created_from: query.created_from,
            created_until: query.created_until,
            updated_from: query.updated_from,
            updated_until: query.updated_until,
            outdated_version: query.outdated_version == Some(true),
            origin,
        },
        after,
        limit,
    ))
}

/// The position and size of a page (`cursor`, `limite`): every keyset-paged read checks them
/// alike, each broken rule pushed to `errors` by its wire name.
pub(crate) fn page_position(
    cursor: Option<&str>,
    limit: Option<u32>,
    errors: &mut ValidationErrors,
) -> (Option<ListCursor>, u32) {
    let after = cursor.and_then(|raw| {
        decode_cursor(raw)
            .map_err(|_| errors.push(field::CURSOR, MSG_CURSOR))
            .ok()
    });
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        errors.push(field::LIMIT, MSG_LIMIT);
    }
    (after, limit)
}

/// The cursor of the page after `items`, when more than `limite` were read (one more than asked
/// tells that a next page exists); truncates `items` to `limite`.
pub(crate) fn next_cursor<T>(
    items: &mut Vec<T>,
    limit: u32,
    position: impl Fn(&T) -> ListCursor,
) -> Option<String> {
    if items.len() <= limit as usize {
        return None;
    }
    items.truncate(limit as usize);
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
                let mut r = consent_request(Uuid::from_u128(i), ConsentStatus::Active);
                r.created_at = now() - Duration::days(1) + Duration::seconds(i as i64);
                r
            })
            .collect()
    }

    fn recording_repository(
        answer: Vec<ConsentRequest>,
        calls: Arc<Mutex<Vec<ListCall>>>,
    ) -> MockConsentRequestRepository {
        let company_id = company().id;
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests
            .expect_list()
            .withf(move |company, _, _, _, _| *company == company_id)
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
                errors.fields().iter().map(|f| f.field.clone()).collect()
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

        assert_eq!(page.items, requests(3));
        assert_eq!(page.next_cursor, None);
        assert_eq!(
            *calls.lock().unwrap(),
            vec![(ConsentFilter::default(), None, 51, now())]
        );
    }

    #[test]
    fn every_filter_reaches_the_repository_parsed_and_normalized() {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let from = now() - Duration::days(10);
        let until = now();
        let position = ListCursor {
            created_at: now() - Duration::days(2),
            id: Uuid::from_u128(77),
        };

        list(
            recording_repository(Vec::new(), calls.clone()),
            ConsentListQuery {
                status: Some("expirado".to_owned()),
                template_id: Some("  tpl-credito ".to_owned()),
                subject_cpf: Some("529.982.247-25".to_owned()),
                created_from: Some(from),
                created_until: Some(until),
                updated_from: Some(from),
                updated_until: Some(until),
                outdated_version: Some(true),
                origin: Some(" crm-legado ".to_owned()),
                cursor: Some(encode_cursor(&position)),
                limit: Some(10),
            },
        )
        .unwrap();

        assert_eq!(
            *calls.lock().unwrap(),
            vec![(
                ConsentFilter {
                    status: Some(ConsentStatus::Expired),
                    template_id: Some("tpl-credito".to_owned()),
                    subject_cpf: Some(Cpf::parse(VALID_CPF).unwrap()),
                    created_from: Some(from),
                    created_until: Some(until),
                    updated_from: Some(from),
                    updated_until: Some(until),
                    outdated_version: true,
                    origin: Some("crm-legado".to_owned()),
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
                template_id: Some("   ".to_owned()),
                ..ConsentListQuery::default()
            },
        )
        .unwrap();

        assert_eq!(calls.lock().unwrap()[0].0.template_id, None);
    }

    #[test]
    fn when_one_more_row_than_the_limit_exists_the_page_is_cut_and_points_after_its_last_item() {
        let calls = Arc::new(Mutex::new(Vec::new()));

        let page = list(
            recording_repository(requests(3), calls.clone()),
            ConsentListQuery {
                limit: Some(2),
                ..ConsentListQuery::default()
            },
        )
        .unwrap();

        assert_eq!(calls.lock().unwrap()[0].2, 3);
        let expected = requests(2);
        assert_eq!(page.items, expected);
        let cursor = page.next_cursor.expect("a next page");
        assert_eq!(
            decode_cursor(&cursor),
            Ok(ListCursor {
                created_at: expected[1].created_at,
                id: expected[1].id,
            })
        );
    }

    #[test]
    fn a_page_exactly_as_long_as_the_limit_is_the_last_page() {
        let page = list(
            recording_repository(requests(2), Arc::new(Mutex::new(Vec::new()))),
            ConsentListQuery {
                limit: Some(2),
                ..ConsentListQuery::default()
            },
        )
        .unwrap();

        assert_eq!(page.items.len(), 2);
        assert_eq!(page.next_cursor, None);
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
                items: Vec::new(),
                next_cursor: None
            }
        );
    }

    #[test]
    fn the_limits_1_and_500_are_accepted() {
        for limit in [1, 500] {
            let calls = Arc::new(Mutex::new(Vec::new()));
            list(
                recording_repository(Vec::new(), calls.clone()),
                ConsentListQuery {
                    limit: Some(limit),
                    ..ConsentListQuery::default()
                },
            )
            .unwrap();
            // one more than the page, read at most 64 rows a query (page_bytes.rs)
            assert_eq!(calls.lock().unwrap()[0].2, (limit + 1).min(64));
        }
    }

    #[test]
    fn items_past_their_expiry_are_listed_as_expired() {
        let mut expired = requests(2);
        expired[0].content.consent_expires_at = now();
        expired[1].status = ConsentStatus::Pending;
        expired[1].content.consent_expires_at = now() - Duration::hours(1);
        let mut revoked = requests(1).remove(0);
        revoked.id = Uuid::from_u128(9);
        revoked.status = ConsentStatus::Revoked;
        revoked.content.consent_expires_at = now() - Duration::hours(1);
        let answer = vec![expired[0].clone(), expired[1].clone(), revoked];

        let page = list(
            recording_repository(answer, Arc::new(Mutex::new(Vec::new()))),
            ConsentListQuery::default(),
        )
        .unwrap();

        let statuses: Vec<_> = page.items.iter().map(|r| r.status).collect();
        assert_eq!(
            statuses,
            [
                ConsentStatus::Expired,
                ConsentStatus::Expired,
                ConsentStatus::Revoked
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
                subject_cpf: Some("529.982.247-24".to_owned()),
                ..ConsentListQuery::default()
            },
        );

        match result {
            Err(ListConsentError::Invalid(errors)) => {
                assert_eq!(errors.fields().len(), 1);
                assert_eq!(errors.fields()[0].field, "cpfTitular");
                assert_eq!(
                    errors.fields()[0].message,
                    domain::CpfError::CheckDigits.to_string()
                );
                assert!(!errors.to_string().contains("52998224724"));
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn a_limit_of_0_or_above_500_is_invalid_and_the_repository_is_not_asked() {
        for limit in [0, 501, u32::MAX] {
            let result = list(
                untouched_repository(),
                ConsentListQuery {
                    limit: Some(limit),
                    ..ConsentListQuery::default()
                },
            );
            assert_eq!(invalid_fields(result), ["limite"], "{limit}");
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
                created_from: Some(now()),
                created_until: Some(now() - Duration::microseconds(1)),
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
                created_from: Some(now()),
                created_until: Some(now()),
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
                template_id: Some("tpl".to_owned()),
                subject_cpf: Some("123".to_owned()),
                created_from: Some(now()),
                created_until: Some(now() - Duration::days(1)),
                updated_from: Some(now()),
                updated_until: Some(now() - Duration::days(1)),
                outdated_version: None,
                origin: Some("x".repeat(201)),
                cursor: Some("garbage".to_owned()),
                limit: Some(0),
            },
        );

        assert_eq!(
            invalid_fields(result),
            [
                "status",
                "cpfTitular",
                "criadoAte",
                "atualizadoAte",
                "origem",
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
