//! Rate limits per company: a token bucket (GCRA, the `governor` crate) keyed by company id,
//! checked in the request's blocking hop right after the `Api-Key` resolves (see
//! [`crate::blocking::as_company`]).
//!
//! Over the limit the request is answered 429 in the envelope ([`crate::error::ApiError`]) with
//! `Retry-After` and the headers of draft-ietf-httpapi-ratelimit-headers-07:
//!
//! ```text
//! RateLimit-Policy: 50;w=1;burst=100
//! RateLimit: limit=100, remaining=0, reset=2
//! Retry-After: 1
//! ```
//!
//! `limit` is the bucket's size (the burst), `remaining` what is left of it after this request,
//! `reset` the seconds until it is full again; all rounded up to whole seconds. Successful (and
//! other) responses of authenticated routes carry `RateLimit` and `RateLimit-Policy` too.
//!
//! The bucket lives in the process; with N replicas behind a load balancer each one takes `1/N`
//! of the quota ([`LiveReplicas`], kept current by the heartbeat of
//! `crates/app/src/replica_heartbeat.rs`): every request counts N times in the process's bucket,
//! so the replicas together allow `per_second` and `burst` (docs/operations.md, "Replicas").

use std::cell::Cell;
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue, RETRY_AFTER};
use actix_web::middleware::Next;
use actix_web::Error;
use domain::CompanyId;
use governor::clock::{Clock, DefaultClock, Reference};
use governor::middleware::StateInformationMiddleware;
use governor::nanos::Nanos;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

/// `RateLimit` (draft-ietf-httpapi-ratelimit-headers-07).
pub const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");
/// `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers-07).
pub const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");

/// The quota of every company. `per_second = 0` turns rate limiting off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimitSettings {
    /// Requests per second a company may sustain (the bucket refills at this rate).
    pub per_second: u32,
    /// Requests a company may send at once after a quiet period (the bucket's size).
    pub burst: u32,
}

impl Default for RateLimitSettings {
    fn default() -> Self {
        RateLimitSettings {
            per_second: 50,
            burst: 100,
        }
    }
}

impl RateLimitSettings {
    pub fn disabled() -> Self {
        RateLimitSettings {
            per_second: 0,
            burst: 0,
        }
    }
}

/// Where a company stands after a request was counted (or refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimitStatus {
    /// The bucket's size (the burst).
    pub limit: u32,
    /// Requests left in the bucket after this one.
    pub remaining: u32,
    /// Seconds until the bucket is full again, rounded up.
    pub reset_seconds: u64,
    /// The refill rate, requests per second.
    pub per_second: u32,
    /// On a refusal: seconds until one more request will be accepted, rounded up (at least 1).
    pub retry_after_seconds: Option<u64>,
}

impl RateLimitStatus {
    /// `RateLimit-Policy`: `<per_second>;w=1;burst=<limit>`.
    pub fn policy(&self) -> String {
        format!("{};w=1;burst={}", self.per_second, self.limit)
    }

    /// `RateLimit`: `limit=<burst>, remaining=<left>, reset=<seconds>`.
    pub fn current(&self) -> String {
        format!(
            "limit={}, remaining={}, reset={}",
            self.limit, self.remaining, self.reset_seconds
        )
    }

    /// The response headers: `RateLimit`, `RateLimit-Policy`, and `Retry-After` on a refusal.
    pub fn headers(&self) -> Vec<(HeaderName, HeaderValue)> {
        let value =
            |text: String| HeaderValue::try_from(text).expect("ASCII digits and separators");
        let mut headers = vec![
            (RATELIMIT, value(self.current())),
            (RATELIMIT_POLICY, value(self.policy())),
        ];
        if let Some(seconds) = self.retry_after_seconds {
            headers.push((RETRY_AFTER, HeaderValue::from(seconds)));
        }
        headers
    }
}

/// How many replicas share every company's quota (at least 1), and whether this one served a
/// request since the heartbeat last asked. Cloning shares both: the heartbeat sets the count and
/// takes the flag, the limiter reads the count and sets the flag on every request.
#[derive(Debug, Clone)]
pub struct LiveReplicas(Arc<(AtomicU32, AtomicBool)>);

