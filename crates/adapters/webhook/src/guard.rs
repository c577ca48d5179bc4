//! [`PolicyTargetGuard`]: the SSRF guard in front of every webhook call.
//!
//! The check runs when a URL is registered **and again before every delivery**: DNS can change
//! between the two (or between two deliveries), so a name that pointed to a public address at
//! registration may point to `127.0.0.1` or `169.254.169.254` later.
//!
//! DNS rebinding: before a delivery the guard answers the very addresses it resolved and
//! accepted ([`CheckedTarget`]), and the sender dials only those (its resolver is pinned to
//! them), so a hostile name server answering a public address to the guard and a private one
//! a moment later gains nothing.
//!
//! Lookups are bounded in time ([`crate::BoundedLookup`]): a name server that does not answer
//! costs the caller at most the configured limit (registration: `webhooks.dns_timeout_ms`;
//! delivery: the send timeout), then [`TargetRefused::DnsTimeout`]. They are bounded per
//! company too (`webhooks.dns_in_flight_per_company`): each is made for the company whose URL
//! it is.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use domain::CompanyId;
use ports::{CheckedTarget, TargetGuard, TargetRefused};

use crate::lookup::BoundedLookup;

/// How the guard judges targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuardSettings {
    /// An `http://` URL is refused ([`TargetRefused::HttpsRequired`]).
    pub require_https: bool,
    /// When `false`, every address the host resolves to must be public (see [`is_public`]);
    /// when `true` (development profiles) any address is accepted, and registration does not
    /// resolve the host at all.
    pub allow_non_public: bool,
    /// The longest a lookup may take at registration.
    pub registration_dns_timeout: Duration,
    /// The longest a lookup may take before a delivery.
    pub delivery_dns_timeout: Duration,
    /// Lookups one company may have running at once (stuck ones included).
    pub dns_in_flight_per_company: usize,
}

/// The SSRF guard, by profile policy ([`GuardSettings`]).
///
/// A URL whose scheme is neither `http` nor `https` is refused with `HttpsRequired`; one whose
/// authority cannot be parsed (empty host, bad port, characters outside a DNS name) with
/// `Unresolvable`. Host names are restricted to ASCII letters, digits, `-`, `_` and `.` (IDNs
/// must come punycoded), and IP literals to what `std` parses, so this parser and the HTTP
/// client cannot disagree about which host is meant. A host whose lookup fails is `DnsFailure`,
/// one whose lookup outlasts the limit `DnsTimeout` (both transient).
#[derive(Debug, Clone)]
pub struct PolicyTargetGuard {
    settings: GuardSettings,
    lookup: BoundedLookup,
}

impl PolicyTargetGuard {
    /// With the system resolver.
    pub fn new(settings: GuardSettings) -> Self {
        let lookup = BoundedLookup::system(settings.dns_in_flight_per_company);
        Self::with_lookup(settings, lookup)
    }

    /// With another lookup (tests: a name server that never answers).
    pub fn with_lookup(settings: GuardSettings, lookup: BoundedLookup) -> Self {
        Self { settings, lookup }
    }

    /// The URL parsed and the https policy applied.
    fn target(&self, url: &str) -> Result<Target, TargetRefused> {
        let target = parse_target(url)?;
        if self.settings.require_https && target.scheme == Scheme::Http {
            return Err(TargetRefused::HttpsRequired);
        }
        Ok(target)
    }

    /// Every address of `target` within `limit`, each one public unless the policy allows
    /// otherwise.
    fn addresses(
        &self,
        company: CompanyId,
        target: &Target,
        limit: Duration,
    ) -> Result<Vec<IpAddr>, TargetRefused> {
        let addresses = resolve(company, target, &self.lookup, limit)?;
        if self.settings.allow_non_public {
            return Ok(addresses);
        }
        if let Some(refused) = addresses.iter().find(|ip| !is_public(**ip)) {
            tracing::debug!(
                host = %target.host_for_log(),
                address = %refused,
                "webhook target refused: non-public address"
            );
            return Err(TargetRefused::NonPublicAddress);
        }
        Ok(addresses)
    }
}

