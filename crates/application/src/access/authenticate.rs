//! Authentication: the `Api-Key` header to the company that owns the key.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use domain::{Company, CompanyId, Scopes};
use ports::{ApiKeyRepository, Clock, RepoError, ResolvedApiKey};
use uuid::Uuid;

use crate::access::api_keys::{api_key_format, hash_api_key, ApiKeyFormat};
use crate::cache::{CacheStats, ChangeTracker, StampedCache, UnknownKeys, Weighted};

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

/// Who is calling: the key that authenticated, its company and what it may do (its scopes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The API key's id (never the key): what the record of reads of personal data names.
    pub key_id: Uuid,
    pub company: Company,
    pub scopes: Scopes,
    /// The company whose rate limit the call takes (the real company's for a sandbox's key).
    pub quota_of: CompanyId,
    /// The person signed in to the console through the company's identity provider (issue 38),
    /// `None` for an API key or a key's session: what the access log names besides `key_id`.
    pub person: Option<domain::Person>,
}

impl Caller {
    fn of(key: &ResolvedApiKey) -> Self {
        Caller {
            key_id: key.id,
            company: key.company.clone(),
            scopes: key.scopes,
            quota_of: key.quota_of,
            person: None,
        }
    }
}

/// A resolved key as cached: the resolution, and the last use this process recorded or read
/// (so the once-a-minute write needs no read).
#[derive(Debug)]
pub struct CachedApiKey {
    key: ResolvedApiKey,
    /// Microseconds since the epoch; `i64::MIN` = never used.
    last_use: AtomicI64,
}

impl CachedApiKey {
    fn new(key: ResolvedApiKey) -> Self {
        let last_use = key
            .last_used_at
            .map_or(i64::MIN, |at| at.timestamp_micros());
        Self {
            key,
            last_use: AtomicI64::new(last_use),
        }
    }

    /// Whether a use at `now` must be recorded (the recorded one is a minute old or more).
    fn use_due(&self, now: DateTime<Utc>) -> bool {
        let last = self.last_use.load(Ordering::Relaxed);
        last < (now - LAST_USE_RESOLUTION).timestamp_micros()
    }

    /// Claims the write of a use at `now` for this caller: `false` when another request of this
    /// process claimed it first.
    fn claim_use(&self, now: DateTime<Utc>) -> bool {
        let last = self.last_use.load(Ordering::Relaxed);
        last < (now - LAST_USE_RESOLUTION).timestamp_micros()
            && self
                .last_use
                .compare_exchange(
                    last,
                    now.timestamp_micros(),
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                )
                .is_ok()
    }
}

impl Weighted for Arc<CachedApiKey> {
    /// Counted in entries.
    fn weight(&self) -> u64 {
        1
    }
}

#[derive(Clone)]
pub struct Authenticator {
    api_keys: Arc<dyn ApiKeyRepository>,
    clock: Arc<dyn Clock>,
    /// Key hash -> resolution; invalidated when the key's company changes (a revocation).
    cache: Arc<StampedCache<String, Arc<CachedApiKey>>>,
    /// Hashes the database did not know, refused from memory for a short while.
    unknown: Arc<UnknownKeys>,
}

impl Authenticator {
    /// An authenticator that caches nothing.
    pub fn new(api_keys: Arc<dyn ApiKeyRepository>, clock: Arc<dyn Clock>) -> Self {
        Self::cached(
            api_keys,
            clock,
            ChangeTracker::off(),
            0,
            std::time::Duration::ZERO,
        )
    }

    /// An authenticator that keeps up to `capacity` resolved keys while `tracker` allows, each
    /// for `key_ttl` at most (then it is read again, whatever the tracker says).
    pub fn cached(
        api_keys: Arc<dyn ApiKeyRepository>,
        clock: Arc<dyn Clock>,
        tracker: Arc<ChangeTracker>,
        capacity: u64,
        key_ttl: std::time::Duration,
    ) -> Self {
        let estimated = usize::try_from(capacity.min(100_000)).unwrap_or(100_000);
        Self {
            api_keys,
            clock,
            cache: Arc::new(StampedCache::new(tracker, capacity, estimated).with_ttl(key_ttl)),
            unknown: Arc::new(UnknownKeys::off()),
        }
    }

    /// The same, remembering for a short while the keys the database does not know.
    pub fn remembering_unknown(mut self, unknown: UnknownKeys) -> Self {
        self.unknown = Arc::new(unknown);
        self
    }

    /// Whether `raw_key` resolves from memory (a known key, cached): what a caller over its
    /// budget of failed authentications may still use.
    pub fn is_cached(&self, raw_key: Option<&str>) -> bool {
        Self::parse(raw_key).is_ok_and(|(_, hash)| self.cache.get(&hash).is_some())
    }

