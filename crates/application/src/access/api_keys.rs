//! API keys: issued as a random secret shown once to the operator and stored only as its hash;
//! listed (never the key, never the hash) and revoked by the operator.
//!
//! Format: `cak_` + 64 lower-case hex characters (32 random bytes from the OS) + `_` + 8 lower-case
//! hex characters, the first 4 bytes of the SHA-256 of everything before that `_`. The prefix lets
//! secret scanners recognize a leaked key; the checksum lets the service refuse a mistyped,
//! truncated or made-up key without a database query. Keys issued before the checksum existed
//! (`cak_` + 64 hex, no checksum) are still accepted: see docs/security.md.

use std::sync::Arc;

use domain::{Cnpj, Company, CompanyId, Scopes};
use ports::{
    ApiKeyRecord, ApiKeyRepository, ApiKeySummary, Clock, CompanyRepository, CreateCompanyError,
    RepoError, RevokeApiKeyOutcome, SandboxRepository,
};
use rand::rngs::OsRng;
use rand::RngCore;
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// Every key starts with this, so a leaked key is recognizable by secret scanners.
pub const API_KEY_PREFIX: &str = "cak_";

/// A sandbox key starts with this instead (docs/api.md, "Sandbox"): recognizable at a glance as
/// one that reaches no real PGCC. What routes its calls is its company, not this prefix.
pub const SANDBOX_API_KEY_PREFIX: &str = "cak_test_";

/// Random bytes in a key (256 bits).
const KEY_BYTES: usize = 32;

/// Bytes of SHA-256 kept as the checksum (8 hex characters).
const CHECKSUM_BYTES: usize = 4;

/// Length of a key as issued: `cak_` + 64 hex + `_` + 8 hex.
pub const API_KEY_LEN: usize = API_KEY_PREFIX.len() + KEY_BYTES * 2 + 1 + CHECKSUM_BYTES * 2;

/// Length of a sandbox key: `cak_test_` + 64 hex + `_` + 8 hex.
pub const SANDBOX_API_KEY_LEN: usize =
    SANDBOX_API_KEY_PREFIX.len() + KEY_BYTES * 2 + 1 + CHECKSUM_BYTES * 2;

/// Length of a key of the first format (`cak_` + 64 hex, no checksum).
const LEGACY_KEY_LEN: usize = API_KEY_PREFIX.len() + KEY_BYTES * 2;

/// Characters of the key kept in clear (`prefixo`), enough for an operator to recognize it.
const PREFIX_LEN: usize = 12;

/// The shapes of key the service accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiKeyFormat {
    /// `cak_` + 64 hex + `_` + 8 hex checksum: what `api-key issue` prints.
    Checksummed,
    /// `cak_` + 64 hex: keys issued before the checksum; accepted, looked up, never issued.
    Legacy,
}

/// Lower-case hex SHA-256 of the whole key: what is stored and looked up.
pub fn hash_api_key(raw: &str) -> String {
    hex::encode(Sha256::digest(raw.as_bytes()))
}

/// The format of `raw`, or `None` when it cannot be a key of ours (wrong prefix, length,
/// alphabet or checksum). Pure computation: no I/O.
pub fn api_key_format(raw: &str) -> Option<ApiKeyFormat> {
    if raw.starts_with(SANDBOX_API_KEY_PREFIX) {
        // sandbox keys exist only with the checksum
        let (body, given) = raw.split_at_checked(SANDBOX_API_KEY_LEN - 1 - CHECKSUM_BYTES * 2)?;
        let random = &body[SANDBOX_API_KEY_PREFIX.len()..];
        let given = given.strip_prefix('_')?;
        return (random.len() == KEY_BYTES * 2
            && is_lower_hex(random)
            && given.len() == CHECKSUM_BYTES * 2
            && given == checksum(body))
        .then_some(ApiKeyFormat::Checksummed);
    }
    let body = raw.get(..LEGACY_KEY_LEN)?;
    let tail = &raw[LEGACY_KEY_LEN..];
    let random = body.strip_prefix(API_KEY_PREFIX)?;
    if !is_lower_hex(random) {
        return None;
    }
    if tail.is_empty() {
        return Some(ApiKeyFormat::Legacy);
    }
    let given = tail.strip_prefix('_')?;
    (given.len() == CHECKSUM_BYTES * 2 && given == checksum(body))
        .then_some(ApiKeyFormat::Checksummed)
}

