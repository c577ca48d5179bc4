//! Issuing API keys: a random secret shown once to the operator, stored only as its hash.

use std::sync::Arc;

use domain::CompanyId;
use ports::{ApiKeyRecord, ApiKeyRepository, Clock, CompanyRepository, RepoError};
use rand::rngs::OsRng;
use rand::RngCore;
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// Every key starts with this, so a leaked key is recognizable by secret scanners.
pub const API_KEY_PREFIX: &str = "cak_";

/// Random bytes in a key (256 bits).
const KEY_BYTES: usize = 32;

/// Characters of the key kept in clear (`prefixo`), enough for an operator to recognize it.
const PREFIX_LEN: usize = 12;

/// Lower-case hex SHA-256 of the whole key: what is stored and looked up.
pub fn hash_api_key(raw: &str) -> String {
    hex::encode(Sha256::digest(raw.as_bytes()))
}

/// Whether `raw` has the shape of a key we issue: `cak_` and 64 lower-case hex characters.
pub fn looks_like_api_key(raw: &str) -> bool {
    raw.strip_prefix(API_KEY_PREFIX).is_some_and(|rest| {
        rest.len() == KEY_BYTES * 2 && rest.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
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
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct ApiKeyIssuer {
    companies: Arc<dyn CompanyRepository>,
    api_keys: Arc<dyn ApiKeyRepository>,
    clock: Arc<dyn Clock>,
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
        }
    }

    /// Issues a new key for company `empresa`; stores its hash and prefix, returns the key.
    pub fn issue(&self, empresa: CompanyId) -> Result<IssuedApiKey, IssueApiKeyError> {
        if self.companies.get(empresa)?.is_none() {
            return Err(IssueApiKeyError::UnknownCompany);
        }
        let key = generate_key();
        let prefixo = key[..PREFIX_LEN].to_owned();
        let record = ApiKeyRecord {
            id: Uuid::new_v4(),
            empresa_id: empresa,
            hash: hash_api_key(&key),
            prefixo: prefixo.clone(),
            criado_em: self.clock.now(),
        };
        self.api_keys.insert(&record)?;
        tracing::info!(empresa_id = %empresa, api_key_id = %record.id, "API key issued");
        Ok(IssuedApiKey {
            id: record.id,
            key,
            prefixo,
        })
    }
}

fn generate_key() -> String {
    let mut bytes = [0u8; KEY_BYTES];
    OsRng.fill_bytes(&mut bytes);
    format!("{API_KEY_PREFIX}{}", hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use ports::{MockApiKeyRepository, MockCompanyRepository};

    use super::*;
    use crate::test_support::{company, fixed_clock, now};

    fn issuer(companies: MockCompanyRepository, api_keys: MockApiKeyRepository) -> ApiKeyIssuer {
        ApiKeyIssuer::new(Arc::new(companies), Arc::new(api_keys), fixed_clock())
    }

    #[test]
    fn the_hash_is_the_lower_case_hex_sha256_of_the_key() {
        assert_eq!(
            hash_api_key("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_key_of_our_shape_is_recognized() {
        assert!(looks_like_api_key(&format!("cak_{}", "0a".repeat(32))));
    }

    #[test]
    fn keys_of_another_shape_are_not_recognized() {
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
        ] {
            assert!(!looks_like_api_key(&raw), "{raw:?}");
        }
    }

    #[test]
    fn issuing_stores_only_the_hash_and_prefix_and_returns_the_key_once() {
        let empresa = company();
        let empresa_id = empresa.id;
        let mut companies = MockCompanyRepository::new();
        companies
            .expect_get()
            .withf(move |id| *id == empresa_id)
            .times(1)
            .returning(move |_| Ok(Some(empresa.clone())));
        let stored = Arc::new(Mutex::new(Vec::<ApiKeyRecord>::new()));
        let sink = stored.clone();
        let mut api_keys = MockApiKeyRepository::new();
        api_keys.expect_insert().times(1).returning(move |record| {
            sink.lock().unwrap().push(record.clone());
            Ok(())
        });
        api_keys.expect_find_company_by_hash().times(0);

        let issued = issuer(companies, api_keys).issue(empresa_id).unwrap();

        assert!(looks_like_api_key(&issued.key), "{}", issued.key);
        assert_eq!(issued.key.len(), 4 + 64);
        assert_eq!(issued.prefixo, issued.key[..12]);
        let stored = stored.lock().unwrap();
        let record = &stored[0];
        assert_eq!(
            *record,
            ApiKeyRecord {
                id: issued.id,
                empresa_id,
                hash: hash_api_key(&issued.key),
                prefixo: issued.prefixo.clone(),
                criado_em: now(),
            }
        );
        assert_ne!(record.hash, issued.key);
        assert!(!record.hash.contains(&issued.key[4..]));
    }

    #[test]
    fn two_issued_keys_differ() {
        let empresa = company();
        let mut companies = MockCompanyRepository::new();
        companies
            .expect_get()
            .times(2)
            .returning(move |_| Ok(Some(empresa.clone())));
        let mut api_keys = MockApiKeyRepository::new();
        api_keys.expect_insert().times(2).returning(|_| Ok(()));
        let issuer = issuer(companies, api_keys);

        let first = issuer.issue(company().id).unwrap();
        let second = issuer.issue(company().id).unwrap();

        assert_ne!(first.key, second.key);
        assert_ne!(first.id, second.id);
    }

    #[test]
    fn issuing_for_an_unknown_company_stores_nothing() {
        let mut companies = MockCompanyRepository::new();
        companies.expect_get().times(1).returning(|_| Ok(None));
        let mut api_keys = MockApiKeyRepository::new();
        api_keys.expect_insert().times(0);

        let result = issuer(companies, api_keys).issue(company().id);

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

        let result = issuer(companies, api_keys).issue(company().id);

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
        let empresa = company();
        let mut companies = MockCompanyRepository::new();
        companies
            .expect_get()
            .times(1)
            .returning(move |_| Ok(Some(empresa.clone())));
        let mut api_keys = MockApiKeyRepository::new();
        api_keys
            .expect_insert()
            .times(1)
            .returning(|_| Err(RepoError::Unexpected(anyhow::anyhow!("boom"))));

        let result = issuer(companies, api_keys).issue(company().id);

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
}
