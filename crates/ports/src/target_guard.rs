/// Why a webhook target is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetRefused {
    #[error("a URL deve usar https")]
    HttpsRequired,
    #[error("o host não pôde ser resolvido")]
    Unresolvable,
    /// Loopback, private, link-local, metadata or otherwise non-public address.
    #[error("o host aponta para um endereço não público")]
    NonPublicAddress,
}

/// SSRF guard: decides whether a webhook URL may be called, by profile policy (https required,
/// non-public addresses refused). Checked at registration and again before every delivery
/// (DNS can change).
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait TargetGuard: Send + Sync {
    fn check(&self, url: &str) -> Result<(), TargetRefused>;
}