/// Whether `raw` has the shape of a key we accept (see [`api_key_format`]).
pub fn looks_like_api_key(raw: &str) -> bool {
    api_key_format(raw).is_some()
}

fn is_lower_hex(text: &str) -> bool {
    text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The checksum of `cak_<64 hex>` (or `cak_test_<64 hex>`): the first 4 bytes of its SHA-256, in lower-case hex.
fn checksum(body: &str) -> String {
    hex::encode(&Sha256::digest(body.as_bytes())[..CHECKSUM_BYTES])
}

/// A freshly issued key. `key` is the only copy of the secret: show it once, never log it.
#[derive(Clone, PartialEq, Eq)]
pub struct IssuedApiKey {
    pub id: Uuid,
    pub key: String,
    pub prefixo: String,
}

impl std::fmt::Debug for IssuedApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuedApiKey")
            .field("id", &self.id)
            .field("key", &"<redacted>")
            .field("prefixo", &self.prefixo)
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum IssueApiKeyError {
    /// No company has this id.
    #[error("no company with this id")]
    UnknownCompany,
    /// A key of a sandbox company is a sandbox key (`--sandbox`), never a real one.
    #[error("this company is a sandbox: its keys are issued with --sandbox")]
    SandboxCompany,
    /// The company of this CNPJ-derived sandbox could not be stored.
    #[error("the sandbox company could not be created")]
    SandboxNotCreated,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Debug, thiserror::Error)]
pub enum ListApiKeysError {
    /// No company has this id.
    #[error("no company with this id")]
    UnknownCompany,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Debug, thiserror::Error)]
pub enum RevokeApiKeyError {
    /// No key has this id.
    #[error("no API key with this id")]
    NotFound,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

/// A revoked key, and whether it had been revoked before (then nothing changed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevokedApiKey {
    pub key: ApiKeySummary,
    pub already_revoked: bool,
}

/// The operator's side of API keys: issue, list, revoke.
#[derive(Clone)]
pub struct ApiKeyIssuer {
    companies: Arc<dyn CompanyRepository>,
    api_keys: Arc<dyn ApiKeyRepository>,
    clock: Arc<dyn Clock>,
    /// The sandbox companies; without them no sandbox key is issued (and no company is known
    /// as a sandbox).
    sandboxes: Option<Arc<dyn SandboxRepository>>,
}

