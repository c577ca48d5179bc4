//! [`BoundedLookup`]: name resolution that a silent name server cannot hold, shared fairly
//! between companies.
//!
//! The system resolver (`getaddrinfo`) cannot be cancelled and may wait for its own timeouts
//! and retries (half a minute and more). Each lookup therefore runs on a thread of its own
//! while the caller waits at most its limit; a lookup still running then is left to finish on
//! its own thread. Lookups running at once (stuck ones included) are bounded twice:
//!
//! - per company (`webhooks.dns_in_flight_per_company`): beyond it the company's lookup is
//!   refused at once ([`TargetRefused::LookupsBusy`]), so names that never answer cost their
//!   company alone, never another company's registrations;
//! - per process (64): beyond it any lookup is refused at once as a timeout, so many companies
//!   together cannot make the process pile up threads.
//!
//! A host whose lookup failed or timed out is remembered for a few seconds
//! ([`FAILED_LOOKUP_TTL`]): asked again meanwhile, by any company, it gets the same answer at
//! once, with no thread and no slot taken.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use domain::CompanyId;
use ports::TargetRefused;

/// Lookups running at once (stuck ones included) with the system resolver, all companies
/// together.
const SYSTEM_MAX_IN_FLIGHT: usize = 64;

/// How long a failed or timed-out lookup is remembered. Long enough that a flood of
/// registrations of one dead name (or a burst of deliveries to it) costs one lookup every few
/// seconds instead of one per request; short enough that a name fixed by its owner passes again
/// before anyone retrying by hand notices, and below the resolver's own negative caching.
pub const FAILED_LOOKUP_TTL: Duration = Duration::from_secs(5);

/// Hosts remembered as failed at most; past it the entry that expires first is forgotten.
const FAILED_LOOKUP_CAPACITY: usize = 1024;

type LookupFn = dyn Fn(&str, u16) -> io::Result<Vec<SocketAddr>> + Send + Sync;

/// Name resolution bounded in time, in threads per company and per process. Cheap to clone
/// (clones share the bounds and the remembered failures).
#[derive(Clone)]
pub struct BoundedLookup {
    lookup: Arc<LookupFn>,
    slots: Arc<Slots>,
    failures: Arc<FailedLookups>,
}

/// Lookups under way: in all and per company.
struct Slots {
    in_flight: AtomicUsize,
    max_in_flight: usize,
    per_company: Mutex<HashMap<CompanyId, usize>>,
    max_per_company: usize,
}

/// One lookup's places in [`Slots`]; given back when dropped (by the lookup's thread when the
/// resolver returns, or at once when no thread could start).
struct Taken {
    slots: Arc<Slots>,
    company: CompanyId,
}

impl Drop for Taken {
    fn drop(&mut self) {
        self.slots.in_flight.fetch_sub(1, Ordering::SeqCst);
        let mut per_company = self
            .slots
            .per_company
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(n) = per_company.get_mut(&self.company) {
            *n -= 1;
            if *n == 0 {
                per_company.remove(&self.company);
            }
        }
    }
}

impl std::fmt::Debug for BoundedLookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundedLookup")
            .field("in_flight", &self.in_flight())
            .field("max_in_flight", &self.slots.max_in_flight)
            .field("max_per_company", &self.slots.max_per_company)
            .finish()
    }
}

impl BoundedLookup {
    /// The system resolver: at most `max_per_company` lookups at once for one company, 64 in
    /// all.
    pub fn system(max_per_company: usize) -> Self {
        Self::new(
            SYSTEM_MAX_IN_FLIGHT,
            max_per_company,
            FAILED_LOOKUP_TTL,
            |host: &str, port: u16| (host, port).to_socket_addrs().map(Iterator::collect),
        )
    }

