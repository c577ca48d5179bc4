//! The company filter a tenant table's query starts from (issue 23, part 3; svix's server has
//! the same idea in `secure_find`): `webhook_urls::table::of(company)` is the table already
//! narrowed to one company, and `webhook_urls::table::row(company, id)` one row of it, so a
//! repository method that starts from them cannot forget the company. Every primary key of these
//! tables is `(empresa_id, id)`: `row` is one probe of it.
//!
//! The tables of hand-written statements (`statement!`) name the company in their text instead;
//! `make test` checks every statement the service sends (scripts/statement-scope-check.sh).

use diesel::dsl::{Eq, Filter};
use diesel::prelude::*;
use domain::CompanyId;
use uuid::Uuid;

use crate::schema;

/// A tenant table keyed by `(empresa_id, id)`.
pub(crate) trait Tenant: Sized {
    /// The type of the key's `id` (a UUID, or the identity of the history and the attempts).
    type Id;
    /// The table's rows of one company.
    type OfCompany;
    /// One row of one company.
    type Row;

    fn of(company: CompanyId) -> Self::OfCompany;

    fn row(company: CompanyId, id: Self::Id) -> Self::Row;
}

macro_rules! tenant_tables {
    ($($table:ident: $id:ty),+ $(,)?) => {$(
        impl Tenant for schema::$table::table {
            type Id = $id;
            type OfCompany = Filter<schema::$table::table, Eq<schema::$table::empresa_id, Uuid>>;
            type Row = Filter<Self::OfCompany, Eq<schema::$table::id, $id>>;

            fn of(company: CompanyId) -> Self::OfCompany {
                schema::$table::table.filter(schema::$table::empresa_id.eq(company.0))
            }

            fn row(company: CompanyId, id: $id) -> Self::Row {
                Self::of(company).filter(schema::$table::id.eq(id))
            }
        }
    )+};
}

tenant_tables!(
    casos_de_uso: Uuid,
    solicitacoes_consentimento: Uuid,
    solicitacoes_historico: i64,
    webhook_urls: Uuid,
    webhook_eventos: Uuid,
    webhook_entregas: Uuid,
    webhook_tentativas: i64,
);

#[cfg(test)]
mod tests {
    use diesel::debug_query;
    use diesel::pg::Pg;

    use super::*;
    use crate::schema::{solicitacoes_consentimento, webhook_urls};

    #[test]
    fn a_rows_query_names_its_company_before_anything_else() {
        let company = CompanyId(Uuid::from_u128(1));
        let of = debug_query::<Pg, _>(&webhook_urls::table::of(company).select(webhook_urls::id))
            .to_string();
        assert!(
            of.contains(r#"WHERE ("webhook_urls"."empresa_id" = $1)"#),
            "{of}"
        );
        let row = debug_query::<Pg, _>(
            &solicitacoes_consentimento::table::row(company, Uuid::from_u128(2))
                .select(solicitacoes_consentimento::id),
        )
        .to_string();
        assert!(
            row.contains(
                r#"WHERE (("solicitacoes_consentimento"."empresa_id" = $1) AND ("solicitacoes_consentimento"."id" = $2))"#
            ),
            "{row}"
        );
        assert!(
            row.contains("00000000-0000-0000-0000-000000000001"),
            "{row}"
        );
    }
}