impl ApiKeyIssuer {
    pub fn new(
        companies: Arc<dyn CompanyRepository>,
        api_keys: Arc<dyn ApiKeyRepository>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            companies,
            api_keys,
            clock,
            sandboxes: None,
        }
    }

    /// The issuer that knows the sandbox companies (`issue_sandbox`).
    pub fn with_sandboxes(mut self, sandboxes: Arc<dyn SandboxRepository>) -> Self {
        self.sandboxes = Some(sandboxes);
        self
    }

    /// Issues a new key for `company` holding `scopes` (what it may do; `Scopes::DEFAULT` is
    /// what every key could do before scopes existed); stores its hash, prefix and scopes,
    /// returns the key.
    pub fn issue(
        &self,
        company: CompanyId,
        scopes: Scopes,
    ) -> Result<IssuedApiKey, IssueApiKeyError> {
        if self.companies.get(company)?.is_none() {
            return Err(IssueApiKeyError::UnknownCompany);
        }
        if let Some(sandboxes) = &self.sandboxes {
            if sandboxes.real_company_of(company)?.is_some() {
                return Err(IssueApiKeyError::SandboxCompany);
            }
        }
        self.store_key(company, scopes, API_KEY_PREFIX)
    }

    /// Issues a sandbox key (`cak_test_`) for the sandbox of `company` (docs/decisions.md, "The
    /// sandbox"): the first one creates the sandbox, a company of its own linked to `company`,
    /// named after it, with a CNPJ of its own; the next ones find it. Given a sandbox's own id,
    /// the key is for that sandbox. Returns the key and the sandbox's id.
    pub fn issue_sandbox(
        &self,
        company: CompanyId,
        scopes: Scopes,
    ) -> Result<(IssuedApiKey, CompanyId), IssueApiKeyError> {
        let sandboxes = self
            .sandboxes
            .as_ref()
            .ok_or(IssueApiKeyError::SandboxNotCreated)?;
        let Some(real) = self.companies.get(company)? else {
            return Err(IssueApiKeyError::UnknownCompany);
        };
        let sandbox = if sandboxes.real_company_of(company)?.is_some() {
            company
        } else if let Some(sandbox) = sandboxes.sandbox_of(company)? {
            sandbox.id
        } else {
            self.create_sandbox(sandboxes.as_ref(), &real)?
        };
        let issued = self.store_key(sandbox, scopes, SANDBOX_API_KEY_PREFIX)?;
        Ok((issued, sandbox))
    }

    /// A new sandbox for `real`: a random CNPJ of its own (the CNPJ is unique among companies
    /// and the sandbox's reaches no PGCC), tried again on the unlikely clash.
    fn create_sandbox(
        &self,
        sandboxes: &dyn SandboxRepository,
        real: &Company,
    ) -> Result<CompanyId, IssueApiKeyError> {
        for _ in 0..5 {
            let sandbox = Company {
                id: CompanyId(Uuid::new_v4()),
                name: format!("{} (sandbox)", real.name),
                cnpj: random_cnpj(),
                created_at: self.clock.now(),
            };
            match sandboxes.create_sandbox(real.id, &sandbox) {
                Ok(stored) => {
                    tracing::info!(empresa_id = %real.id, sandbox_id = %stored.id, "sandbox company ready");
                    return Ok(stored.id);
                }
                Err(CreateCompanyError::DuplicateCnpj) => continue,
                Err(CreateCompanyError::Repo(e)) => return Err(e.into()),
            }
        }
        Err(IssueApiKeyError::SandboxNotCreated)
    }

    fn store_key(
        &self,
        company: CompanyId,
        scopes: Scopes,
        prefix: &str,
    ) -> Result<IssuedApiKey, IssueApiKeyError> {
        let key = generate_key(prefix);
        let prefixo = key[..PREFIX_LEN].to_owned();
        let record = ApiKeyRecord {
            id: Uuid::new_v4(),
            company_id: company,
            hash: hash_api_key(&key),
            prefixo: prefixo.clone(),
            created_at: self.clock.now(),
            scopes,
        };
        self.api_keys.insert(&record)?;
        tracing::info!(empresa_id = %company, api_key_id = %record.id, escopos = %scopes, "API key issued");
        Ok(IssuedApiKey {
            id: record.id,
            key,
            prefixo,
        })
    }

    /// Every key of `company` (revoked ones included), oldest first; never a key or a
    /// hash, only what an operator needs to tell them apart.
    pub fn list(&self, company: CompanyId) -> Result<Vec<ApiKeySummary>, ListApiKeysError> {
        if self.companies.get(company)?.is_none() {
            return Err(ListApiKeysError::UnknownCompany);
        }
        Ok(self.api_keys.list_by_company(company)?)
    }

    /// Revokes key `id` now. Every instance refuses it from its next request: nothing caches
    /// keys (docs/security.md). Revoking a revoked key changes nothing and is not an error.
    pub fn revoke(&self, id: Uuid) -> Result<RevokedApiKey, RevokeApiKeyError> {
        match self.api_keys.revoke(id, self.clock.now())? {
            RevokeApiKeyOutcome::Revoked(key) => {
                tracing::info!(empresa_id = %key.company_id, api_key_id = %key.id, "API key revoked");
                Ok(RevokedApiKey {
                    key,
                    already_revoked: false,
                })
            }
            RevokeApiKeyOutcome::AlreadyRevoked(key) => Ok(RevokedApiKey {
                key,
                already_revoked: true,
            }),
            RevokeApiKeyOutcome::NotFound => Err(RevokeApiKeyError::NotFound),
        }
    }
}

