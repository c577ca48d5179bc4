//! A company's delivery log of one webhook URL, and replaying one delivery.

use std::sync::Arc;

use domain::{Company, ValidationErrors};
use ports::{
    Clock, DeliveryFilter, DeliveryRecord, RepoError, UrlHealth, WebhookDeliveryRepository,
    WebhookUrlRepository,
};

use crate::webhooks::deliver::generic_error;
use uuid::Uuid;

/// How many deliveries the log lists when no `limite` is given.
pub const DELIVERY_LOG_DEFAULT_LIMIT: u32 = 50;
/// The largest `limite` of the delivery log.
pub const DELIVERY_LOG_MAX_LIMIT: u32 = 200;

/// The window of a URL's health figures.
pub const HEALTH_WINDOW_HOURS: i64 = 24;
/// The most deliveries a URL's health figures read (the newest of the window): their bound.
pub const HEALTH_MAX_DELIVERIES: u32 = 1000;
/// The most failed deliveries one "resend every failed delivery since" replays.
pub const REPLAY_FAILED_MAX: u32 = 1000;

const MSG_LIMIT: &str = "o limite deve estar entre 1 e 200";

#[derive(Debug, thiserror::Error)]
pub enum DeliveryLogError {
    /// `limite` out of range (field `limite`).
    #[error(transparent)]
    Invalid(ValidationErrors),
    /// No webhook URL (or, on replay, no delivery of an active URL) of this company has this id.
    #[error("webhook URL or delivery not found")]
    NotFound,
    /// Replay: the URL is disabled, so the delivery would wait unsent; re-enable it first.
    #[error("webhook URL disabled")]
    UrlDisabled,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct WebhookDeliveries {
    deliveries: Arc<dyn WebhookDeliveryRepository>,
    webhook_urls: Arc<dyn WebhookUrlRepository>,
    clock: Arc<dyn Clock>,
}

impl WebhookDeliveries {
    pub fn new(
        deliveries: Arc<dyn WebhookDeliveryRepository>,
        webhook_urls: Arc<dyn WebhookUrlRepository>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            deliveries,
            webhook_urls,
            clock,
        }
    }

    /// The newest `limit` (default [`DELIVERY_LOG_DEFAULT_LIMIT`], 1..=
    /// [`DELIVERY_LOG_MAX_LIMIT`]) deliveries to the company's URL `webhook_url_id`, removed
    /// URLs included, with their attempts. Each attempt's `erro` is its class's generic text
    /// ([`generic_error`]), whatever version stored it.
    pub fn list(
        &self,
        company: &Company,
        webhook_url_id: Uuid,
        limit: Option<u32>,
    ) -> Result<Vec<DeliveryRecord>, DeliveryLogError> {
        let limit = limit.unwrap_or(DELIVERY_LOG_DEFAULT_LIMIT);
        if !(1..=DELIVERY_LOG_MAX_LIMIT).contains(&limit) {
            return Err(DeliveryLogError::Invalid(ValidationErrors::single(
                "limite", MSG_LIMIT,
            )));
        }
        let mut deliveries = self
            .deliveries
            .list_for_url(company.id, webhook_url_id, limit)?
            .ok_or(DeliveryLogError::NotFound)?;
        for attempt in deliveries.iter_mut().flat_map(|d| d.attempts.iter_mut()) {
            attempt.error = attempt.error.as_deref().map(generic_error);
        }
        Ok(deliveries)
    }

    /// A page of the delivery log of the company's URL `webhook_url_id` (removed URLs
    /// included): at most `limit` (1..=[`DELIVERY_LOG_MAX_LIMIT`]) deliveries matching `filter`,
    /// newest first, with their attempts, each attempt's `erro` its class's generic text.
    pub fn page(
        &self,
        company: &Company,
        webhook_url_id: Uuid,
        filter: &DeliveryFilter,
        limit: u32,
    ) -> Result<Vec<DeliveryRecord>, DeliveryLogError> {
        if !(1..=DELIVERY_LOG_MAX_LIMIT).contains(&limit) {
            return Err(DeliveryLogError::Invalid(ValidationErrors::single(
                "limite", MSG_LIMIT,
            )));
        }
        let mut deliveries = self
            .deliveries
            .page_for_url(company.id, webhook_url_id, filter, limit)?
            .ok_or(DeliveryLogError::NotFound)?;
        for attempt in deliveries.iter_mut().flat_map(|d| d.attempts.iter_mut()) {
            attempt.error = attempt.error.as_deref().map(generic_error);
        }
        Ok(deliveries)
    }

