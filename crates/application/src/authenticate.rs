//! Authentication: the `Api-Key` header to the company that owns the key.

use std::sync::Arc;

use domain::Company;
use ports::{ApiKeyRepository, RepoError};

use crate::api_keys::{hash_api_key, looks_like_api_key};

/// Longer keys are refused before any work is done on them.
const MAX_KEY_LEN: usize = 200;

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// No key, or a blank one.
    #[error("missing API key")]
    Missing,
    /// A key of the wrong shape, or one that is unknown or revoked.
    #[error("invalid API key")]
    Invalid,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct Authenticator {
    api_keys: Arc<dyn ApiKeyRepository>,
}

impl Authenticator {
    pub fn new(api_keys: Arc<dyn ApiKeyRepository>) -> Self {
        Self { api_keys }
    }

    /// The company owning the non-revoked key `raw_key`. Keys that cannot be ours (too long,
    /// wrong shape) are refused without touching the repository.
    pub fn authenticate(&self, raw_key: Option<&str>) -> Result<Company, AuthError> {
        let raw = match raw_key {
            Some(raw) if !raw.trim().is_empty() => raw,
            _ => return Err(AuthError::Missing),
        };
        if raw.len() > MAX_KEY_LEN || !looks_like_api_key(raw) {
            return Err(AuthError::Invalid);
        }
        self.api_keys
            .find_company_by_hash(&hash_api_key(raw))?
            .ok_or(AuthError::Invalid)
    }
}

#[cfg(test)]
mod tests {
    use ports::MockApiKeyRepository;

    use super::*;
    use crate::test_support::company;

    fn a_key() -> String {
        format!("cak_{}", "5f".repeat(32))
    }

    fn authenticator(api_keys: MockApiKeyRepository) -> Authenticator {
        Authenticator::new(Arc::new(api_keys))
    }

    fn untouched_repository() -> MockApiKeyRepository {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys.expect_find_company_by_hash().times(0);
        api_keys.expect_insert().times(0);
        api_keys
    }

    #[test]
    fn a_known_key_authenticates_its_company_looked_up_by_hash() {
        let expected_hash = hash_api_key(&a_key());
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_find_company_by_hash()
            .withf(move |hash| hash == expected_hash)
            .times(1)
            .returning(|_| Ok(Some(company())));

        let result = authenticator(api_keys).authenticate(Some(&a_key()));

        assert_eq!(result.unwrap(), company());
    }

    #[test]
    fn the_raw_key_is_never_sent_to_the_repository() {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_find_company_by_hash()
            .withf(|hash| !hash.contains(&a_key()) && hash.len() == 64)
            .times(1)
            .returning(|_| Ok(Some(company())));

        authenticator(api_keys)
            .authenticate(Some(&a_key()))
            .unwrap();
    }

    #[test]
    fn no_key_is_missing_and_touches_nothing() {
        let result = authenticator(untouched_repository()).authenticate(None);

        assert!(matches!(result, Err(AuthError::Missing)), "{result:?}");
    }

    #[test]
    fn an_empty_or_blank_key_is_missing_and_touches_nothing() {
        let auth = authenticator(untouched_repository());
        for raw in ["", "   ", "\t\n"] {
            let result = auth.authenticate(Some(raw));
            assert!(
                matches!(result, Err(AuthError::Missing)),
                "{raw:?}: {result:?}"
            );
        }
    }

    #[test]
    fn a_key_longer_than_200_characters_is_invalid_without_a_lookup() {
        let raw = format!("cak_{}", "a".repeat(200));

        let result = authenticator(untouched_repository()).authenticate(Some(&raw));

        assert!(matches!(result, Err(AuthError::Invalid)), "{result:?}");
    }

    #[test]
    fn a_key_of_the_wrong_shape_is_invalid_without_a_lookup() {
        let auth = authenticator(untouched_repository());
        for raw in [
            "not-a-key".to_owned(),
            format!("cak_{}", "5F".repeat(32)),
            format!("cak_{}", "5f".repeat(31)),
            format!("xyz_{}", "5f".repeat(32)),
            format!(" {} ", a_key()),
        ] {
            let result = auth.authenticate(Some(&raw));
            assert!(
                matches!(result, Err(AuthError::Invalid)),
                "{raw:?}: {result:?}"
            );
        }
    }

    #[test]
    fn an_unknown_or_revoked_key_is_invalid() {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_find_company_by_hash()
            .times(1)
            .returning(|_| Ok(None));

        let result = authenticator(api_keys).authenticate(Some(&a_key()));

        assert!(matches!(result, Err(AuthError::Invalid)), "{result:?}");
    }

    #[test]
    fn a_failing_lookup_is_a_repository_error() {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_find_company_by_hash()
            .times(1)
            .returning(|_| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));

        let result = authenticator(api_keys).authenticate(Some(&a_key()));

        assert!(
            matches!(result, Err(AuthError::Repo(RepoError::Unavailable(_)))),
            "{result:?}"
        );
    }
}