/// A random CNPJ with valid check digits (numeric).
fn random_cnpj() -> Cnpj {
    loop {
        let mut bytes = [0u8; 12];
        OsRng.fill_bytes(&mut bytes);
        let base: Vec<u32> = bytes.iter().map(|b| u32::from(*b % 10)).collect();
        let digit = |digits: &[u32]| {
            let weights: Vec<u32> = (2..=9).cycle().take(digits.len()).collect();
            let sum: u32 = digits.iter().rev().zip(weights).map(|(d, w)| d * w).sum();
            let r = sum % 11;
            if r < 2 {
                0
            } else {
                11 - r
            }
        };
        let mut digits = base;
        digits.push(digit(&digits));
        digits.push(digit(&digits));
        let text: String = digits.iter().map(|d| char::from(b'0' + *d as u8)).collect();
        if let Ok(cnpj) = Cnpj::parse(&text) {
            return cnpj;
        }
    }
}

fn generate_key(prefix: &str) -> String {
    let mut bytes = [0u8; KEY_BYTES];
    OsRng.fill_bytes(&mut bytes);
    let body = format!("{prefix}{}", hex::encode(bytes));
    let sum = checksum(&body);
    format!("{body}_{sum}")
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use chrono::Duration;
    use ports::{MockApiKeyRepository, MockCompanyRepository};

    use super::*;
    use crate::test_support::{company, fixed_clock, now};

    fn issuer(companies: MockCompanyRepository, api_keys: MockApiKeyRepository) -> ApiKeyIssuer {
        ApiKeyIssuer::new(Arc::new(companies), Arc::new(api_keys), fixed_clock())
    }

    fn known_company() -> MockCompanyRepository {
        let mut companies = MockCompanyRepository::new();
        companies.expect_get().returning(|_| Ok(Some(company())));
        companies
    }

    /// A key of the current format built from `random` (64 hex characters).
    fn checksummed(random: &str) -> String {
        let body = format!("cak_{random}");
        let sum = checksum(&body);
        format!("{body}_{sum}")
    }

    fn summary(revoked_at: Option<chrono::DateTime<chrono::Utc>>) -> ApiKeySummary {
        ApiKeySummary {
            id: Uuid::from_u128(7),
            company_id: company().id,
            prefixo: "cak_0a0a0a0a".to_owned(),
            created_at: now() - Duration::days(3),
            last_used_at: Some(now() - Duration::hours(1)),
            revoked_at,
            scopes: Scopes::DEFAULT,
        }
    }

    #[test]
    fn the_hash_is_the_lower_case_hex_sha256_of_the_key() {
        assert_eq!(
            hash_api_key("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_checksum_is_the_first_four_bytes_of_the_sha256_of_prefix_and_random_part() {
        let body = format!("cak_{}", "0a".repeat(32));
        let expected = &hash_api_key(&body)[..8];

        assert_eq!(checksum(&body), expected);
        assert_eq!(
            api_key_format(&format!("{body}_{expected}")),
            Some(ApiKeyFormat::Checksummed)
        );
    }

    #[test]
    fn a_key_of_the_current_shape_is_recognized() {
        let key = checksummed(&"0a".repeat(32));

        assert_eq!(key.len(), API_KEY_LEN);
        assert_eq!(api_key_format(&key), Some(ApiKeyFormat::Checksummed));
        assert!(looks_like_api_key(&key));
    }

    #[test]
    fn a_key_of_the_first_shape_without_checksum_is_still_recognized_as_legacy() {
        assert_eq!(
            api_key_format(&format!("cak_{}", "0a".repeat(32))),
            Some(ApiKeyFormat::Legacy)
        );
    }

    #[test]
    fn a_key_whose_checksum_does_not_match_is_not_recognized() {
        let key = checksummed(&"0a".repeat(32));
        // one character of the random part changed: the checksum no longer matches
        let mistyped = key.replacen("cak_0a", "cak_1a", 1);
        // the checksum itself changed
        let last = key.chars().last().unwrap();
        let other = if last == '0' { '1' } else { '0' };
        let bad_sum = format!("{}{other}", &key[..key.len() - 1]);

        for raw in [mistyped, bad_sum] {
            assert_eq!(api_key_format(&raw), None, "{raw}");
        }
    }

    #[test]
    fn keys_of_another_shape_are_not_recognized() {
        let good = checksummed(&"0a".repeat(32));
        for raw in [
            String::new(),
            "cak_".to_owned(),
            format!("cak_{}", "0a".repeat(31)),
            format!("cak_{}", "0a".repeat(33)),
            format!("cak_{}", "0A".repeat(32)),
            format!("cak_{}", "0g".repeat(32)),
            format!("xyz_{}", "0a".repeat(32)),
            format!(" cak_{}", "0a".repeat(32)),
            format!("cak_{}é", "0a".repeat(31)),
            format!("cak_{}_", "0a".repeat(32)),
            format!("{good}0"),
            good[..good.len() - 1].to_owned(),
            good.to_uppercase(),
            good.replace('_', "-"),
            format!("{good} "),
        ] {
            assert!(!looks_like_api_key(&raw), "{raw:?}");
        }
    }

    #[test]
    fn issuing_stores_only_the_hash_and_prefix_and_returns_a_checksummed_key_once() {
        let company = company();
        let company_id = company.id;
        let mut companies = MockCompanyRepository::new();
        companies
            .expect_get()
            .withf(move |id| *id == company_id)
            .times(1)
            .returning(move |_| Ok(Some(company.clone())));
        let stored = Arc::new(Mutex::new(Vec::<ApiKeyRecord>::new()));
        let sink = stored.clone();
        let mut api_keys = MockApiKeyRepository::new();
        api_keys.expect_insert().times(1).returning(move |record| {
            sink.lock().unwrap().push(record.clone());
            Ok(())
        });
        api_keys.expect_find_by_hash().times(0);

        let issued = issuer(companies, api_keys)
            .issue(company_id, Scopes::of(&[domain::Scope::Check]))
            .unwrap();

        assert_eq!(
            api_key_format(&issued.key),
            Some(ApiKeyFormat::Checksummed),
            "{}",
            issued.key
        );
        assert_eq!(issued.key.len(), 4 + 64 + 1 + 8);
        assert_eq!(issued.prefixo, issued.key[..12]);
        let stored = stored.lock().unwrap();
        let record = &stored[0];
        assert_eq!(
            *record,
            ApiKeyRecord {
                id: issued.id,
                company_id,
                hash: hash_api_key(&issued.key),
                prefixo: issued.prefixo.clone(),
                created_at: now(),
                scopes: Scopes::of(&[domain::Scope::Check]),
            }
        );
        assert_ne!(record.hash, issued.key);
        assert!(!record.hash.contains(&issued.key[4..68]));
    }

    #[test]
    fn two_issued_keys_differ() {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys.expect_insert().times(2).returning(|_| Ok(()));
        let issuer = issuer(known_company(), api_keys);

        let first = issuer.issue(company().id, Scopes::DEFAULT).unwrap();
        let second = issuer.issue(company().id, Scopes::DEFAULT).unwrap();

        assert_ne!(first.key, second.key);
        assert_ne!(first.id, second.id);
    }

    #[test]
    fn issuing_for_an_unknown_company_stores_nothing() {
        let mut companies = MockCompanyRepository::new();
        companies.expect_get().times(1).returning(|_| Ok(None));
        let mut api_keys = MockApiKeyRepository::new();
        api_keys.expect_insert().times(0);

        let result = issuer(companies, api_keys).issue(company().id, Scopes::DEFAULT);

        assert!(
            matches!(result, Err(IssueApiKeyError::UnknownCompany)),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_company_lookup_is_a_repository_error_and_stores_nothing() {
        let mut companies = MockCompanyRepository::new();
        companies
            .expect_get()
            .times(1)
            .returning(|_| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));
        let mut api_keys = MockApiKeyRepository::new();
        api_keys.expect_insert().times(0);

        let result = issuer(companies, api_keys).issue(company().id, Scopes::DEFAULT);

        assert!(
            matches!(
                result,
                Err(IssueApiKeyError::Repo(RepoError::Unavailable(_)))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_insert_is_a_repository_error() {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_insert()
            .times(1)
            .returning(|_| Err(RepoError::Unexpected(anyhow::anyhow!("boom"))));

        let result = issuer(known_company(), api_keys).issue(company().id, Scopes::DEFAULT);

        assert!(
            matches!(
                result,
                Err(IssueApiKeyError::Repo(RepoError::Unexpected(_)))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn the_debug_of_an_issued_key_hides_the_key() {
        let issued = IssuedApiKey {
            id: Uuid::nil(),
            key: format!("cak_{}", "ab".repeat(32)),
            prefixo: "cak_abababab".to_owned(),
        };

        let shown = format!("{issued:?}");

        assert!(!shown.contains(&"ab".repeat(32)), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
        assert!(shown.contains("cak_abababab"), "{shown}");
    }

    #[test]
    fn listing_answers_the_companys_keys_as_stored() {
        let company_id = company().id;
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_list_by_company()
            .withf(move |id| *id == company_id)
            .times(1)
            .returning(|_| Ok(vec![summary(None), summary(Some(now()))]));

        let listed = issuer(known_company(), api_keys).list(company_id).unwrap();

        assert_eq!(listed, vec![summary(None), summary(Some(now()))]);
    }

    #[test]
    fn listing_the_keys_of_an_unknown_company_is_an_error() {
        let mut companies = MockCompanyRepository::new();
        companies.expect_get().times(1).returning(|_| Ok(None));
        let mut api_keys = MockApiKeyRepository::new();
        api_keys.expect_list_by_company().times(0);

        let result = issuer(companies, api_keys).list(company().id);

        assert!(
            matches!(result, Err(ListApiKeysError::UnknownCompany)),
            "{result:?}"
        );
    }

    #[test]
    fn revoking_a_key_revokes_it_now() {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_revoke()
            .withf(|id, at| *id == Uuid::from_u128(7) && *at == now())
            .times(1)
            .returning(|_, at| Ok(RevokeApiKeyOutcome::Revoked(summary(Some(at)))));

        let revoked = issuer(MockCompanyRepository::new(), api_keys)
            .revoke(Uuid::from_u128(7))
            .unwrap();

        assert_eq!(
            revoked,
            RevokedApiKey {
                key: summary(Some(now())),
                already_revoked: false
            }
        );
    }

    #[test]
    fn revoking_a_revoked_key_changes_nothing_and_says_so() {
        let earlier = now() - Duration::days(1);
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_revoke()
            .times(1)
            .returning(move |_, _| Ok(RevokeApiKeyOutcome::AlreadyRevoked(summary(Some(earlier)))));

        let revoked = issuer(MockCompanyRepository::new(), api_keys)
            .revoke(Uuid::from_u128(7))
            .unwrap();

        assert!(revoked.already_revoked);
        assert_eq!(revoked.key.revoked_at, Some(earlier));
    }

    #[test]
    fn revoking_an_unknown_key_is_not_found() {
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_revoke()
            .times(1)
            .returning(|_, _| Ok(RevokeApiKeyOutcome::NotFound));

        let result = issuer(MockCompanyRepository::new(), api_keys).revoke(Uuid::from_u128(9));

        assert!(
            matches!(result, Err(RevokeApiKeyError::NotFound)),
            "{result:?}"
        );
    }

    #[test]
    fn a_sandbox_key_is_cak_test_with_its_checksum_and_a_mistyped_or_unchecked_one_is_refused() {
        let key = generate_key(SANDBOX_API_KEY_PREFIX);
        assert!(key.starts_with("cak_test_"));
        assert_eq!(key.len(), SANDBOX_API_KEY_LEN);
        assert_eq!(api_key_format(&key), Some(ApiKeyFormat::Checksummed));
        let mistyped = key.replacen("cak_test_", "cak_tesT_", 1);
        assert_eq!(api_key_format(&mistyped), None);
        let unchecked = &key[..SANDBOX_API_KEY_LEN - 9];
        assert_eq!(api_key_format(unchecked), None);
        let other_sum = format!("{}_00000000", unchecked);
        assert!(other_sum == key || api_key_format(&other_sum).is_none());
        // a real key's checksum does not make a sandbox key of the same random part
        let real = generate_key(API_KEY_PREFIX);
        let grafted = format!("cak_test_{}", &real["cak_".len()..]);
        assert_eq!(api_key_format(&grafted), None);
    }

    #[test]
    fn a_sandboxs_cnpj_is_valid() {
        for _ in 0..100 {
            assert!(Cnpj::parse(random_cnpj().as_str()).is_ok());
        }
    }
}
