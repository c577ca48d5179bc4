//! The webhook delivery worker's steps: claim due deliveries fairly across companies (the rule
//! is in [`crate::webhooks::fair_share`]), make one
//! attempt at each claimed delivery (resolve and check the target, sign, POST) and record it
//! under the claim's lease with where the delivery goes next (delivered, retry at, failed).
//! Running the attempts concurrently is the caller's business (the `app` crate's sender pool).
//! Also disables URLs whose deliveries have all been failing, and checks at start-up that the
//! configured key decrypts the stored secrets.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use domain::CompanyId;
use ports::{
    Clock, DeliveryAttempt, DeliveryOutcome, DueDelivery, RepoError, SecretCipher, SendFailure,
    SendReport, TargetGuard, TargetRefused, WebhookDeliveryRepository, WebhookSender,
    TRACEPARENT_HEADER,
};
use rand::Rng;
use uuid::Uuid;

use crate::settings::ServiceSettings;
use crate::webhooks::fair_share::{round_robin, InFlight, Shares};
use crate::webhooks::signing::signature_header;

/// The texts of the delivery log, one per failure class: they say what kind of failure it
/// was and nothing of the target (no host, no address, no error text of a library), so the log
/// cannot be used to tell internal hosts apart.
pub mod error {
    pub const TIMEOUT: &str = "tempo esgotado";
    pub const DNS: &str = "falha de DNS";
    /// Not looked up: the company already had `webhooks.dns_in_flight_per_company` lookups
    /// under way in this process (its other URLs' names not answering, or registrations).
    pub const DNS_BUSY: &str = "consultas de DNS da empresa no limite";
    pub const REFUSED: &str = "conexão recusada";
    pub const CLOSED: &str = "conexão encerrada pelo receptor";
    pub const TLS: &str = "falha de TLS";
    pub const INVALID_RESPONSE: &str = "resposta HTTP inválida";
    pub const CONNECTION: &str = "falha de conexão";
    pub const NOT_ALLOWED: &str = "destino não permitido";
    pub const UNREADABLE_SECRET: &str = "segredo ilegível";
    /// The reason (`webhook_entregas.motivo`) of a delivery given up without an attempt because
    /// its company had more pending deliveries than `webhooks.max_pending_per_company`.
    pub const CAPPED: &str = "limite de entregas pendentes da empresa excedido";

    /// `resposta HTTP <status>`.
    pub fn status(status: u16) -> String {
        format!("resposta HTTP {status}")
    }
}

/// The outcome of a number of attempts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeliveryReport {
    /// Deliveries claimed and given an attempt (recorded).
    pub attempted: u32,
    /// Answered with a 2xx.
    pub delivered: u32,
    /// Not delivered, scheduled for another attempt.
    pub retried: u32,
    /// Not delivered and given up on (schedule exhausted, target refused by policy).
    pub failed: u32,
}

/// What became of one claimed delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptResult {
    /// Recorded: delivered, retry at, or failed.
    Recorded(DeliveryOutcome),
    /// The lease was taken over by another claim (it had expired): nothing recorded, the
    /// other sender's attempt is the one that counts.
    LeaseLost,
}

impl DeliveryReport {
    /// Counts one attempt's result.
    pub fn count(&mut self, result: AttemptResult) {
        let AttemptResult::Recorded(outcome) = result else {
            return;
        };
        self.attempted += 1;
        match outcome {
            DeliveryOutcome::Delivered => self.delivered += 1,
            DeliveryOutcome::RetryAt(_) => self.retried += 1,
            DeliveryOutcome::Failed => self.failed += 1,
        }
    }
}

/// The start-up check of `webhooks.encryption_key` failed.
#[derive(Debug, thiserror::Error)]
pub enum KeyCheckError {
    /// A stored secret does not decrypt with the configured key: it is not the key the secrets
    /// were encrypted with (or a stored secret was altered).
    #[error("the configured key does not decrypt the stored webhook secrets")]
    Mismatch,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

/// Decrypts the newest stored webhook secret, if any, with `cipher`: a process started with
/// another key than the one the secrets were encrypted with would sign nothing (every delivery
/// unreadable), so it must refuse to start instead.
pub fn check_encryption_key(
    deliveries: &dyn WebhookDeliveryRepository,
    cipher: &dyn SecretCipher,
) -> Result<(), KeyCheckError> {
    match deliveries.newest_secret()? {
        Some(secret) if cipher.decrypt(&secret).is_err() => Err(KeyCheckError::Mismatch),
        _ => Ok(()),
    }
}

#[derive(Clone)]
pub struct DeliverWebhooks {
    deliveries: Arc<dyn WebhookDeliveryRepository>,
    sender: Arc<dyn WebhookSender>,
    guard: Arc<dyn TargetGuard>,
    cipher: Arc<dyn SecretCipher>,
    clock: Arc<dyn Clock>,
    settings: ServiceSettings,
}

impl DeliverWebhooks {
    pub fn new(
        deliveries: Arc<dyn WebhookDeliveryRepository>,
        sender: Arc<dyn WebhookSender>,
        guard: Arc<dyn TargetGuard>,
        cipher: Arc<dyn SecretCipher>,
        clock: Arc<dyn Clock>,
        settings: ServiceSettings,
    ) -> Self {
        Self {
            deliveries,
            sender,
            guard,
            cipher,
            clock,
            settings,
        }
    }

    /// Claims due deliveries for the free senders of a pool shaped `shares` whose senders are
    /// busy with `in_flight`, by the fair rule of [`crate::webhooks::fair_share`]: the companies
    /// with due work (found without reading their deliveries), the one waiting longest first,
    /// take turns within their room (`per_company` less what they have in flight); then one
    /// claim per company for its quota, each with a new lease token, leased for the configured
    /// time from now. A company that filled its quota may take what others left, in further
    /// rounds. A company whose claim fails is skipped (logged); the error is returned only when
    /// nothing was claimed. The caller attempts each at once with [`DeliverWebhooks::deliver`]:
    /// the lease is sized to one attempt, not to a queue.
    pub fn claim(
        &self,
        shares: Shares,
        in_flight: &InFlight,
    ) -> Result<Vec<DueDelivery>, RepoError> {
        let mut left = shares.senders.saturating_sub(in_flight.total());
        if left == 0 || shares.per_company == 0 {
            return Ok(Vec::new());
        }
        let now = self.clock.now();
        let lease_until = now + self.settings.webhook_lease;
        let mut due = self.deliveries.companies_due(now)?;
        due.sort_by_key(|c| (c.since, c.company_id.0));
        let mut rooms: Vec<(CompanyId, u32)> = due
            .iter()
            .map(|c| {
                let room = shares
                    .per_company
                    .saturating_sub(in_flight.of(c.company_id));
                (c.company_id, room)
            })
            .filter(|(_, room)| *room > 0)
            .collect();
        let mut claimed = Vec::new();
        let mut failure = None;
        while left > 0 && !rooms.is_empty() {
            let mut more = Vec::new();
            for (company, quota) in round_robin(&rooms, left) {
                let got = match self.deliveries.claim_due(
                    company,
                    quota,
                    now,
                    lease_until,
                    Uuid::new_v4(),
                ) {
                    Ok(got) => got,
                    Err(e) => {
                        tracing::warn!(company_id = %company.0, error = %e, "webhook delivery: claiming a company's deliveries failed; the others go on");
                        failure.get_or_insert(e);
                        continue;
                    }
                };
                let n = u32::try_from(got.len()).unwrap_or(u32::MAX).min(quota);
                left = left.saturating_sub(n);
                claimed.extend(got);
                let room = rooms
                    .iter()
                    .find(|(c, _)| *c == company)
                    .map_or(0, |(_, r)| *r)
                    .saturating_sub(n);
                // a company short of its quota has nothing more due now
                if n == quota && room > 0 {
                    more.push((company, room));
                }
            }
            rooms = more;
        }
        match failure {
            Some(e) if claimed.is_empty() => Err(e),
            _ => Ok(claimed),
        }
    }

