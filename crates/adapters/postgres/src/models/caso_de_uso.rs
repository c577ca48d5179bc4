use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::{CompanyId, PgccUseCase, UseCase};
use uuid::Uuid;

use crate::schema::{casos_de_uso, casos_de_uso_versoes};

/// A row of `casos_de_uso`; `removido_em` is set when the PGCC no longer lists the template.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = casos_de_uso, check_for_backend(diesel::pg::Pg))]
pub struct CasoDeUsoRow {
    pub id: Uuid,
    pub empresa_id: Uuid,
    pub vinculo_id: Option<Uuid>,
    pub titulo: String,
    pub pgcc_provider_template_id: Option<String>,
    pub data_inclusao: DateTime<Utc>,
    pub data_ultima_sincronizacao_pgcc: Option<DateTime<Utc>>,
    pub removido_em: Option<DateTime<Utc>>,
}

impl From<CasoDeUsoRow> for UseCase {
    fn from(row: CasoDeUsoRow) -> Self {
        UseCase {
            id: row.id,
            company_id: CompanyId(row.empresa_id),
            link_id: row.vinculo_id,
            title: row.titulo,
            pgcc_provider_template_id: row.pgcc_provider_template_id,
            added_at: row.data_inclusao,
            last_synced_at: row.data_ultima_sincronizacao_pgcc,
        }
    }
}

/// A new row of `casos_de_uso`, as a synchronization inserts it.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = casos_de_uso, check_for_backend(diesel::pg::Pg))]
pub struct NewCasoDeUso<'a> {
    pub id: Uuid,
    pub empresa_id: Uuid,
    pub vinculo_id: Option<Uuid>,
    pub titulo: &'a str,
    pub pgcc_provider_template_id: Option<&'a str>,
    pub data_inclusao: DateTime<Utc>,
    pub data_ultima_sincronizacao_pgcc: Option<DateTime<Utc>>,
    /// The version this synchronization leaves current (see `apply_sync`).
    pub versao: i64,
    /// The fingerprint of `item`'s purpose fields.
    pub impressao: String,
}

impl<'a> NewCasoDeUso<'a> {
    /// A template first seen by the synchronization at `now`: a new id, included and synced now,
    /// at version 1 with `impressao`.
    pub fn synced(
        empresa: CompanyId,
        item: &'a PgccUseCase,
        impressao: String,
        now: DateTime<Utc>,
    ) -> Self {
        NewCasoDeUso {
            versao: 1,
            impressao,
            id: Uuid::new_v4(),
            empresa_id: empresa.0,
            vinculo_id: Some(item.link_id),
            titulo: &item.title,
            pgcc_provider_template_id: Some(&item.template_id),
            data_inclusao: now,
            data_ultima_sincronizacao_pgcc: Some(now),
        }
    }
}

/// A row of `casos_de_uso_versoes`: one version of a use case.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = casos_de_uso_versoes, check_for_backend(diesel::pg::Pg))]
pub struct CasoDeUsoVersaoRow {
    pub empresa_id: Uuid,
    pub caso_de_uso_id: Uuid,
    pub versao: i64,
    pub impressao: Option<String>,
    pub titulo: String,
    pub vinculo_id: Option<Uuid>,
    pub campos: String,
    pub criada_em: DateTime<Utc>,
}
