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
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue, RETRY_AFTER};
use actix_web::middleware::Next;
use actix_web::Error;
use domain::CompanyId;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
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

/// How many replicas share every company's quota (at least 1). Cloning shares the count: the
/// heartbeat sets it, the limiter reads it on every request.
#[derive(Debug, Clone)]
pub struct LiveReplicas(Arc<AtomicU32>);

impl Default for LiveReplicas {
    fn default() -> Self {
        LiveReplicas(Arc::new(AtomicU32::new(1)))
    }
}

impl LiveReplicas {
    pub fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed).max(1)
    }

    /// Sets the count (0 counts as 1); answers the previous one.
    pub fn set(&self, live: u32) -> u32 {
        self.0.swap(live.max(1), Ordering::Relaxed)
    }
}

type Limiter<C> =
    RateLimiter<CompanyId, DefaultKeyedStateStore<CompanyId>, C, StateInformationMiddleware>;

/// One token bucket per company, shared by every worker thread of the process.
pub struct CompanyRateLimiter<C: Clock = DefaultClock> {
    limiter: Limiter<C>,
    per_second: u32,
    burst: u32,
    replicas: LiveReplicas,
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

    /// Counts `weight` requests of `company` at once (a batch), all or none; a weight above the
    /// burst counts as the burst (it could never fit otherwise).
    ///
    /// With N live replicas each request counts N times: this process then allows
    /// `per_second / N` and `burst / N` of the company's requests, and the N together the quota
    /// (as long as the load balancer spreads a company's requests over them). What the headers
    /// show stays in the company's terms: the quota as configured, and what is left of it.
    pub fn check_n(
        &self,
        company: CompanyId,
        weight: u32,
    ) -> Result<RateLimitStatus, RateLimitStatus> {
        let replicas = self.replicas.get();
        let refill = Duration::from_secs(1) / self.per_second;
        let weight = weight.max(1).saturating_mul(replicas);
        let weight = NonZeroU32::new(weight.min(self.burst)).unwrap_or(NonZeroU32::MIN);
        let outcome = match self.limiter.check_key_n(&company, weight) {
            Ok(outcome) => outcome,
            // unreachable: the weight is at most the burst
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
pub(crate) fn current_limiter() -> Option<Arc<CompanyRateLimiter>> {
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
