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

/// Sets the company's OpenID Provider for the console (the owner's connection: `empresas_oidc`
/// is the owner's to write). The issuer must be an https URL (http only on a loopback address,
/// for tests and development); the secret is encrypted before it is stored and never printed.
pub fn oidc(
    settings: &Settings,
    company: &str,
    issuer: &str,
    client_id: &str,
    client_secret: &str,
    roles_claim: &str,
) -> anyhow::Result<()> {
    let Ok(id) = Uuid::parse_str(company.trim()) else {
        bail!("--empresa must be a company id (a UUID, from company create)");
    };
    let issuer = issuer.trim();
    let loopback = ["http://127.0.0.1:", "http://localhost:", "http://[::1]:"];
    if !issuer.starts_with("https://") && !loopback.iter().any(|p| issuer.starts_with(p)) {
        bail!("--issuer must be an https URL (http only on a loopback address)");
    }
    if client_id.trim().is_empty() || client_secret.is_empty() {
        bail!("--client-id and --client-secret must not be empty");
    }
    let claim = roles_claim.trim();
    if claim.is_empty() || claim.len() > 100 || claim.chars().any(char::is_whitespace) {
        bail!("--roles-claim must be a claim name (no blanks, at most 100 characters)");
    }
    if !wiring::set_console_oidc(
        settings,
        CompanyId(id),
        issuer,
        client_id.trim(),
        client_secret,
        claim,
    )? {
        bail!("no company with this id");
    }
    Ok(())
}
