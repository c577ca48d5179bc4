//! The checkpoint job's round (the log's sequencer): for each company whose log has settled
//! entries no checkpoint covers, the tree of all its settled entries is rebuilt, held against
//! the previous checkpoint (it must be a prefix: a rewritten log is never signed) and signed.
//! Runs every `APP__AUDITORIA__CHECKPOINT_SECONDS`, in the workers' job loop, off every
//! request's path.

use std::sync::Arc;

use anyhow::Context as _;
use ports::{AuditLogRepository, Clock, CompanyRepository, StoredCheckpoint};

use super::note;
use super::signer::AuditSigner;
use super::tree::LogTree;

#[derive(Clone)]
pub struct SignCheckpoints {
    log: Arc<dyn AuditLogRepository>,
    companies: Arc<dyn CompanyRepository>,
    signer: Arc<AuditSigner>,
    clock: Arc<dyn Clock>,
}

impl SignCheckpoints {
    pub fn new(
        log: Arc<dyn AuditLogRepository>,
        companies: Arc<dyn CompanyRepository>,
        signer: Arc<AuditSigner>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            log,
            companies,
            signer,
            clock,
        }
    }

    /// Signs the checkpoints due, up to `limit` companies; returns how many were signed.
    pub fn run_once(&self, limit: u32) -> anyhow::Result<u32> {
        let mut signed = 0;
        for company_id in self.log.companies_with_unsigned_entries(limit)? {
            let Some(company) = self.companies.get(company_id)? else {
                continue;
            };
            let entries = self.log.entries(company_id, None)?;
            let Some(last) = entries.last().map(|e| e.position) else {
                continue;
            };
            let previous = self.log.latest_checkpoint(company_id)?;
            if let Some(previous) = &previous {
                let size = usize::try_from(previous.size).context("checkpoint size")?;
                if size > entries.len()
                    || LogTree::of(&entries[..size]).root() != previous.root
                    || entries[size - 1].position != previous.last
                {
                    // never sign a log that does not extend what was signed: audit verify names
                    // what changed
                    anyhow::bail!(
                        "the audit log of company {} does not extend its checkpoint of size {}: not signing",
                        company_id.0,
                        previous.size
                    );
                }
                if size == entries.len() {
                    continue;
                }
            }
            let tree = LogTree::of(&entries);
            let root = tree.root();
            let origin = note::origin(self.signer.name(), company.cnpj.as_str());
            let checkpoint = StoredCheckpoint {
                size: tree.size(),
                root,
                last,
                note: note::sign(&self.signer, &origin, tree.size(), &root),
                kid: self.signer.kid(),
                created_at: self.clock.now(),
            };
            if self.log.add_checkpoint(company_id, &checkpoint)? {
                signed += 1;
            }
        }
        Ok(signed)
    }
}

#[cfg(test)]
mod tests {
    use ports::{AuditEntry, LogPosition, MockAuditLogRepository, MockCompanyRepository};
    use uuid::Uuid;

    use super::*;
    use crate::audit::note;
    use crate::test_support::{company, fixed_clock, now};

    fn entries(n: i64) -> Vec<AuditEntry> {
        (0..n)
            .map(|i| AuditEntry {
                request_id: Uuid::from_u128(i as u128),
                bytes: format!("{{\"n\":\"{i}\"}}").into_bytes(),
                position: LogPosition {
                    transaction: 100 + i,
                    sequence: i,
                },
            })
            .collect()
    }

    fn job(log: MockAuditLogRepository) -> SignCheckpoints {
        let mut companies = MockCompanyRepository::new();
        companies.expect_get().returning(|_| Ok(Some(company())));
        SignCheckpoints::new(
            Arc::new(log),
            Arc::new(companies),
            Arc::new(AuditSigner::from_seed("consent-api", [5u8; 32])),
            fixed_clock(),
        )
    }

    #[test]
    fn a_grown_log_gets_a_signed_checkpoint_of_all_its_settled_entries() {
        let mut log = MockAuditLogRepository::new();
        log.expect_companies_with_unsigned_entries()
            .returning(|_| Ok(vec![company().id]));
        log.expect_entries().returning(|_, _| Ok(entries(3)));
        log.expect_latest_checkpoint().returning(|_| Ok(None));
        log.expect_add_checkpoint()
            .withf(|id, c| {
                let parsed = note::parse(&c.note).unwrap();
                *id == company().id
                    && c.size == 3
                    && c.root == LogTree::of(&entries(3)).root()
                    && c.last == entries(3)[2].position
                    && c.created_at == now()
                    && parsed.origin == format!("consent-api/empresas/{}", company().cnpj.as_str())
                    && (parsed.size, parsed.root) == (3, c.root)
            })
            .times(1)
            .returning(|_, _| Ok(true));

        assert_eq!(job(log).run_once(10).unwrap(), 1);
    }

    #[test]
    fn a_log_that_no_longer_extends_its_checkpoint_is_not_signed() {
        let mut log = MockAuditLogRepository::new();
        log.expect_companies_with_unsigned_entries()
            .returning(|_| Ok(vec![company().id]));
        // the first entry was removed behind the service's back
        log.expect_entries()
            .returning(|_, _| Ok(entries(4).split_off(1)));
        log.expect_latest_checkpoint().returning(|_| {
            let signed = entries(2);
            Ok(Some(StoredCheckpoint {
                size: 2,
                root: LogTree::of(&signed).root(),
                last: signed[1].position,
                note: String::new(),
                kid: String::new(),
                created_at: now(),
            }))
        });
        log.expect_add_checkpoint().never();

        let err = job(log).run_once(10).unwrap_err();
        assert!(err.to_string().contains("does not extend"), "{err}");
    }
}
