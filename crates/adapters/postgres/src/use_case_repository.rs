use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::Bool;
use diesel::upsert::excluded;
use domain::{CompanyId, PgccUseCase, SyncCounts, UseCase, WebhookEvent};
use ports::{RepoError, UseCaseRepository};
use uuid::Uuid;

use crate::conn::{count_u32, with_conn};
use crate::models::{CasoDeUsoRow, NewCasoDeUso};
use crate::outbox;
use crate::schema::{casos_de_uso, empresas};
use crate::{PgPool, ReadPools};

/// Rows per `INSERT ... ON CONFLICT` statement of a synchronization (8 binds a row, far below
/// PostgreSQL's 65535 binds per statement).
const SYNC_BATCH: usize = 1000;

/// [`UseCaseRepository`] on `casos_de_uso`; every query filters by `empresa_id`.
#[derive(Clone)]
pub struct PgUseCaseRepository {
    pool: PgPool,
    /// Where the list is read (a replica within the lag bound, else `pool`).
    reads: ReadPools,
}

impl PgUseCaseRepository {
    pub fn new(pool: PgPool) -> Self {
        Self {
            reads: ReadPools::primary_only(pool.clone()),
            pool,
        }
    }

    /// The list read through `reads` (a replica when one is within its lag bound).
    pub fn reading_from(mut self, reads: ReadPools) -> Self {
        self.reads = reads;
        self
    }
}

impl UseCaseRepository for PgUseCaseRepository {
    fn list(
        &self,
        empresa: CompanyId,
        vinculo_id: Option<Uuid>,
    ) -> Result<Vec<UseCase>, RepoError> {
        let rows = self.reads.read("listing use cases", |conn| {
            let mut query = casos_de_uso::table
                .filter(casos_de_uso::empresa_id.eq(empresa.0))
                .filter(casos_de_uso::removido_em.is_null())
                .into_boxed();
            if let Some(vinculo_id) = vinculo_id {
                query = query.filter(casos_de_uso::vinculo_id.eq(vinculo_id));
            }
            query
                .order((casos_de_uso::titulo.asc(), casos_de_uso::id.asc()))
                .select(CasoDeUsoRow::as_select())
                .load(conn)
        })?;
        Ok(rows.into_iter().map(UseCase::from).collect())
    }

    fn find_by_template(
        &self,
        empresa: CompanyId,
        template_id: &str,
    ) -> Result<Option<UseCase>, RepoError> {
        let row = with_conn(&self.pool, "finding a use case by template", |conn| {
            casos_de_uso::table
                .filter(casos_de_uso::empresa_id.eq(empresa.0))
                .filter(casos_de_uso::pgcc_provider_template_id.eq(template_id))
                .filter(casos_de_uso::removido_em.is_null())
                .select(CasoDeUsoRow::as_select())
                .first(conn)
                .optional()
        })?;
        Ok(row.map(UseCase::from))
    }

