//! Failed authentications, limited per client address: a flood of made-up keys must not cost
//! the database (and so the companies) a query each.
//!
//! Every answer 401 counts against the client's address (a token bucket of `burst` failures,
//! refilled at `per_second`). Once an address has failed, each of its requests holds a token
//! while it runs (a good key gives it back), so its lookups in flight never outnumber its
//! budget. Without a token, the address gets 429 in the envelope with `Retry-After` for any
//! request whose key is not already known to this process (a cached, valid key still works: a
//! company's back end sharing an address with a misbehaving client keeps working); nothing of
//! such a request reaches the database.
//!
//! The address is the socket's peer, or, when the peer is one of `trusted_proxies`, the first
//! address of `X-Forwarded-For` counted from the right that is not a trusted proxy (the nearest
//! hop a trusted proxy saw; what the client wrote further left is not believed).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::middleware::Next;
use actix_web::{web, Error, HttpMessage, ResponseError};
use ipnet::IpNet;

use crate::api_key::API_KEY_HEADER;
use crate::error::ApiError;
use crate::state::ApiState;

/// The failure budget of every client address. `per_second = 0` turns the limit off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedAuthSettings {
    /// Failed authentications per second an address may sustain.
    pub per_second: u32,
    /// Failed authentications an address may make at once.
    pub burst: u32,
    /// Proxies whose `X-Forwarded-For` is believed (empty: the socket's peer is the client).
    pub trusted_proxies: Vec<IpNet>,
    /// IPv4 clients are counted by network of this prefix length (32: each address).
    pub ipv4_prefix: u8,
    /// IPv6 clients are counted by network of this prefix length (64: a subscriber's usual
    /// allocation; one host can take any of its 2^64 addresses).
    pub ipv6_prefix: u8,
    /// Failed authentications per second of all the clients of one network together (an IPv4
    /// /24, an IPv6 /48: [`NETWORK_PREFIX_V4`], [`NETWORK_PREFIX_V6`]), so that rotating
    /// addresses within it gains nothing.
    pub network_per_second: u32,
    /// Failed authentications one network may make at once.
    pub network_burst: u32,
    /// Failed authentications per second of every client together, in this process: the bound
    /// of lookups made-up keys cost whatever the addresses. Keys this process knows as valid pass
    /// it (they cost no lookup), so it never starves them.
    pub process_per_second: u32,
    /// Failed authentications of every client together at once.
    pub process_burst: u32,
}

/// The IPv4 network whose clients share one budget besides each address's.
pub const NETWORK_PREFIX_V4: u8 = 24;
/// The IPv6 network whose clients share one budget besides each /64's.
pub const NETWORK_PREFIX_V6: u8 = 48;

impl Default for FailedAuthSettings {
    fn default() -> Self {
        Self {
            per_second: 5,
            burst: 50,
            trusted_proxies: Vec::new(),
            ipv4_prefix: 32,
            ipv6_prefix: 64,
            network_per_second: 20,
            network_burst: 200,
            process_per_second: 100,
            process_burst: 1000,
        }
    }
}

/// Past this many tracked addresses, those with a full budget and nothing in flight are dropped.
const PRUNE_ABOVE: usize = 10_000;

/// A refill rate and a size.
#[derive(Debug, Clone, Copy)]
struct Budget {
    per_second: f64,
    burst: f64,
}

impl Budget {
    fn of(per_second: u32, burst: u32) -> Budget {
        Budget {
            per_second: f64::from(per_second.max(1)),
            burst: f64::from(burst.max(1)),
        }
    }