impl TargetGuard for PolicyTargetGuard {
    fn check(&self, company: CompanyId, url: &str) -> Result<(), TargetRefused> {
        let target = self.target(url)?;
        if self.settings.allow_non_public {
            return Ok(());
        }
        self.addresses(company, &target, self.settings.registration_dns_timeout)
            .map(|_| ())
    }

    fn resolve(&self, company: CompanyId, url: &str) -> Result<CheckedTarget, TargetRefused> {
        let target = self.target(url)?;
        let addresses = self.addresses(company, &target, self.settings.delivery_dns_timeout)?;
        Ok(CheckedTarget {
            addresses: addresses
                .into_iter()
                .map(|ip| SocketAddr::new(ip, target.port))
                .collect(),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    Http,
    Https,
}

impl Scheme {
    fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Host {
    /// A name (or a dotted IPv4 literal), resolved by the system resolver.
    Name(String),
    /// A bracketed IPv6 literal.
    V6(Ipv6Addr),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    scheme: Scheme,
    host: Host,
    port: u16,
}

impl Target {
    fn host_for_log(&self) -> String {
        match &self.host {
            Host::Name(name) => name.clone(),
            Host::V6(ip) => format!("[{ip}]"),
        }
    }
}

/// `scheme://[userinfo@]host[:port][/path][?query][#fragment]`, just enough to know where a
/// call would go.
fn parse_target(url: &str) -> Result<Target, TargetRefused> {
    let url = url.trim();
    let (scheme, rest) = url.split_once("://").ok_or(TargetRefused::HttpsRequired)?;
    let scheme = if scheme.eq_ignore_ascii_case("https") {
        Scheme::Https
    } else if scheme.eq_ignore_ascii_case("http") {
        Scheme::Http
    } else {
        return Err(TargetRefused::HttpsRequired);
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    // Only RFC 3986 authority characters: a `\` (a path separator to WHATWG parsers), spaces
    // or non-ASCII would let two parsers see two different hosts.
    if !authority.bytes().all(is_authority_byte) {
        return Err(TargetRefused::Unresolvable);
    }
    let host_and_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_userinfo, host_and_port)| host_and_port);

    let (host, port) = if let Some(bracketed) = host_and_port.strip_prefix('[') {
        let (literal, after) = bracketed
            .split_once(']')
            .ok_or(TargetRefused::Unresolvable)?;
        let ip: Ipv6Addr = literal.parse().map_err(|_| TargetRefused::Unresolvable)?;
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':').ok_or(TargetRefused::Unresolvable)?),
        };
        (Host::V6(ip), port)
    } else {
        let (name, port) = match host_and_port.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host_and_port, None),
        };
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        {
            return Err(TargetRefused::Unresolvable);
        }
        (Host::Name(name.to_ascii_lowercase()), port)
    };

    let port = match port {
        // `host:` with an empty port means the default one (RFC 3986, 3.2.3).
        None | Some("") => scheme.default_port(),
        Some(digits) if digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse().map_err(|_| TargetRefused::Unresolvable)?
        }
        Some(_) => return Err(TargetRefused::Unresolvable),
    };
    Ok(Target { scheme, host, port })
}

/// unreserved / pct-encoded / sub-delims / `:` / `@` / `[` / `]` (RFC 3986, 3.2).
fn is_authority_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~%!$&'()*+,;=:@[]".contains(&b)
}

/// Every address the host resolves to within `limit` (an IP literal is its own single
/// address, with no lookup).
fn resolve(
    company: CompanyId,
    target: &Target,
    lookup: &BoundedLookup,
    limit: Duration,
) -> Result<Vec<IpAddr>, TargetRefused> {
    match &target.host {
        Host::V6(ip) => Ok(vec![IpAddr::V6(*ip)]),
        Host::Name(name) => match name.parse::<Ipv4Addr>() {
            Ok(ip) => Ok(vec![IpAddr::V4(ip)]),
            Err(_) => lookup.lookup(company, name, target.port, limit),
        },
    }
}

