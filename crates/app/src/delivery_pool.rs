//! The webhook sender pool of a process: `webhooks.concurrency` sender threads and one
//! dispatcher that claims due deliveries for the senders that are free, never more. Wiring
//! only: which deliveries a claim may take (the fair sender's rule) is the application's
//! ([`application::webhooks::fair_share`], [`DeliverWebhooks::claim`]); this module runs the
//! threads and keeps the [`InFlight`] count the rule reads.
//!
//! Why this shape:
//! - **No queue behind the lease.** Only as many deliveries are claimed as there are free
//!   senders, so each starts at once and its lease (sized to one attempt, see
//!   `WebhookSettings::lease`) covers the attempt. A delivery is never held claimed while it
//!   waits behind others, where its lease could expire and another instance send it too; and
//!   should a lease expire anyway, the attempt is recorded only by its holder (the lease token).
//! - **Graceful stop.** On [`Stop`] the dispatcher claims nothing more and closes the queue;
//!   a sender finishes the send it is in (bounded by the timeouts) and starts no other.

use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use application::{AttemptResult, DeliverWebhooks, InFlight, Shares};
use metrics::Metrics;
use ports::{DeliveryOutcome, DueDelivery};

use crate::workers::Stop;

/// When every sender is busy, how often the dispatcher looks for a free one (no query).
const BUSY_WAIT: Duration = Duration::from_millis(20);

/// The pool's shape.
#[derive(Debug, Clone, Copy)]
pub struct PoolSettings {
    /// Sender threads: deliveries attempted at once.
    pub concurrency: u32,
    /// Deliveries of one company attempted at once.
    pub per_company: u32,
    /// How often to look for due deliveries when none were left.
    pub poll: Duration,
}

/// Starts the dispatcher and the sender threads, counted in the process's `metrics`; they run
/// until `stop`.
pub fn start(
    deliver: DeliverWebhooks,
    metrics: Arc<Metrics>,
    settings: PoolSettings,
    stop: &Stop,
) -> Vec<JoinHandle<()>> {
    metrics.webhook_senders(settings.concurrency);
    let in_flight: Arc<Mutex<InFlight>> = Arc::default();
    let (queue, claimed) = mpsc::channel::<DueDelivery>();
    let claimed = Arc::new(Mutex::new(claimed));

    let mut handles: Vec<JoinHandle<()>> = (0..settings.concurrency)
        .map(|n| {
            let (deliver, claimed, in_flight, stop, metrics) = (
                deliver.clone(),
                claimed.clone(),
                in_flight.clone(),
                stop.clone(),
                metrics.clone(),
            );
            std::thread::Builder::new()
                .name(format!("webhook-sender-{n}"))
                .spawn(move || sender(&deliver, &claimed, &in_flight, &stop, &metrics))
                .expect("spawn a webhook sender thread")
        })
        .collect();

    let stop = stop.clone();
    handles.push(
        std::thread::Builder::new()
            .name("worker-webhook-delivery".into())
            .spawn(move || {
                dispatch(&deliver, settings, &in_flight, &stop, |delivery| {
                    metrics.webhook_in_flight(1);
                    queue.send(delivery).is_ok()
                });
                // Dropping the queue here ends the senders once they are idle.
                tracing::debug!(worker = "webhook-delivery", "stopped");
            })
            .expect("spawn the webhook dispatcher thread"),
    );
    handles
}

/// Claims for the free senders until `stop`: a full claim looks again at once, a short one
/// (nothing more due, or the companies with more due are at their share) waits `poll`.
fn dispatch(
    deliver: &DeliverWebhooks,
    settings: PoolSettings,
    in_flight: &Mutex<InFlight>,
    stop: &Stop,
    hand_over: impl Fn(DueDelivery) -> bool,
) {
    while !stop.is_stopped() {
        let busy = in_flight.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let shares = Shares {
            senders: settings.concurrency,
            per_company: settings.per_company,
        };
        let free = settings.concurrency.saturating_sub(busy.total());
        if free == 0 {
            stop.sleep(BUSY_WAIT);
            continue;
        }
        match deliver.claim(shares, &busy) {
            Ok(claimed) => {
                let full = claimed.len() >= free as usize;
                for delivery in claimed {
                    in_flight
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .take(delivery.company_id);
                    if !hand_over(delivery) {
                        return;
                    }
                }
                if !full {
                    stop.sleep(settings.poll);
                }
            }
            Err(e) => {
                tracing::warn!(
                    error = format!("{e:#}"),
                    "claiming webhook deliveries failed; retrying next round"
                );
                stop.sleep(settings.poll);
            }
        }
    }
}

/// One sender thread: attempts the deliveries handed over, one at a time, until the queue
/// closes. After `stop` it starts no new send (a delivery handed over but not started stays
/// claimed until its lease ends, then is due again).
fn sender(
    deliver: &DeliverWebhooks,
    claimed: &Mutex<Receiver<DueDelivery>>,
    in_flight: &Mutex<InFlight>,
    stop: &Stop,
    metrics: &Metrics,
) {
    loop {
        let next = claimed.lock().unwrap_or_else(|p| p.into_inner()).recv();
        let Ok(delivery) = next else {
            return;
        };
        if !stop.is_stopped() {
            // The attempt's span (telemetry on): a child of the change that wrote the event
            // when its trace context was kept, so the trace runs from request to webhook. Ids
            // only: never the URL (it may carry a token), the body or a secret.
            let span = tracing::debug_span!(
                "webhook",
                otel.name = "webhook attempt",
                otel.kind = "client",
                webhook.url_id = %delivery.webhook_url_id,
                webhook.delivery_id = %delivery.id,
                webhook.event_id = %delivery.event_id,
                webhook.attempt = delivery.attempts.saturating_add(1),
                webhook.outcome = tracing::field::Empty,
            );
            telemetry::continue_from(&span, delivery.traceparent.as_deref());
            let _entered = span.enter();
            let outcome = match deliver.deliver(&delivery) {
                Ok(AttemptResult::Recorded(DeliveryOutcome::Delivered)) => "delivered",
                Ok(AttemptResult::Recorded(DeliveryOutcome::RetryAt(_))) => "retried",
                Ok(AttemptResult::Recorded(DeliveryOutcome::Failed)) => "failed",
                Ok(AttemptResult::LeaseLost) => "lease_lost",
                // Logged by `deliver`; the delivery is due again when its lease ends.
                Err(_) => "unrecorded",
            };
            span.record("webhook.outcome", outcome);
            metrics.webhook_attempt(outcome);
        }
        in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .release(delivery.company_id);
        metrics.webhook_in_flight(-1);
    }
}
