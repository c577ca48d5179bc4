//! Webhook delivery adapters:
//!
//! - [`UreqWebhookSender`] implements [`ports::WebhookSender`]: POSTs a signed body with ureq 3
//!   (one agent, connect and whole-call timeouts, no redirects, no proxy from the environment),
//!   dialling only the addresses the guard accepted.
//! - [`PolicyTargetGuard`] implements [`ports::TargetGuard`]: the SSRF guard (https required,
//!   non-public addresses refused), with [`is_public`] deciding what an address is; its
//!   lookups are bounded in time and threads by [`BoundedLookup`].
//! - [`AesGcmSecretCipher`] implements [`ports::SecretCipher`]: AES-256-GCM for the signing
//!   secrets at rest (`v1:` + base64(nonce || ciphertext+tag)).

mod answer_body;
mod cipher;
mod guard;
mod lookup;
mod retry_after;
mod sender;

pub use cipher::AesGcmSecretCipher;
pub use guard::{is_public, GuardSettings, PolicyTargetGuard};
pub use lookup::BoundedLookup;
pub use sender::{SenderSettings, UreqWebhookSender};
