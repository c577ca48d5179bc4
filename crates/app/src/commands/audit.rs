//! `consent-api audit verify` (docs/auditoria.md, "Verifying").

use anyhow::Context;
use application::VerifyError;
use domain::CompanyId;
use uuid::Uuid;

use crate::settings::Settings;
use crate::wiring;

/// Prints what was checked, the requests from before the log and the integrity incidents, and
/// exits 0; fails naming the first mismatch, or when there are integrity incidents (exit 1).
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
            let began = report
                .log_began
                .map_or_else(|| "not recorded".to_owned(), |t| t.to_rfc3339());
            // named, never skipped silently: rows from before the log have no creation entry
            for (company, request, created_at) in &report.before_log {
                println!(
                    "not checked: company {company}: request {request} was created {} before the log began ({began}) and has no entry",
                    created_at.to_rfc3339()
                );
            }
            for (company, incident) in &report.incidents {
                println!(
                    "integrity incident: company {company}: request {} (PGCC id {}) is not known to the PGCC since {} (recorded {})",
                    incident.request,
                    incident.pgcc_id,
                    incident.not_found_since.to_rfc3339(),
                    incident.recorded_at.to_rfc3339()
                );
            }
            println!(
                "audit log verified: {} companies, {} entries, {} checkpoints, {} requests, {} stored tree nodes, {} requests from before the log, {} integrity incidents",
                report.companies,
                report.entries,
                report.checkpoints,
                report.requests,
                report.nodes,
                report.before_log.len(),
                report.incidents.len()
            );
            if !report.incidents.is_empty() {
                anyhow::bail!(
                    "audit log: {} integrity incidents (confirmed requests the PGCC does not know)",
                    report.incidents.len()
                );
            }
            Ok(())
        }
        Err(VerifyError::Mismatch(mismatch)) => {
            anyhow::bail!("audit log mismatch: {mismatch}")
        }
        Err(VerifyError::Repo(e)) => Err(anyhow::Error::new(e).context("reading the audit log")),
    }
}
