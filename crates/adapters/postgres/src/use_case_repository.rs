use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::Bool;
use diesel::sql_types::{BigInt, Uuid as SqlUuid};
use diesel::upsert::excluded;
use domain::{
    CompanyId, PgccUseCase, SyncCounts, UseCase, UseCaseAnnotation, UseCaseChange, UseCaseVersion,
    WebhookEvent,
};
use ports::{RepoError, UseCaseRepository};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::change_feed::announce_change;
use crate::conn::{count_u32, with_conn};
use crate::fixed_sql::statement;
use crate::models::{CasoDeUsoRow, CasoDeUsoVersaoRow, NewCasoDeUso};
use crate::outbox;
use crate::schema::{casos_de_uso, casos_de_uso_versoes};
use crate::tenant::Tenant;
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
            let mut query = casos_de_uso::table::of(empresa)
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
            casos_de_uso::table::of(empresa)
                .filter(casos_de_uso::pgcc_provider_template_id.eq(template_id))
                .filter(casos_de_uso::removido_em.is_null())
                .select(CasoDeUsoRow::as_select())
                .first(conn)
                .optional()
        })?;
        Ok(row.map(UseCase::from))
    }

    /// In one transaction: locks the company (`per_company::lock_company`, so two
    /// synchronizations of one company run one after the other and count exactly, while inserts
    /// referencing the company are not blocked); upserts `items` by (empresa_id, pgcc_provider_template_id),
    /// telling inserts from updates by `xmax = 0`; marks the company's other non-removed rows
    /// removed; counts the non-removed rows; when a template was inserted, changed (title, link,
    /// back from removal) or removed, writes the `casos-de-uso.sincronizados` event with these
    /// counts and its deliveries (see `outbox.rs`); a sync that changes nothing writes none. A template
    /// listed twice in `items` counts once (its first occurrence wins). An unknown company fails
    /// (`Unexpected`).
    ///
    /// Versions: each template's fingerprint (`fingerprint`) is compared with the stored one.
    /// A new template starts at version 1; a known one whose fingerprint differs gets the next
    /// version, its row in `casos_de_uso_versoes` and a `casos-de-uso.alterado` event with the
    /// counts of `older_version_counts`. A row stored before versions existed (no fingerprint)
    /// adopts the one computed now when its title and link are unchanged and the PGCC sends no
    /// other purpose field, so the deployment itself makes no version 2.
    fn apply_sync(
        &self,
        empresa: CompanyId,
        items: &[PgccUseCase],
        now: DateTime<Utc>,
    ) -> Result<SyncCounts, RepoError> {
        let mut seen = HashSet::with_capacity(items.len());
        let unique: Vec<&PgccUseCase> = items
            .iter()
            .filter(|item| seen.insert(item.template_id.as_str()))
            .collect();
        let template_ids: Vec<&str> = seen.into_iter().collect();

        with_conn(&self.pool, "synchronizing use cases", |conn| {
            conn.transaction(|conn| {
                crate::per_company::lock_company(conn, empresa.0)?;
                // What the company's copy holds now, to tell a refresh that changes something
                // (a title, a link, a template back from removal) from one that changes nothing,
                // and a new version from the same one.
                let before: HashMap<String, Stored> = casos_de_uso::table::of(empresa)
                    .filter(casos_de_uso::pgcc_provider_template_id.is_not_null())
                    .select((
                        casos_de_uso::pgcc_provider_template_id.assume_not_null(),
                        casos_de_uso::id,
                        casos_de_uso::titulo,
                        casos_de_uso::vinculo_id,
                        casos_de_uso::removido_em.is_not_null(),
                        casos_de_uso::versao,
                        casos_de_uso::impressao,
                    ))
                    .load::<(
                        String,
                        Uuid,
                        String,
                        Option<Uuid>,
                        bool,
                        i64,
                        Option<String>,
                    )>(conn)?
                    .into_iter()
                    .map(
                        |(template, id, titulo, vinculo, removed, versao, impressao)| {
                            let stored = Stored {
                                id,
                                titulo,
                                vinculo,
                                removed,
                                versao,
                                impressao,
                            };
                            (template, stored)
                        },
                    )
                    .collect();

                let mut rows = Vec::with_capacity(unique.len());
                let mut new_versions = Vec::new();
                let mut changes = Vec::new();
                let mut changed_rows = 0usize;
                for item in unique {
                    let impressao = fingerprint(item);
                    let mut row = NewCasoDeUso::synced(empresa, item, impressao.clone(), now);
                    match before.get(&item.template_id) {
                        None => {
                            changed_rows += 1;
                            new_versions
                                .push(version_row(empresa, row.id, 1, item, &impressao, now));
                        }
                        Some(stored) => {
                            row.id = stored.id;
                            let same_fields =
                                stored.titulo == item.title && stored.vinculo == Some(item.link_id);
                            if stored.removed || !same_fields {
                                changed_rows += 1;
                            }
                            let same_version = match &stored.impressao {
                                Some(known) => *known == impressao,
                                None => same_fields && item.other_fields == NO_OTHER_FIELDS,
                            };
                            row.versao = if same_version {
                                stored.versao
                            } else {
                                stored.versao + 1
                            };
                            if !same_version {
                                new_versions.push(version_row(
                                    empresa, stored.id, row.versao, item, &impressao, now,
                                ));
                                changes.push((
                                    stored.id,
                                    item.template_id.clone(),
                                    stored.versao,
                                    row.versao,
                                ));
                            }
                        }
                    }
                    rows.push(row);
                }

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
                            casos_de_uso::versao.eq(excluded(casos_de_uso::versao)),
                            casos_de_uso::impressao.eq(excluded(casos_de_uso::impressao)),
                        ))
                        .returning(sql::<Bool>("xmax = 0"))
                        .get_results(conn)?;
                    let new = inserted.iter().filter(|&&new| new).count();
                    counts.inserted += count_u32(new);
                    counts.updated += count_u32(inserted.len() - new);
                }
                for batch in new_versions.chunks(SYNC_BATCH) {
                    diesel::insert_into(casos_de_uso_versoes::table)
                        .values(batch)
                        .execute(conn)?;
                }

                let removed = diesel::update(
                    casos_de_uso::table::of(empresa)
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

                let total: i64 = casos_de_uso::table::of(empresa)
                    .filter(casos_de_uso::removido_em.is_null())
                    .count()
                    .get_result(conn)?;
                counts.total = count_u32(total);
                // Subscribers hear of a change only: a sync that inserts, changes and removes
                // nothing writes no event (`atualizados` still counts every template refreshed).
                let mut events = Vec::with_capacity(changes.len() + 1);
                if changed_rows > 0 || counts.removed > 0 {
                    events.push(WebhookEvent::sync(empresa, counts, now));
                }
                for (id, template, versao_anterior, versao_nova) in changes {
                    let (ativas, pendentes) = older_version_counts(conn, empresa, id, versao_nova)?;
                    let change = UseCaseChange {
                        caso_de_uso_id: id,
                        caso_de_uso_id_template: template,
                        versao_anterior,
                        versao_nova,
                        solicitacoes_ativas: ativas,
                        solicitacoes_pendentes: pendentes,
                    };
                    events.push(WebhookEvent::use_case_changed(empresa, change, now));
                }
                outbox::write_events(conn, &events)?;
                if !rows.is_empty() || counts.removed > 0 {
                    // every row written (its sync time at least) changes the cached list
                    announce_change(conn, empresa)?;
                }
                Ok(counts)
            })
        })
    }

    fn versions(
        &self,
        empresa: CompanyId,
        use_case_id: Uuid,
    ) -> Result<Option<Vec<UseCaseVersion>>, RepoError> {
        let rows = with_conn(&self.pool, "listing use-case versions", |conn| {
            casos_de_uso_versoes::table
                .filter(casos_de_uso_versoes::empresa_id.eq(empresa.0))
                .filter(casos_de_uso_versoes::caso_de_uso_id.eq(use_case_id))
                .order(casos_de_uso_versoes::versao.asc())
                .select(CasoDeUsoVersaoRow::as_select())
                .load(conn)
        })?;
        if rows.is_empty() {
            // every use case has its version 1 (the migration, the sync): none is no such use case
            return Ok(None);
        }
        let starts: Vec<DateTime<Utc>> = rows.iter().map(|r| r.criada_em).collect();
        Ok(Some(
            rows.into_iter()
                .enumerate()
                .map(|(i, row)| UseCaseVersion {
                    version: row.versao,
                    title: row.titulo,
                    link_id: row.vinculo_id,
                    other_fields: row.campos,
                    fingerprint: row.impressao,
                    started_at: row.criada_em,
                    ended_at: starts.get(i + 1).copied(),
                })
                .collect(),
        ))
    }

    fn annotation(
        &self,
        empresa: CompanyId,
        use_case_id: Uuid,
    ) -> Result<Option<UseCaseAnnotation>, RepoError> {
        crate::use_case_annotations::read(&self.pool, empresa, use_case_id)
    }

    fn annotate(
        &self,
        empresa: CompanyId,
        use_case_id: Uuid,
        annotation: &UseCaseAnnotation,
    ) -> Result<bool, RepoError> {
        crate::use_case_annotations::write(&self.pool, empresa, use_case_id, annotation)
    }
}