    /// `bucket` refilled to `now`.
    fn refill(self, bucket: &mut Bucket, now: Instant) {
        let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.per_second).min(self.burst);
        bucket.at = now;
    }

    fn full(self, now: Instant) -> Bucket {
        Bucket {
            tokens: self.burst,
            at: now,
            in_flight: 0,
        }
    }

    /// The budget of `key` in `buckets`, a full one when it has none yet, refilled to `now`.
    /// Past [`PRUNE_ABOVE`] keys, those with a full budget and nothing in flight are forgotten
    /// first (they are what a new one would be).
    fn bucket(self, buckets: &mut HashMap<IpNet, Bucket>, key: IpNet, now: Instant) -> &mut Bucket {
        if buckets.len() >= PRUNE_ABOVE && !buckets.contains_key(&key) {
            buckets.retain(|_, b| {
                let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
                b.in_flight > 0 || b.tokens + elapsed * self.per_second < self.burst
            });
        }
        let bucket = buckets.entry(key).or_insert_with(|| self.full(now));
        self.refill(bucket, now);
        bucket
    }

    /// How long until `bucket` has a token free, if it has none now.
    fn wait(self, bucket: &Bucket) -> Option<Duration> {
        let available = bucket.tokens - f64::from(bucket.in_flight);
        (available < 1.0).then(|| Duration::from_secs_f64((1.0 - available) / self.per_second))
    }
}

/// The process's budgets: each client's (its address or IPv6 /64), each network's (IPv4 /24,
/// IPv6 /48), and the process's own.
struct Buckets {
    clients: HashMap<IpNet, Bucket>,
    networks: HashMap<IpNet, Bucket>,
    process: Bucket,
}

/// One budget's state: failures it may still make, and lookups under way against it.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
    /// Lookups admitted and not finished: each may fail, so each holds a token meanwhile
    /// (otherwise a burst of concurrent requests would all pass once a token refills).
    in_flight: u32,
}

/// What [`FailedAuthLimiter::admit`] gave a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ticket {
    /// The address has no failure on record: nothing held.
    Free,
    /// One token of the address held until the request ends.
    Held,
}

/// The process's failure budgets, one per client address that failed recently. (A token bucket
/// of our own rather than `governor`'s: a request must hold a token while its lookup runs and
/// give it back when the key was good, which needs a look at the bucket without spending it.)
pub struct FailedAuthLimiter {
    client_budget: Budget,
    network_budget: Budget,
    process_budget: Budget,
    /// One budget per client (see [`FailedAuthLimiter::network`]), per network of clients (see
    /// [`FailedAuthLimiter::wider_network`]), and the process's.
    buckets: Mutex<Buckets>,
    trusted_proxies: Vec<IpNet>,
    ipv4_prefix: u8,
    ipv6_prefix: u8,
    /// Hashes of keys that authenticated in this process lately, with when: they pass an address
    /// over its budget even while the key cache is off (change feed late, or caching disabled).
    /// Passing costs a lookup at most, never an authentication: a key revoked since is looked
    /// up and refused like any other.
    good_keys: RwLock<HashMap<String, Instant>>,
}

/// How long a key that authenticated counts as good for an address over its budget.
const GOOD_KEY_FOR: Duration = Duration::from_secs(60);
/// Good keys remembered at most (then the stale ones go, or all).
const GOOD_KEYS_MAX: usize = 10_000;

impl FailedAuthLimiter {
    /// `None` when the limit is off.
    pub fn new(settings: &FailedAuthSettings) -> Option<Self> {
        let process_budget = Budget::of(settings.process_per_second, settings.process_burst);
        (settings.per_second > 0).then(|| Self {
            client_budget: Budget::of(settings.per_second, settings.burst),
            network_budget: Budget::of(settings.network_per_second, settings.network_burst),
            process_budget,
            buckets: Mutex::new(Buckets {
                clients: HashMap::new(),
                networks: HashMap::new(),
                process: process_budget.full(Instant::now()),
            }),
            trusted_proxies: settings.trusted_proxies.clone(),
            ipv4_prefix: settings.ipv4_prefix.min(32),
            ipv6_prefix: settings.ipv6_prefix.min(128),
            good_keys: RwLock::new(HashMap::new()),
        })
    }

    /// The network `client` is counted in: its IPv4 address, or its IPv6 /64, by default.
    fn network(&self, client: IpAddr) -> IpNet {
        let prefix = match client {
            IpAddr::V4(_) => self.ipv4_prefix,
            IpAddr::V6(_) => self.ipv6_prefix,
        };
        IpNet::new(client, prefix)
            .map(|net| net.trunc())
            .unwrap_or_else(|_| IpNet::from(client))
    }