    /// The company owning the non-revoked key `raw_key`. Keys that cannot be ours (too long,
    /// wrong shape, wrong checksum) are refused without touching the repository. A resolution is
    /// cached only under the change tracker's rules (`cache`), so a key revoked on any instance,
    /// or by the CLI, is refused within the tracker's bound (about a second at worst).
    pub fn authenticate(&self, raw_key: Option<&str>) -> Result<Caller, AuthError> {
        let (format, hash) = Self::parse(raw_key)?;
        let key = match self.cache.get(&hash) {
            Some(key) => key,
            None => self.resolve(hash)?,
        };
        self.note_use(&key, format);
        Ok(Caller::of(&key.key))
    }

    /// [`Authenticator::authenticate`] of a key known by its hash only (`hash_api_key`): the
    /// console's session keeps the hash, never the key. The same cache, the same revocation
    /// bound.
    pub fn authenticate_hash(&self, hash: &str) -> Result<Caller, AuthError> {
        let hash = hash.to_owned();
        let key = match self.cache.get(&hash) {
            Some(key) => key,
            None => self.resolve(hash)?,
        };
        self.note_use(&key, ApiKeyFormat::Checksummed);
        Ok(Caller::of(&key.key))
    }

    /// The company of `raw_key` when it is answered from the cache alone and nothing needs
    /// writing (no last use due): lets a caller skip the blocking path. `None`: call
    /// [`Authenticator::authenticate`].
    pub fn authenticate_cached(&self, raw_key: Option<&str>) -> Option<Caller> {
        let (_, hash) = Self::parse(raw_key).ok()?;
        let key = self.cache.get(&hash)?;
        (!key.use_due(self.clock.now())).then(|| Caller::of(&key.key))
    }

    /// Hits, misses and size of the key cache.
    pub fn cache_stats(&self) -> CacheStats {
        self.cache.stats()
    }

    /// Hits, misses and size of the cache of unknown keys.
    pub fn unknown_key_stats(&self) -> CacheStats {
        self.unknown.stats()
    }

    fn parse(raw_key: Option<&str>) -> Result<(ApiKeyFormat, String), AuthError> {
        let raw = match raw_key {
            Some(raw) if !raw.trim().is_empty() => raw,
            _ => return Err(AuthError::Missing),
        };
        if raw.len() > MAX_KEY_LEN {
            return Err(AuthError::Invalid);
        }
        let format = api_key_format(raw).ok_or(AuthError::Invalid)?;
        Ok((format, hash_api_key(raw)))
    }

    fn resolve(&self, hash: String) -> Result<Arc<CachedApiKey>, AuthError> {
        if self.unknown.contains(&hash) {
            return Err(AuthError::Invalid);
        }
        let unknown_stamp = self.unknown.stamp();
        let resolved = self.resolve_from_database(hash.clone());
        if let (Err(AuthError::Invalid), Some(stamp)) = (&resolved, unknown_stamp) {
            self.unknown.insert(hash, stamp);
        }
        resolved
    }

    fn resolve_from_database(&self, hash: String) -> Result<Arc<CachedApiKey>, AuthError> {
        self.cache.read_through(
            hash.clone(),
            || {
                let key = self
                    .api_keys
                    .find_by_hash(&hash)?
                    .ok_or(AuthError::Invalid)?;
                Ok(Arc::new(CachedApiKey::new(key)))
            },
            |key| Some((key.key.company.id, key.clone())),
        )
    }

