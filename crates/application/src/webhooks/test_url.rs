//! `POST /api/webhook-urls/{id}/testar`: a signed `webhook.teste` event sent to one of the
//! company's URLs at once, answered with that attempt and kept in the delivery log.
//!
//! Bounded like any delivery (the target guard's pinned addresses and DNS timeout, the
//! sender's timeouts) and, per company, in how many run at once: each holds a blocking thread
//! for up to a timeout, so one company cannot take them all.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use domain::{Company, CompanyId, WebhookEvent};
use ports::{DeliveryOutcome, RepoError, WebhookDeliveryRepository};
use uuid::Uuid;

use crate::webhooks::deliver::DeliverWebhooks;

/// How many tests one company may have under way at once (per process). A third is refused at
/// once (429) rather than queued: a test is interactive, and waiting behind two slow receivers
/// tells the caller nothing.
pub const MAX_CONCURRENT_TESTS_PER_COMPANY: u32 = 2;

#[derive(Debug, thiserror::Error)]
pub enum TestWebhookError {
    /// No webhook URL of this company has this id (absent, another company's, or removed);
    /// nothing was written or sent.
    #[error("webhook URL not found")]
    NotFound,
    /// The company already has [`MAX_CONCURRENT_TESTS_PER_COMPANY`] tests under way; nothing
    /// was written or sent.
    #[error("too many webhook tests under way for the company")]
    TooMany,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

/// The one attempt of a test, as the delivery log shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookTestResult {
    pub delivery_id: Uuid,
    /// The `webhook-id` the receiver got.
    pub event_id: Uuid,
    /// The receiver's status, if it answered.
    pub http_status: Option<u16>,
    pub latency_ms: u32,
    /// Why it failed, as the log says it (never a host or a library's text); `None` on a 2xx.
    pub error: Option<String>,
}

#[derive(Clone)]
pub struct TestWebhookUrl {
    deliveries: Arc<dyn WebhookDeliveryRepository>,
    deliver: DeliverWebhooks,
    clock: Arc<dyn ports::Clock>,
    lease: chrono::Duration,
    in_flight: Arc<Mutex<HashMap<CompanyId, u32>>>,
}

/// A company's place among its tests under way; given back when dropped.
struct Slot {
    in_flight: Arc<Mutex<HashMap<CompanyId, u32>>>,
    company: CompanyId,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = in_flight.get_mut(&self.company) {
            *n -= 1;
            if *n == 0 {
                in_flight.remove(&self.company);
            }
        }
    }
}

impl TestWebhookUrl {
    pub fn new(
        deliveries: Arc<dyn WebhookDeliveryRepository>,
        deliver: DeliverWebhooks,
        clock: Arc<dyn ports::Clock>,
        lease: chrono::Duration,
    ) -> Self {
        Self {
            deliveries,
            deliver,
            clock,
            lease,
            in_flight: Arc::default(),
        }
    }

    /// Writes a `webhook.teste` event (data: the URL's id) and its delivery to the company's
    /// URL `id` (disabled or not), sends it at once exactly as the sender would (guard, pinned
    /// addresses, signature with the current and, during an overlap, the previous secret), and
    /// records that one attempt as final: `entregue` on a 2xx, `falhou` otherwise (a test is
    /// not retried; `reenviar` sends it again). The request's database connection is given back
    /// before the lookup and the send by the adapters' decorators the binary composes
    /// (`ReleasingTargetGuard`, `ReleasingWebhookSender`), as for the PGCC.
    pub fn execute(
        &self,
        company: &Company,
        id: Uuid,
    ) -> Result<WebhookTestResult, TestWebhookError> {
        let _slot = self.take_slot(company.id)?;
        let now = self.clock.now();
        let event = WebhookEvent::test(company.id, id, now);
        let delivery = self
            .deliveries
            .begin_test(id, &event, now + self.lease)?
            .ok_or(TestWebhookError::NotFound)?;
        let (attempt, _) = self.deliver.attempt(&delivery);
        let outcome = if matches!(attempt.http_status, Some(200..=299)) {
            DeliveryOutcome::Delivered
        } else {
            DeliveryOutcome::Failed
        };
        self.deliveries.record_attempt(
            delivery.company_id,
            delivery.id,
            delivery.lease,
            &attempt,
            outcome,
        )?;
        tracing::info!(
            empresa_id = %company.id,
            webhook_url_id = %id,
            delivery_id = %delivery.id,
            status_http = ?attempt.http_status,
            "webhook URL tested"
        );
        Ok(WebhookTestResult {
            delivery_id: delivery.id,
            event_id: delivery.event_id,
            http_status: attempt.http_status,
            latency_ms: attempt.latency_ms,
            error: attempt.error,
        })
    }

