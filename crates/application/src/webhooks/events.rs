//! Catching up after a webhook outage (`GET /api/eventos`): the company's events, oldest first,
//! a keyset page at a time, each with the id its deliveries carried as `webhook-id`.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use domain::{Company, EventType, ValidationErrors};
use ports::{EventFilter, EventLog, ListCursor, RepoError, StoredEvent};

use crate::consent_requests::cursor::{decode_cursor, encode_cursor};
use crate::consent_requests::list::{DEFAULT_LIMIT, MAX_LIMIT};

/// The query as received; `tipo` as text so a wrong one is reported by name (422).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventListQuery {
    /// An event type (`solicitacao.revogada`, ...).
    pub event_type: Option<String>,
    /// Events whose timestamp is at or after this instant.
    pub since: Option<DateTime<Utc>>,
    /// The previous page's `proximo_cursor`.
    pub cursor: Option<String>,
    /// 1..=500, default 50 (as the consent list).
    pub limit: Option<u32>,
}

/// One page of events, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventPage {
    pub items: Vec<StoredEvent>,
    /// The cursor of the next page; `None` on the last page.
    pub next_cursor: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ListEventsError {
    /// Broken rules of the query, by wire name; the log was not read.
    #[error(transparent)]
    Invalid(ValidationErrors),
    #[error(transparent)]
    Repo(#[from] RepoError),
}

const MSG_EVENT_TYPE: &str = "tipo de evento desconhecido";
const MSG_CURSOR: &str = "cursor inválido: use o proximoCursor da página anterior";
const MSG_LIMIT: &str = "o limite deve estar entre 1 e 500";

#[derive(Clone)]
pub struct ListEvents {
    events: Arc<dyn EventLog>,
}

impl ListEvents {
    pub fn new(events: Arc<dyn EventLog>) -> Self {
        Self { events }
    }

    /// A page of the company's events matching `query`, ordered by (timestamp, id). Every rule
    /// is checked first and all broken ones reported together: `tipo` one of
    /// [`EventType::SUBSCRIBABLE`], `cursor` one this service wrote, `limite` within 1..=500.
    pub fn execute(
        &self,
        company: &Company,
        query: EventListQuery,
    ) -> Result<EventPage, ListEventsError> {
        let (filter, after, limit) = validate(query).map_err(ListEventsError::Invalid)?;
        // one more than asked tells whether a next page exists
        let mut items = self.events.list(company.id, &filter, after, limit + 1)?;
        let next_cursor = if items.len() > limit as usize {
            items.truncate(limit as usize);
            items.last().map(|last| {
                encode_cursor(&ListCursor {
                    created_at: last.timestamp,
                    id: last.id,
                })
            })
        } else {
            None
        };
        Ok(EventPage { items, next_cursor })
    }
}

fn validate(
    query: EventListQuery,
) -> Result<(EventFilter, Option<ListCursor>, u32), ValidationErrors> {
    let mut errors = ValidationErrors::default();
    let event_type = query.event_type.as_deref().and_then(|raw| {
        let parsed = EventType::parse(raw).filter(|t| t.is_subscribable());
        if parsed.is_none() {
            errors.push("tipo", MSG_EVENT_TYPE);
        }
        parsed
    });
    let after = query.cursor.as_deref().and_then(|raw| {
        decode_cursor(raw)
            .map_err(|_| errors.push("cursor", MSG_CURSOR))
            .ok()
    });
    let limit = query.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        errors.push("limite", MSG_LIMIT);
    }
    errors.into_result((
        EventFilter {
            event_type,
            since: query.since,
        },
        after,
        limit,
    ))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use chrono::Duration;
    use domain::FieldError;
    use ports::MockEventLog;
    use uuid::Uuid;

    use super::*;
    use crate::test_support::{company, now};

    type ListCall = (EventFilter, Option<ListCursor>, u32);

    fn events(n: u128) -> Vec<StoredEvent> {
        (1..=n)
            .map(|i| StoredEvent {
                id: Uuid::from_u128(i),
                event_type: "solicitacao.criada".to_owned(),
                timestamp: now() + Duration::seconds(i as i64),
                payload: "{}".to_owned(),
            })
            .collect()
    }

    fn log_answering(stored: Vec<StoredEvent>, calls: Arc<Mutex<Vec<ListCall>>>) -> MockEventLog {
        let company = company().id;
        let mut log = MockEventLog::new();
        log.expect_list()
            .withf(move |e, _, _, _| *e == company)
            .returning(move |_, filter, after, limit| {
                calls.lock().unwrap().push((filter.clone(), after, limit));
                Ok(stored.iter().take(limit as usize).cloned().collect())
            });
        log
    }

    #[test]
    fn a_full_page_asks_one_more_and_answers_the_cursor_of_its_last_item() {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let service = ListEvents::new(Arc::new(log_answering(events(3), calls.clone())));

        let page = service
            .execute(
                &company(),
                EventListQuery {
                    event_type: Some("solicitacao.revogada".to_owned()),
                    since: Some(now()),
                    limit: Some(2),
                    ..EventListQuery::default()
                },
            )
            .unwrap();

        assert_eq!(page.items, events(2));
        let cursor = page.next_cursor.unwrap();
        assert_eq!(
            decode_cursor(&cursor).unwrap(),
            ListCursor {
                created_at: events(2)[1].timestamp,
                id: Uuid::from_u128(2)
            }
        );
        assert_eq!(
            *calls.lock().unwrap(),
            [(
                EventFilter {
                    event_type: Some(EventType::RequestRevoked),
                    since: Some(now())
                },
                None,
                3
            )]
        );

        // the next page starts after it and is the last
        let page = service
            .execute(
                &company(),
                EventListQuery {
                    cursor: Some(cursor),
                    ..EventListQuery::default()
                },
            )
            .unwrap();
        assert_eq!(page.next_cursor, None);
        assert_eq!(calls.lock().unwrap()[1].1.unwrap().id, Uuid::from_u128(2));
        assert_eq!(calls.lock().unwrap()[1].2, DEFAULT_LIMIT + 1);
    }

    #[test]
    fn every_broken_rule_is_reported_at_once_and_the_log_is_not_read() {
        let mut log = MockEventLog::new();
        log.expect_list().times(0);
        let service = ListEvents::new(Arc::new(log));

        for (query, fields) in [
            (
                EventListQuery {
                    event_type: Some("webhook.teste".to_owned()),
                    cursor: Some("v1.x".to_owned()),
                    limit: Some(0),
                    ..EventListQuery::default()
                },
                vec!["tipo", "cursor", "limite"],
            ),
            (
                EventListQuery {
                    event_type: Some("Solicitacao.Criada".to_owned()),
                    limit: Some(501),
                    ..EventListQuery::default()
                },
                vec!["tipo", "limite"],
            ),
        ] {
            let Err(ListEventsError::Invalid(errors)) = service.execute(&company(), query) else {
                panic!("expected a validation error");
            };
            let reported: Vec<&str> = errors
                .fields()
                .iter()
                .map(|FieldError { field, .. }| field.as_str())
                .collect();
            assert_eq!(reported, fields);
        }
    }
}
