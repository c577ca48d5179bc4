use anyhow::{bail, Context};
use application::IssueApiKeyError;
use domain::CompanyId;
use uuid::Uuid;

use crate::settings::Settings;
use crate::wiring;

/// Prints the key alone on stdout; it cannot be shown again (only its hash is stored).
pub fn issue(settings: &Settings, empresa: &str) -> anyhow::Result<()> {
    let id = Uuid::parse_str(empresa.trim()).context("--empresa must be a company id (UUID)")?;
    let services = wiring::services(settings, wiring::pool(settings)?)?;
    match services.api_keys.issue(CompanyId(id)) {
        Ok(issued) => {
            println!("{}", issued.key);
            eprintln!(
                "api key {} issued (prefix {}); store it now, it is not shown again",
                issued.id, issued.prefixo
            );
            Ok(())
        }
        Err(IssueApiKeyError::UnknownCompany) => bail!("no company with id {id}"),
        Err(IssueApiKeyError::Repo(e)) => Err(anyhow::Error::new(e).context("issuing the key")),
    }
}