impl Default for LiveReplicas {
    fn default() -> Self {
        LiveReplicas(Arc::new((AtomicU32::new(1), AtomicBool::new(false))))
    }
}

impl LiveReplicas {
    pub fn get(&self) -> u32 {
        self.0 .0.load(Ordering::Relaxed).max(1)
    }

    /// Sets the count (0 counts as 1); answers the previous one.
    pub fn set(&self, live: u32) -> u32 {
        self.0 .0.swap(live.max(1), Ordering::Relaxed)
    }

    /// Notes that this replica served a request.
    pub fn served(&self) {
        if !self.0 .1.load(Ordering::Relaxed) {
            self.0 .1.store(true, Ordering::Relaxed);
        }
    }

    /// Whether this replica served a request since the last call (and forgets it).
    pub fn take_served(&self) -> bool {
        self.0 .1.swap(false, Ordering::Relaxed)
    }
}

/// What a company owes after a request heavier than its bucket: nothing of it passes before
/// `until` (the time the rest takes to refill), and then the tokens refilled meanwhile, `drain`,
/// are taken before anything else.
#[derive(Debug, Clone, Copy)]
struct Debt<I> {
    until: I,
    drain: u32,
}

type Limiter<C> =
    RateLimiter<CompanyId, DefaultKeyedStateStore<CompanyId>, C, StateInformationMiddleware>;

/// One token bucket per company, shared by every worker thread of the process.
pub struct CompanyRateLimiter<C: Clock = DefaultClock> {
    limiter: Limiter<C>,
    per_second: u32,
    burst: u32,
    replicas: LiveReplicas,
    /// Companies paying for a request heavier than the bucket (see
    /// [`CompanyRateLimiter::check_n`]).
    owed: Mutex<HashMap<CompanyId, Debt<C::Instant>>>,
    /// Whether `owed` holds anything: the common path never takes its lock.
    any_owed: AtomicBool,
}

impl CompanyRateLimiter {
    /// `None` when rate limiting is off (`per_second = 0`).
    pub fn new(settings: RateLimitSettings) -> Option<CompanyRateLimiter> {
        CompanyRateLimiter::with_clock(settings, DefaultClock::default())
    }
}

impl<C: Clock> CompanyRateLimiter<C> {
    /// With an explicit clock (tests use governor's `FakeRelativeClock`). A burst of 0 counts
    /// as 1.
    pub fn with_clock(settings: RateLimitSettings, clock: C) -> Option<CompanyRateLimiter<C>> {
        let per_second = NonZeroU32::new(settings.per_second)?;
        let burst = NonZeroU32::new(settings.burst).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::per_second(per_second).allow_burst(burst);
        let limiter: Limiter<C> = RateLimiter::new(quota, DefaultKeyedStateStore::default(), clock);
        Some(CompanyRateLimiter {
            limiter,
            per_second: per_second.get(),
            burst: burst.get(),
            replicas: LiveReplicas::default(),
            owed: Mutex::new(HashMap::new()),
            any_owed: AtomicBool::new(false),
        })
    }

    /// Shares the quota with the replicas `replicas` counts (this process included).
    pub fn shared_by(mut self, replicas: LiveReplicas) -> Self {
        self.replicas = replicas;
        self
    }

    /// Counts one request of `company`: `Ok` with what is left, or `Err` when over the limit
    /// (nothing is counted then). In memory, no I/O.
    pub fn check(&self, company: CompanyId) -> Result<RateLimitStatus, RateLimitStatus> {
        self.check_n(company, 1)
    }