    /// The health of the company's URL `webhook_url_id` over the last
    /// [`HEALTH_WINDOW_HOURS`]: its newest [`HEALTH_MAX_DELIVERIES`] deliveries of the window and
    /// their attempts (a bounded read whatever the URL's traffic), and its last success.
    pub fn health(
        &self,
        company: &Company,
        webhook_url_id: Uuid,
    ) -> Result<UrlHealth, DeliveryLogError> {
        let since = self.clock.now() - chrono::Duration::hours(HEALTH_WINDOW_HOURS);
        self.deliveries
            .url_health(company.id, webhook_url_id, since, HEALTH_MAX_DELIVERIES)?
            .ok_or(DeliveryLogError::NotFound)
    }

    /// Replays, as [`Self::replay`] replays one, the failed deliveries to the company's active
    /// URL `webhook_url_id` created at or after `since`, oldest first, at most
    /// [`REPLAY_FAILED_MAX`] (the operator repeats it for more); how many. A disabled URL is
    /// `UrlDisabled` and changes nothing, as for one replay.
    pub fn replay_failed_since(
        &self,
        company: &Company,
        webhook_url_id: Uuid,
        since: chrono::DateTime<chrono::Utc>,
    ) -> Result<u32, DeliveryLogError> {
        let webhook = self
            .webhook_urls
            .get(company.id, webhook_url_id)?
            .ok_or(DeliveryLogError::NotFound)?;
        if webhook.disabled_at.is_some() {
            return Err(DeliveryLogError::UrlDisabled);
        }
        let replayed = self.deliveries.replay_failed_since(
            company.id,
            webhook_url_id,
            since,
            self.clock.now(),
            REPLAY_FAILED_MAX,
        )?;
        tracing::info!(
            empresa_id = %company.id,
            webhook_url_id = %webhook_url_id,
            replayed,
            "webhook failed deliveries replayed"
        );
        Ok(replayed)
    }