    fn take_slot(&self, company: CompanyId) -> Result<Slot, TestWebhookError> {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        let n = in_flight.entry(company).or_insert(0);
        if *n >= MAX_CONCURRENT_TESTS_PER_COMPANY {
            return Err(TestWebhookError::TooMany);
        }
        *n += 1;
        Ok(Slot {
            in_flight: self.in_flight.clone(),
            company,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ports::{
        CheckedTarget, DueDelivery, EncryptedSecret, MockSecretCipher, MockTargetGuard,
        MockWebhookDeliveryRepository, MockWebhookSender, SendReport,
    };

    use super::*;
    use crate::settings::ServiceSettings;
    use crate::test_support::{company, fixed_clock, now};

    const URL_ID: Uuid = Uuid::from_u128(0x0e11);

    fn due(event: &WebhookEvent) -> DueDelivery {
        DueDelivery {
            id: Uuid::from_u128(0xde1),
            company_id: company().id,
            webhook_url_id: URL_ID,
            url: "https://receiver.example/hook".to_owned(),
            event_id: event.id,
            payload: "{}".to_owned(),
            attempts: 0,
            secret: EncryptedSecret("enc".to_owned()),
            previous_secret: None,
            lease: Uuid::from_u128(0x1ea5e),
            traceparent: None,
        }
    }

    fn service(
        deliveries: MockWebhookDeliveryRepository,
        sender: MockWebhookSender,
    ) -> TestWebhookUrl {
        let mut guard = MockTargetGuard::new();
        guard.expect_resolve().returning(|_, _| {
            Ok(CheckedTarget {
                addresses: vec![std::net::SocketAddr::from(([203, 0, 113, 7], 443))],
            })
        });
        let mut cipher = MockSecretCipher::new();
        cipher
            .expect_decrypt()
            .returning(|_| Ok("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_owned()));
        let deliveries: Arc<dyn WebhookDeliveryRepository> = Arc::new(deliveries);
        let deliver = DeliverWebhooks::new(
            deliveries.clone(),
            Arc::new(sender),
            Arc::new(guard),
            Arc::new(cipher),
            fixed_clock(),
            ServiceSettings::default(),
        );
        TestWebhookUrl::new(
            deliveries,
            deliver,
            fixed_clock(),
            chrono::Duration::minutes(2),
        )
    }

    fn sender_answering(status: Option<u16>) -> MockWebhookSender {
        let mut sender = MockWebhookSender::new();
        sender.expect_send().returning(move |_, _, headers, _| {
            assert!(headers.iter().any(|(n, _)| n == "webhook-signature"));
            SendReport {
                status,
                retry_after: None,
                latency: Duration::from_millis(12),
                error: if status.is_none() {
                    Some(ports::SendFailure::Timeout)
                } else {
                    None
                },
                body: None,
            }
        });
        sender
    }

    /// A repository that writes the test for `URL_ID` only and records the outcome.
    fn repository(outcomes: Arc<Mutex<Vec<DeliveryOutcome>>>) -> MockWebhookDeliveryRepository {
        let mut deliveries = MockWebhookDeliveryRepository::new();
        deliveries
            .expect_begin_test()
            .returning(|url, event, lease_until| {
                assert_eq!(event.event_type, domain::EventType::WebhookTest);
                assert_eq!(lease_until, now() + chrono::Duration::minutes(2));
                Ok((url == URL_ID).then(|| due(event)))
            });
        deliveries
            .expect_record_attempt()
            .returning(move |_, _, lease, _, outcome| {
                assert_eq!(lease, Uuid::from_u128(0x1ea5e));
                outcomes.lock().unwrap().push(outcome);
                Ok(true)
            });
        deliveries
    }

    #[test]
    fn a_2xx_is_answered_and_recorded_delivered() {
        let outcomes = Arc::new(Mutex::new(Vec::new()));
        let service = service(repository(outcomes.clone()), sender_answering(Some(204)));

        let result = service.execute(&company(), URL_ID).unwrap();

        assert_eq!(result.http_status, Some(204));
        assert_eq!(result.latency_ms, 12);
        assert_eq!(result.error, None);
        assert_eq!(result.delivery_id, Uuid::from_u128(0xde1));
        assert_eq!(*outcomes.lock().unwrap(), [DeliveryOutcome::Delivered]);
    }

    #[test]
    fn a_failure_is_answered_with_its_generic_text_and_recorded_failed_not_retried() {
        let outcomes = Arc::new(Mutex::new(Vec::new()));
        for (status, error) in [(Some(500), "resposta HTTP 500"), (None, "tempo esgotado")] {
            let service = service(repository(outcomes.clone()), sender_answering(status));
            let result = service.execute(&company(), URL_ID).unwrap();
            assert_eq!(result.http_status, status);
            assert_eq!(result.error.as_deref(), Some(error));
        }
        assert_eq!(
            *outcomes.lock().unwrap(),
            [DeliveryOutcome::Failed, DeliveryOutcome::Failed]
        );
    }

    #[test]
    fn an_unknown_url_is_not_found_and_nothing_is_sent() {
        let mut sender = MockWebhookSender::new();
        sender.expect_send().times(0);
        let service = service(repository(Arc::default()), sender);

        assert!(matches!(
            service.execute(&company(), Uuid::from_u128(1)),
            Err(TestWebhookError::NotFound)
        ));
    }

    #[test]
    fn a_company_runs_at_most_two_tests_at_once_and_others_are_not_held_back() {
        let mut sender = MockWebhookSender::new();
        sender
            .expect_send()
            .times(1)
            .returning(|_, _, _, _| SendReport {
                status: Some(200),
                retry_after: None,
                latency: Duration::from_millis(1),
                error: None,
                body: None,
            });
        let service = service(repository(Arc::default()), sender);

        // two tests of the company under way (their slots held)
        let first = service.take_slot(company().id).unwrap();
        let second = service.take_slot(company().id).unwrap();
        assert!(matches!(
            service.execute(&company(), URL_ID),
            Err(TestWebhookError::TooMany)
        ));
        let other = CompanyId(Uuid::from_u128(0xb));
        assert!(
            service.take_slot(other).is_ok(),
            "another company is not held back"
        );

        // a slot given back is usable again, and a finished test gives its own back
        drop(first);
        assert!(service.execute(&company(), URL_ID).is_ok());
        let third = service.take_slot(company().id);
        assert!(third.is_ok(), "the finished test gave its slot back");
        drop(second);
    }
}