    /// One round of the URLs' upkeep: for each URL marked since its removal, disabling or
    /// re-enabling (at most `urls`), one batch of at most `batch` of its pending deliveries
    /// cancelled, parked or brought back. How many deliveries changed; a URL whose batch fails
    /// is logged and left for the next round.
    pub fn settle_urls(&self, urls: u32, batch: u32) -> Result<u32, RepoError> {
        let now = self.clock.now();
        let mut changed = 0u32;
        for (company, url) in self.deliveries.urls_to_settle(urls)? {
            match self.deliveries.settle_url(company, url, batch, now) {
                Ok(settled) => changed = changed.saturating_add(settled.changed),
                Err(e) => tracing::warn!(
                    company_id = %company.0,
                    webhook_url_id = %url,
                    error = %e,
                    "webhook delivery: settling a URL's deliveries failed; retried next round"
                ),
            }
        }
        Ok(changed)
    }

    /// Keeps each company's pending deliveries (parked included) within `max_pending`: past it,
    /// the soonest due beyond the newest `max_pending` fail with [`error::CAPPED`] as their
    /// reason, in batches of `batch`. How many failed (the caller counts them in its metrics);
    /// a company whose batch fails is logged and left for the next round.
    pub fn cap_pending(&self, max_pending: u32, batch: u32) -> Result<u32, RepoError> {
        let mut dropped = 0u32;
        for company in self.deliveries.companies_with_pending()? {
            loop {
                let now = self.clock.now();
                match self.deliveries.fail_beyond_cap(
                    company,
                    max_pending,
                    batch,
                    error::CAPPED,
                    now,
                ) {
                    Ok(n) => {
                        dropped = dropped.saturating_add(n);
                        if n > 0 {
                            tracing::warn!(company_id = %company.0, failed = n, max_pending, "webhook deliveries past the company's cap of pending deliveries failed");
                        }
                        if n < batch {
                            break;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(company_id = %company.0, error = %e, "webhook delivery: capping a company's pending deliveries failed; retried next round");
                        break;
                    }
                }
            }
        }
        Ok(dropped)
    }

    /// One attempt at a claimed `delivery`, recorded under its lease:
    /// - the target guard resolves and checks the URL again (DNS can change): refused by
    ///   policy is a failed attempt and nothing is sent; a DNS failure or timeout is an attempt
    ///   retried on the schedule;
    /// - the current secret (and the previous one during a rotation's overlap) is decrypted: an
    ///   unreadable one is an attempt retried on the schedule (a key fixed by a restart makes it
    ///   deliverable again), nothing is sent;
    /// - the body is POSTed with the Standard Webhooks headers to the addresses the guard
    ///   accepted; any 2xx is delivered;
    /// - otherwise the next attempt waits the schedule's next delay, at least the receiver's
    ///   `Retry-After` (capped at the schedule's largest delay), with ±10% jitter; with the
    ///   schedule exhausted the delivery has failed.
    ///
    /// Logs carry ids and statuses only, never a URL, a body or a secret.
    pub fn deliver(&self, delivery: &DueDelivery) -> Result<AttemptResult, RepoError> {
        let (attempt, outcome) = self.attempt(delivery);
        let recorded = self
            .deliveries
            .record_attempt(delivery.company_id, delivery.id, delivery.lease, &attempt, outcome)
            .inspect_err(|e| {
                tracing::warn!(delivery_id = %delivery.id, error = %e, "webhook delivery: recording the attempt failed");
            })?;
        if !recorded {
            tracing::warn!(
                delivery_id = %delivery.id,
                "webhook delivery: the lease was taken over by another sender; attempt not recorded"
            );
            return Ok(AttemptResult::LeaseLost);
        }
        tracing::debug!(
            delivery_id = %delivery.id,
            webhook_url_id = %delivery.webhook_url_id,
            status_http = ?attempt.http_status,
            outcome = ?outcome,
            "webhook delivery attempted"
        );
        Ok(AttemptResult::Recorded(outcome))
    }

    /// Disables every URL whose deliveries over the configured window all failed; how many.
    pub fn disable_failing_urls(&self) -> Result<u32, RepoError> {
        let disabled = self
            .deliveries
            .disable_failing_urls(self.clock.now(), self.settings.webhook_disable_after)?;
        if disabled > 0 {
            tracing::warn!(disabled, "webhook URLs disabled after failing deliveries");
        }
        Ok(disabled)
    }

    /// One attempt at `delivery`: what it gave and where the delivery goes next.
    pub(crate) fn attempt(&self, delivery: &DueDelivery) -> (DeliveryAttempt, DeliveryOutcome) {
        let at = self.clock.now();
        let not_sent = |error: &str, retry: bool| {
            let attempt = DeliveryAttempt {
                at,
                http_status: None,
                latency_ms: 0,
                error: Some(error.to_owned()),
                response_body: None,
            };
            let outcome = if retry {
                self.next(delivery, None)
            } else {
                DeliveryOutcome::Failed
            };
            (attempt, outcome)
        };

        let target = match self.guard.resolve(delivery.company_id, &delivery.url) {
            Ok(target) => target,
            Err(refused) => {
                tracing::warn!(
                    delivery_id = %delivery.id,
                    webhook_url_id = %delivery.webhook_url_id,
                    reason = ?refused,
                    "webhook delivery: target not resolved or refused"
                );
                return match refused {
                    TargetRefused::DnsFailure | TargetRefused::DnsTimeout => {
                        not_sent(error::DNS, true)
                    }
                    TargetRefused::LookupsBusy => not_sent(error::DNS_BUSY, true),
                    _ => not_sent(error::NOT_ALLOWED, false),
                };
            }
        };

        let webhook_id = delivery.event_id.hyphenated().to_string();
        let timestamp = at.timestamp();
        let Some(signature) = self.signature(delivery, &webhook_id, timestamp) else {
            tracing::error!(
                delivery_id = %delivery.id,
                "webhook delivery: unreadable secret (is webhooks.encryption_key the key it was encrypted with?); retried on the schedule"
            );
            return not_sent(error::UNREADABLE_SECRET, true);
        };
        let mut headers: Vec<(String, String)> = [
            ("webhook-id", webhook_id),
            ("webhook-timestamp", timestamp.to_string()),
            ("webhook-signature", signature),
            ("content-type", "application/json".to_owned()),
        ]
        .map(|(name, value)| (name.to_owned(), value))
        .into();
        // The change's trace context, when it was kept (telemetry on): the sender makes its
        // attempt a child of it and sends the attempt's own in its place.
        if let Some(traceparent) = &delivery.traceparent {
            headers.push((TRACEPARENT_HEADER.to_owned(), traceparent.clone()));
        }

        let sent = self
            .sender
            .send(&delivery.url, &target, &headers, &delivery.payload);
        let attempt = DeliveryAttempt {
            at,
            http_status: sent.status,
            latency_ms: u32::try_from(sent.latency.as_millis()).unwrap_or(u32::MAX),
            error: error_of(&sent),
            response_body: sent.body,
        };
        if matches!(sent.status, Some(200..=299)) {
            return (attempt, DeliveryOutcome::Delivered);
        }
        let outcome = self.next(delivery, sent.retry_after);
        (attempt, outcome)
    }

    /// After a failed attempt: retry at the schedule's next delay (see [`retry_delay`]), or
    /// failed when the schedule is exhausted.
    fn next(&self, delivery: &DueDelivery, retry_after: Option<Duration>) -> DeliveryOutcome {
        let attempts_made = delivery.attempts.saturating_add(1);
        let unit = rand::thread_rng().gen_range(-1.0..=1.0);
        match retry_delay(
            &self.settings.webhook_retry_schedule,
            attempts_made,
            retry_after,
            unit,
        ) {
            Some(delay) => DeliveryOutcome::RetryAt(after(self.clock.now(), delay)),
            None => DeliveryOutcome::Failed,
        }
    }

    /// The `webhook-signature` header under the current secret and, during an overlap, the
    /// previous one; `None` if either cannot be decrypted or is not a valid secret.
    fn signature(
        &self,
        delivery: &DueDelivery,
        webhook_id: &str,
        timestamp: i64,
    ) -> Option<String> {
        let current = self.cipher.decrypt(&delivery.secret).ok()?;
        let previous = match &delivery.previous_secret {
            Some(secret) => Some(self.cipher.decrypt(secret).ok()?),
            None => None,
        };
        let secrets: Vec<&str> = std::iter::once(current.as_str())
            .chain(previous.as_deref())
            .collect();
        signature_header(&secrets, webhook_id, timestamp, &delivery.payload).ok()
    }
}

/// Why a non-2xx attempt failed, as its class's text; `None` for a 2xx.
fn error_of(sent: &SendReport) -> Option<String> {
    match sent.status {
        Some(200..=299) => None,
        Some(status) => Some(error::status(status)),
        None => Some(
            match sent.error {
                Some(SendFailure::Timeout) => error::TIMEOUT,
                Some(SendFailure::Dns) => error::DNS,
                Some(SendFailure::ConnectionRefused) => error::REFUSED,
                Some(SendFailure::ConnectionClosed) => error::CLOSED,
                Some(SendFailure::Tls) => error::TLS,
                Some(SendFailure::InvalidResponse) => error::INVALID_RESPONSE,
                Some(SendFailure::Connection) | None => error::CONNECTION,
            }
            .to_owned(),
        ),
    }
}

/// The log's text for an attempt's stored `erro`: the texts of [`error`] as they are, and those
/// older versions stored (`HTTP 500`, `timeout`, `destino recusado: ...`, `host inacessível`,
/// any other) mapped to their class, so the log never shows anything but the classes' texts.
pub fn generic_error(stored: &str) -> String {
    const CLASSES: [&str; 10] = [
        error::TIMEOUT,
        error::DNS,
        error::DNS_BUSY,
        error::REFUSED,
        error::CLOSED,
        error::TLS,
        error::INVALID_RESPONSE,
        error::CONNECTION,
        error::NOT_ALLOWED,
        error::UNREADABLE_SECRET,
    ];
    if CLASSES.contains(&stored) {
        return stored.to_owned();
    }
    let status = |digits: &str| {
        digits
            .parse::<u16>()
            .ok()
            .filter(|s| (100..=599).contains(s))
    };
    if let Some(s) = stored
        .strip_prefix("resposta HTTP ")
        .or_else(|| stored.strip_prefix("HTTP "))
        .and_then(status)
    {
        return error::status(s);
    }
    match stored {
        "timeout" => error::TIMEOUT,
        "sem resposta" => error::CONNECTION,
        _ if stored.starts_with("destino recusado") => error::NOT_ALLOWED,
        _ => error::CONNECTION,
    }
    .to_owned()
}

/// The wait before the next attempt after `attempts_made` attempts, or `None` when the schedule
/// is exhausted. The schedule's delay, raised to the receiver's `retry_after` capped at the
/// schedule's largest delay, then moved by `unit` (in -1..=1) times 10% of itself; never below
/// the honoured `retry_after`.
fn retry_delay(
    schedule: &[Duration],
    attempts_made: u32,
    retry_after: Option<Duration>,
    unit: f64,
) -> Option<Duration> {
    let scheduled = *schedule.get(usize::try_from(attempts_made).ok()?)?;
    let largest = schedule.iter().max().copied().unwrap_or_default();
    let floor = retry_after.map_or(Duration::ZERO, |wanted| wanted.min(largest));
    let delay = scheduled.max(floor);
    let factor = 1.0 + 0.1 * unit.clamp(-1.0, 1.0);
    let jittered = Duration::try_from_secs_f64(delay.as_secs_f64() * factor).unwrap_or(delay);
    Some(jittered.max(floor))
}

/// `now + delay`, saturating at the latest representable instant.
fn after(now: DateTime<Utc>, delay: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(delay)
        .ok()
        .and_then(|delay| now.checked_add_signed(delay))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use domain::CompanyId;
    use ports::{
        CheckedTarget, EncryptedSecret, MockSecretCipher, MockTargetGuard,
        MockWebhookDeliveryRepository, MockWebhookSender,
    };
    use uuid::Uuid;

    use super::*;
    use crate::test_support::{fixed_clock, now};
    use crate::webhooks::signing::sign;

    const CURRENT: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const PREVIOUS: &str = "whsec_cHJldmlvdXMtc2VjcmV0LWtleQ==";
    const URL: &str = "https://receiver.example/hooks";
    const BODY: &str =
        r#"{"type":"solicitacao.criada","timestamp":"2025-03-14T12:00:00Z","data":{}}"#;

    type Recorded = Arc<Mutex<Vec<(Uuid, DeliveryAttempt, DeliveryOutcome)>>>;
    type Sent = Arc<Mutex<Vec<(String, Vec<(String, String)>, String)>>>;

    fn encrypted(plain: &str) -> EncryptedSecret {
        EncryptedSecret(format!("enc:{plain}"))
    }

    fn due(attempts: u32) -> DueDelivery {
        DueDelivery {
            id: Uuid::new_v4(),
            company_id: CompanyId(Uuid::from_u128(1)),
            webhook_url_id: Uuid::new_v4(),
            url: URL.to_owned(),
            event_id: Uuid::new_v4(),
            payload: BODY.to_owned(),
            attempts,
            secret: encrypted(CURRENT),
            previous_secret: None,
            lease: Uuid::new_v4(),
            traceparent: None,
        }
    }

    /// The address the guard accepted for [`URL`].
    fn checked() -> CheckedTarget {
        CheckedTarget {
            addresses: vec![std::net::SocketAddr::from(([203, 0, 113, 7], 443))],
        }
    }

    impl DeliverWebhooks {
        /// One claim of up to `batch` (no smaller share per company) and an attempt at each claimed
        /// delivery in turn, as one sender thread would; stops at the first repository error.
        fn run_once(&self, batch: u32) -> Result<DeliveryReport, RepoError> {
            let mut report = DeliveryReport::default();
            let shares = Shares {
                senders: batch,
                per_company: batch,
            };
            for delivery in self.claim(shares, &InFlight::default())? {
                report.count(self.deliver(&delivery)?);
            }
            Ok(report)
        }
    }

    /// Company 1 (the company of [`due`]) has deliveries due since [`now`].
    fn one_company_due(repo: &mut MockWebhookDeliveryRepository) {
        repo.expect_companies_due().returning(|_| {
            Ok(vec![ports::CompanyDue {
                company_id: CompanyId(Uuid::from_u128(1)),
                since: now(),
            }])
        });
    }

    fn answer(status: Option<u16>) -> SendReport {
        SendReport {
            status,
            retry_after: None,
            latency: Duration::from_millis(35),
            error: status.is_none().then_some(SendFailure::ConnectionRefused),
            body: None,
        }
    }

    /// Claims `claimed` once (for [`now`] and the default lease) and records every attempt.
    fn repo(claimed: Vec<DueDelivery>, recorded: &Recorded) -> MockWebhookDeliveryRepository {
        let mut repo = MockWebhookDeliveryRepository::new();
        one_company_due(&mut repo);
        repo.expect_claim_due()
            .withf(|company, limit, at, lease_until, _| {
                *company == CompanyId(Uuid::from_u128(1))
                    && *limit == 10
                    && *at == now()
                    && *lease_until == now() + chrono::Duration::minutes(2)
            })
            .times(1)
            .return_once(move |_, _, _, _, _| Ok(claimed));
        let sink = recorded.clone();
        repo.expect_record_attempt()
            .returning(move |_company, id, _lease, attempt, outcome| {
                sink.lock().unwrap().push((id, attempt.clone(), outcome));
                Ok(true)
            });
        repo
    }

    fn allowing_guard() -> MockTargetGuard {
        let mut guard = MockTargetGuard::new();
        guard
            .expect_resolve()
            .withf(|_, url| url == URL)
            .returning(|_, _| Ok(checked()));
        guard
    }

    /// Decrypts `enc:s` as `s`; anything else fails.
    fn cipher() -> MockSecretCipher {
        let mut cipher = MockSecretCipher::new();
        cipher.expect_encrypt().times(0);
        cipher.expect_decrypt().returning(|secret| {
            secret
                .0
                .strip_prefix("enc:")
                .map(str::to_owned)
                .ok_or_else(|| anyhow::anyhow!("authentication tag mismatch"))
        });
        cipher
    }

    /// Answers every POST with `report` and records what was sent.
    fn sender(report: SendReport, sent: &Sent) -> MockWebhookSender {
        let sink = sent.clone();
        let mut sender = MockWebhookSender::new();
        sender
            .expect_send()
            .returning(move |url, target, headers, body| {
                assert_eq!(*target, checked(), "only the addresses the guard accepted");
                sink.lock()
                    .unwrap()
                    .push((url.to_owned(), headers.to_vec(), body.to_owned()));
                report.clone()
            });
        sender
    }

    fn worker(
        repo: MockWebhookDeliveryRepository,
        sender: MockWebhookSender,
        guard: MockTargetGuard,
        cipher: MockSecretCipher,
    ) -> DeliverWebhooks {
        worker_with(repo, sender, guard, cipher, ServiceSettings::default())
    }

    fn worker_with(
        repo: MockWebhookDeliveryRepository,
        sender: MockWebhookSender,
        guard: MockTargetGuard,
        cipher: MockSecretCipher,
        settings: ServiceSettings,
    ) -> DeliverWebhooks {
        DeliverWebhooks::new(
            Arc::new(repo),
            Arc::new(sender),
            Arc::new(guard),
            Arc::new(cipher),
            fixed_clock(),
            settings,
        )
    }

    fn header<'a>(headers: &'a [(String, String)], name: &str) -> &'a str {
        let found: Vec<&str> = headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(found.len(), 1, "{name}: {headers:?}");
        found[0]
    }

