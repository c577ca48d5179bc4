use anyhow::Context;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::{Cnpj, Company, CompanyId};
use uuid::Uuid;

use crate::schema::empresas;

/// A row of `empresas` (also read by name from raw SQL: the scheduled sync's claim).
#[derive(Debug, Clone, PartialEq, Eq, Queryable, QueryableByName, Selectable)]
#[diesel(table_name = empresas, check_for_backend(diesel::pg::Pg))]
pub struct EmpresaRow {
    pub id: Uuid,
    pub nome: String,
    pub cnpj: String,
    pub criado_em: DateTime<Utc>,
}

impl EmpresaRow {
    /// The company; fails only if the stored CNPJ no longer passes the domain's rules.
    pub fn try_into_domain(self) -> anyhow::Result<Company> {
        let cnpj = Cnpj::parse(&self.cnpj).context("a stored company has an invalid CNPJ")?;
        Ok(Company {
            id: CompanyId(self.id),
            name: self.nome,
            cnpj,
            created_at: self.criado_em,
        })
    }
}

/// A new row of `empresas`.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = empresas, check_for_backend(diesel::pg::Pg))]
pub struct NewEmpresa<'a> {
    pub id: Uuid,
    pub nome: &'a str,
    pub cnpj: &'a str,
    pub criado_em: DateTime<Utc>,
}

impl<'a> From<&'a Company> for NewEmpresa<'a> {
    fn from(company: &'a Company) -> Self {
        NewEmpresa {
            id: company.id.0,
            nome: &company.name,
            cnpj: company.cnpj.as_str(),
            criado_em: company.created_at,
        }
    }
}
