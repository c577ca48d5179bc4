//! The companies' annotations of their use cases (`casos_de_uso_anotacoes`; issue 37, part 6,
//! docs/records.md): read and written for [`crate::PgUseCaseRepository`], by company always.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::{CompanyId, LegalBasis, LegalHypothesis, LgpdArticle, UseCaseAnnotation};
use ports::RepoError;
use uuid::Uuid;

use crate::conn::with_conn;
use crate::schema::{casos_de_uso, casos_de_uso_anotacoes};
use crate::tenant::Tenant;
use crate::PgPool;

/// The key named as such: the upsert's changeset (`AsChangeset`) leaves it out. Setting
/// `empresa_id`, even to the same value, is refused by Citus ("modifying the partition value of
/// rows is not allowed"), and neither key column changes on a conflict anyway.
#[derive(Debug, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(
    table_name = casos_de_uso_anotacoes,
    primary_key(empresa_id, caso_de_uso_id),
    check_for_backend(diesel::pg::Pg)
)]
struct AnotacaoRow {
    empresa_id: Uuid,
    caso_de_uso_id: Uuid,
    base_legal_artigo: i64,
    base_legal_hipotese: String,
    categorias_dados: String,
    url_aviso: String,
    idioma_aviso: String,
    atualizado_em: DateTime<Utc>,
}

pub(crate) fn read(
    pool: &PgPool,
    company: CompanyId,
    use_case_id: Uuid,
) -> Result<Option<UseCaseAnnotation>, RepoError> {
    const OPERATION: &str = "reading a use-case annotation";
    let row = with_conn(pool, OPERATION, |conn| {
        casos_de_uso_anotacoes::table
            .filter(casos_de_uso_anotacoes::empresa_id.eq(company.0))
            .filter(casos_de_uso_anotacoes::caso_de_uso_id.eq(use_case_id))
            .select(AnotacaoRow::as_select())
            .first(conn)
            .optional()
    })?;
    row.map(|r| into_domain(r).map_err(|e| RepoError::Unexpected(e.context(OPERATION))))
        .transpose()
}

/// In one transaction: the use case must be the company's (removed or not), then the row is
/// inserted or replaced.
pub(crate) fn write(
    pool: &PgPool,
    company: CompanyId,
    use_case_id: Uuid,
    annotation: &UseCaseAnnotation,
) -> Result<bool, RepoError> {
    let categories = serde_json::to_string(&annotation.categories)
        .map_err(|e| RepoError::Unexpected(anyhow::Error::new(e)))?;
    let row = AnotacaoRow {
        empresa_id: company.0,
        caso_de_uso_id: use_case_id,
        base_legal_artigo: annotation.legal_basis.article.number().into(),
        base_legal_hipotese: annotation.legal_basis.hypothesis.as_str().to_owned(),
        categorias_dados: categories,
        url_aviso: annotation.notice_url.clone(),
        idioma_aviso: annotation.notice_language.clone(),
        atualizado_em: annotation.updated_at,
    };
    with_conn(pool, "writing a use-case annotation", |conn| {
        conn.transaction(|conn| {
            let exists: bool = diesel::select(diesel::dsl::exists(casos_de_uso::table::row(
                company,
                use_case_id,
            )))
            .get_result(conn)?;
            if !exists {
                return Ok(false);
            }
            diesel::insert_into(casos_de_uso_anotacoes::table)
                .values(&row)
                .on_conflict((
                    casos_de_uso_anotacoes::empresa_id,
                    casos_de_uso_anotacoes::caso_de_uso_id,
                ))
                .do_update()
                .set(&row)
                .execute(conn)?;
            Ok(true)
        })
    })
}

fn into_domain(row: AnotacaoRow) -> anyhow::Result<UseCaseAnnotation> {
    let article = LgpdArticle::from_number(row.base_legal_artigo)
        .ok_or_else(|| anyhow::anyhow!("a stored annotation has an unknown article"))?;
    let hypothesis = LegalHypothesis::parse(&row.base_legal_hipotese)
        .ok_or_else(|| anyhow::anyhow!("a stored annotation has an unknown hypothesis"))?;
    Ok(UseCaseAnnotation {
        legal_basis: LegalBasis {
            article,
            hypothesis,
        },
        categories: serde_json::from_str(&row.categorias_dados)?,
        notice_url: row.url_aviso,
        notice_language: row.idioma_aviso,
        updated_at: row.atualizado_em,
    })
}