    /// The one recorded attempt and outcome, for `delivery`.
    fn only_record(
        recorded: &Recorded,
        delivery: &DueDelivery,
    ) -> (DeliveryAttempt, DeliveryOutcome) {
        let recorded = recorded.lock().unwrap();
        assert_eq!(recorded.len(), 1, "{recorded:?}");
        assert_eq!(recorded[0].0, delivery.id);
        (recorded[0].1.clone(), recorded[0].2)
    }

    /// The instant of a `RetryAt` outcome.
    fn retry_at(outcome: DeliveryOutcome) -> DateTime<Utc> {
        match outcome {
            DeliveryOutcome::RetryAt(at) => at,
            other => panic!("expected RetryAt, got {other:?}"),
        }
    }

    fn assert_within(at: DateTime<Utc>, low: Duration, high: Duration) {
        let low = now() + chrono::Duration::from_std(low).unwrap();
        let high = now() + chrono::Duration::from_std(high).unwrap();
        assert!(low <= at && at <= high, "{at} not in [{low}, {high}]");
    }

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn a_2xx_answer_is_delivered_with_the_standard_webhooks_headers_and_the_exact_body() {
        let delivery = due(0);
        let recorded = Recorded::default();
        let sent = Sent::default();
        let worker = worker(
            repo(vec![delivery.clone()], &recorded),
            sender(answer(Some(204)), &sent),
            allowing_guard(),
            cipher(),
        );

        let report = worker.run_once(10).unwrap();

        assert_eq!(
            report,
            DeliveryReport {
                attempted: 1,
                delivered: 1,
                retried: 0,
                failed: 0
            }
        );
        let sent = sent.lock().unwrap();
        assert_eq!(sent.len(), 1);
        let (url, headers, body) = &sent[0];
        assert_eq!(url, URL);
        assert_eq!(body, BODY);
        assert_eq!(headers.len(), 4, "{headers:?}");
        let webhook_id = delivery.event_id.hyphenated().to_string();
        assert_eq!(header(headers, "webhook-id"), webhook_id);
        assert_eq!(
            header(headers, "webhook-timestamp"),
            now().timestamp().to_string()
        );
        assert_eq!(header(headers, "content-type"), "application/json");
        assert_eq!(
            header(headers, "webhook-signature"),
            sign(CURRENT, &webhook_id, now().timestamp(), BODY).unwrap()
        );
        assert_eq!(
            only_record(&recorded, &delivery),
            (
                DeliveryAttempt {
                    at: now(),
                    http_status: Some(204),
                    latency_ms: 35,
                    error: None,
                    response_body: None
                },
                DeliveryOutcome::Delivered
            )
        );
    }

