//! [`RememberingResolver`]: the PGCC's address without a thread per call.
//!
//! ureq resolves the host on every call, pooled connection or not, and with a timeout set its
//! default resolver does it on a new thread (`getaddrinfo` cannot be cancelled). Measured with
//! `strace -c -f` during a `make bench` creation run: about 0.75 thread creations per creation
//! (clone3, mmap, mprotect, sigaltstack, munmap, futex: some twenty system calls and two context
//! switches), for an address that never changed. Here an IP literal is its own answer, and a
//! name is looked up (by ureq's resolver, with its timeout) at most once per
//! [`REMEMBER_FOR`]: a PGCC that moves is followed within that time, as new connections are
//! made.

use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// How long a looked-up name's addresses are used before it is looked up again.
pub const REMEMBER_FOR: Duration = Duration::from_secs(10);

/// ureq's resolver for the PGCC gateway: IP literals without a lookup, names remembered for
/// [`REMEMBER_FOR`].
#[derive(Debug, Default)]
pub struct RememberingResolver {
    inner: DefaultResolver,
    remembered: Remembered,
}

impl Resolver for RememberingResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let literal = uri.host().and_then(ip_literal).map(|ip| {
            let port = uri.port_u16().unwrap_or_else(|| default_port(uri));
            SocketAddr::new(ip, port)
        });
        if let Some(address) = literal {
            let mut resolved = self.empty();
            resolved.push(address);
            return Ok(resolved);
        }
        let key = uri.authority().map_or("", |a| a.as_str());
        self.remembered.get_or_resolve(key, Instant::now(), || {
            self.inner.resolve(uri, config, timeout)
        })
    }
}

/// `host` as an IP address: `127.0.0.1`, or `[::1]` as a URI writes it.
fn ip_literal(host: &str) -> Option<IpAddr> {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

fn default_port(uri: &Uri) -> u16 {
    if uri.scheme_str() == Some("https") {
        443
    } else {
        80
    }
}

/// The last lookup: its key (the URI's authority), its addresses and when it was made.
#[derive(Debug, Default)]
struct Remembered(Mutex<Option<(String, ResolvedSocketAddrs, Instant)>>);

impl Remembered {
    /// The addresses remembered for `key` if looked up less than [`REMEMBER_FOR`] before `now`;
    /// otherwise `resolve`'s, remembered when it succeeds (a failure is not remembered: the next
    /// call tries again).
    fn get_or_resolve(
        &self,
        key: &str,
        now: Instant,
        resolve: impl FnOnce() -> Result<ResolvedSocketAddrs, ureq::Error>,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        {
            let last = self.0.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((last_key, addresses, at)) = last.as_ref() {
                if last_key == key && now.saturating_duration_since(*at) < REMEMBER_FOR {
                    return Ok(addresses.clone());
                }
            }
        }
        // looked up outside the lock: a slow name server holds only the callers that need it
        let addresses = resolve()?;
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((key.to_owned(), addresses.clone(), now));
        Ok(addresses)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn addresses(port: u16) -> ResolvedSocketAddrs {
        let mut resolved = RememberingResolver::default().empty();
        resolved.push(SocketAddr::from(([10, 0, 0, 1], port)));
        resolved
    }

    fn resolve_with(uri: &str) -> Vec<SocketAddr> {
        let uri: Uri = uri.parse().unwrap();
        let timeout = NextTimeout {
            after: Duration::from_secs(1).into(),
            reason: ureq::Timeout::Resolve,
            per_read: None,
            per_write: None,
        };
        RememberingResolver::default()
            .resolve(&uri, &Config::default(), timeout)
            .unwrap()
            .iter()
            .copied()
            .collect()
    }

    #[test]
    fn an_ip_literal_is_its_own_address() {
        assert_eq!(
            resolve_with("http://127.0.0.1:8081/pgcc/v1/solicitacoes"),
            [SocketAddr::from(([127, 0, 0, 1], 8081))]
        );
        assert_eq!(
            resolve_with("https://[::1]/pgcc/v1"),
            ["[::1]:443".parse::<SocketAddr>().unwrap()]
        );
        assert_eq!(
            resolve_with("http://10.1.2.3/x"),
            [SocketAddr::from(([10, 1, 2, 3], 80))]
        );
    }

    #[test]
    fn a_name_is_looked_up_once_while_remembered() {
        let remembered = Remembered::default();
        let lookups = Cell::new(0);
        let lookup = |port| {
            lookups.set(lookups.get() + 1);
            Ok(addresses(port))
        };
        let start = Instant::now();
        let first = remembered.get_or_resolve("pgcc.example:443", start, || lookup(1));
        let later =
            remembered.get_or_resolve("pgcc.example:443", start + REMEMBER_FOR / 2, || lookup(2));
        assert_eq!(lookups.get(), 1);
        assert_eq!(first.unwrap()[0], later.unwrap()[0]);

        // past the time, or another name: looked up again
        let expired = remembered
            .get_or_resolve("pgcc.example:443", start + REMEMBER_FOR, || lookup(3))
            .unwrap();
        assert_eq!(expired[0].port(), 3);
        let other = remembered
            .get_or_resolve("other.example:443", start + REMEMBER_FOR, || lookup(4))
            .unwrap();
        assert_eq!(other[0].port(), 4);
        assert_eq!(lookups.get(), 3);
    }

    #[test]
    fn a_failed_lookup_is_not_remembered() {
        let remembered = Remembered::default();
        let now = Instant::now();
        let failed =
            remembered.get_or_resolve("pgcc.example:443", now, || Err(ureq::Error::HostNotFound));
        assert!(matches!(failed, Err(ureq::Error::HostNotFound)));
        let retried = remembered
            .get_or_resolve("pgcc.example:443", now, || Ok(addresses(7)))
            .unwrap();
        assert_eq!(retried[0].port(), 7);
    }
}