    /// `lookup` (host, port -> addresses): at most `max_in_flight` at once, `max_per_company`
    /// of them for one company; a failure remembered for `failed_ttl`.
    pub fn new(
        max_in_flight: usize,
        max_per_company: usize,
        failed_ttl: Duration,
        lookup: impl Fn(&str, u16) -> io::Result<Vec<SocketAddr>> + Send + Sync + 'static,
    ) -> Self {
        Self {
            lookup: Arc::new(lookup),
            slots: Arc::new(Slots {
                in_flight: AtomicUsize::new(0),
                max_in_flight,
                per_company: Mutex::default(),
                max_per_company,
            }),
            failures: Arc::new(FailedLookups::new(failed_ttl, FAILED_LOOKUP_CAPACITY)),
        }
    }

    /// Lookups running now (stuck ones included).
    pub fn in_flight(&self) -> usize {
        self.slots.in_flight.load(Ordering::SeqCst)
    }

    /// The addresses of `host`, looked up for `company`, waiting at most `limit`:
    /// [`TargetRefused::DnsFailure`] when the lookup fails or finds nothing,
    /// [`TargetRefused::DnsTimeout`] when it takes longer (or the process has too many lookups
    /// running), [`TargetRefused::LookupsBusy`] when the company has its share running. A
    /// failure remembered for `host` is answered again at once. Logs never the host.
    pub fn lookup(
        &self,
        company: CompanyId,
        host: &str,
        port: u16,
        limit: Duration,
    ) -> Result<Vec<IpAddr>, TargetRefused> {
        if let Some(refused) = self.failures.get(host) {
            tracing::debug!(empresa_id = %company, reason = ?refused, "webhook target lookup: failed moments ago, not repeated");
            return Err(refused);
        }
        let taken = self.take(company)?;
        let (answer, answered) = mpsc::sync_channel(1);
        let (lookup, failures, owned_host) =
            (self.lookup.clone(), self.failures.clone(), host.to_owned());
        let spawned = std::thread::Builder::new()
            .name("dns-lookup".into())
            .spawn(move || {
                let found = lookup(&owned_host, port);
                match &found {
                    Ok(addresses) if !addresses.is_empty() => failures.forget(&owned_host),
                    _ => failures.remember(&owned_host, TargetRefused::DnsFailure),
                }
                drop(taken);
                let _ = answer.send(found);
            });
        if let Err(error) = spawned {
            tracing::warn!(%error, "webhook target lookup: no thread");
            return Err(TargetRefused::DnsFailure);
        }
        match answered.recv_timeout(limit) {
            Ok(Ok(addresses)) if !addresses.is_empty() => {
                Ok(addresses.into_iter().map(|a| a.ip()).collect())
            }
            Ok(Ok(_)) => Err(TargetRefused::DnsFailure),
            Ok(Err(error)) => {
                tracing::debug!(%error, "webhook target lookup failed");
                Err(TargetRefused::DnsFailure)
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // Unless the lookup ends meanwhile (its own answer replaces this one), the
                // next asker within the TTL is not made to wait for the same silence.
                self.failures
                    .remember_if_absent(host, TargetRefused::DnsTimeout);
                Err(TargetRefused::DnsTimeout)
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(TargetRefused::DnsFailure),
        }
    }

    /// A place for one more lookup of `company`, if it and the process have one left.
    fn take(&self, company: CompanyId) -> Result<Taken, TargetRefused> {
        let slots = &self.slots;
        {
            let mut per_company = slots.per_company.lock().unwrap_or_else(|p| p.into_inner());
            let n = per_company.entry(company).or_insert(0);
            if *n >= slots.max_per_company {
                tracing::warn!(
                    empresa_id = %company,
                    max_per_company = slots.max_per_company,
                    "webhook target lookup refused: the company has its share of lookups still waiting for a name server"
                );
                return Err(TargetRefused::LookupsBusy);
            }
            *n += 1;
            // From here on, dropping `taken` gives back both places.
            slots.in_flight.fetch_add(1, Ordering::SeqCst);
        }
        let taken = Taken {
            slots: slots.clone(),
            company,
        };
        if slots.in_flight.load(Ordering::SeqCst) > slots.max_in_flight {
            tracing::warn!(
                max_in_flight = slots.max_in_flight,
                "webhook target lookup refused: too many lookups still waiting for a name server"
            );
            return Err(TargetRefused::DnsTimeout);
        }
        Ok(taken)
    }
}

/// Hosts whose last lookup failed, each with its refusal, for a while. Bounded in entries.
struct FailedLookups {
    ttl: Duration,
    capacity: usize,
    hosts: Mutex<HashMap<String, (Instant, TargetRefused)>>,
}

impl FailedLookups {
    fn new(ttl: Duration, capacity: usize) -> Self {
        Self {
            ttl,
            capacity,
            hosts: Mutex::default(),
        }
    }