    #[test]
    fn any_2xx_status_is_delivered() {
        for status in [200, 201, 202, 299] {
            let delivery = due(3);
            let recorded = Recorded::default();
            let worker = worker(
                repo(vec![delivery.clone()], &recorded),
                sender(answer(Some(status)), &Sent::default()),
                allowing_guard(),
                cipher(),
            );

            let report = worker.run_once(10).unwrap();

            assert_eq!(report.delivered, 1, "{status}");
            assert_eq!(
                only_record(&recorded, &delivery).1,
                DeliveryOutcome::Delivered
            );
        }
    }

    #[test]
    fn during_a_rotation_the_header_carries_the_current_then_the_previous_signature() {
        let mut delivery = due(0);
        delivery.previous_secret = Some(encrypted(PREVIOUS));
        let recorded = Recorded::default();
        let sent = Sent::default();
        let worker = worker(
            repo(vec![delivery.clone()], &recorded),
            sender(answer(Some(200)), &sent),
            allowing_guard(),
            cipher(),
        );

        worker.run_once(10).unwrap();

        let sent = sent.lock().unwrap();
        let signature = header(&sent[0].1, "webhook-signature");
        let webhook_id = delivery.event_id.hyphenated().to_string();
        let ts = now().timestamp();
        assert_eq!(
            signature.split(' ').collect::<Vec<_>>(),
            [
                sign(CURRENT, &webhook_id, ts, BODY).unwrap(),
                sign(PREVIOUS, &webhook_id, ts, BODY).unwrap(),
            ]
        );
        assert_eq!(
            only_record(&recorded, &delivery).1,
            DeliveryOutcome::Delivered
        );
    }

