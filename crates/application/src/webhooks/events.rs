//! Catching up after a webhook outage (`GET /api/eventos`): the company's events, oldest first,
//! a keyset page at a time, each with the id its deliveries carried as `webhook-id`.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use domain::{Company, EventType, ValidationErrors};
use ports::{EventFilter, EventLog, EventPosition, RepoError, StoredEvent};

use crate::consent_requests::list::{DEFAULT_LIMIT, MAX_LIMIT};
use crate::webhooks::event_cursor::{decode_event_cursor, encode_event_cursor};

/// The query as received; `tipo` as text so a wrong one is reported by name (422).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventListQuery {
    /// An event type (`solicitacao.revogada`, ...).
    pub event_type: Option<String>,
    /// Events whose timestamp is at or after this instant.
    pub since: Option<DateTime<Utc>>,
    /// The previous page's `next_cursor` (`proximoCursor` on the wire).
    pub cursor: Option<String>,
    /// 1..=500, default 50 (as the consent list).
    pub limit: Option<u32>,
}

/// One page of events, in feed order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventPage {
    pub items: Vec<StoredEvent>,
    /// Where to resume: after the last item of this page; on a page without items, the cursor
    /// the page was asked from (`None` only when neither exists). Following it returns every
    /// event exactly once, whenever it committed; an empty page means nothing new yet.
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

    /// A page of the company's events matching `query`, in feed order (the order their
    /// transactions can no longer change, [`EventPosition`]). Every rule is checked first and
    /// all broken ones reported together: `tipo` one of [`EventType::SUBSCRIBABLE`], `cursor`
    /// one this feed wrote, `limite` within 1..=500.
    pub fn execute(
        &self,
        company: &Company,
        query: EventListQuery,
    ) -> Result<EventPage, ListEventsError> {
        let (filter, after, limit) = validate(query).map_err(ListEventsError::Invalid)?;
        let items = self.events.list(company.id, &filter, after, limit)?;
        // a client keeps the cursor of its last page and reads from it again later: the feed is
        // never "over", so there is always a place to resume from once anything was read
        let next_cursor = items
            .last()
            .map(|last| last.position)
            .or(after)
            .map(|position| encode_event_cursor(&position));
        Ok(EventPage { items, next_cursor })
    }
}

fn validate(
    query: EventListQuery,
) -> Result<(EventFilter, Option<EventPosition>, u32), ValidationErrors> {
    let mut errors = ValidationErrors::default();
    let event_type = query.event_type.as_deref().and_then(|raw| {
        let parsed = EventType::parse(raw).filter(|t| t.is_subscribable());
        if parsed.is_none() {
            errors.push("tipo", MSG_EVENT_TYPE);
        }
        parsed
    });
    let after = query.cursor.as_deref().and_then(|raw| {
        decode_event_cursor(raw)
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

    type ListCall = (EventFilter, Option<EventPosition>, u32);

    fn events(n: u128) -> Vec<StoredEvent> {
        (1..=n)
            .map(|i| StoredEvent {
                id: Uuid::from_u128(i),
                event_type: "solicitacao.criada".to_owned(),
                timestamp: now() + Duration::seconds(i as i64),
                payload: "{}".to_owned(),
                position: EventPosition {
                    transaction: 1000 + i as i64,
                    sequence: i as i64,
                    id: Uuid::from_u128(i),
                },
            })
            .collect()
    }

    /// A log holding `stored`, answering what follows the cursor.
    fn log_answering(stored: Vec<StoredEvent>, calls: Arc<Mutex<Vec<ListCall>>>) -> MockEventLog {
        let company = company().id;
        let mut log = MockEventLog::new();
        log.expect_list()
            .withf(move |e, _, _, _| *e == company)
            .returning(move |_, filter, after, limit| {
                calls.lock().unwrap().push((filter.clone(), after, limit));
                Ok(stored
                    .iter()
                    .filter(|e| after.is_none_or(|a| e.position > a))
                    .take(limit as usize)
                    .cloned()
                    .collect())
            });
        log
    }

    #[test]
    fn every_page_answers_the_cursor_of_its_last_item_and_an_empty_one_the_cursor_it_was_asked_from(
    ) {
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
        assert_eq!(decode_event_cursor(&cursor).unwrap(), events(2)[1].position);
        assert_eq!(
            *calls.lock().unwrap(),
            [(
                EventFilter {
                    event_type: Some(EventType::RequestRevoked),
                    since: Some(now())
                },
                None,
                2
            )]
        );

        // the next page starts after it; its last item is the end of the feed for now
        let page = service
            .execute(
                &company(),
                EventListQuery {
                    cursor: Some(cursor),
                    ..EventListQuery::default()
                },
            )
            .unwrap();
        assert_eq!(page.items, events(3)[2..]);
        assert_eq!(calls.lock().unwrap()[1].1, Some(events(2)[1].position));
        assert_eq!(calls.lock().unwrap()[1].2, DEFAULT_LIMIT);
        let last = page
            .next_cursor
            .expect("a page with items always has a cursor");
        assert_eq!(decode_event_cursor(&last).unwrap(), events(3)[2].position);

        // nothing new: no items, and the same cursor to come back with
        let page = service
            .execute(
                &company(),
                EventListQuery {
                    cursor: Some(last.clone()),
                    ..EventListQuery::default()
                },
            )
            .unwrap();
        assert!(page.items.is_empty());
        assert_eq!(page.next_cursor, Some(last));
    }

    #[test]
    fn an_empty_feed_read_from_its_start_has_no_cursor_yet() {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let service = ListEvents::new(Arc::new(log_answering(Vec::new(), calls)));

        let page = service
            .execute(&company(), EventListQuery::default())
            .unwrap();

        assert!(page.items.is_empty());
        assert_eq!(page.next_cursor, None);
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