    fn get(&self, host: &str) -> Option<TargetRefused> {
        let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
        match hosts.get(host) {
            Some((until, refused)) if *until > Instant::now() => Some(refused.clone()),
            Some(_) => {
                hosts.remove(host);
                None
            }
            None => None,
        }
    }

    fn remember(&self, host: &str, refused: TargetRefused) {
        self.insert(host, refused, true);
    }

    fn remember_if_absent(&self, host: &str, refused: TargetRefused) {
        self.insert(host, refused, false);
    }

    fn insert(&self, host: &str, refused: TargetRefused, replace: bool) {
        if self.ttl.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
        if !replace && hosts.get(host).is_some_and(|(until, _)| *until > now) {
            return;
        }
        if !hosts.contains_key(host) && hosts.len() >= self.capacity {
            hosts.retain(|_, (until, _)| *until > now);
            if hosts.len() >= self.capacity {
                let soonest = hosts
                    .iter()
                    .min_by_key(|(_, (until, _))| *until)
                    .map(|(h, _)| h.clone());
                if let Some(soonest) = soonest {
                    hosts.remove(&soonest);
                }
            }
        }
        hosts.insert(host.to_owned(), (now + self.ttl, refused));
    }

    fn forget(&self, host: &str) {
        self.hosts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(host);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use uuid::Uuid;

    use super::*;

    fn company(n: u128) -> CompanyId {
        CompanyId(Uuid::from_u128(n))
    }

    /// A name server that answers only when the test lets it (`release`), counting the
    /// lookups it got.
    fn hanging(
        max_in_flight: usize,
        max_per_company: usize,
        ttl: Duration,
    ) -> (BoundedLookup, mpsc::Sender<()>, Arc<AtomicUsize>) {
        let (release, released) = mpsc::channel::<()>();
        let released = Mutex::new(released);
        let asked = Arc::new(AtomicUsize::new(0));
        let counted = asked.clone();
        let lookup = BoundedLookup::new(max_in_flight, max_per_company, ttl, move |_, _| {
            counted.fetch_add(1, Ordering::SeqCst);
            let _ = released.lock().unwrap().recv();
            Ok(vec![SocketAddr::from(([8, 8, 8, 8], 443))])
        });
        (lookup, release, asked)
    }

    const SHORT: Duration = Duration::from_millis(30);

    #[test]
    fn a_company_with_its_share_stuck_is_refused_at_once_and_asks_nothing_until_a_place_comes_back()
    {
        let (lookup, release, asked) = hanging(64, 2, Duration::ZERO);
        for n in 0..2 {
            assert_eq!(
                lookup.lookup(company(1), &format!("h{n}.a.example"), 443, SHORT),
                Err(TargetRefused::DnsTimeout)
            );
        }

        assert_eq!(
            lookup.lookup(company(1), "h9.a.example", 443, SHORT),
            Err(TargetRefused::LookupsBusy)
        );
        assert_eq!(
            asked.load(Ordering::SeqCst),
            2,
            "the refused one asked nothing"
        );

        // once the name server answers company 1's lookups, their places come back
        release.send(()).unwrap();
        release.send(()).unwrap();
        let freed = (0..200).any(|_| {
            std::thread::sleep(Duration::from_millis(10));
            lookup.in_flight() == 0
        });
        assert!(freed);
        release.send(()).unwrap();
        assert_eq!(
            lookup.lookup(company(2), "b.example", 443, Duration::from_secs(5)),
            Ok(vec![IpAddr::from([8, 8, 8, 8])])
        );
        release.send(()).unwrap();
        assert!(lookup
            .lookup(company(1), "h9.a.example", 443, Duration::from_secs(5))
            .is_ok());
    }

    #[test]
    fn the_process_bound_holds_across_companies() {
        let (lookup, _release, _) = hanging(3, 2, Duration::ZERO);
        for (c, host) in [(1, "a1"), (1, "a2"), (2, "b1")] {
            assert_eq!(
                lookup.lookup(company(c), host, 443, SHORT),
                Err(TargetRefused::DnsTimeout)
            );
        }
        assert_eq!(lookup.in_flight(), 3);

        assert_eq!(
            lookup.lookup(company(3), "c1", 443, SHORT),
            Err(TargetRefused::DnsTimeout)
        );
        assert_eq!(
            lookup.in_flight(),
            3,
            "the refused lookup gave its place back"
        );
    }

    #[test]
    fn a_failed_lookup_is_answered_again_at_once_until_its_ttl_ends() {
        let asked = Arc::new(AtomicUsize::new(0));
        let counted = asked.clone();
        let lookup = BoundedLookup::new(64, 4, Duration::from_millis(300), move |_, _| {
            counted.fetch_add(1, Ordering::SeqCst);
            Err(io::Error::other("NXDOMAIN"))
        });

        for c in [1, 2] {
            assert_eq!(
                lookup.lookup(company(c), "gone.example", 443, Duration::from_secs(5)),
                Err(TargetRefused::DnsFailure)
            );
        }
        assert_eq!(
            asked.load(Ordering::SeqCst),
            1,
            "remembered for every company"
        );

        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(
            lookup.lookup(company(1), "gone.example", 443, Duration::from_secs(5)),
            Err(TargetRefused::DnsFailure)
        );
        assert_eq!(asked.load(Ordering::SeqCst), 2, "asked again after the TTL");
    }

    #[test]
    fn a_timed_out_lookup_is_remembered_as_a_timeout_and_forgotten_when_it_succeeds_later() {
        let (lookup, release, asked) = hanging(64, 4, Duration::from_secs(60));
        assert_eq!(
            lookup.lookup(company(1), "slow.example", 443, SHORT),
            Err(TargetRefused::DnsTimeout)
        );
        assert_eq!(
            lookup.lookup(company(2), "slow.example", 443, SHORT),
            Err(TargetRefused::DnsTimeout)
        );
        assert_eq!(asked.load(Ordering::SeqCst), 1);

        // the stuck lookup finally answers: the name is good again at once
        release.send(()).unwrap();
        let forgotten = (0..200).any(|_| {
            std::thread::sleep(Duration::from_millis(10));
            lookup.in_flight() == 0
        });
        assert!(forgotten);
        release.send(()).unwrap();
        assert!(lookup
            .lookup(company(1), "slow.example", 443, Duration::from_secs(5))
            .is_ok());
    }

    #[test]
    fn remembered_failures_are_bounded_in_hosts() {
        let failures = FailedLookups::new(Duration::from_secs(60), 3);
        for host in ["a", "b", "c", "d"] {
            failures.remember(host, TargetRefused::DnsFailure);
        }
        let kept = ["a", "b", "c", "d"]
            .iter()
            .filter(|h| failures.get(h).is_some())
            .count();
        assert_eq!(kept, 3);
        assert!(failures.get("d").is_some(), "the newest is kept");
    }
}