    /// In one transaction: locks the company's row (`FOR NO KEY UPDATE`, so two synchronizations
    /// of one company run one after the other and count exactly, while inserts referencing the
    /// company are not blocked); upserts `items` by (empresa_id, pgcc_provider_template_id),
    /// telling inserts from updates by `xmax = 0`; marks the company's other non-removed rows
    /// removed; counts the non-removed rows; when a template was inserted, changed (title, link,
    /// back from removal) or removed, writes the `casos-de-uso.sincronizados` event with these
    /// counts and its deliveries (see `outbox.rs`); a sync that changes nothing writes none. A template
    /// listed twice in `items` counts once (its first occurrence wins). An unknown company fails
    /// (`Unexpected`).
    fn apply_sync(
        &self,
        empresa: CompanyId,
        items: &[PgccUseCase],
        now: DateTime<Utc>,
    ) -> Result<SyncCounts, RepoError> {
        let mut seen = HashSet::with_capacity(items.len());
        let rows: Vec<NewCasoDeUso<'_>> = items
            .iter()
            .filter(|item| seen.insert(item.template_id.as_str()))
            .map(|item| NewCasoDeUso::synced(empresa, item, now))
            .collect();
        let template_ids: Vec<&str> = seen.into_iter().collect();

        with_conn(&self.pool, "synchronizing use cases", |conn| {
            conn.transaction(|conn| {
                empresas::table
                    .find(empresa.0)
                    .select(empresas::id)
                    .for_no_key_update()
                    .first::<Uuid>(conn)?;
                // What the company's copy holds now, to tell a refresh that changes something
                // (a title, a link, a template back from removal) from one that changes nothing.
                let before: HashMap<String, (String, Option<Uuid>, bool)> = casos_de_uso::table
                    .filter(casos_de_uso::empresa_id.eq(empresa.0))
                    .filter(casos_de_uso::pgcc_provider_template_id.is_not_null())
                    .select((
                        casos_de_uso::pgcc_provider_template_id.assume_not_null(),
                        casos_de_uso::titulo,
                        casos_de_uso::vinculo_id,
                        casos_de_uso::removido_em.is_not_null(),
                    ))
                    .load::<(String, String, Option<Uuid>, bool)>(conn)?
                    .into_iter()
                    .map(|(template, titulo, vinculo, removed)| {
                        (template, (titulo, vinculo, removed))
                    })
                    .collect();
                let changed_rows = rows
                    .iter()
                    .filter(|row| {
                        let template = row.pgcc_provider_template_id.unwrap_or_default();
                        before
                            .get(template)
                            .is_none_or(|(titulo, vinculo, removed)| {
                                *removed || titulo != row.titulo || *vinculo != row.vinculo_id
                            })
                    })
                    .count();

                let mut counts = SyncCounts::default();
                for batch in rows.chunks(SYNC_BATCH) {
                    let inserted: Vec<bool> = diesel::insert_into(casos_de_uso::table)
                        .values(batch)
                        .on_conflict((
                            casos_de_uso::empresa_id,
                            casos_de_uso::pgcc_provider_template_id,
                        ))
                        .do_update()
                        .set((
                            casos_de_uso::titulo.eq(excluded(casos_de_uso::titulo)),
                            casos_de_uso::vinculo_id.eq(excluded(casos_de_uso::vinculo_id)),
                            casos_de_uso::data_ultima_sincronizacao_pgcc.eq(now),
                            casos_de_uso::removido_em.eq(None::<DateTime<Utc>>),
                        ))
                        .returning(sql::<Bool>("xmax = 0"))
                        .get_results(conn)?;
                    let new = inserted.iter().filter(|&&new| new).count();
                    counts.inserted += count_u32(new);
                    counts.updated += count_u32(inserted.len() - new);
                }

                let removed = diesel::update(
                    casos_de_uso::table
                        .filter(casos_de_uso::empresa_id.eq(empresa.0))
                        .filter(casos_de_uso::removido_em.is_null())
                        .filter(
                            casos_de_uso::pgcc_provider_template_id
                                .is_null()
                                .or(casos_de_uso::pgcc_provider_template_id.ne_all(&template_ids)),
                        ),
                )
                .set(casos_de_uso::removido_em.eq(now))
                .execute(conn)?;
                counts.removed = count_u32(removed);

                let total: i64 = casos_de_uso::table
                    .filter(casos_de_uso::empresa_id.eq(empresa.0))
                    .filter(casos_de_uso::removido_em.is_null())
                    .count()
                    .get_result(conn)?;
                counts.total = count_u32(total);
                // Subscribers hear of a change only: a sync that inserts, changes and removes
                // nothing writes no event (`atualizados` still counts every template refreshed).
                if changed_rows > 0 || counts.removed > 0 {
                    outbox::write_event(conn, &WebhookEvent::sync(empresa, counts, now))?;
                }
                Ok(counts)
            })
        })
    }
}
