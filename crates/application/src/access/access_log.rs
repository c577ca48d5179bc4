//! The record of who read personal data (issue 24, part 7; docs/security.md, "Access log"):
//! recorded by every answer that carries a full CPF or a proof of collection, and by every audit
//! route, in the request's own hop before the answer goes out; paged for `auditor` keys by
//! `GET /api/auditoria/acessos`.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use domain::{Company, ValidationErrors};
use ports::{AccessFilter, AccessLog, AccessRecord, Clock, ListCursor, RepoError};
use uuid::Uuid;

use crate::access::authenticate::Caller;
use crate::consent_requests::list::{next_cursor, page_position};

/// The query of `GET /api/auditoria/acessos` as received.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessListQuery {
    /// Only this key's reads (`apiKeyId`, a UUID).
    pub api_key_id: Option<String>,
    /// Recorded at or after (`de`).
    pub from: Option<DateTime<Utc>>,
    /// Recorded strictly before (`ate`).
    pub until: Option<DateTime<Utc>>,
    /// The previous page's `proximoCursor`.
    pub cursor: Option<String>,
    /// 1..=500, default 50.
    pub limit: Option<u32>,
}

/// One page of records, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessPage {
    pub items: Vec<AccessRecord>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ListAccessesError {
    /// Broken rules of the query, by wire name; the repository was not asked.
    #[error(transparent)]
    Invalid(ValidationErrors),
    #[error(transparent)]
    Repo(#[from] RepoError),
}

/// Recording failed: the answer that would have carried the data must not go out.
#[derive(Debug, thiserror::Error)]
#[error("could not record a read of personal data")]
pub struct RecordAccessError(#[source] pub RepoError);

/// The wire names of the query's fields.
pub mod field {
    pub const API_KEY_ID: &str = "apiKeyId";
    pub const UNTIL: &str = "ate";
}

const MSG_API_KEY_ID: &str = "apiKeyId deve ser o id (UUID) de uma chave";
const MSG_PERIOD: &str = "ate deve ser igual ou posterior a de";

#[derive(Clone)]
pub struct PersonalDataAccesses {
    log: Arc<dyn AccessLog>,
    clock: Arc<dyn Clock>,
}

impl PersonalDataAccesses {
    pub fn new(log: Arc<dyn AccessLog>, clock: Arc<dyn Clock>) -> Self {
        Self { log, clock }
    }

    /// Records that `caller` read, through the route `route` (its template), the personal data
    /// of `requests` (their ids and salted hashes; never a CPF). Called before the answer is
    /// sent: an error means the answer must not be sent (the HTTP layer answers 503).
    pub fn record<'a>(
        &self,
        caller: &Caller,
        route: &str,
        requests: impl IntoIterator<Item = (Uuid, &'a str)>,
    ) -> Result<(), RecordAccessError> {
        let (request_ids, hashes) = requests
            .into_iter()
            .map(|(id, hash)| (id, hash.to_owned()))
            .unzip();
        let record = AccessRecord {
            id: Uuid::new_v4(),
            company_id: caller.company.id,
            api_key_id: caller.key_id,
            person: caller.person.clone(),
            route: route.to_owned(),
            request_ids,
            hashes,
            at: self.clock.now(),
        };
        self.log.record(&record).map_err(RecordAccessError)
    }

    /// A page of the company's records matching `query`, ordered by (time, id); the cursor and
    /// the limit are the consent list's (same rules, same messages).
    pub fn list(
        &self,
        company: &Company,
        query: AccessListQuery,
    ) -> Result<AccessPage, ListAccessesError> {
        let mut errors = ValidationErrors::default();
        let api_key_id = query.api_key_id.as_deref().and_then(|raw| {
            Uuid::try_parse(raw.trim())
                .map_err(|_| errors.push(field::API_KEY_ID, MSG_API_KEY_ID))
                .ok()
        });
        if let (Some(from), Some(until)) = (query.from, query.until) {
            if from > until {
                errors.push(field::UNTIL, MSG_PERIOD);
            }
        }
        let (after, limit) = page_position(query.cursor.as_deref(), query.limit, &mut errors);
        let filter = errors
            .into_result(AccessFilter {
                api_key_id,
                from: query.from,
                until: query.until,
            })
            .map_err(ListAccessesError::Invalid)?;
        let mut items = self
            .log
            .list(company.id, &filter, after, limit.saturating_add(1))?;
        let next_cursor = next_cursor(&mut items, limit, |r| ListCursor {
            created_at: r.at,
            id: r.id,
        });
        Ok(AccessPage { items, next_cursor })
    }

    /// The reads of `request_ids` (one subject's requests, as the console's subject page shows
    /// them), newest first, `limit` a page, strictly before `before`; with the position of the
    /// next (older) page when there is one. Reads `limit + 1` records along the index of the
    /// records' request ids: bounded by the page, never by the company's reads of a period.
    pub fn of_requests(
        &self,
        company: &Company,
        request_ids: &[Uuid],
        before: Option<ListCursor>,
        limit: u32,
    ) -> Result<(Vec<AccessRecord>, Option<ListCursor>), RepoError> {
        if request_ids.is_empty() || limit == 0 {
            return Ok((Vec::new(), None));
        }
        let mut items =
            self.log
                .of_requests(company.id, request_ids, before, limit.saturating_add(1))?;
        let older = if items.len() > limit as usize {
            items.truncate(limit as usize);
            items.last().map(|r| ListCursor {
                created_at: r.at,
                id: r.id,
            })
        } else {
            None
        };
        Ok((items, older))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use chrono::Duration;
    use domain::Scopes;
    use ports::MockAccessLog;

    use super::*;
    use crate::test_support::{company, consent_request, fixed_clock, now};

    fn caller() -> Caller {
        Caller {
            key_id: Uuid::from_u128(7),
            company: company(),
            scopes: Scopes::DEFAULT,
            quota_of: company().id,
            person: None,
        }
    }

    fn record_at(i: u128) -> AccessRecord {
        AccessRecord {
            id: Uuid::from_u128(i),
            company_id: company().id,
            api_key_id: Uuid::from_u128(7),
            person: None,
            route: "/api/titulares/consentimentos".into(),
            request_ids: vec![],
            hashes: vec![],
            at: now() + Duration::seconds(i as i64),
        }
    }

    #[test]
    fn a_record_names_the_key_the_route_the_requests_and_their_hashes_never_the_cpf() {
        let stored = Arc::new(Mutex::new(Vec::new()));
        let mut log = MockAccessLog::new();
        let sink = stored.clone();
        log.expect_record().times(1).returning(move |r| {
            sink.lock().unwrap().push(r.clone());
            Ok(())
        });
        let request = consent_request(Uuid::from_u128(1), domain::ConsentStatus::Active);
        let service = PersonalDataAccesses::new(Arc::new(log), fixed_clock());

        service
            .record(
                &caller(),
                "/api/solicitacao-consentimento/{id}",
                [(request.id, request.hash.as_str())],
            )
            .unwrap();

        let stored = stored.lock().unwrap();
        let record = &stored[0];
        assert_eq!(record.api_key_id, Uuid::from_u128(7));
        assert_eq!(record.company_id, company().id);
        assert_eq!(record.route, "/api/solicitacao-consentimento/{id}");
        assert_eq!(record.request_ids, vec![request.id]);
        assert_eq!(record.hashes, vec![request.hash.clone()]);
        assert_eq!(record.at, now());
        let cpf = request.content.subject_cpf.as_str();
        assert!(!format!("{record:?}").contains(cpf));
    }

    #[test]
    fn a_failed_record_is_an_error_for_the_caller() {
        let mut log = MockAccessLog::new();
        log.expect_record()
            .returning(|_| Err(RepoError::Unavailable(anyhow::anyhow!("down"))));
        let service = PersonalDataAccesses::new(Arc::new(log), fixed_clock());

        let result = service.record(&caller(), "/api/titulares/consentimentos", []);

        assert!(matches!(
            result,
            Err(RecordAccessError(RepoError::Unavailable(_)))
        ));
    }

    #[test]
    fn a_page_reads_one_more_than_asked_and_its_cursor_is_the_last_records_position() {
        let mut log = MockAccessLog::new();
        log.expect_list()
            .withf(|_, filter, after, limit| {
                *filter == AccessFilter::default() && after.is_none() && *limit == 3
            })
            .returning(|_, _, _, _| Ok((1..=3).map(record_at).collect()));
        let service = PersonalDataAccesses::new(Arc::new(log), fixed_clock());

        let page = service
            .list(
                &company(),
                AccessListQuery {
                    limit: Some(2),
                    ..Default::default()
                },
            )
            .unwrap();

        assert_eq!(page.items.len(), 2);
        let cursor = crate::decode_cursor(&page.next_cursor.unwrap()).unwrap();
        assert_eq!(cursor.id, Uuid::from_u128(2));
        assert_eq!(cursor.created_at, record_at(2).at);
    }

    #[test]
    fn a_bad_key_id_cursor_or_period_is_422_by_field_and_nothing_is_read() {
        let mut log = MockAccessLog::new();
        log.expect_list().times(0);
        let service = PersonalDataAccesses::new(Arc::new(log), fixed_clock());

        let result = service.list(
            &company(),
            AccessListQuery {
                api_key_id: Some("not-a-uuid".into()),
                from: Some(now()),
                until: Some(now() - Duration::seconds(1)),
                cursor: Some("garbage".into()),
                limit: Some(0),
            },
        );

        let Err(ListAccessesError::Invalid(errors)) = result else {
            panic!("{result:?}")
        };
        let fields: Vec<_> = errors.fields().iter().map(|e| e.field.clone()).collect();
        assert_eq!(fields, ["apiKeyId", "ate", "cursor", "limite"]);
    }
}
