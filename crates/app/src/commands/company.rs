use anyhow::bail;
use application::RegisterCompanyError;

use crate::context::ProcessContext;
use crate::settings::Settings;
use crate::wiring;

/// Prints the new company's id alone on stdout, so scripts can capture it.
pub fn create(
    settings: &Settings,
    context: &ProcessContext,
    name: &str,
    cnpj: &str,
) -> anyhow::Result<()> {
    let services = wiring::services(settings, context, wiring::pool(settings)?)?;
    match services.register_company.execute(name, cnpj) {
        Ok(company) => {
            println!("{}", company.id);
            Ok(())
        }
        Err(RegisterCompanyError::Invalid(errors)) => {
            let fields: Vec<String> = errors
                .fields()
                .iter()
                .map(|e| format!("{}: {}", e.field, e.message))
                .collect();
            bail!("invalid company: {}", fields.join("; "))
        }
        Err(RegisterCompanyError::DuplicateCnpj) => {
            bail!("a company with this CNPJ already exists")
        }
        Err(RegisterCompanyError::Repo(e)) => {
            Err(anyhow::Error::new(e).context("creating the company"))
        }
    }
}
