use crate::EncryptedSecret;

/// Encrypts webhook signing secrets at rest with a key from configuration (authenticated
/// encryption), so a database dump alone cannot sign.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait SecretCipher: Send + Sync {
    fn encrypt(&self, plaintext: &str) -> EncryptedSecret;

    /// `Err` when the ciphertext was not made with this key or was altered.
    fn decrypt(&self, secret: &EncryptedSecret) -> Result<String, anyhow::Error>;
}
