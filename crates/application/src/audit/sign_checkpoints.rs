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