/// The other purpose fields of a use case when the PGCC sends none.
const NO_OTHER_FIELDS: &str = "{}";

/// What a company's copy holds of one template before a synchronization.
struct Stored {
    id: Uuid,
    titulo: String,
    vinculo: Option<Uuid>,
    removed: bool,
    versao: i64,
    impressao: Option<String>,
}

/// The version's fingerprint: lower-case hex SHA-256 of the item's canonical purpose text.
pub fn fingerprint(item: &PgccUseCase) -> String {
    hex::encode(Sha256::digest(item.purpose_text().as_bytes()))
}

/// The row of version `versao` of the company's use case `id`, as `item` states it.
fn version_row(
    empresa: CompanyId,
    id: Uuid,
    versao: i64,
    item: &PgccUseCase,
    impressao: &str,
    now: DateTime<Utc>,
) -> CasoDeUsoVersaoRow {
    CasoDeUsoVersaoRow {
        empresa_id: empresa.0,
        caso_de_uso_id: id,
        versao,
        impressao: Some(impressao.to_owned()),
        titulo: item.title.clone(),
        vinculo_id: Some(item.link_id),
        campos: item.other_fields.clone(),
        criada_em: now,
    }
}

statement! {
    /// The company's confirmed requests of one use case stored `ativo` and `pendente` under a
    /// version older than `$versao`: an index-only read of
    /// `solicitacoes_consentimento_versao_caso_idx` (the status literals are its predicate's), so
    /// only that use case's open requests are read, never all of the company's.
    struct OlderVersionCounts {
        empresa_id: Uuid as SqlUuid,
        caso_de_uso_id: Uuid as SqlUuid,
        versao: i64 as BigInt,
    }
    "SELECT count(*) FILTER (WHERE status = 'ativo') AS ativas,
       count(*) FILTER (WHERE status = 'pendente') AS pendentes
FROM solicitacoes_consentimento
WHERE empresa_id = $empresa_id AND caso_de_uso_id = $caso_de_uso_id
  AND versao_caso_de_uso < $versao
  AND criacao = 'confirmada' AND status IN ('pendente', 'ativo')"
}

#[derive(QueryableByName)]
struct OlderVersionCountsRow {
    #[diesel(sql_type = BigInt)]
    ativas: i64,
    #[diesel(sql_type = BigInt)]
    pendentes: i64,
}

/// (`ativo`, `pendente`) requests of the company's use case `id` under versions before `versao`.
fn older_version_counts(
    conn: &mut PgConnection,
    empresa: CompanyId,
    id: Uuid,
    versao: i64,
) -> QueryResult<(u64, u64)> {
    let row: OlderVersionCountsRow = OlderVersionCounts {
        empresa_id: empresa.0,
        caso_de_uso_id: id,
        versao,
    }
    .get_result(conn)?;
    Ok((
        u64::try_from(row.ativas).unwrap_or(0),
        u64::try_from(row.pendentes).unwrap_or(0),
    ))
}