/// IPv4 ranges that are not publicly routable (IANA special-purpose registry, RFC 6890 and
/// successors).
const V4_NON_PUBLIC: &[(Ipv4Addr, u8)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8),       // "this network"
    (Ipv4Addr::new(10, 0, 0, 0), 8),      // private (RFC 1918)
    (Ipv4Addr::new(100, 64, 0, 0), 10),   // shared address space, CGNAT (RFC 6598)
    (Ipv4Addr::new(127, 0, 0, 0), 8),     // loopback
    (Ipv4Addr::new(169, 254, 0, 0), 16),  // link-local, cloud metadata 169.254.169.254
    (Ipv4Addr::new(172, 16, 0, 0), 12),   // private (RFC 1918)
    (Ipv4Addr::new(192, 0, 0, 0), 24),    // IETF protocol assignments
    (Ipv4Addr::new(192, 0, 2, 0), 24),    // documentation TEST-NET-1
    (Ipv4Addr::new(192, 88, 99, 0), 24),  // deprecated 6to4 relay anycast (RFC 7526)
    (Ipv4Addr::new(192, 168, 0, 0), 16),  // private (RFC 1918)
    (Ipv4Addr::new(198, 18, 0, 0), 15),   // benchmarking (RFC 2544)
    (Ipv4Addr::new(198, 51, 100, 0), 24), // documentation TEST-NET-2
    (Ipv4Addr::new(203, 0, 113, 0), 24),  // documentation TEST-NET-3
    (Ipv4Addr::new(224, 0, 0, 0), 4),     // multicast
    (Ipv4Addr::new(240, 0, 0, 0), 4),     // reserved, includes broadcast 255.255.255.255
];

/// IPv6 ranges that are not publicly routable. The ranges that embed an IPv4 address
/// (`::ffff:0:0/96`, `64:ff9b::/96`, `2002::/16`) are not here: their IPv4 is judged instead.
const V6_NON_PUBLIC: &[(Ipv6Addr, u8)] = &[
    // `::` (unspecified), `::1` (loopback) and the deprecated IPv4-compatible `::a.b.c.d`.
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0), 96),
    (Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0), 48), // local-use NAT64 (RFC 8215)
    (Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0), 64),     // discard-only (RFC 6666)
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 32),    // Teredo (embeds an obfuscated IPv4)
    (Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 0), 48),    // benchmarking (RFC 5180)
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32), // documentation
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20),    // documentation (RFC 9637)
    (Ipv6Addr::new(0x5f00, 0, 0, 0, 0, 0, 0, 0), 16),    // SRv6 SIDs (RFC 9602)
    // Unique local (ULA), includes the AWS metadata address fd00:ec2::254.
    (Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0), 7),
    (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10), // link-local
    (Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0), 10), // deprecated site-local
    (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8),  // multicast
];

/// Whether `ip` is a public (globally routable, unicast) address a webhook may be sent to.
///
/// Non-public: IPv4 `0.0.0.0/8`, `10/8`, `100.64/10` (CGNAT), `127/8`, `169.254/16`
/// (link-local, cloud metadata), `172.16/12`, `192.0.0/24`, `192.0.2/24`, `192.88.99/24`,
/// `192.168/16`, `198.18/15`, `198.51.100/24`, `203.0.113/24`, `224/4` (multicast), `240/4`
/// (reserved, broadcast). IPv6 `::/96` (unspecified, loopback, IPv4-compatible),
/// `64:ff9b:1::/48`, `100::/64`, `2001::/32` (Teredo), `2001:2::/48`, `2001:db8::/32`,
/// `3fff::/20`, `5f00::/16`, `fc00::/7` (ULA, incl. `fd00:ec2::254`), `fe80::/10`,
/// `fec0::/10`, `ff00::/8`. IPv4-mapped `::ffff:0:0/96`, NAT64 `64:ff9b::/96` and 6to4
/// `2002::/16` addresses are judged by the IPv4 address they carry.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let bits = u32::from(ip);
    !V4_NON_PUBLIC
        .iter()
        .any(|(network, len)| bits & mask32(*len) == u32::from(*network))
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_public_v4(v4);
    }
    let bits = u128::from(ip);
    !V6_NON_PUBLIC
        .iter()
        .any(|(network, len)| bits & mask128(*len) == u128::from(*network))
}

