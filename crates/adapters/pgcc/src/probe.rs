//! Reachability of the PGCC for `GET /health/ready`: a TCP connection to the base URL's host and
//! port within a short timeout, the answer cached for a few seconds (readiness is polled often;
//! the PGCC should not be). Reported, never required: without the PGCC the API still serves
//! reads, and the creations answer 502/504 on their own.

use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ports::{HealthProbe, ProbeReport};

pub struct PgccReachabilityProbe {
    /// `host:port` of the base URL; `None` when it has no usable host.
    target: Option<String>,
    timeout: Duration,
    cache_for: Duration,
    cached: Mutex<Option<(Instant, ProbeReport)>>,
}

impl PgccReachabilityProbe {
    /// `base_url` as in the settings (`http://host:port/...` or `https://host/...`).
    pub fn new(base_url: &str, timeout: Duration, cache_for: Duration) -> Self {
        PgccReachabilityProbe {
            target: host_port(base_url),
            timeout,
            cache_for,
            cached: Mutex::new(None),
        }
    }

    fn probe(&self) -> ProbeReport {
        let (up, detail) = match &self.target {
            None => (false, "the base URL has no host".to_owned()),
            Some(target) => match target.to_socket_addrs() {
                Err(_) => (false, "the host does not resolve".to_owned()),
                Ok(addrs) => {
                    let addrs: Vec<_> = addrs.collect();
                    if addrs
                        .iter()
                        .any(|a| TcpStream::connect_timeout(a, self.timeout).is_ok())
                    {
                        (true, "reachable".to_owned())
                    } else {
                        (
                            false,
                            format!("no TCP connection within {} ms", self.timeout.as_millis()),
                        )
                    }
                }
            },
        };
        ProbeReport {
            name: "pgcc",
            up,
            required: false,
            detail,
        }
    }
}

impl HealthProbe for PgccReachabilityProbe {
    fn check(&self) -> Vec<ProbeReport> {
        let mut cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, report)) = cached.as_ref() {
            if at.elapsed() < self.cache_for {
                return vec![report.clone()];
            }
        }
        let report = self.probe();
        *cached = Some((Instant::now(), report.clone()));
        vec![report]
    }
}

/// `https://user@host:8443/base` -> `host:8443`; the scheme's port when none is given.
fn host_port(base_url: &str) -> Option<String> {
    let (scheme, rest) = base_url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if authority.is_empty() {
        return None;
    }
    let has_port = match authority.rsplit_once(':') {
        // an IPv6 literal without a port ends with `]`
        Some((_, port)) => !port.ends_with(']') && port.chars().all(|c| c.is_ascii_digit()),
        None => false,
    };
    if has_port {
        Some(authority.to_owned())
    } else {
        let port = if scheme.eq_ignore_ascii_case("https") {
            443
        } else {
            80
        };
        Some(format!("{authority}:{port}"))
    }
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;

    use super::*;

    #[test]
    fn the_target_is_the_host_and_port_of_the_base_url() {
        assert_eq!(
            host_port("http://127.0.0.1:8090").as_deref(),
            Some("127.0.0.1:8090")
        );
        assert_eq!(
            host_port("https://pgcc.gov.br/api/v1").as_deref(),
            Some("pgcc.gov.br:443")
        );
        assert_eq!(
            host_port("http://u:p@pgcc.local/x").as_deref(),
            Some("pgcc.local:80")
        );
        assert_eq!(host_port("https://[::1]:9").as_deref(), Some("[::1]:9"));
        assert_eq!(host_port("https://[::1]").as_deref(), Some("[::1]:443"));
        assert_eq!(host_port("no-scheme"), None);
        assert_eq!(host_port("http:///path"), None);
    }

    #[test]
    fn a_listening_pgcc_is_up_a_closed_port_is_down_and_never_required() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let probe = PgccReachabilityProbe::new(&url, Duration::from_millis(500), Duration::ZERO);
        let up = probe.check();
        assert!(up[0].up, "{up:?}");
        assert!(!up[0].required);
        drop(listener);
        let down = probe.check();
        assert!(!down[0].up, "{down:?}");
        assert!(!down[0].required);
    }

    #[test]
    fn the_answer_is_cached_for_the_configured_time() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let probe =
            PgccReachabilityProbe::new(&url, Duration::from_millis(500), Duration::from_secs(60));
        assert!(probe.check()[0].up);
        drop(listener);
        assert!(probe.check()[0].up, "the cached answer is served");
    }
}
