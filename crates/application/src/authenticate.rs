//! Authentication: the `Api-Key` header to the company that owns the key.

use std::sync::Arc;

use chrono::Duration;
use domain::Company;
use ports::{ApiKeyRepository, Clock, RepoError, ResolvedApiKey};

use crate::api_keys::{api_key_format, hash_api_key, ApiKeyFormat};

/// Longer keys are refused before any work is done on them.
const MAX_KEY_LEN: usize = 200;

/// `ultimo_uso_em` is recorded at most this often per key: a write per minute, not per request.
pub const LAST_USE_RESOLUTION: Duration = Duration::minutes(1);

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// No key, or a blank one.
    #[error("missing API key")]
    Missing,
    /// A key of the wrong shape or checksum, or one that is unknown or revoked.
    #[error("invalid API key")]
    Invalid,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct Authenticator {
    api_keys: Arc<dyn ApiKeyRepository>,
    clock: Arc<dyn Clock>,
}

impl Authenticator {
    pub fn new(api_keys: Arc<dyn ApiKeyRepository>, clock: Arc<dyn Clock>) -> Self {
        Self { api_keys, clock }
    }

    /// The company owning the non-revoked key `raw_key`. Keys that cannot be ours (too long,
    /// wrong shape, wrong checksum) are refused without touching the repository. Nothing is
    /// cached: a key revoked a moment ago is refused by the next request, on every instance.
    pub fn authenticate(&self, raw_key: Option<&str>) -> Result<Company, AuthError> {
        let raw = match raw_key {
            Some(raw) if !raw.trim().is_empty() => raw,
            _ => return Err(AuthError::Missing),
        };
        if raw.len() > MAX_KEY_LEN {
            return Err(AuthError::Invalid);
        }
        let format = api_key_format(raw).ok_or(AuthError::Invalid)?;
        let key = self
            .api_keys
            .find_by_hash(&hash_api_key(raw))?
            .ok_or(AuthError::Invalid)?;
        self.note_use(&key, format);
        Ok(key.company)
    }