    /// The wider network `client` shares a budget with: its IPv4 /24 or IPv6 /48 (issue 39:
    /// rotating IPv4 addresses made 1,999 lookups in 10 s against 94 from one address).
    fn wider_network(&self, client: IpAddr) -> IpNet {
        let prefix = match client {
            IpAddr::V4(_) => NETWORK_PREFIX_V4,
            IpAddr::V6(_) => NETWORK_PREFIX_V6,
        };
        IpNet::new(client, prefix)
            .map(|net| net.trunc())
            .unwrap_or_else(|_| IpNet::from(client))
    }

    /// Whether the key of hash `hash` authenticated in this process within [`GOOD_KEY_FOR`].
    fn is_good_key(&self, hash: &str, now: Instant) -> bool {
        let good = self.good_keys.read().unwrap_or_else(|p| p.into_inner());
        good.get(hash)
            .is_some_and(|at| now.saturating_duration_since(*at) < GOOD_KEY_FOR)
    }

    /// Remembers that the key of hash `hash` authenticated at `now` (written at most once a
    /// second per key: the read above is the common path).
    fn remember_good_key(&self, hash: String, now: Instant) {
        let fresh = self
            .good_keys
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&hash)
            .is_some_and(|at| now.saturating_duration_since(*at) < Duration::from_secs(1));
        if fresh {
            return;
        }
        let mut good = self.good_keys.write().unwrap_or_else(|p| p.into_inner());
        if good.len() >= GOOD_KEYS_MAX && !good.contains_key(&hash) {
            good.retain(|_, at| now.saturating_duration_since(*at) < GOOD_KEY_FOR);
            if good.len() >= GOOD_KEYS_MAX {
                good.clear();
            }
        }
        good.insert(hash, now);
    }

    /// Lets a request of `client` look its key up, or tells how long it must wait. Every
    /// request holds a token of its client's budget, its network's and the process's while it
    /// runs, a client with no failure on record too (a full budget): so a first flood of
    /// made-up keys from a fresh address has at most `burst` lookups in flight, one from fresh
    /// addresses of one network at most `network_burst`, and from anywhere `process_burst`.
    fn admit(&self, client: IpAddr, now: Instant) -> Result<Ticket, Duration> {
        let (net, wider) = (self.network(client), self.wider_network(client));
        let mut guard = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let buckets = &mut *guard;
        self.process_budget.refill(&mut buckets.process, now);
        let waits = [
            self.client_budget
                .wait(self.client_budget.bucket(&mut buckets.clients, net, now)),
            self.network_budget.wait(
                self.network_budget
                    .bucket(&mut buckets.networks, wider, now),
            ),
            self.process_budget.wait(&buckets.process),
        ];
        if let Some(wait) = waits.into_iter().flatten().max() {
            return Err(wait);
        }
        for bucket in [
            buckets.clients.get_mut(&net),
            buckets.networks.get_mut(&wider),
            Some(&mut buckets.process),
        ]
        .into_iter()
        .flatten()
        {
            bucket.in_flight += 1;
        }
        Ok(Ticket::Held)
    }

    /// Ends a request admitted with `ticket`; a failed authentication spends a token.
    fn finish(&self, client: IpAddr, ticket: Ticket, failed: bool, now: Instant) {
        if ticket == Ticket::Free && !failed {
            return;
        }
        let (net, wider) = (self.network(client), self.wider_network(client));
        let mut guard = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let buckets = &mut *guard;
        self.process_budget.refill(&mut buckets.process, now);
        let client_bucket = self.client_budget.bucket(&mut buckets.clients, net, now);
        settle(client_bucket, ticket, failed);
        let network_bucket = self
            .network_budget
            .bucket(&mut buckets.networks, wider, now);
        settle(network_bucket, ticket, failed);
        settle(&mut buckets.process, ticket, failed);
    }

    /// The client's address (see the module on proxies).
    pub fn client_address(
        &self,
        peer: Option<IpAddr>,
        forwarded_for: Option<&str>,
    ) -> Option<IpAddr> {
        client_address(&self.trusted_proxies, peer, forwarded_for)
    }
}