    /// Records the key's last use when the one recorded is a minute old or more (one request of
    /// this process claims the write). Best effort: a failure is logged and the request goes on.
    fn note_use(&self, key: &CachedApiKey, format: ApiKeyFormat) {
        let now = self.clock.now();
        if !key.claim_use(now) {
            return;
        }
        let since = now - LAST_USE_RESOLUTION;
        let key = &key.key;
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

    fn resolved(last_used_at: Option<DateTime<Utc>>) -> ResolvedApiKey {
        ResolvedApiKey {
            id: Uuid::from_u128(42),
            company: company(),
            last_used_at,
            scopes: Scopes::DEFAULT,
            quota_of: company().id,
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

        assert_eq!(result.unwrap().company, company());
    }

    #[test]
    fn an_unknown_key_is_looked_up_once_then_refused_from_memory() {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_find_by_hash()
            .times(1)
            .returning(|_| Ok(None));
        let tracker = Arc::new(ChangeTracker::new(true, std::time::Duration::from_secs(60)));
        tracker.mark_alive(std::time::Instant::now());
        let auth = Authenticator::cached(
            Arc::new(api_keys),
            fixed_clock(),
            tracker.clone(),
            10,
            std::time::Duration::from_secs(60),
        )
        .remembering_unknown(UnknownKeys::new(
            tracker,
            10,
            std::time::Duration::from_secs(10),
        ));

        for _ in 0..3 {
            assert!(matches!(
                auth.authenticate(Some(&a_key())),
                Err(AuthError::Invalid)
            ));
        }
        assert_eq!(auth.unknown_key_stats().hits, 2);
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

        assert_eq!(result.unwrap().company, company());
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

        assert_eq!(result.unwrap().company, company());
    }

    fn live_tracker() -> Arc<ChangeTracker> {
        let tracker = Arc::new(ChangeTracker::new(true, std::time::Duration::from_secs(60)));
        tracker.mark_alive(std::time::Instant::now());
        tracker
    }

    fn cached_authenticator(
        api_keys: MockApiKeyRepository,
        tracker: Arc<ChangeTracker>,
    ) -> Authenticator {
        Authenticator::cached(
            Arc::new(api_keys),
            fixed_clock(),
            tracker,
            100,
            std::time::Duration::from_secs(60),
        )
    }

    #[test]
    fn a_cached_key_is_looked_up_again_once_its_ttl_is_over_even_with_no_change_told() {
        let mut api_keys = MockApiKeyRepository::new();
        let mut lookups = mockall::Sequence::new();
        api_keys
            .expect_find_by_hash()
            .times(1)
            .in_sequence(&mut lookups)
            .returning(|_| Ok(Some(resolved(recently_used()))));
        // revoked meanwhile, and the feed never told
        api_keys
            .expect_find_by_hash()
            .times(1)
            .in_sequence(&mut lookups)
            .returning(|_| Ok(None));
        let auth = Authenticator::cached(
            Arc::new(api_keys),
            fixed_clock(),
            live_tracker(),
            100,
            std::time::Duration::from_millis(50),
        );
        auth.authenticate(Some(&a_key())).unwrap();
        assert_eq!(
            auth.authenticate_cached(Some(&a_key())).map(|c| c.company),
            Some(company())
        );

        std::thread::sleep(std::time::Duration::from_millis(60));

        assert_eq!(auth.authenticate_cached(Some(&a_key())), None);
        assert!(matches!(
            auth.authenticate(Some(&a_key())),
            Err(AuthError::Invalid)
        ));
    }

    #[test]
    fn a_cached_key_is_looked_up_once_while_its_company_does_not_change() {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_find_by_hash()
            .times(1)
            .returning(|_| Ok(Some(resolved(recently_used()))));
        api_keys.expect_record_use().times(0);
        let auth = cached_authenticator(api_keys, live_tracker());

        assert_eq!(
            auth.authenticate_cached(Some(&a_key())),
            None,
            "not yet cached"
        );
        for _ in 0..3 {
            assert_eq!(
                auth.authenticate(Some(&a_key())).unwrap().company,
                company()
            );
        }
        assert_eq!(
            auth.authenticate_cached(Some(&a_key())).map(|c| c.company),
            Some(company())
        );
    }

    #[test]
    fn a_change_of_the_keys_company_makes_the_next_request_look_the_key_up_again() {
        let tracker = live_tracker();
        let mut api_keys = MockApiKeyRepository::new();
        let mut lookups = mockall::Sequence::new();
        api_keys
            .expect_find_by_hash()
            .times(1)
            .in_sequence(&mut lookups)
            .returning(|_| Ok(Some(resolved(recently_used()))));
        // revoked meanwhile
        api_keys
            .expect_find_by_hash()
            .times(1)
            .in_sequence(&mut lookups)
            .returning(|_| Ok(None));
        let auth = cached_authenticator(api_keys, tracker.clone());
        auth.authenticate(Some(&a_key())).unwrap();

        tracker.apply(&[ports::CacheChange::Company(company().id)]);

        assert_eq!(auth.authenticate_cached(Some(&a_key())), None);
        assert!(matches!(
            auth.authenticate(Some(&a_key())),
            Err(AuthError::Invalid)
        ));
    }

    #[test]
    fn without_a_live_feed_every_request_looks_the_key_up() {
        let tracker = Arc::new(ChangeTracker::new(true, std::time::Duration::from_secs(60)));
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_find_by_hash()
            .times(2)
            .returning(|_| Ok(Some(resolved(recently_used()))));
        let auth = cached_authenticator(api_keys, tracker);

        auth.authenticate(Some(&a_key())).unwrap();
        auth.authenticate(Some(&a_key())).unwrap();
    }

    #[test]
    fn a_cached_key_records_its_use_once_a_minute_and_a_due_use_is_not_answered_from_memory() {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_find_by_hash()
            .times(1)
            .returning(|_| Ok(Some(resolved(Some(now() - Duration::seconds(61))))));
        api_keys
            .expect_record_use()
            .times(1)
            .returning(|_, _, _| Ok(true));
        let auth = cached_authenticator(api_keys, live_tracker());
        // cached with a use due: the blocking path must record it
        let tracker_free = auth.authenticate(Some(&a_key()));
        assert!(tracker_free.is_ok());

        // recorded (in memory too): later requests write nothing and are served from memory
        for _ in 0..3 {
            auth.authenticate(Some(&a_key())).unwrap();
        }
        assert_eq!(
            auth.authenticate_cached(Some(&a_key())).map(|c| c.company),
            Some(company())
        );
    }

    #[test]
    fn a_malformed_key_is_never_answered_from_memory() {
        let auth = cached_authenticator(untouched_repository(), live_tracker());

        assert_eq!(auth.authenticate_cached(Some("not-a-key")), None);
        assert_eq!(auth.authenticate_cached(None), None);
    }
}