    /// Makes the company's delivery `delivery_id` to its active URL `webhook_url_id` due now,
    /// whatever its status: sent again with the same event id and body. A disabled URL is
    /// `UrlDisabled` and changes nothing: the sender skips disabled URLs, so the replay would
    /// only wait, unsent, until someone re-enables it. (A URL disabled between the check and
    /// the replay leaves the delivery pending, exactly as if the replay came first.)
    pub fn replay(
        &self,
        company: &Company,
        webhook_url_id: Uuid,
        delivery_id: Uuid,
    ) -> Result<(), DeliveryLogError> {
        let webhook = self
            .webhook_urls
            .get(company.id, webhook_url_id)?
            .ok_or(DeliveryLogError::NotFound)?;
        if webhook.disabled_at.is_some() {
            return Err(DeliveryLogError::UrlDisabled);
        }
        if !self
            .deliveries
            .replay(company.id, webhook_url_id, delivery_id, self.clock.now())?
        {
            return Err(DeliveryLogError::NotFound);
        }
        tracing::info!(
            empresa_id = %company.id,
            webhook_url_id = %webhook_url_id,
            delivery_id = %delivery_id,
            "webhook delivery replayed"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use domain::FieldError;
    use domain::WebhookUrl;
    use ports::{DeliveryAttempt, MockWebhookDeliveryRepository, MockWebhookUrlRepository};

    use super::*;
    use crate::test_support::{company, fixed_clock, now};

    fn service(repo: MockWebhookDeliveryRepository) -> WebhookDeliveries {
        service_with(repo, urls_answering(Some(None)))
    }

    fn service_with(
        repo: MockWebhookDeliveryRepository,
        urls: MockWebhookUrlRepository,
    ) -> WebhookDeliveries {
        WebhookDeliveries::new(Arc::new(repo), Arc::new(urls), fixed_clock())
    }

    /// A URL repository whose `get` answers the company's URL: `None` for no URL, `Some(at)`
    /// for one disabled at `at` (or active when `at` is `None`). Any number of calls.
    fn urls_answering(
        url: Option<Option<chrono::DateTime<chrono::Utc>>>,
    ) -> MockWebhookUrlRepository {
        let mut urls = MockWebhookUrlRepository::new();
        urls.expect_get().returning(move |company, id| {
            Ok(url.map(|disabled_at| WebhookUrl {
                id,
                company_id: company,
                url: "https://a.example/h".to_owned(),
                created_at: now(),
                removed_at: None,
                disabled_at,
                failing_since: None,
                disabled_reason: None,
                events: domain::EventSelection::All,
            }))
        });
        urls
    }

    fn record() -> DeliveryRecord {
        DeliveryRecord {
            id: Uuid::new_v4(),
            event_id: Uuid::new_v4(),
            event_type: "solicitacao.criada".to_owned(),
            status: "pendente".to_owned(),
            created_at: now(),
            next_attempt_at: Some(now()),
            attempts: vec![DeliveryAttempt {
                at: now(),
                http_status: Some(500),
                latency_ms: 12,
                error: Some("resposta HTTP 500".to_owned()),
                response_body: None,
            }],
            request_body: "{}".to_owned(),
        }
    }

    fn expect_list(
        repo: &mut MockWebhookDeliveryRepository,
        url_id: Uuid,
        limit: u32,
        answer: Option<Vec<DeliveryRecord>>,
    ) {
        let company_id = company().id;
        repo.expect_list_for_url()
            .withf(move |company, got, l| *company == company_id && *got == url_id && *l == limit)
            .times(1)
            .returning(move |_, _, _| Ok(answer.clone()));
    }

    #[test]
    fn listing_without_a_limit_asks_for_the_newest_fifty_of_the_companys_url() {
        let url_id = Uuid::new_v4();
        let expected = vec![record(), record()];
        let mut repo = MockWebhookDeliveryRepository::new();
        expect_list(&mut repo, url_id, 50, Some(expected.clone()));

        let listed = service(repo).list(&company(), url_id, None).unwrap();

        assert_eq!(listed, expected);
    }

    #[test]
    fn the_log_shows_each_failure_as_its_class_never_a_stored_detail() {
        let url_id = Uuid::new_v4();
        let mut stored = record();
        stored.attempts[0].error = Some("HTTP 502".to_owned());
        stored.attempts.push(DeliveryAttempt {
            error: Some("destino recusado: o host aponta para um endereço não público".to_owned()),
            ..stored.attempts[0].clone()
        });
        let mut repo = MockWebhookDeliveryRepository::new();
        expect_list(&mut repo, url_id, 50, Some(vec![stored]));

        let listed = service(repo).list(&company(), url_id, None).unwrap();

        let texts: Vec<Option<&str>> = listed[0]
            .attempts
            .iter()
            .map(|t| t.error.as_deref())
            .collect();
        assert_eq!(
            texts,
            [Some("resposta HTTP 502"), Some("destino não permitido")]
        );
    }

    #[test]
    fn listing_with_a_limit_in_range_asks_for_that_many() {
        for limit in [1, 200] {
            let url_id = Uuid::new_v4();
            let mut repo = MockWebhookDeliveryRepository::new();
            expect_list(&mut repo, url_id, limit, Some(vec![]));

            let listed = service(repo).list(&company(), url_id, Some(limit)).unwrap();

            assert_eq!(listed, vec![], "{limit}");
        }
    }

    #[test]
    fn listing_with_a_limit_out_of_range_is_invalid_on_limite_and_reads_nothing() {
        for limit in [0, 201, u32::MAX] {
            let mut repo = MockWebhookDeliveryRepository::new();
            repo.expect_list_for_url().times(0);

            let result = service(repo).list(&company(), Uuid::new_v4(), Some(limit));

            match result {
                Err(DeliveryLogError::Invalid(errors)) => assert_eq!(
                    errors.fields(),
                    [FieldError::new(
                        "limite",
                        "o limite deve estar entre 1 e 200"
                    )],
                    "{limit}"
                ),
                other => panic!("{limit}: expected Invalid, got {other:?}"),
            }
        }
    }

    #[test]
    fn listing_a_url_that_is_not_the_companys_is_not_found() {
        let url_id = Uuid::new_v4();
        let mut repo = MockWebhookDeliveryRepository::new();
        expect_list(&mut repo, url_id, 50, None);

        let result = service(repo).list(&company(), url_id, None);

        assert!(
            matches!(result, Err(DeliveryLogError::NotFound)),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_list_is_a_repository_error() {
        let mut repo = MockWebhookDeliveryRepository::new();
        repo.expect_list_for_url()
            .times(1)
            .returning(|_, _, _| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));

        let result = service(repo).list(&company(), Uuid::new_v4(), None);

        assert!(
            matches!(
                result,
                Err(DeliveryLogError::Repo(RepoError::Unavailable(_)))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn replaying_makes_the_companys_delivery_due_at_the_clock_time() {
        let url_id = Uuid::new_v4();
        let delivery_id = Uuid::new_v4();
        let company_id = company().id;
        let mut repo = MockWebhookDeliveryRepository::new();
        repo.expect_replay()
            .withf(move |company, url, delivery, at| {
                *company == company_id && *url == url_id && *delivery == delivery_id && *at == now()
            })
            .times(1)
            .returning(|_, _, _, _| Ok(true));

        service(repo)
            .replay(&company(), url_id, delivery_id)
            .unwrap();
    }

    #[test]
    fn resending_what_failed_since_replays_at_most_the_cap_of_the_companys_url_at_the_clock_time() {
        let url_id = Uuid::new_v4();
        let company_id = company().id;
        let since = now() - chrono::Duration::hours(3);
        let mut repo = MockWebhookDeliveryRepository::new();
        repo.expect_replay_failed_since()
            .withf(move |company, url, from, at, limit| {
                *company == company_id
                    && *url == url_id
                    && *from == since
                    && *at == now()
                    && *limit == REPLAY_FAILED_MAX
            })
            .times(1)
            .returning(|_, _, _, _, _| Ok(7));
        assert_eq!(
            service(repo)
                .replay_failed_since(&company(), url_id, since)
                .unwrap(),
            7
        );
    }

    #[test]
    fn resending_what_failed_to_a_disabled_or_unknown_url_changes_nothing() {
        for (url, expected) in [(Some(Some(now())), "disabled"), (None, "not found")] {
            let mut repo = MockWebhookDeliveryRepository::new();
            repo.expect_replay_failed_since().times(0);
            let result = service_with(repo, urls_answering(url)).replay_failed_since(
                &company(),
                Uuid::new_v4(),
                now(),
            );
            match expected {
                "disabled" => assert!(matches!(result, Err(DeliveryLogError::UrlDisabled))),
                _ => assert!(matches!(result, Err(DeliveryLogError::NotFound))),
            }
        }
    }

    #[test]
    fn a_urls_health_is_read_over_the_last_24_hours_capped() {
        let mut repo = MockWebhookDeliveryRepository::new();
        repo.expect_url_health()
            .withf(|_, _, since, cap| {
                *since == now() - chrono::Duration::hours(HEALTH_WINDOW_HOURS)
                    && *cap == HEALTH_MAX_DELIVERIES
            })
            .times(1)
            .returning(|_, _, _, _| Ok(Some(UrlHealth::default())));
        service(repo).health(&company(), Uuid::new_v4()).unwrap();
    }

    #[test]
    fn replaying_to_a_disabled_url_is_url_disabled_and_changes_nothing() {
        let mut repo = MockWebhookDeliveryRepository::new();
        repo.expect_replay().times(0);

        let result = service_with(repo, urls_answering(Some(Some(now())))).replay(
            &company(),
            Uuid::new_v4(),
            Uuid::new_v4(),
        );

        assert!(
            matches!(result, Err(DeliveryLogError::UrlDisabled)),
            "{result:?}"
        );
    }

    #[test]
    fn replaying_to_an_absent_removed_or_another_companys_url_is_not_found_and_changes_nothing() {
        let mut repo = MockWebhookDeliveryRepository::new();
        repo.expect_replay().times(0);

        let result = service_with(repo, urls_answering(None)).replay(
            &company(),
            Uuid::new_v4(),
            Uuid::new_v4(),
        );

        assert!(
            matches!(result, Err(DeliveryLogError::NotFound)),
            "{result:?}"
        );
    }

    #[test]
    fn replaying_an_absent_or_another_companys_delivery_is_not_found() {
        let mut repo = MockWebhookDeliveryRepository::new();
        repo.expect_replay()
            .times(1)
            .returning(|_, _, _, _| Ok(false));

        let result = service(repo).replay(&company(), Uuid::new_v4(), Uuid::new_v4());

        assert!(
            matches!(result, Err(DeliveryLogError::NotFound)),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_replay_is_a_repository_error() {
        let mut repo = MockWebhookDeliveryRepository::new();
        repo.expect_replay()
            .times(1)
            .returning(|_, _, _, _| Err(RepoError::Unexpected(anyhow::anyhow!("boom"))));

        let result = service(repo).replay(&company(), Uuid::new_v4(), Uuid::new_v4());

        assert!(
            matches!(
                result,
                Err(DeliveryLogError::Repo(RepoError::Unexpected(_)))
            ),
            "{result:?}"
        );
    }
}