/// Gives back what `ticket` held of `bucket`; a failure spends a token.
fn settle(bucket: &mut Bucket, ticket: Ticket, failed: bool) {
    if ticket == Ticket::Held {
        bucket.in_flight = bucket.in_flight.saturating_sub(1);
    }
    if failed {
        bucket.tokens = (bucket.tokens - 1.0).max(0.0);
    }
}

/// The client's address: `peer`, unless it is a trusted proxy; then the right-most address of
/// `forwarded_for` that is not a trusted proxy (the left-most when all are; `peer` when the
/// header is absent or unreadable).
pub fn client_address(
    trusted_proxies: &[IpNet],
    peer: Option<IpAddr>,
    forwarded_for: Option<&str>,
) -> Option<IpAddr> {
    let peer = peer?;
    let trusted = |ip: &IpAddr| trusted_proxies.iter().any(|net| net.contains(ip));
    if !trusted(&peer) {
        return Some(peer);
    }
    let hops: Option<Vec<IpAddr>> = forwarded_for.map(|header| {
        header
            .split(',')
            .map_while(|hop| hop.trim().parse().ok())
            .collect()
    });
    let Some(hops) = hops.filter(|h| !h.is_empty()) else {
        return Some(peer);
    };
    Some(
        hops.iter()
            .rev()
            .find(|ip| !trusted(ip))
            .copied()
            .unwrap_or(hops[0]),
    )
}

/// Set on a request (its extensions) by a handler whose check of a credential other than an
/// API key failed after a lookup (a console session cookie that opens nothing): [`guard`]
/// counts it against the client's address as it counts a 401.
#[derive(Debug, Clone, Copy)]
pub struct FailedAuthentication;

/// Marks `req` as a failed authentication (see [`FailedAuthentication`]).
pub fn mark_failed(req: &actix_web::HttpRequest) {
    req.extensions_mut().insert(FailedAuthentication);
}

/// Middleware: refuses an address over its budget of failed authentications (unless its key is
/// known to this process), and counts every 401 against its address.
pub async fn guard(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
    limiter: Option<Arc<FailedAuthLimiter>>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let Some(limiter) = limiter else {
        return Ok(next.call(req).await?.map_into_boxed_body());
    };
    let client = limiter.client_address(
        req.peer_addr().map(|a| a.ip()),
        req.headers()
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok()),
    );
    let Some(client) = client else {
        return Ok(next.call(req).await?.map_into_boxed_body());
    };
    let key = req
        .headers()
        .get(API_KEY_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|k| application::looks_like_api_key(k))
        .map(application::hash_api_key);
    let key_known = || {
        key.as_deref()
            .is_some_and(|hash| limiter.is_good_key(hash, Instant::now()))
            || req
                .app_data::<web::Data<ApiState>>()
                .is_some_and(|state| state.services.auth.is_cached(key_header(&req)))
    };
    let ticket = match limiter.admit(client, Instant::now()) {
        Ok(ticket) => ticket,
        // a key this process holds as valid costs no lookup: let it through
        Err(_) if key_known() => Ticket::Free,
        Err(wait) => {
            let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            let refused = ApiError::TooManyFailedAuthentications {
                retry_after_seconds: seconds.max(1),
            };
            return Ok(req.into_response(refused.error_response()));
        }
    };
    // Given back even when the request never ends here (the client went away and the future
    // was dropped): a held token must never leak, or the address would run out for good.
    let mut held = HeldTicket {
        limiter: &limiter,
        client,
        ticket: Some(ticket),
    };
    let response = next.call(req).await;
    let failed = matches!(&response, Ok(r) if r.status() == StatusCode::UNAUTHORIZED
        || r.request().extensions().contains::<FailedAuthentication>());
    let now = Instant::now();
    held.finish(failed, now);
    // a key that resolved to a company is good for a while
    if let (Some(hash), Some(_)) = (key, crate::request_id::resolved_company()) {
        limiter.remember_good_key(hash, now);
    }
    Ok(response?.map_into_boxed_body())
}

/// A request's ticket until it is finished; dropped unfinished, it is finished as a success
/// (nothing known failed).
struct HeldTicket<'a> {
    limiter: &'a FailedAuthLimiter,
    client: IpAddr,
    ticket: Option<Ticket>,
}