    #[test]
    fn a_500_is_retried_after_the_next_delay_of_the_schedule_within_ten_percent_its_answer_kept() {
        let delivery = due(0);
        let recorded = Recorded::default();
        let worker = worker(
            repo(vec![delivery.clone()], &recorded),
            // the receiver said why: its answer's start is kept with the attempt
            sender(
                SendReport {
                    body: Some("{\"erro\":\"fora do ar\"}".to_owned()),
                    ..answer(Some(500))
                },
                &Sent::default(),
            ),
            allowing_guard(),
            cipher(),
        );

        let report = worker.run_once(10).unwrap();

        assert_eq!(
            report,
            DeliveryReport {
                attempted: 1,
                delivered: 0,
                retried: 1,
                failed: 0
            }
        );
        let (attempt, outcome) = only_record(&recorded, &delivery);
        assert_eq!(
            attempt,
            DeliveryAttempt {
                at: now(),
                http_status: Some(500),
                latency_ms: 35,
                error: Some("resposta HTTP 500".to_owned()),
                response_body: Some("{\"erro\":\"fora do ar\"}".to_owned())
            }
        );
        assert_within(
            retry_at(outcome),
            Duration::from_millis(4_500),
            Duration::from_millis(5_500),
        );
    }

    #[test]
    fn each_failed_attempt_waits_the_schedule_entry_after_it() {
        let schedule = ServiceSettings::default().webhook_retry_schedule;
        for attempts in 0..7u32 {
            let delivery = due(attempts);
            let recorded = Recorded::default();
            let worker = worker(
                repo(vec![delivery.clone()], &recorded),
                sender(answer(Some(503)), &Sent::default()),
                allowing_guard(),
                cipher(),
            );

            worker.run_once(10).unwrap();

            let delay = schedule[attempts as usize + 1];
            let (_, outcome) = only_record(&recorded, &delivery);
            assert_within(retry_at(outcome), delay.mul_f64(0.9), delay.mul_f64(1.1));
        }
    }

    #[test]
    fn a_redirect_or_client_error_is_not_delivered_but_retried() {
        for status in [199, 301, 302, 400, 404, 410] {
            let delivery = due(1);
            let recorded = Recorded::default();
            let worker = worker(
                repo(vec![delivery.clone()], &recorded),
                sender(answer(Some(status)), &Sent::default()),
                allowing_guard(),
                cipher(),
            );

            worker.run_once(10).unwrap();

            let (attempt, outcome) = only_record(&recorded, &delivery);
            assert_eq!(attempt.error, Some(format!("resposta HTTP {status}")));
            assert_within(retry_at(outcome), secs(270), secs(330));
        }
    }

    #[test]
    fn no_answer_is_retried_with_the_senders_reason_and_no_status() {
        let delivery = due(0);
        let recorded = Recorded::default();
        let worker = worker(
            repo(vec![delivery.clone()], &recorded),
            sender(answer(None), &Sent::default()),
            allowing_guard(),
            cipher(),
        );

        let report = worker.run_once(10).unwrap();

        assert_eq!(report.retried, 1);
        let (attempt, outcome) = only_record(&recorded, &delivery);
        assert_eq!(
            attempt,
            DeliveryAttempt {
                at: now(),
                http_status: None,
                latency_ms: 35,
                error: Some("conexão recusada".to_owned()),
                response_body: None
            }
        );
        retry_at(outcome);
    }

    #[test]
    fn each_failure_class_is_logged_with_its_one_generic_text() {
        for (error, expected) in [
            (Some(SendFailure::Timeout), "tempo esgotado"),
            (Some(SendFailure::Dns), "falha de DNS"),
            (Some(SendFailure::ConnectionRefused), "conexão recusada"),
            (
                Some(SendFailure::ConnectionClosed),
                "conexão encerrada pelo receptor",
            ),
            (Some(SendFailure::Tls), "falha de TLS"),
            (Some(SendFailure::InvalidResponse), "resposta HTTP inválida"),
            (Some(SendFailure::Connection), "falha de conexão"),
            (None, "falha de conexão"),
        ] {
            let delivery = due(0);
            let recorded = Recorded::default();
            let report = SendReport {
                status: None,
                retry_after: None,
                latency: Duration::from_secs(10),
                error,
                body: None,
            };
            let worker = worker(
                repo(vec![delivery.clone()], &recorded),
                sender(report, &Sent::default()),
                allowing_guard(),
                cipher(),
            );

            worker.run_once(10).unwrap();

            let (attempt, outcome) = only_record(&recorded, &delivery);
            assert_eq!(attempt.error.as_deref(), Some(expected));
            assert_eq!(attempt.latency_ms, 10_000);
            retry_at(outcome);
        }
    }

    #[test]
    fn texts_stored_by_older_versions_are_shown_as_their_class() {
        for (stored, shown) in [
            ("HTTP 500", "resposta HTTP 500"),
            ("resposta HTTP 503", "resposta HTTP 503"),
            ("timeout", "tempo esgotado"),
            ("falha de DNS", "falha de DNS"),
            (
                "destino recusado: o host aponta para um endereço não público",
                "destino não permitido",
            ),
            ("host inacessível", "falha de conexão"),
            ("sem resposta", "falha de conexão"),
            ("HTTP 99999", "falha de conexão"),
            ("anything at 10.0.0.7:8080", "falha de conexão"),
        ] {
            assert_eq!(generic_error(stored), shown, "{stored}");
        }
    }

    #[test]
    fn a_dns_failure_timeout_or_the_companys_lookups_all_busy_is_retried_on_the_schedule_without_sending(
    ) {
        for (refused, text) in [
            (TargetRefused::DnsFailure, "falha de DNS"),
            (TargetRefused::DnsTimeout, "falha de DNS"),
            (
                TargetRefused::LookupsBusy,
                "consultas de DNS da empresa no limite",
            ),
        ] {
            let delivery = due(0);
            let recorded = Recorded::default();
            let mut guard = MockTargetGuard::new();
            let answer = refused.clone();
            let company_id = delivery.company_id;
            guard
                .expect_resolve()
                .withf(move |company, _| *company == company_id)
                .times(1)
                .returning(move |_, _| Err(answer.clone()));
            let mut sender = MockWebhookSender::new();
            sender.expect_send().times(0);
            let worker = worker(
                repo(vec![delivery.clone()], &recorded),
                sender,
                guard,
                cipher(),
            );

            let report = worker.run_once(10).unwrap();

            assert_eq!(report.retried, 1, "{refused:?}");
            let (attempt, outcome) = only_record(&recorded, &delivery);
            assert_eq!(attempt.error.as_deref(), Some(text));
            assert_eq!(attempt.http_status, None);
            // The schedule's second delay: 5 s ± 10%.
            assert_within(retry_at(outcome), secs(4), secs(6));
        }
    }

    #[test]
    fn a_lease_taken_over_by_another_sender_records_nothing_and_counts_nothing() {
        let delivery = due(0);
        let claimed = vec![delivery.clone()];
        let mut repo = MockWebhookDeliveryRepository::new();
        one_company_due(&mut repo);
        repo.expect_claim_due()
            .times(1)
            .return_once(move |_, _, _, _, _| Ok(claimed));
        let (id, lease) = (delivery.id, delivery.lease);
        repo.expect_record_attempt()
            .withf(move |_, got, got_lease, _, _| *got == id && *got_lease == lease)
            .times(1)
            .returning(|_, _, _, _, _| Ok(false));
        let worker = worker(
            repo,
            sender(answer(Some(200)), &Sent::default()),
            allowing_guard(),
            cipher(),
        );

        let claimed = worker
            .claim(
                Shares {
                    senders: 10,
                    per_company: 10,
                },
                &InFlight::default(),
            )
            .unwrap();
        let result = worker.deliver(&claimed[0]).unwrap();

        assert_eq!(result, AttemptResult::LeaseLost);
        let mut report = DeliveryReport::default();
        report.count(result);
        assert_eq!(report, DeliveryReport::default());
    }