/// The IPv4 address an IPv4-mapped (`::ffff:a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) or 6to4
/// (`2002:AABB:CCDD::/48`) address carries.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let bits = u128::from(ip);
    let mapped = u128::from(Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0));
    let nat64 = u128::from(Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0));
    let six_to_four = u128::from(Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0));
    if bits & mask128(96) == mapped || bits & mask128(96) == nat64 {
        // Truncation keeps the low 32 bits: the embedded address.
        Some(Ipv4Addr::from(bits as u32))
    } else if bits & mask128(16) == six_to_four {
        Some(Ipv4Addr::from((bits >> 80) as u32))
    } else {
        None
    }
}

fn mask32(len: u8) -> u32 {
    u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0)
}

fn mask128(len: u8) -> u128 {
    u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(require_https: bool, allow_non_public: bool) -> GuardSettings {
        GuardSettings {
            require_https,
            allow_non_public,
            registration_dns_timeout: Duration::from_secs(5),
            delivery_dns_timeout: Duration::from_secs(5),
            dns_in_flight_per_company: 4,
        }
    }

    /// The company every lookup of these tests is made for.
    const C: CompanyId = CompanyId(uuid::Uuid::from_u128(1));

    fn guard(require_https: bool, allow_non_public: bool) -> PolicyTargetGuard {
        PolicyTargetGuard::new(settings(require_https, allow_non_public))
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or_else(|_| panic!("bad test address {s}"))
    }

    #[test]
    fn ipv4_addresses_are_classified() {
        let table: &[(&str, bool)] = &[
            // public, including the neighbours of every non-public range
            ("8.8.8.8", true),
            ("1.1.1.1", true),
            ("1.0.0.0", true),
            ("9.255.255.255", true),
            ("11.0.0.0", true),
            ("100.63.255.255", true),
            ("100.128.0.0", true),
            ("126.255.255.255", true),
            ("128.0.0.0", true),
            ("169.253.255.255", true),
            ("169.255.0.0", true),
            ("172.15.255.255", true),
            ("172.32.0.0", true),
            ("191.255.255.255", true),
            ("192.0.1.0", true),
            ("192.0.3.0", true),
            ("192.88.98.255", true),
            ("192.88.100.0", true),
            ("192.167.255.255", true),
            ("192.169.0.0", true),
            ("198.17.255.255", true),
            ("198.20.0.0", true),
            ("198.51.99.255", true),
            ("198.51.101.0", true),
            ("203.0.112.255", true),
            ("203.0.114.0", true),
            ("223.255.255.255", true),
            // 0.0.0.0/8
            ("0.0.0.0", false),
            ("0.255.255.255", false),
            // 10/8
            ("10.0.0.0", false),
            ("10.255.255.255", false),
            // 100.64/10
            ("100.64.0.0", false),
            ("100.100.100.200", false), // Alibaba metadata
            ("100.127.255.255", false),
            // 127/8
            ("127.0.0.1", false),
            ("127.255.255.254", false),
            // 169.254/16
            ("169.254.0.0", false),
            ("169.254.169.254", false),
            ("169.254.255.255", false),
            // 172.16/12
            ("172.16.0.0", false),
            ("172.31.255.255", false),
            // 192.0.0/24, 192.0.2/24, 192.88.99/24
            ("192.0.0.0", false),
            ("192.0.0.255", false),
            ("192.0.2.1", false),
            ("192.88.99.1", false),
            // 192.168/16
            ("192.168.0.1", false),
            ("192.168.255.255", false),
            // 198.18/15
            ("198.18.0.0", false),
            ("198.19.255.255", false),
            // 198.51.100/24, 203.0.113/24
            ("198.51.100.7", false),
            ("203.0.113.9", false),
            // 224/4, 240/4, broadcast
            ("224.0.0.0", false),
            ("239.255.255.255", false),
            ("240.0.0.0", false),
            ("255.255.255.254", false),
            ("255.255.255.255", false),
        ];
        for (address, public) in table {
            assert_eq!(is_public(ip(address)), *public, "{address}");
        }
    }

    #[test]
    fn ipv6_addresses_are_classified() {
        let table: &[(&str, bool)] = &[
            // public
            ("2606:4700:4700::1111", true),
            ("2001:4860:4860::8888", true),
            ("2a00:1450:4001::1", true),
            ("2001:db7:ffff::1", true),
            ("2001:db9::1", true),
            ("2001:1::1", true),
            ("fbff:ffff::1", true),
            ("fe7f::1", true),
            // ::, ::1 and the IPv4-compatible block
            ("::", false),
            ("::1", false),
            ("::8.8.8.8", false),
            // ULA, including AWS metadata v6
            ("fc00::", false),
            ("fd00:ec2::254", false),
            ("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false),
            // link-local, site-local, multicast
            ("fe80::1", false),
            ("febf:ffff::1", false),
            ("fec0::1", false),
            ("ff02::1", false),
            ("ff00::", false),
            ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false),
            // documentation, benchmarking, discard, Teredo, SRv6
            ("2001:db8::1", false),
            ("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", false),
            ("3fff::1", false),
            ("2001:2::1", false),
            ("100::1", false),
            ("2001::1", false),
            ("5f00::1", false),
            // IPv4-mapped: the embedded IPv4 decides
            ("::ffff:8.8.8.8", true),
            ("::ffff:127.0.0.1", false),
            ("::ffff:169.254.169.254", false),
            ("::ffff:10.0.0.1", false),
            ("::ffff:0.0.0.0", false),
            // NAT64 64:ff9b::/96: the embedded IPv4 decides
            ("64:ff9b::808:808", true),
            ("64:ff9b::7f00:1", false),
            ("64:ff9b::a9fe:a9fe", false),
            ("64:ff9b:1::1", false),
            // 6to4 2002::/16: the embedded IPv4 decides
            ("2002:808:808::1", true),
            ("2002:7f00:1::1", false),
            ("2002:a9fe:a9fe::1", false),
            ("2002:c0a8:101::1", false),
        ];
        for (address, public) in table {
            assert_eq!(is_public(ip(address)), *public, "{address}");
        }
    }

    #[test]
    fn urls_are_parsed_into_scheme_host_and_port() {
        let cases: &[(&str, Scheme, Host, u16)] = &[
            (
                "https://example.com/hook",
                Scheme::Https,
                Host::Name("example.com".into()),
                443,
            ),
            (
                "http://example.com",
                Scheme::Http,
                Host::Name("example.com".into()),
                80,
            ),
            (
                "HTTPS://Example.COM:8443?x=1",
                Scheme::Https,
                Host::Name("example.com".into()),
                8443,
            ),
            (
                "https://user:pa:ss@example.com:444/a@b",
                Scheme::Https,
                Host::Name("example.com".into()),
                444,
            ),
            (
                "https://[::1]:8080/x",
                Scheme::Https,
                Host::V6(Ipv6Addr::LOCALHOST),
                8080,
            ),
            (
                "http://[fd00:ec2::254]",
                Scheme::Http,
                Host::V6("fd00:ec2::254".parse().unwrap()),
                80,
            ),
            (
                "https://127.0.0.1:/",
                Scheme::Https,
                Host::Name("127.0.0.1".into()),
                443,
            ),
            (
                "  https://example.com#frag  ",
                Scheme::Https,
                Host::Name("example.com".into()),
                443,
            ),
        ];
        for (url, scheme, host, port) in cases {
            let target = parse_target(url).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(
                target,
                Target {
                    scheme: *scheme,
                    host: host.clone(),
                    port: *port
                },
                "{url}"
            );
        }
    }

    #[test]
    fn malformed_urls_are_refused() {
        for url in [
            "ftp://example.com/",
            "example.com/hook",
            "file:///etc/passwd",
        ] {
            assert_eq!(
                parse_target(url),
                Err(TargetRefused::HttpsRequired),
                "{url}"
            );
        }
        for url in [
            "https:///path",
            "https://:443/",
            "https://user@/",
            "https://example.com:99999/",
            "https://example.com:+80/",
            "https://example.com:8o/",
            "https://[::1/",
            "https://[::1]x/",
            "https://[not-v6]/",
            "https://exa mple.com/",
            "https://exa%6dple.com/",
            "https://evil.com\\@127.0.0.1/",
            "https://xn--exmple-cua.com:1:2/",
            "https://exámple.com/",
        ] {
            assert_eq!(parse_target(url), Err(TargetRefused::Unresolvable), "{url}");
        }
    }

    /// Where the guard's parser accepts a URL, the HTTP client's parser (the `http` crate's
    /// `Uri`, which ureq uses) must agree on the host and port, or refuse the URL itself.
    #[test]
    fn the_parser_agrees_with_the_http_clients_parser() {
        for url in [
            "https://example.com/hook",
            "https://user:pw@example.com:8443/x?y#z",
            "https://a@b@example.com/",
            "https://example.com@127.0.0.1/",
            "https://127.0.0.1@example.com/",
            "https://[::1]:9000/",
            "https://[::ffff:127.0.0.1]/",
            "http://127.1/",
            "http://2130706433/",
            "http://0x7f.0.0.1/",
            "https://example.com?@127.0.0.1/",
            "https://example.com#@127.0.0.1/",
            "https://example.com/@127.0.0.1/",
        ] {
            let Ok(ours) = parse_target(url) else {
                continue;
            };
            let Ok(theirs) = url.parse::<ureq::http::Uri>() else {
                continue;
            };
            let their_host = theirs.host().unwrap_or_default().to_ascii_lowercase();
            assert_eq!(ours.host_for_log(), their_host, "{url}");
            let their_port = theirs.port_u16().unwrap_or(ours.scheme.default_port());
            assert_eq!(ours.port, their_port, "{url}");
        }
    }

    #[test]
    fn https_is_required_when_the_policy_says_so() {
        let strict = guard(true, true);
        assert_eq!(
            strict.check(C, "http://example.com/hook"),
            Err(TargetRefused::HttpsRequired)
        );
        assert_eq!(strict.check(C, "https://127.0.0.1/hook"), Ok(()));

        let lax = guard(false, true);
        assert_eq!(lax.check(C, "http://example.com/hook"), Ok(()));
    }

    #[test]
    fn non_public_addresses_are_refused_unless_allowed() {
        let strict = guard(false, false);
        let lax = guard(false, true);
        for url in [
            "http://127.0.0.1:9/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[::1]:8080/",
            "http://[fd00:ec2::254]/",
            "http://[::ffff:127.0.0.1]/",
            "http://10.1.2.3/",
            "http://0.0.0.0:9/",
            "http://127.1/",
            "http://2130706433/",
        ] {
            assert_eq!(
                strict.check(C, url),
                Err(TargetRefused::NonPublicAddress),
                "{url}"
            );
            assert_eq!(lax.check(C, url), Ok(()), "{url}");
        }
    }

    #[test]
    fn a_public_ip_literal_is_accepted() {
        let strict = guard(true, false);
        assert_eq!(strict.check(C, "https://8.8.8.8/hook"), Ok(()));
        assert_eq!(
            strict.check(C, "https://[2606:4700:4700::1111]/hook"),
            Ok(())
        );
    }

    #[test]
    fn localhost_resolves_to_loopback_and_is_refused() {
        let strict = guard(true, false);
        assert_eq!(
            strict.check(C, "https://localhost/"),
            Err(TargetRefused::NonPublicAddress)
        );
    }

    #[test]
    fn an_unresolvable_host_is_a_dns_failure_that_may_pass_later() {
        let strict = guard(true, false);
        let refused = strict
            .check(C, "https://no-such-host.invalid/hook")
            .unwrap_err();
        assert_eq!(refused, TargetRefused::DnsFailure);
        assert!(refused.is_transient());
        assert!(!TargetRefused::NonPublicAddress.is_transient());
    }

    fn hanging_lookup(settings: GuardSettings) -> (PolicyTargetGuard, std::sync::mpsc::Sender<()>) {
        let (release, released) = std::sync::mpsc::channel::<()>();
        let released = std::sync::Mutex::new(released);
        // A name server that answers only when the test lets it (never, in effect).
        let lookup = BoundedLookup::new(4, 4, Duration::ZERO, move |_host: &str, _port: u16| {
            let _ = released.lock().unwrap().recv();
            Ok(vec![SocketAddr::from(([8, 8, 8, 8], 443))])
        });
        (PolicyTargetGuard::with_lookup(settings, lookup), release)
    }

    #[test]
    fn a_name_server_that_does_not_answer_holds_registration_only_for_the_dns_timeout() {
        let settings = GuardSettings {
            registration_dns_timeout: Duration::from_millis(200),
            delivery_dns_timeout: Duration::from_millis(400),
            ..settings(true, false)
        };
        let (strict, _release) = hanging_lookup(settings);

        let started = std::time::Instant::now();
        assert_eq!(
            strict.check(C, "https://slow-dns.example/hook"),
            Err(TargetRefused::DnsTimeout)
        );
        let registration = started.elapsed();
        let started = std::time::Instant::now();
        assert_eq!(
            strict.resolve(C, "https://slow-dns.example/hook"),
            Err(TargetRefused::DnsTimeout)
        );
        let delivery = started.elapsed();

        assert!(
            registration >= Duration::from_millis(200) && registration < Duration::from_secs(2),
            "{registration:?}"
        );
        assert!(
            delivery >= Duration::from_millis(400) && delivery < Duration::from_secs(2),
            "{delivery:?}"
        );
    }

    #[test]
    fn lookups_left_hanging_are_bounded_and_further_ones_time_out_at_once() {
        let settings = GuardSettings {
            registration_dns_timeout: Duration::from_millis(50),
            ..settings(true, false)
        };
        let (strict, release) = hanging_lookup(settings);
        for _ in 0..4 {
            assert_eq!(
                strict.check(C, "https://slow-dns.example/"),
                Err(TargetRefused::DnsTimeout)
            );
        }

        // Four lookups of the company are stuck: its fifth is refused without waiting or a
        // new thread.
        let started = std::time::Instant::now();
        assert_eq!(
            strict.check(C, "https://slow-dns.example/"),
            Err(TargetRefused::LookupsBusy)
        );
        assert!(started.elapsed() < Duration::from_millis(50));

        // Once the name server answers, lookups work again.
        for _ in 0..4 {
            release.send(()).unwrap();
        }
        let freed = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            strict.lookup.in_flight() == 0
        });
        assert!(freed);
        release.send(()).unwrap();
        assert_eq!(strict.check(C, "https://slow-dns.example/"), Ok(()));
    }

    #[test]
    fn before_a_delivery_the_guard_answers_the_addresses_it_accepted_with_the_port() {
        let strict = guard(false, false);
        assert_eq!(
            strict.resolve(C, "https://8.8.8.8:8443/hook"),
            Ok(CheckedTarget {
                addresses: vec![SocketAddr::from(([8, 8, 8, 8], 8443))]
            })
        );
        assert_eq!(
            strict.resolve(C, "http://127.0.0.1:9/"),
            Err(TargetRefused::NonPublicAddress)
        );
        // Development: any address, but resolved all the same, so the sender is pinned to it.
        let lax = guard(false, true);
        assert_eq!(
            lax.resolve(C, "http://localhost:9/").map(|t| t
                .addresses
                .iter()
                .all(|a| a.ip().is_loopback() && a.port() == 9)),
            Ok(true)
        );
    }
}
