//! `consent-api company profile`: the company as data controller (name, address, DPO contact),
//! what every consent record of the company names. Set by the operator with the owner's
//! connection; read by the record.

use std::sync::Arc;

use domain::{CompanyId, ControllerProfile, ValidationErrors};
use ports::{CompanyRepository, RepoError};

#[derive(Debug, thiserror::Error)]
pub enum SetControllerProfileError {
    #[error("no such company")]
    NotFound,
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct SetControllerProfile {
    companies: Arc<dyn CompanyRepository>,
}

impl SetControllerProfile {
    pub fn new(companies: Arc<dyn CompanyRepository>) -> Self {
        Self { companies }
    }

    /// Checks the fields (trimmed, none blank, the DPO contact an e-mail) and stores them.
    pub fn execute(
        &self,
        company: CompanyId,
        name: &str,
        address: &str,
        dpo_contact: &str,
    ) -> Result<ControllerProfile, SetControllerProfileError> {
        let profile = ControllerProfile::new(name, address, dpo_contact)?;
        if !self.companies.set_controller_profile(company, &profile)? {
            return Err(SetControllerProfileError::NotFound);
        }
        Ok(profile)
    }
}
