//! [`BoundedLookup`]: name resolution that a silent name server cannot hold.
//!
//! The system resolver (`getaddrinfo`) cannot be cancelled and may wait for its own timeouts
//! and retries (half a minute and more). Each lookup therefore runs on a thread of its own
//! while the caller waits at most its limit; a lookup still running then is left to finish on
//! its own thread. At most `max_in_flight` lookups may be running at once, stuck ones included:
//! beyond that a lookup is refused at once as a timeout, so a name server that never answers
//! cannot make the process pile up threads.

use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use ports::TargetRefused;

/// Lookups running at once (stuck ones included) with the system resolver.
const SYSTEM_MAX_IN_FLIGHT: usize = 64;

type LookupFn = dyn Fn(&str, u16) -> io::Result<Vec<SocketAddr>> + Send + Sync;

/// Name resolution bounded in time and in threads. Cheap to clone (clones share the bound).
#[derive(Clone)]
pub struct BoundedLookup {
    lookup: Arc<LookupFn>,
    in_flight: Arc<AtomicUsize>,
    max_in_flight: usize,
}

impl std::fmt::Debug for BoundedLookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundedLookup")
            .field("in_flight", &self.in_flight())
            .field("max_in_flight", &self.max_in_flight)
            .finish()
    }
}

impl BoundedLookup {
    /// The system resolver, at most 64 lookups at once.
    pub fn system() -> Self {
        Self::new(SYSTEM_MAX_IN_FLIGHT, |host: &str, port: u16| {
            (host, port).to_socket_addrs().map(Iterator::collect)
        })
    }

    /// `lookup` (host, port -> addresses), at most `max_in_flight` at once.
    pub fn new(
        max_in_flight: usize,
        lookup: impl Fn(&str, u16) -> io::Result<Vec<SocketAddr>> + Send + Sync + 'static,
    ) -> Self {
        Self {
            lookup: Arc::new(lookup),
            in_flight: Arc::default(),
            max_in_flight,
        }
    }

    /// Lookups running now (stuck ones included).
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// The addresses of `host`, waiting at most `limit`: [`TargetRefused::DnsFailure`] when
    /// the lookup fails or finds nothing, [`TargetRefused::DnsTimeout`] when it takes longer
    /// (or too many lookups are already running). Logs at debug level only, never the host.
    pub fn lookup(
        &self,
        host: &str,
        port: u16,
        limit: Duration,
    ) -> Result<Vec<IpAddr>, TargetRefused> {
        if self.in_flight.fetch_add(1, Ordering::SeqCst) >= self.max_in_flight {
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            tracing::warn!(
                max_in_flight = self.max_in_flight,
                "webhook target lookup refused: too many lookups still waiting for a name server"
            );
            return Err(TargetRefused::DnsTimeout);
        }
        let (answer, answered) = mpsc::sync_channel(1);
        let (lookup, in_flight, host) =
            (self.lookup.clone(), self.in_flight.clone(), host.to_owned());
        let spawned = std::thread::Builder::new()
            .name("dns-lookup".into())
            .spawn(move || {
                let found = lookup(&host, port);
                in_flight.fetch_sub(1, Ordering::SeqCst);
                let _ = answer.send(found);
            });
        if let Err(error) = spawned {
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
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
            Err(mpsc::RecvTimeoutError::Timeout) => Err(TargetRefused::DnsTimeout),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(TargetRefused::DnsFailure),
        }
    }
}
