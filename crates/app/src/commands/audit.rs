//! `consent-api audit verify` (docs/auditoria.md, "Verifying").

use anyhow::Context;
use application::VerifyError;
use domain::CompanyId;
use uuid::Uuid;

use crate::settings::Settings;
use crate::wiring;

/// Prints what was checked and exits 0, or fails naming the first mismatch (exit 1).
pub fn verify(settings: &Settings, company: Option<&str>) -> anyhow::Result<()> {
    let only = company
        .map(|c| {
            Uuid::parse_str(c.trim())
                .map(CompanyId)
                .with_context(|| "--empresa must be a company id (a UUID)".to_owned())
        })
        .transpose()?;
    let pool = wiring::pool(settings)?;
    wiring::migrate(&pool)?;
    match wiring::verify_audit_log(settings, pool)?.run(only) {
        Ok(report) => {
            println!(
                "audit log verified: {} companies, {} entries, {} checkpoints, {} requests, {} stored tree nodes",
                report.companies, report.entries, report.checkpoints, report.requests, report.nodes
            );
            Ok(())
        }
        Err(VerifyError::Mismatch(mismatch)) => {
            anyhow::bail!("audit log mismatch: {mismatch}")
        }
        Err(VerifyError::Repo(e)) => Err(anyhow::Error::new(e).context("reading the audit log")),
    }
}