    #[test]
    fn the_start_up_key_check_decrypts_the_newest_stored_secret_if_any() {
        for (stored, ok) in [
            (None, true),
            (Some(encrypted(CURRENT)), true),
            (Some(EncryptedSecret("tampered".to_owned())), false),
        ] {
            let mut repo = MockWebhookDeliveryRepository::new();
            let answer = stored.clone();
            repo.expect_newest_secret()
                .times(1)
                .returning(move || Ok(answer.clone()));

            let checked = check_encryption_key(&repo, &cipher());

            assert_eq!(checked.is_ok(), ok, "{stored:?}");
            if !ok {
                assert!(matches!(checked, Err(KeyCheckError::Mismatch)));
            }
        }
    }

    #[test]
    fn a_retry_after_longer_than_the_scheduled_delay_is_honoured() {
        let delivery = due(0);
        let recorded = Recorded::default();
        let report = SendReport {
            retry_after: Some(secs(3_600)),
            ..answer(Some(429))
        };
        let worker = worker(
            repo(vec![delivery.clone()], &recorded),
            sender(report, &Sent::default()),
            allowing_guard(),
            cipher(),
        );

        worker.run_once(10).unwrap();

        let (attempt, outcome) = only_record(&recorded, &delivery);
        assert_eq!(attempt.error, Some("resposta HTTP 429".to_owned()));
        assert_within(retry_at(outcome), secs(3_600), secs(3_960));
    }

    #[test]
    fn a_retry_after_beyond_the_largest_delay_of_the_schedule_is_capped_at_it() {
        let delivery = due(0);
        let recorded = Recorded::default();
        let report = SendReport {
            retry_after: Some(secs(100 * 3_600)),
            ..answer(Some(503))
        };
        let worker = worker(
            repo(vec![delivery.clone()], &recorded),
            sender(report, &Sent::default()),
            allowing_guard(),
            cipher(),
        );

        worker.run_once(10).unwrap();

        let (_, outcome) = only_record(&recorded, &delivery);
        assert_within(retry_at(outcome), secs(36_000), secs(39_600));
    }

    #[test]
    fn a_retry_after_shorter_than_the_scheduled_delay_keeps_the_schedule() {
        let delivery = due(2);
        let recorded = Recorded::default();
        let report = SendReport {
            retry_after: Some(secs(10)),
            ..answer(Some(503))
        };
        let worker = worker(
            repo(vec![delivery.clone()], &recorded),
            sender(report, &Sent::default()),
            allowing_guard(),
            cipher(),
        );

        worker.run_once(10).unwrap();

        let (_, outcome) = only_record(&recorded, &delivery);
        assert_within(retry_at(outcome), secs(1_620), secs(1_980));
    }

    #[test]
    fn a_failed_last_attempt_of_the_schedule_fails_the_delivery_whatever_the_retry_after() {
        for retry_after in [None, Some(secs(5))] {
            let delivery = due(7);
            let recorded = Recorded::default();
            let report = SendReport {
                retry_after,
                ..answer(Some(500))
            };
            let worker = worker(
                repo(vec![delivery.clone()], &recorded),
                sender(report, &Sent::default()),
                allowing_guard(),
                cipher(),
            );

            let report = worker.run_once(10).unwrap();

            assert_eq!(
                report,
                DeliveryReport {
                    attempted: 1,
                    delivered: 0,
                    retried: 0,
                    failed: 1
                }
            );
            let (attempt, outcome) = only_record(&recorded, &delivery);
            assert_eq!(attempt.http_status, Some(500));
            assert_eq!(attempt.error, Some("resposta HTTP 500".to_owned()));
            assert_eq!(outcome, DeliveryOutcome::Failed);
        }
    }

    #[test]
    fn a_configured_schedule_replaces_the_default_one() {
        let settings = ServiceSettings {
            webhook_retry_schedule: vec![Duration::ZERO, secs(60)],
            ..ServiceSettings::default()
        };
        for (attempts, retried) in [(0, true), (1, false)] {
            let delivery = due(attempts);
            let recorded = Recorded::default();
            let worker = worker_with(
                repo(vec![delivery.clone()], &recorded),
                sender(answer(Some(500)), &Sent::default()),
                allowing_guard(),
                cipher(),
                settings.clone(),
            );

            worker.run_once(10).unwrap();

            let (_, outcome) = only_record(&recorded, &delivery);
            if retried {
                assert_within(retry_at(outcome), secs(54), secs(66));
            } else {
                assert_eq!(outcome, DeliveryOutcome::Failed);
            }
        }
    }

    #[test]
    fn a_target_the_guard_now_refuses_fails_without_decrypting_or_sending() {
        let delivery = due(0);
        let recorded = Recorded::default();
        let mut guard = MockTargetGuard::new();
        guard
            .expect_resolve()
            .withf(|_, url| url == URL)
            .times(1)
            .returning(|_, _| Err(TargetRefused::NonPublicAddress));
        let mut cipher = MockSecretCipher::new();
        cipher.expect_decrypt().times(0);
        let mut sender = MockWebhookSender::new();
        sender.expect_send().times(0);
        let worker = worker(
            repo(vec![delivery.clone()], &recorded),
            sender,
            guard,
            cipher,
        );

        let report = worker.run_once(10).unwrap();

        assert_eq!(
            report,
            DeliveryReport {
                attempted: 1,
                delivered: 0,
                retried: 0,
                failed: 1
            }
        );
        assert_eq!(
            only_record(&recorded, &delivery),
            (
                DeliveryAttempt {
                    at: now(),
                    http_status: None,
                    latency_ms: 0,
                    error: Some("destino não permitido".to_owned()),
                    response_body: None
                },
                DeliveryOutcome::Failed
            )
        );
    }

    #[test]
    fn an_unreadable_current_or_previous_secret_is_retried_on_the_schedule_without_sending() {
        let cases = [
            (EncryptedSecret("tampered".to_owned()), None),
            (
                encrypted(CURRENT),
                Some(EncryptedSecret("tampered".to_owned())),
            ),
            (encrypted("not-a-whsec-secret"), None),
        ];
        for (secret, previous_secret) in cases {
            let mut delivery = due(0);
            delivery.secret = secret;
            delivery.previous_secret = previous_secret;
            let recorded = Recorded::default();
            let mut sender = MockWebhookSender::new();
            sender.expect_send().times(0);
            let worker = worker(
                repo(vec![delivery.clone()], &recorded),
                sender,
                allowing_guard(),
                cipher(),
            );

            let report = worker.run_once(10).unwrap();

            assert_eq!(report.retried, 1, "{delivery:?}");
            let (attempt, outcome) = only_record(&recorded, &delivery);
            assert_eq!(
                attempt,
                DeliveryAttempt {
                    at: now(),
                    http_status: None,
                    latency_ms: 0,
                    error: Some("segredo ilegível".to_owned()),
                    response_body: None
                },
                "{delivery:?}"
            );
            assert_within(retry_at(outcome), secs(4), secs(6));
        }
    }

