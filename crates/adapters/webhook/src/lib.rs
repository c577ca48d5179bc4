//! Webhook delivery adapters:
//!
//! - [`UreqWebhookSender`] implements [`ports::WebhookSender`]: POSTs a signed body with ureq 3
//!   (one agent, connect and whole-call timeouts, no redirects, no proxy from the environment).
//! - [`PolicyTargetGuard`] implements [`ports::TargetGuard`]: the SSRF guard (https required,
//!   non-public addresses refused), with [`is_public`] deciding what an address is.
//! - [`AesGcmSecretCipher`] implements [`ports::SecretCipher`]: AES-256-GCM for the signing
//!   secrets at rest (`v1:` + base64(nonce || ciphertext+tag)).

mod cipher;
mod guard;
mod retry_after;
mod sender;

pub use cipher::AesGcmSecretCipher;
pub use guard::{is_public, PolicyTargetGuard};
pub use sender::{SenderSettings, UreqWebhookSender};