    /// Records the key's last use when the stored one is a minute old or more. Best effort: a
    /// failure is logged and the request goes on.
    fn note_use(&self, key: &ResolvedApiKey, format: ApiKeyFormat) {
        let now = self.clock.now();
        let since = now - LAST_USE_RESOLUTION;
        if key.ultimo_uso_em.is_some_and(|last| last >= since) {
            return;
        }
        match self.api_keys.record_use(key.id, now, since) {
            Ok(true) if format == ApiKeyFormat::Legacy => tracing::warn!(
                api_key_id = %key.id,
                empresa_id = %key.company.id,
                "API key of the legacy format (no checksum) in use; issue a new key and revoke this one"
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!(
                api_key_id = %key.id,
                error = %e,
                "could not record the API key's last use"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};
    use ports::MockApiKeyRepository;
    use uuid::Uuid;

    use super::*;
    use crate::test_support::{company, fixed_clock, now};

    /// A key of the current format (checksum included).
    fn a_key() -> String {
        let body = format!("cak_{}", "5f".repeat(32));
        let sum = &hash_api_key(&body)[..8];
        format!("{body}_{sum}")
    }

    fn legacy_key() -> String {
        format!("cak_{}", "5f".repeat(32))
    }

    fn resolved(ultimo_uso_em: Option<DateTime<Utc>>) -> ResolvedApiKey {
        ResolvedApiKey {
            id: Uuid::from_u128(42),
            company: company(),
            ultimo_uso_em,
        }
    }

    /// Used a moment ago: no last-use write expected.
    fn recently_used() -> Option<DateTime<Utc>> {
        Some(now() - Duration::seconds(5))
    }

    fn authenticator(api_keys: MockApiKeyRepository) -> Authenticator {
        Authenticator::new(Arc::new(api_keys), fixed_clock())
    }

    fn untouched_repository() -> MockApiKeyRepository {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys.expect_find_by_hash().times(0);
        api_keys.expect_record_use().times(0);
        api_keys.expect_insert().times(0);
        api_keys
    }

    #[test]
    fn a_known_key_authenticates_its_company_looked_up_by_hash() {
        let expected_hash = hash_api_key(&a_key());
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_find_by_hash()
            .withf(move |hash| hash == expected_hash)
            .times(1)
            .returning(|_| Ok(Some(resolved(recently_used()))));
        api_keys.expect_record_use().times(0);

        let result = authenticator(api_keys).authenticate(Some(&a_key()));

        assert_eq!(result.unwrap(), company());
    }

    #[test]
    fn the_raw_key_is_never_sent_to_the_repository() {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_find_by_hash()
            .withf(|hash| !hash.contains(&a_key()) && !hash.contains(&a_key()[4..68]))
            .times(1)
            .returning(|_| Ok(Some(resolved(recently_used()))));

        authenticator(api_keys)
            .authenticate(Some(&a_key()))
            .unwrap();
    }

    #[test]
    fn a_legacy_key_without_checksum_still_authenticates() {
        let expected_hash = hash_api_key(&legacy_key());
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_find_by_hash()
            .withf(move |hash| hash == expected_hash)
            .times(1)
            .returning(|_| Ok(Some(resolved(recently_used()))));

        let result = authenticator(api_keys).authenticate(Some(&legacy_key()));

        assert_eq!(result.unwrap(), company());
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
    fn a_key_of_the_wrong_shape_or_checksum_is_invalid_without_a_lookup() {
        let auth = authenticator(untouched_repository());
        let key = a_key();
        let wrong_checksum = format!("{}00000000", &key[..key.len() - 8]);
        assert_ne!(wrong_checksum, key);
        for raw in [
            "not-a-key".to_owned(),
            format!("cak_{}", "5F".repeat(32)),
            format!("cak_{}", "5f".repeat(31)),
            format!("xyz_{}", "5f".repeat(32)),
            format!(" {} ", a_key()),
            wrong_checksum,
            key.replacen("cak_5f", "cak_5e", 1),
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
            .expect_find_by_hash()
            .times(1)
            .returning(|_| Ok(None));
        api_keys.expect_record_use().times(0);

        let result = authenticator(api_keys).authenticate(Some(&a_key()));

        assert!(matches!(result, Err(AuthError::Invalid)), "{result:?}");
    }

    #[test]
    fn a_failing_lookup_is_a_repository_error() {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_find_by_hash()
            .times(1)
            .returning(|_| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));

        let result = authenticator(api_keys).authenticate(Some(&a_key()));

        assert!(
            matches!(result, Err(AuthError::Repo(RepoError::Unavailable(_)))),
            "{result:?}"
        );
    }

    #[test]
    fn the_first_use_of_a_key_is_recorded() {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_find_by_hash()
            .returning(|_| Ok(Some(resolved(None))));
        api_keys
            .expect_record_use()
            .withf(|id, at, since| {
                *id == Uuid::from_u128(42) && *at == now() && *since == now() - Duration::minutes(1)
            })
            .times(1)
            .returning(|_, _, _| Ok(true));

        authenticator(api_keys)
            .authenticate(Some(&a_key()))
            .unwrap();
    }

    #[test]
    fn a_use_within_a_minute_of_the_recorded_one_writes_nothing() {
        for last in [now() - Duration::seconds(59), now()] {
            let mut api_keys = MockApiKeyRepository::new();
            api_keys
                .expect_find_by_hash()
                .returning(move |_| Ok(Some(resolved(Some(last)))));
            api_keys.expect_record_use().times(0);

            authenticator(api_keys)
                .authenticate(Some(&a_key()))
                .unwrap();
        }
    }

    #[test]
    fn a_use_a_minute_or_more_after_the_recorded_one_is_recorded() {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_find_by_hash()
            .returning(|_| Ok(Some(resolved(Some(now() - Duration::seconds(61))))));
        api_keys
            .expect_record_use()
            .times(1)
            .returning(|_, _, _| Ok(false));

        authenticator(api_keys)
            .authenticate(Some(&a_key()))
            .unwrap();
    }

    #[test]
    fn a_failure_to_record_the_last_use_does_not_refuse_the_request() {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_find_by_hash()
            .returning(|_| Ok(Some(resolved(None))));
        api_keys
            .expect_record_use()
            .times(1)
            .returning(|_, _, _| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));

        let result = authenticator(api_keys).authenticate(Some(&a_key()));

        assert_eq!(result.unwrap(), company());
    }
}
