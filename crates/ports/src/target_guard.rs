use std::net::SocketAddr;

use domain::CompanyId;

/// Why a webhook target is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetRefused {
    #[error("a URL deve usar https")]
    HttpsRequired,
    /// The URL's authority cannot be parsed into a host and a port: never callable.
    #[error("o host não pôde ser resolvido")]
    Unresolvable,
    /// Loopback, private, link-local, metadata or otherwise non-public address.
    #[error("o host aponta para um endereço não público")]
    NonPublicAddress,
    /// The name server said the name does not exist or failed: may pass later.
    #[error("o host não pôde ser resolvido")]
    DnsFailure,
    /// No answer from the name server within the time allowed: may pass later.
    #[error("a resolução do host excedeu o tempo limite")]
    DnsTimeout,
    /// The company already has its share of lookups under way in this process
    /// (`webhooks.dns_in_flight_per_company`, stuck ones included); nothing was looked up. May
    /// pass once one of them ends.
    #[error("a empresa já tem o máximo de consultas de DNS em andamento")]
    LookupsBusy,
}

impl TargetRefused {
    /// Whether the same URL may pass a later check (a DNS failure or timeout), rather than
    /// being refused by policy whatever DNS says.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            TargetRefused::DnsFailure | TargetRefused::DnsTimeout | TargetRefused::LookupsBusy
        )
    }
}

/// The addresses a delivery may connect to: those the guard resolved and accepted. The sender
/// dials only these, so a name that resolves elsewhere a moment later (DNS rebinding) is never
/// called. Empty never: a check that resolves nothing refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedTarget {
    pub addresses: Vec<SocketAddr>,
}

/// SSRF guard: decides whether a webhook URL may be called, by profile policy (https required,
/// non-public addresses refused). Name resolution is bounded in time by the adapter's
/// configuration: a name server that does not answer is [`TargetRefused::DnsTimeout`], never a
/// thread held indefinitely. Every lookup is made for one company and counts against its share
/// of the lookups under way ([`TargetRefused::LookupsBusy`] beyond it), so names that never
/// answer cost their company alone.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait TargetGuard: Send + Sync {
    /// At registration: whether `url` may be stored (resolves the host only when the policy
    /// needs its addresses).
    fn check(&self, company: CompanyId, url: &str) -> Result<(), TargetRefused>;

    /// Before every delivery (DNS can change): resolves the host and answers the addresses the
    /// sender must connect to, every one accepted by the policy.
    fn resolve(&self, company: CompanyId, url: &str) -> Result<CheckedTarget, TargetRefused>;
}