    /// Counts `weight` requests of `company` at once (a batch), all or none.
    ///
    /// With N live replicas each request counts N times: this process then allows
    /// `per_second / N` and `burst / N` of the company's requests, and the N together the quota
    /// (as long as the load balancer spreads a company's requests over them). What the headers
    /// show stays in the company's terms: the quota as configured, and what is left of it.
    ///
    /// A weight above the bucket (a batch check of 500 items with several replicas) is never
    /// capped: it passes only when the bucket is full, takes all of it, and the rest is owed,
    /// paid from the next refills before any other request of the company passes (those get 429
    /// with `Retry-After` meanwhile, like any request over the limit).
    pub fn check_n(
        &self,
        company: CompanyId,
        weight: u32,
    ) -> Result<RateLimitStatus, RateLimitStatus> {
        self.replicas.served();
        let replicas = self.replicas.get();
        let weight = weight.max(1).saturating_mul(replicas);
        if self.any_owed.load(Ordering::Relaxed) {
            self.pay_owed(company)?;
        }
        let now_weight = weight.min(self.burst);
        let outcome = self.take(company, now_weight)?;
        if weight > now_weight {
            let rest = weight - now_weight;
            let refill = Duration::from_secs(1) / self.per_second;
            let debt = Debt {
                until: self.limiter.clock().now() + Nanos::from(refill * rest),
                drain: rest.min(self.burst),
            };
            let mut owed = self.owed.lock().unwrap_or_else(|p| p.into_inner());
            owed.insert(company, debt);
            self.any_owed.store(true, Ordering::Relaxed);
        }
        Ok(outcome)
    }

    /// Takes `n` (at most the burst) tokens of `company`, or answers the refusal.
    fn take(&self, company: CompanyId, n: u32) -> Result<RateLimitStatus, RateLimitStatus> {
        let refill = Duration::from_secs(1) / self.per_second;
        let n = NonZeroU32::new(n.min(self.burst)).unwrap_or(NonZeroU32::MIN);
        let outcome = match self.limiter.check_key_n(&company, n) {
            Ok(outcome) => outcome,
            // unreachable: `n` is at most the burst
            Err(_) => self.limiter.check_key(&company),
        };
        match outcome {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity().min(self.burst);
                Ok(self.status(remaining, refill * (self.burst - remaining), None))
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.limiter.clock().now());
                let full_in = wait + refill * (self.burst - 1);
                Err(self.status(0, full_in, Some(ceil_seconds(wait).max(1))))
            }
        }
    }

    /// While `company` owes time, a refusal with the wait; once it is over, takes the tokens
    /// refilled meanwhile and forgets the debt.
    fn pay_owed(&self, company: CompanyId) -> Result<(), RateLimitStatus> {
        let mut owed = self.owed.lock().unwrap_or_else(|p| p.into_inner());
        let Some(debt) = owed.get(&company).copied() else {
            return Ok(());
        };
        let now = self.limiter.clock().now();
        if now < debt.until {
            let wait: Duration = debt.until.duration_since(now).into();
            let refill = Duration::from_secs(1) / self.per_second;
            return Err(self.status(
                0,
                wait + refill * self.burst,
                Some(ceil_seconds(wait).max(1)),
            ));
        }
        // The bucket refilled while the company waited; those tokens paid the debt. (A piece
        // the bucket cannot give, never expected, is forgiven rather than kept forever.)
        let _ = self.take(company, debt.drain);
        owed.remove(&company);
        if owed.is_empty() {
            self.any_owed.store(false, Ordering::Relaxed);
        }
        Ok(())
    }

    fn status(&self, remaining: u32, full_in: Duration, retry: Option<u64>) -> RateLimitStatus {
        RateLimitStatus {
            limit: self.burst,
            remaining,
            reset_seconds: ceil_seconds(full_in),
            per_second: self.per_second,
            retry_after_seconds: retry,
        }
    }
}

