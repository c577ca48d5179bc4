use anyhow::bail;
use application::{RegisterCompanyError, SetControllerProfileError};
use domain::CompanyId;
use uuid::Uuid;

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

/// Sets the company's controller profile (the owner's connection: `empresas` is the owner's to
/// write). Prints nothing on success.
pub fn profile(
    settings: &Settings,
    context: &ProcessContext,
    company: &str,
    name: &str,
    address: &str,
    dpo_contact: &str,
) -> anyhow::Result<()> {
    let Ok(id) = Uuid::parse_str(company.trim()) else {
        bail!("--empresa must be a company id (a UUID, from company create)");
    };
    let services = wiring::services(settings, context, wiring::pool(settings)?)?;
    match services
        .set_controller_profile
        .execute(CompanyId(id), name, address, dpo_contact)
    {
        Ok(_) => Ok(()),
        Err(SetControllerProfileError::Invalid(errors)) => {
            let fields: Vec<String> = errors
                .fields()
                .iter()
                .map(|e| format!("{}: {}", e.field, e.message))
                .collect();
            bail!("invalid profile: {}", fields.join("; "))
        }
        Err(SetControllerProfileError::NotFound) => bail!("no company with this id"),
        Err(SetControllerProfileError::Repo(e)) => {
            Err(anyhow::Error::new(e).context("setting the controller profile"))
        }
    }
}