impl HeldTicket<'_> {
    fn finish(&mut self, failed: bool, now: Instant) {
        if let Some(ticket) = self.ticket.take() {
            self.limiter.finish(self.client, ticket, failed, now);
        }
    }
}

impl Drop for HeldTicket<'_> {
    fn drop(&mut self) {
        self.finish(false, Instant::now());
    }
}

fn key_header(req: &ServiceRequest) -> Option<&str> {
    req.headers()
        .get(API_KEY_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn nets(list: &[&str]) -> Vec<IpNet> {
        list.iter().map(|n| n.parse().unwrap()).collect()
    }

    #[test]
    fn without_trusted_proxies_the_peer_is_the_client_whatever_the_header_says() {
        assert_eq!(
            client_address(&[], Some(ip("203.0.113.9")), Some("198.51.100.1")),
            Some(ip("203.0.113.9"))
        );
    }

    #[test]
    fn behind_trusted_proxies_the_first_untrusted_hop_from_the_right_is_the_client() {
        let trusted = nets(&["10.0.0.0/8", "127.0.0.1/32"]);
        // the client wrote 1.2.3.4 itself; the proxy 10.0.0.7 appended what it saw
        assert_eq!(
            client_address(
                &trusted,
                Some(ip("127.0.0.1")),
                Some("1.2.3.4, 198.51.100.20, 10.0.0.7")
            ),
            Some(ip("198.51.100.20"))
        );
        assert_eq!(
            client_address(&trusted, Some(ip("10.1.2.3")), None),
            Some(ip("10.1.2.3")),
            "no header: the peer"
        );
        assert_eq!(
            client_address(&trusted, Some(ip("10.1.2.3")), Some("garbage")),
            Some(ip("10.1.2.3")),
            "unreadable header: the peer"
        );
    }

    #[test]
    fn an_untrusted_peer_cannot_choose_its_address_by_header() {
        let trusted = nets(&["10.0.0.0/8"]);
        assert_eq!(
            client_address(&trusted, Some(ip("198.51.100.7")), Some("10.0.0.1")),
            Some(ip("198.51.100.7"))
        );
    }

    fn limiter(per_second: u32, burst: u32) -> FailedAuthLimiter {
        FailedAuthLimiter::new(&FailedAuthSettings {
            per_second,
            burst,
            ..FailedAuthSettings::default()
        })
        .unwrap()
    }

    fn fail(limiter: &FailedAuthLimiter, client: IpAddr, now: Instant) {
        let ticket = limiter.admit(client, now).expect("admitted");
        limiter.finish(client, ticket, true, now);
    }

    #[test]
    fn an_address_is_refused_once_its_burst_of_failures_is_spent_and_others_are_not() {
        let limiter = limiter(1, 3);
        let (bad, good) = (ip("198.51.100.7"), ip("198.51.100.8"));
        let now = Instant::now();
        for _ in 0..3 {
            fail(&limiter, bad, now);
        }
        let wait = limiter.admit(bad, now).expect_err("over budget");
        assert_eq!(wait, Duration::from_secs(1));
        assert_eq!(limiter.admit(good, now), Ok(Ticket::Held));
        assert_eq!(
            limiter.admit(bad, now + Duration::from_secs(1)),
            Ok(Ticket::Held),
            "one more after a second"
        );
    }

    #[test]
    fn concurrent_lookups_of_a_suspect_address_are_bounded_by_its_tokens() {
        let limiter = limiter(1, 2);
        let client = ip("198.51.100.7");
        let now = Instant::now();
        fail(&limiter, client, now);
        // one token left: one lookup at a time, however many arrive together
        assert_eq!(limiter.admit(client, now), Ok(Ticket::Held));
        assert!(limiter.admit(client, now).is_err());
        // a good key gives its token back
        limiter.finish(client, Ticket::Held, false, now);
        assert_eq!(limiter.admit(client, now), Ok(Ticket::Held));
    }

    #[test]
    fn ipv6_clients_are_counted_by_their_64_and_ipv4_clients_by_address() {
        let limiter = limiter(1, 3);
        let now = Instant::now();
        // three failures from three addresses of one /64 spend the /64's budget
        for host in [
            "2001:db8:1:2::1",
            "2001:db8:1:2::abcd",
            "2001:db8:1:2:ffff::9",
        ] {
            fail(&limiter, ip(host), now);
        }
        assert!(limiter.admit(ip("2001:db8:1:2:1234::77"), now).is_err());
        assert_eq!(limiter.admit(ip("2001:db8:1:3::1"), now), Ok(Ticket::Held));
        for host in ["198.51.100.1", "198.51.100.2", "198.51.100.3"] {
            fail(&limiter, ip(host), now);
        }
        assert_eq!(limiter.admit(ip("198.51.100.4"), now), Ok(Ticket::Held));
    }

    #[test]
    fn the_prefix_lengths_are_settings() {
        let limiter = FailedAuthLimiter::new(&FailedAuthSettings {
            per_second: 1,
            burst: 1,
            ipv4_prefix: 24,
            ipv6_prefix: 48,
            ..FailedAuthSettings::default()
        })
        .unwrap();
        let now = Instant::now();
        fail(&limiter, ip("198.51.100.1"), now);
        assert!(limiter.admit(ip("198.51.100.200"), now).is_err());
        fail(&limiter, ip("2001:db8:1:2::1"), now);
        assert!(limiter.admit(ip("2001:db8:1:ffff::1"), now).is_err());
    }

    #[test]
    fn a_fresh_address_has_at_most_its_burst_of_lookups_in_flight() {
        let limiter = limiter(1, 3);
        let client = ip("203.0.113.9");
        let now = Instant::now();
        for _ in 0..3 {
            assert_eq!(limiter.admit(client, now), Ok(Ticket::Held));
        }
        assert!(
            limiter.admit(client, now).is_err(),
            "no failure yet, but 3 in flight"
        );
        limiter.finish(client, Ticket::Held, false, now);
        assert_eq!(limiter.admit(client, now), Ok(Ticket::Held));
    }

    #[test]
    fn a_ticket_dropped_unfinished_is_given_back() {
        let limiter = limiter(1, 1);
        let client = ip("203.0.113.9");
        let now = Instant::now();
        let ticket = limiter.admit(client, now).unwrap();
        drop(HeldTicket {
            limiter: &limiter,
            client,
            ticket: Some(ticket),
        });
        assert_eq!(limiter.admit(client, now), Ok(Ticket::Held));
    }

    #[test]
    fn a_key_that_authenticated_is_good_for_a_while() {
        let limiter = limiter(1, 1);
        let now = Instant::now();
        assert!(!limiter.is_good_key("h", now));
        limiter.remember_good_key("h".into(), now);
        assert!(limiter.is_good_key("h", now + Duration::from_secs(59)));
        assert!(!limiter.is_good_key("h", now + GOOD_KEY_FOR));
    }

    /// Issue 39: rotating IPv4 addresses made 1,999 lookups in 10 s against 94 from one address.
    #[test]
    fn addresses_of_one_24_share_its_budget_and_every_network_the_processs() {
        let limiter = FailedAuthLimiter::new(&FailedAuthSettings {
            per_second: 1,
            burst: 3,
            network_per_second: 1,
            network_burst: 5,
            process_per_second: 1,
            process_burst: 8,
            ..FailedAuthSettings::default()
        })
        .unwrap();
        let now = Instant::now();
        // five fresh addresses of one /24 fail once each: a sixth, fresh too, is refused
        for n in 1..=5 {
            fail(&limiter, ip(&format!("198.51.100.{n}")), now);
        }
        assert!(limiter.admit(ip("198.51.100.6"), now).is_err());
        // other /24s are served until the process's budget (8) is spent, then none is
        for n in 1..=3 {
            fail(&limiter, ip(&format!("203.0.{n}.1")), now);
        }
        assert!(limiter.admit(ip("192.0.2.1"), now).is_err());
        // both refill
        let later = now + Duration::from_secs(2);
        assert!(limiter.admit(ip("192.0.2.1"), later).is_ok());
    }

    #[test]
    fn a_zero_rate_turns_the_limit_off() {
        assert!(FailedAuthLimiter::new(&FailedAuthSettings {
            per_second: 0,
            ..FailedAuthSettings::default()
        })
        .is_none());
    }
}
