//! Registering a company (the operator's `company create`).

use std::sync::Arc;

use domain::{Cnpj, Company, CompanyId, ValidationErrors};
use ports::{Clock, CompanyRepository, CreateCompanyError, RepoError};
use uuid::Uuid;

/// Longest company name, in characters.
const MAX_NAME_LEN: usize = 200;

#[derive(Debug, thiserror::Error)]
pub enum RegisterCompanyError {
    /// Broken field rules, by field (`nome`, `cnpj`).
    #[error(transparent)]
    Invalid(ValidationErrors),
    /// Another company already has this CNPJ.
    #[error("a company with this CNPJ already exists")]
    DuplicateCnpj,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct RegisterCompany {
    companies: Arc<dyn CompanyRepository>,
    clock: Arc<dyn Clock>,
}

impl RegisterCompany {
    pub fn new(companies: Arc<dyn CompanyRepository>, clock: Arc<dyn Clock>) -> Self {
        Self { companies, clock }
    }

    /// Stores a new company with a new id; reports every broken field rule at once.
    pub fn execute(&self, name: &str, cnpj: &str) -> Result<Company, RegisterCompanyError> {
        let mut errors = ValidationErrors::default();
        let name = name.trim();
        if name.is_empty() {
            errors.push("nome", "o nome é obrigatório");
        } else if name.chars().count() > MAX_NAME_LEN {
            errors.push(
                "nome",
                format!("o nome tem mais de {MAX_NAME_LEN} caracteres"),
            );
        }
        let cnpj = match Cnpj::parse(cnpj) {
            Ok(cnpj) => Some(cnpj),
            Err(e) => {
                errors.push("cnpj", e.to_string());
                None
            }
        };
        let (Some(cnpj), true) = (cnpj, errors.is_empty()) else {
            return Err(RegisterCompanyError::Invalid(errors));
        };

        let company = Company {
            id: CompanyId(Uuid::new_v4()),
            name: name.to_owned(),
            cnpj,
            created_at: self.clock.now(),
        };
        self.companies.create(&company).map_err(|e| match e {
            CreateCompanyError::DuplicateCnpj => RegisterCompanyError::DuplicateCnpj,
            CreateCompanyError::Repo(e) => RegisterCompanyError::Repo(e),
        })?;
        tracing::info!(empresa_id = %company.id, "company registered");
        Ok(company)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use ports::MockCompanyRepository;

    use super::*;
    use crate::test_support::{fixed_clock, now, VALID_CNPJ};

    fn registrar(companies: MockCompanyRepository) -> RegisterCompany {
        RegisterCompany::new(Arc::new(companies), fixed_clock())
    }

    fn untouched_repository() -> MockCompanyRepository {
        let mut companies = MockCompanyRepository::new();
        companies.expect_create().times(0);
        companies
    }

    fn invalid_fields(result: Result<Company, RegisterCompanyError>) -> Vec<String> {
        match result {
            Err(RegisterCompanyError::Invalid(errors)) => {
                errors.fields().iter().map(|f| f.field.clone()).collect()
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn a_valid_company_is_stored_with_a_new_id_a_trimmed_name_and_the_clock_time() {
        let stored = Arc::new(Mutex::new(Vec::<Company>::new()));
        let sink = stored.clone();
        let mut companies = MockCompanyRepository::new();
        companies.expect_create().times(1).returning(move |c| {
            sink.lock().unwrap().push(c.clone());
            Ok(())
        });

        let company = registrar(companies)
            .execute("  Empresa Exemplo Ltda  ", "11.222.333/0001-81")
            .unwrap();

        assert_eq!(company.name, "Empresa Exemplo Ltda");
        assert_eq!(company.cnpj, Cnpj::parse(VALID_CNPJ).unwrap());
        assert_eq!(company.created_at, now());
        assert_eq!(company.id.0.get_version_num(), 4);
        assert_eq!(*stored.lock().unwrap(), vec![company]);
    }

    #[test]
    fn two_registrations_get_different_ids() {
        let mut companies = MockCompanyRepository::new();
        companies.expect_create().times(2).returning(|_| Ok(()));
        let registrar = registrar(companies);

        let first = registrar.execute("A", VALID_CNPJ).unwrap();
        let second = registrar.execute("B", "11444777000161").unwrap();

        assert_ne!(first.id, second.id);
    }

    #[test]
    fn a_blank_name_is_invalid_and_stores_nothing() {
        let result = registrar(untouched_repository()).execute("   ", VALID_CNPJ);

        assert_eq!(invalid_fields(result), ["nome"]);
    }

    #[test]
    fn a_name_of_200_characters_is_accepted() {
        let mut companies = MockCompanyRepository::new();
        companies.expect_create().times(1).returning(|_| Ok(()));

        let company = registrar(companies)
            .execute(&"é".repeat(200), VALID_CNPJ)
            .unwrap();

        assert_eq!(company.name.chars().count(), 200);
    }

    #[test]
    fn a_name_longer_than_200_characters_is_invalid_and_stores_nothing() {
        let result = registrar(untouched_repository()).execute(&"a".repeat(201), VALID_CNPJ);

        assert_eq!(invalid_fields(result), ["nome"]);
    }

    #[test]
    fn an_invalid_cnpj_is_invalid_and_stores_nothing() {
        let result = registrar(untouched_repository()).execute("Empresa", "11222333000180");

        assert_eq!(invalid_fields(result), ["cnpj"]);
    }

    #[test]
    fn every_broken_field_is_reported_at_once() {
        let result = registrar(untouched_repository()).execute("", "123");

        assert_eq!(invalid_fields(result), ["nome", "cnpj"]);
    }

    #[test]
    fn a_taken_cnpj_is_a_duplicate() {
        let mut companies = MockCompanyRepository::new();
        companies
            .expect_create()
            .times(1)
            .returning(|_| Err(CreateCompanyError::DuplicateCnpj));

        let result = registrar(companies).execute("Empresa", VALID_CNPJ);

        assert!(
            matches!(result, Err(RegisterCompanyError::DuplicateCnpj)),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_insert_is_a_repository_error() {
        let mut companies = MockCompanyRepository::new();
        companies.expect_create().times(1).returning(|_| {
            Err(CreateCompanyError::Repo(RepoError::Unavailable(
                anyhow::anyhow!("pool timeout"),
            )))
        });

        let result = registrar(companies).execute("Empresa", VALID_CNPJ);

        assert!(
            matches!(
                result,
                Err(RegisterCompanyError::Repo(RepoError::Unavailable(_)))
            ),
            "{result:?}"
        );
    }
}