    #[test]
    fn a_round_attempts_every_claimed_delivery_and_counts_each_outcome() {
        let ok = due(0);
        let retry = due(0);
        let exhausted = due(7);
        let mut refused = due(0);
        refused.url = "https://10.0.0.1/hook".to_owned();
        let recorded = Recorded::default();
        let mut guard = MockTargetGuard::new();
        guard.expect_resolve().returning(|_, url| {
            if url == URL {
                Ok(checked())
            } else {
                Err(TargetRefused::NonPublicAddress)
            }
        });
        let ok_event = ok.event_id.hyphenated().to_string();
        let mut sender = MockWebhookSender::new();
        sender
            .expect_send()
            .times(3)
            .returning(move |_, _, headers, _| {
                let id = header(headers, "webhook-id");
                answer(Some(if id == ok_event { 200 } else { 500 }))
            });
        let worker = worker(
            repo(
                vec![
                    ok.clone(),
                    retry.clone(),
                    exhausted.clone(),
                    refused.clone(),
                ],
                &recorded,
            ),
            sender,
            guard,
            cipher(),
        );

        let report = worker.run_once(10).unwrap();

        assert_eq!(
            report,
            DeliveryReport {
                attempted: 4,
                delivered: 1,
                retried: 1,
                failed: 2
            }
        );
        let recorded = recorded.lock().unwrap();
        let ids: Vec<Uuid> = recorded.iter().map(|(id, _, _)| *id).collect();
        assert_eq!(ids, [ok.id, retry.id, exhausted.id, refused.id]);
        assert_eq!(recorded[0].2, DeliveryOutcome::Delivered);
        retry_at(recorded[1].2);
        assert_eq!(recorded[2].2, DeliveryOutcome::Failed);
        assert_eq!(recorded[3].2, DeliveryOutcome::Failed);
    }

    #[test]
    fn a_round_with_nothing_due_sends_and_records_nothing() {
        let recorded = Recorded::default();
        let repo = repo(vec![], &recorded);
        let mut sender = MockWebhookSender::new();
        sender.expect_send().times(0);

        let report = worker(repo, sender, allowing_guard(), cipher())
            .run_once(10)
            .unwrap();

        assert_eq!(report, DeliveryReport::default());
        assert!(recorded.lock().unwrap().is_empty());
    }

    #[test]
    fn a_failing_claim_is_a_repository_error_and_sends_nothing() {
        let mut repo = MockWebhookDeliveryRepository::new();
        repo.expect_companies_due()
            .times(1)
            .returning(|_| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));
        repo.expect_claim_due().times(0);
        repo.expect_record_attempt().times(0);
        let mut sender = MockWebhookSender::new();
        sender.expect_send().times(0);

        let result = worker(repo, sender, allowing_guard(), cipher()).run_once(10);

        assert!(
            matches!(result, Err(RepoError::Unavailable(_))),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_record_ends_the_round_with_the_error_before_the_next_send() {
        let first = due(0);
        let second = due(0);
        let mut repo = MockWebhookDeliveryRepository::new();
        let claimed = vec![first.clone(), second];
        one_company_due(&mut repo);
        repo.expect_claim_due()
            .times(1)
            .return_once(move |_, _, _, _, _| Ok(claimed));
        let first_id = first.id;
        repo.expect_record_attempt()
            .withf(move |_, id, _, _, _| *id == first_id)
            .times(1)
            .returning(|_, _, _, _, _| Err(RepoError::Unexpected(anyhow::anyhow!("boom"))));
        let mut sender = MockWebhookSender::new();
        sender
            .expect_send()
            .times(1)
            .returning(|_, _, _, _| answer(Some(200)));

        let result = worker(repo, sender, allowing_guard(), cipher()).run_once(10);

        assert!(
            matches!(result, Err(RepoError::Unexpected(_))),
            "{result:?}"
        );
    }

    #[test]
    fn disabling_failing_urls_asks_for_the_configured_window_at_the_clock_time() {
        let mut repo = MockWebhookDeliveryRepository::new();
        repo.expect_disable_failing_urls()
            .withf(|at, window| *at == now() && *window == chrono::Duration::days(5))
            .times(1)
            .returning(|_, _| Ok(3));

        let disabled = worker(repo, MockWebhookSender::new(), allowing_guard(), cipher())
            .disable_failing_urls()
            .unwrap();

        assert_eq!(disabled, 3);
    }

    #[test]
    fn a_failing_disable_is_a_repository_error() {
        let mut repo = MockWebhookDeliveryRepository::new();
        repo.expect_disable_failing_urls()
            .times(1)
            .returning(|_, _| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));

        let result = worker(repo, MockWebhookSender::new(), allowing_guard(), cipher())
            .disable_failing_urls();

        assert!(
            matches!(result, Err(RepoError::Unavailable(_))),
            "{result:?}"
        );
    }

    #[test]
    fn jitter_moves_a_delay_by_at_most_ten_percent_either_way() {
        let schedule = [Duration::ZERO, secs(100)];

        assert_eq!(retry_delay(&schedule, 1, None, -1.0), Some(secs(90)));
        assert_eq!(retry_delay(&schedule, 1, None, 0.0), Some(secs(100)));
        assert_eq!(retry_delay(&schedule, 1, None, 1.0), Some(secs(110)));
        assert_eq!(retry_delay(&schedule, 1, None, 7.0), Some(secs(110)));
    }

    #[test]
    fn a_zero_delay_gets_no_jitter() {
        let schedule = [Duration::ZERO, Duration::ZERO];

        for unit in [-1.0, 0.5, 1.0] {
            assert_eq!(retry_delay(&schedule, 1, None, unit), Some(Duration::ZERO));
        }
    }

    #[test]
    fn jitter_never_brings_the_retry_before_an_honoured_retry_after() {
        let schedule = [Duration::ZERO, secs(5), secs(1_000)];

        assert_eq!(
            retry_delay(&schedule, 1, Some(secs(500)), -1.0),
            Some(secs(500))
        );
        assert_eq!(
            retry_delay(&schedule, 1, Some(secs(500)), 1.0),
            Some(secs(550))
        );
        assert_eq!(
            retry_delay(&schedule, 1, Some(secs(5_000)), -1.0),
            Some(secs(1_000))
        );
    }

    #[test]
    fn an_exhausted_or_empty_schedule_has_no_next_delay() {
        assert_eq!(retry_delay(&[Duration::ZERO, secs(5)], 2, None, 0.0), None);
        assert_eq!(retry_delay(&[], 1, Some(secs(5)), 0.0), None);
    }

    #[test]
    fn a_retry_time_beyond_the_calendar_saturates() {
        assert_eq!(after(now(), Duration::MAX), DateTime::<Utc>::MAX_UTC);
        assert_eq!(after(now(), secs(5)), now() + chrono::Duration::seconds(5));
    }

    fn company(n: u128) -> CompanyId {
        CompanyId(Uuid::from_u128(n))
    }

    fn due_of(company: CompanyId) -> DueDelivery {
        DueDelivery {
            company_id: company,
            ..due(0)
        }
    }

    fn plain_worker(repo: MockWebhookDeliveryRepository) -> DeliverWebhooks {
        worker(
            repo,
            MockWebhookSender::new(),
            MockTargetGuard::new(),
            cipher(),
        )
    }

    type Claims = Arc<Mutex<Vec<(CompanyId, u32, Uuid)>>>;

