//! Each company's OpenID Provider and the console's sign-ins under way there (issue 38, part 1;
//! docs/console.md, "Signing in with the company's identity provider"). The provider is written
//! by the operator's CLI (`consent-api company oidc`, the owner's connection: the runtime role
//! only reads it); a sign-in under way is kept by the server, under the SHA-256 of its opaque
//! `state`, until the browser comes back (on any replica) or it goes stale.

use chrono::{DateTime, Utc};
use domain::CompanyId;

use crate::{EncryptedSecret, RepoError};

/// A company's identity provider, as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcProvider {
    /// The issuer's URL (`iss`), whose `/.well-known/openid-configuration` is the discovery.
    pub issuer: String,
    pub client_id: String,
    /// Encrypted as webhook secrets are (`SecretCipher`).
    pub client_secret: EncryptedSecret,
    /// The `id_token`'s claim that holds the person's roles (`roles` by default).
    pub roles_claim: String,
}

/// A sign-in sent to the provider and not back yet.
#[derive(Clone, PartialEq, Eq)]
pub struct PendingSignIn {
    /// The `nonce` the `id_token` must carry.
    pub nonce: String,
    /// The PKCE `code_verifier` of the `code_challenge` sent.
    pub verifier: String,
}

impl std::fmt::Debug for PendingSignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PendingSignIn(..)")
    }
}

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait ConsoleOidcStore: Send + Sync {
    /// The company's provider, `None` when it has none (its people sign in with API keys).
    fn provider(&self, company: CompanyId) -> Result<Option<OidcProvider>, RepoError>;

    /// The company of CNPJ `cnpj` (normalized, as `empresas` keeps it) when it has a provider.
    fn company_with_provider_by_cnpj(&self, cnpj: &str) -> Result<Option<CompanyId>, RepoError>;

    /// Sets (or replaces) the company's provider; `false` when there is no such company. The
    /// owner's connection only.
    fn set_provider(
        &self,
        company: CompanyId,
        provider: &OidcProvider,
        now: DateTime<Utc>,
    ) -> Result<bool, RepoError>;

    /// Keeps a sign-in under way under `state_hash`, after forgetting a bounded batch of the
    /// company's stale ones (begun before `stale_before`).
    fn begin(
        &self,
        company: CompanyId,
        state_hash: [u8; 32],
        pending: &PendingSignIn,
        now: DateTime<Utc>,
        stale_before: DateTime<Utc>,
    ) -> Result<(), RepoError>;

    /// Takes (and forgets) the sign-in under `state_hash` when begun after `stale_before`: a
    /// `state` is good once.
    fn take(
        &self,
        company: CompanyId,
        state_hash: [u8; 32],
        stale_before: DateTime<Utc>,
    ) -> Result<Option<PendingSignIn>, RepoError>;
}