fn ceil_seconds(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// What one request carries across its handler: the process's limiter, and the status of the
/// request once its key resolved (set by `as_company`, read by [`track`]).
struct RequestLimit {
    limiter: Arc<CompanyRateLimiter>,
    status: Cell<Option<RateLimitStatus>>,
}

tokio::task_local! {
    static REQUEST_LIMIT: RequestLimit;
}

/// The limiter of the request being handled; `None` outside [`track`] (an app built without it,
/// as some tests do, is not rate limited).
pub fn current_limiter() -> Option<Arc<CompanyRateLimiter>> {
    REQUEST_LIMIT.try_with(|r| r.limiter.clone()).ok()
}

/// Remembers the request's status so that [`track`] puts its headers on the response.
pub(crate) fn record(status: RateLimitStatus) {
    let _ = REQUEST_LIMIT.try_with(|r| r.status.set(Some(status)));
}

/// Middleware: makes `limiter` available to the request's handler and adds the `RateLimit`
/// headers to the response of every request counted against a company. (A 429 already has
/// them, from `ApiError`.) With no limiter (rate limiting off) it only passes the request on.
pub async fn track(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
    limiter: Option<Arc<CompanyRateLimiter>>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let Some(limiter) = limiter else {
        return next.call(req).await;
    };
    let scope = RequestLimit {
        limiter,
        status: Cell::new(None),
    };
    REQUEST_LIMIT
        .scope(scope, async move {
            let mut response = next.call(req).await?;
            let status = REQUEST_LIMIT.with(|r| r.status.take());
            if let Some(status) = status {
                let headers = response.headers_mut();
                if !headers.contains_key(RATELIMIT) {
                    for (name, value) in status.headers() {
                        headers.insert(name, value);
                    }
                }
            }
            Ok(response)
        })
        .await
}

#[cfg(test)]
mod tests {
    use governor::clock::FakeRelativeClock;
    use uuid::Uuid;

    use super::*;

    fn limiter(
        per_second: u32,
        burst: u32,
    ) -> (CompanyRateLimiter<FakeRelativeClock>, FakeRelativeClock) {
        let clock = FakeRelativeClock::default();
        let limiter =
            CompanyRateLimiter::with_clock(RateLimitSettings { per_second, burst }, clock.clone())
                .unwrap();
        (limiter, clock)
    }

    fn company(n: u128) -> CompanyId {
        CompanyId(Uuid::from_u128(n))
    }

    #[test]
    fn a_company_may_send_its_burst_at_once_then_is_refused_with_retry_after() {
        let (limiter, _clock) = limiter(2, 4);

        let remaining: Vec<u32> = (0..4)
            .map(|_| limiter.check(company(1)).unwrap().remaining)
            .collect();
        let refused = limiter.check(company(1)).unwrap_err();

        assert_eq!(remaining, [3, 2, 1, 0]);
        assert_eq!(
            refused,
            RateLimitStatus {
                limit: 4,
                remaining: 0,
                // one token in 0.5 s, a full bucket 1.5 s after that
                reset_seconds: 2,
                per_second: 2,
                retry_after_seconds: Some(1),
            }
        );
    }

    #[test]
    fn the_bucket_refills_at_the_configured_rate() {
        let (limiter, clock) = limiter(2, 4);
        for _ in 0..4 {
            limiter.check(company(1)).unwrap();
        }
        assert!(limiter.check(company(1)).is_err());

        clock.advance(Duration::from_millis(500));
        assert_eq!(limiter.check(company(1)).unwrap().remaining, 0);
        assert!(limiter.check(company(1)).is_err());

        clock.advance(Duration::from_secs(10));
        let full = limiter.check(company(1)).unwrap();
        assert_eq!(full.remaining, 3);
        // one token short of full at 2 per second: 0.5 s, shown as 1
        assert_eq!(full.reset_seconds, 1);
    }

    #[test]
    fn companies_have_separate_buckets() {
        let (limiter, _clock) = limiter(1, 2);
        limiter.check(company(1)).unwrap();
        limiter.check(company(1)).unwrap();
        assert!(limiter.check(company(1)).is_err());

        assert_eq!(limiter.check(company(2)).unwrap().remaining, 1);
    }

    #[test]
    fn with_three_live_replicas_each_process_takes_a_third_of_the_quota() {
        let (limiter, clock) = limiter(30, 30);
        let replicas = LiveReplicas::default();
        let limiter = limiter.shared_by(replicas.clone());
        replicas.set(3);

        let served: Vec<u32> = std::iter::from_fn(|| limiter.check(company(1)).ok())
            .map(|status| status.remaining)
            .collect();
        // a third of the burst, and what is left shown in the company's terms
        assert_eq!(served, [27, 24, 21, 18, 15, 12, 9, 6, 3, 0]);
        let refused = limiter.check(company(1)).unwrap_err();
        assert_eq!((refused.limit, refused.per_second), (30, 30));
        // three tokens at 30 a second: 0.1 s, shown as 1
        assert_eq!(refused.retry_after_seconds, Some(1));

        clock.advance(Duration::from_secs(1));
        let refilled = std::iter::from_fn(|| limiter.check(company(1)).ok()).count();
        assert_eq!(refilled, 10, "a third of per_second each second");

        // a replica left: this process takes half from now on
        replicas.set(2);
        clock.advance(Duration::from_secs(1));
        let halved = std::iter::from_fn(|| limiter.check(company(1)).ok()).count();
        assert_eq!(halved, 15);
    }

    #[test]
    fn a_batch_heavier_than_the_bucket_is_charged_whole_never_capped() {
        // 10 a second, burst 20; three replicas: a batch of weight 50 counts 150 here
        let (limiter, clock) = limiter(10, 20);
        let replicas = LiveReplicas::default();
        let limiter = limiter.shared_by(replicas.clone());
        replicas.set(3);

        // not with a bucket short of full
        limiter.check(company(1)).unwrap();
        assert!(limiter.check_n(company(1), 50).is_err());
        // once full, it passes and takes all of it; 130 more are owed
        clock.advance(Duration::from_secs(2));
        assert_eq!(limiter.check_n(company(1), 50).unwrap().remaining, 0);
        // every request waits while the debt is paid: 130 tokens at 10 a second
        clock.advance(Duration::from_secs(6));
        assert!(limiter.check(company(1)).is_err(), "7 s still to wait");
        clock.advance(Duration::from_secs(7));
        assert!(
            limiter.check(company(1)).is_err(),
            "paid, but the bucket is empty"
        );
        clock.advance(Duration::from_millis(300));
        assert!(
            limiter.check(company(1)).is_ok(),
            "one request (3 tokens) after 13.3 s"
        );
        // another company never owed anything
        assert!(limiter.check(company(2)).is_ok());
    }

    #[test]
    fn a_request_marks_the_replica_as_serving_until_the_heartbeat_takes_it() {
        let (limiter, _clock) = limiter(10, 20);
        let replicas = LiveReplicas::default();
        let limiter = limiter.shared_by(replicas.clone());
        assert!(!replicas.take_served());
        limiter.check(company(1)).unwrap();
        assert!(replicas.take_served());
        assert!(!replicas.take_served());
    }

    #[test]
    fn retry_after_is_rounded_up_to_whole_seconds() {
        // one request a second, no burst: 0.7 s to wait, shown as 1
        let (limiter, clock) = limiter(1, 1);
        limiter.check(company(1)).unwrap();
        clock.advance(Duration::from_millis(300));

        let refused = limiter.check(company(1)).unwrap_err();

        assert_eq!(refused.retry_after_seconds, Some(1));
        assert_eq!(refused.reset_seconds, 1);
    }

    #[test]
    fn the_headers_follow_draft_07() {
        let status = RateLimitStatus {
            limit: 100,
            remaining: 0,
            reset_seconds: 2,
            per_second: 50,
            retry_after_seconds: Some(1),
        };

        let headers: Vec<(String, String)> = status
            .headers()
            .into_iter()
            .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned()))
            .collect();

        assert_eq!(
            headers,
            [
                ("ratelimit".into(), "limit=100, remaining=0, reset=2".into()),
                ("ratelimit-policy".into(), "50;w=1;burst=100".into()),
                ("retry-after".into(), "1".into()),
            ]
        );
        let accepted = RateLimitStatus {
            retry_after_seconds: None,
            ..status
        };
        assert_eq!(accepted.headers().len(), 2, "no Retry-After on success");
    }

    #[test]
    fn a_zero_rate_turns_rate_limiting_off() {
        assert!(CompanyRateLimiter::new(RateLimitSettings::disabled()).is_none());
        assert!(CompanyRateLimiter::new(RateLimitSettings::default()).is_some());
    }

    #[test]
    fn every_api_operation_documents_429() {
        let doc = crate::openapi_json();
        let mut operations = 0;
        for (path, item) in doc["paths"].as_object().unwrap() {
            if !path.starts_with("/api/") {
                continue;
            }
            for (method, operation) in item.as_object().unwrap() {
                if !matches!(method.as_str(), "get" | "post" | "delete" | "put" | "patch") {
                    continue;
                }
                operations += 1;
                let response = &operation["responses"]["429"];
                assert!(response.is_object(), "{method} {path} lacks 429");
                for header in ["Retry-After", "RateLimit", "RateLimit-Policy"] {
                    assert!(
                        response["headers"][header].is_object(),
                        "{method} {path}: 429 lacks {header}"
                    );
                }
            }
        }
        assert!(operations >= 15, "{operations}");
    }
}