    /// Answers `companies_due` with `due` (company, minutes waiting) and each company's claim
    /// with up to `available` of its deliveries, recording every claim.
    fn claiming(
        due: &[(u128, i64)],
        available: &'static [(u128, u32)],
        claims: &Claims,
    ) -> MockWebhookDeliveryRepository {
        let due: Vec<ports::CompanyDue> = due
            .iter()
            .map(|(c, waited)| ports::CompanyDue {
                company_id: company(*c),
                since: now() - chrono::Duration::minutes(*waited),
            })
            .collect();
        let mut repo = MockWebhookDeliveryRepository::new();
        repo.expect_companies_due()
            .withf(|at| *at == now())
            .times(1)
            .return_once(move |_| Ok(due));
        let sink = claims.clone();
        let left = Arc::new(Mutex::new(available.to_vec()));
        repo.expect_claim_due()
            .returning(move |c, limit, _, lease_until, lease| {
                assert_eq!(lease_until, now() + chrono::Duration::minutes(2));
                sink.lock().unwrap().push((c, limit, lease));
                let mut left = left.lock().unwrap();
                let Some(entry) = left.iter_mut().find(|(n, _)| company(*n) == c) else {
                    return Ok(Vec::new());
                };
                let n = entry.1.min(limit);
                entry.1 -= n;
                Ok((0..n).map(|_| due_of(c)).collect())
            });
        repo
    }

    #[test]
    fn a_claim_shares_the_free_senders_by_turns_longest_waiting_first_within_each_companys_room() {
        let claims = Claims::default();
        // 3 waits longest but already holds its share; 1 waits longer than 2
        let repo = claiming(
            &[(2, 1), (1, 10), (3, 60)],
            &[(1, 100), (2, 100), (3, 100)],
            &claims,
        );
        let mut in_flight = InFlight::default();
        in_flight.take(company(3));
        in_flight.take(company(3));

        let claimed = plain_worker(repo)
            .claim(
                Shares {
                    senders: 5,
                    per_company: 2,
                },
                &in_flight,
            )
            .unwrap();

        let asked: Vec<(CompanyId, u32)> = claims
            .lock()
            .unwrap()
            .iter()
            .map(|(c, n, _)| (*c, *n))
            .collect();
        assert_eq!(asked, [(company(1), 2), (company(2), 1)]);
        assert_eq!(claimed.len(), 3);
    }

    #[test]
    fn senders_a_company_cannot_use_go_to_the_companies_that_have_more_due() {
        let claims = Claims::default();
        let repo = claiming(&[(1, 10), (2, 1)], &[(1, 1), (2, 100)], &claims);

        let claimed = plain_worker(repo)
            .claim(
                Shares {
                    senders: 8,
                    per_company: 8,
                },
                &InFlight::default(),
            )
            .unwrap();

        let asked: Vec<(CompanyId, u32)> = claims
            .lock()
            .unwrap()
            .iter()
            .map(|(c, n, _)| (*c, *n))
            .collect();
        assert_eq!(asked, [(company(1), 4), (company(2), 4), (company(2), 3)]);
        assert_eq!(claimed.len(), 8);
        assert_eq!(
            claimed
                .iter()
                .filter(|d| d.company_id == company(2))
                .count(),
            7
        );
    }

    #[test]
    fn each_companys_claim_takes_a_new_lease_token_from_the_application() {
        let claims = Claims::default();
        let repo = claiming(&[(1, 2), (2, 1)], &[(1, 1), (2, 1)], &claims);

        plain_worker(repo)
            .claim(
                Shares {
                    senders: 2,
                    per_company: 1,
                },
                &InFlight::default(),
            )
            .unwrap();

        let leases: Vec<Uuid> = claims.lock().unwrap().iter().map(|(_, _, l)| *l).collect();
        assert_eq!(leases.len(), 2);
        assert_ne!(leases[0], leases[1]);
        assert!(leases.iter().all(|l| l.get_version_num() == 4));
    }

    #[test]
    fn with_every_sender_busy_nothing_is_read() {
        let mut repo = MockWebhookDeliveryRepository::new();
        repo.expect_companies_due().times(0);
        repo.expect_claim_due().times(0);
        let mut in_flight = InFlight::default();
        in_flight.take(company(1));

        let claimed = plain_worker(repo)
            .claim(
                Shares {
                    senders: 1,
                    per_company: 1,
                },
                &in_flight,
            )
            .unwrap();

        assert!(claimed.is_empty());
    }

    #[test]
    fn one_companys_failing_claim_leaves_the_others_claimed() {
        let mut repo = MockWebhookDeliveryRepository::new();
        repo.expect_companies_due().returning(|_| {
            Ok([(1, 2), (2, 1)]
                .map(|(c, m)| ports::CompanyDue {
                    company_id: company(c),
                    since: now() - chrono::Duration::minutes(m),
                })
                .to_vec())
        });
        repo.expect_claim_due()
            .withf(|c, _, _, _, _| *c == company(1))
            .times(1)
            .returning(|_, _, _, _, _| Err(RepoError::Unexpected(anyhow::anyhow!("boom"))));
        repo.expect_claim_due()
            .withf(|c, _, _, _, _| *c == company(2))
            .times(1)
            .returning(|c, _, _, _, _| Ok(vec![due_of(c)]));

        let claimed = plain_worker(repo)
            .claim(
                Shares {
                    senders: 2,
                    per_company: 1,
                },
                &InFlight::default(),
            )
            .unwrap();

        assert_eq!(claimed.len(), 1);
        assert_eq!(claimed[0].company_id, company(2));
    }

    #[test]
    fn settling_runs_one_batch_per_marked_url_and_a_failing_url_does_not_stop_the_others() {
        let (a, b) = (Uuid::from_u128(10), Uuid::from_u128(11));
        let mut repo = MockWebhookDeliveryRepository::new();
        repo.expect_urls_to_settle()
            .withf(|limit| *limit == 50)
            .times(1)
            .returning(move |_| Ok(vec![(company(1), a), (company(2), b)]));
        repo.expect_settle_url()
            .withf(move |c, url, limit, at| {
                *c == company(1) && *url == a && *limit == 1_000 && *at == now()
            })
            .times(1)
            .returning(|_, _, _, _| Err(RepoError::Unexpected(anyhow::anyhow!("boom"))));
        repo.expect_settle_url()
            .withf(move |c, url, _, _| *c == company(2) && *url == b)
            .times(1)
            .returning(|_, _, _, _| {
                Ok(ports::Settled {
                    changed: 7,
                    done: true,
                })
            });

        assert_eq!(plain_worker(repo).settle_urls(50, 1_000).unwrap(), 7);
    }

    #[test]
    fn the_cap_fails_each_companys_excess_in_batches_with_the_recorded_reason() {
        let mut repo = MockWebhookDeliveryRepository::new();
        repo.expect_companies_with_pending()
            .times(1)
            .returning(|| Ok(vec![company(1), company(2)]));
        let batches = Arc::new(Mutex::new(vec![100, 100, 30]));
        repo.expect_fail_beyond_cap()
            .withf(|c, keep, limit, reason, at| {
                *c == company(1)
                    && *keep == 1_000
                    && *limit == 100
                    && reason == error::CAPPED
                    && *at == now()
            })
            .times(3)
            .returning(move |_, _, _, _, _| Ok(batches.lock().unwrap().remove(0)));
        repo.expect_fail_beyond_cap()
            .withf(|c, _, _, _, _| *c == company(2))
            .times(1)
            .returning(|_, _, _, _, _| Ok(0));

        assert_eq!(plain_worker(repo).cap_pending(1_000, 100).unwrap(), 230);
    }
}
