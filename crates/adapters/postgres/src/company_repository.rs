use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{BigInt, Timestamptz, Uuid as SqlUuid};
use domain::{Company, CompanyId, ControllerProfile};
use ports::{CompanyRepository, CreateCompanyError, RepoError};
use uuid::Uuid;

use crate::conn::{checkout, is_constraint, query_error, violated_constraint, with_conn};
use crate::fixed_sql::statement;
use crate::models::{EmpresaRow, NewEmpresa};
use crate::per_company::CompanyIdRow;
use crate::schema::{agenda_sincronizacao, empresas};
use crate::PgPool;

/// The unique constraint on `empresas.cnpj` (migration `create_empresas`).
pub(crate) const CNPJ_UNIQUE: &str = "empresas_cnpj_key";

/// Schedules a new company's use-case synchronization, due at once, in the transaction that
/// inserts the company. A trigger on `empresas` did this until issue 23: a table read across
/// companies must not write others by trigger on a distributed database (docs/scaling.md).
pub(crate) fn schedule_first_sync(conn: &mut PgConnection, company: Uuid) -> QueryResult<usize> {
    diesel::insert_into(agenda_sincronizacao::table)
        .values(agenda_sincronizacao::empresa_id.eq(company))
        .on_conflict_do_nothing()
        .execute(conn)
}

/// [`CompanyRepository`] on the `empresas` table.
#[derive(Clone)]
pub struct PgCompanyRepository {
    pool: PgPool,
}

impl PgCompanyRepository {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

impl CompanyRepository for PgCompanyRepository {
    fn create(&self, company: &Company) -> Result<(), CreateCompanyError> {
        const OPERATION: &str = "inserting a company";
        let mut conn = checkout(&self.pool, OPERATION)?;
        match conn.transaction(|conn| {
            diesel::insert_into(empresas::table)
                .values(NewEmpresa::from(company))
                .execute(conn)?;
            schedule_first_sync(conn, company.id.0)
        }) {
            Ok(_) => Ok(()),
            Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info))
                if is_constraint(violated_constraint(&*info).as_deref(), CNPJ_UNIQUE) =>
            {
                Err(CreateCompanyError::DuplicateCnpj)
            }
            Err(e) => Err(query_error(e, OPERATION).into()),
        }
    }

    fn get(&self, id: CompanyId) -> Result<Option<Company>, RepoError> {
        const OPERATION: &str = "reading a company";
        let row = with_conn(&self.pool, OPERATION, |conn| {
            empresas::table
                .find(id.0)
                .select(EmpresaRow::as_select())
                .first(conn)
                .optional()
        })?;
        row.map(EmpresaRow::try_into_domain)
            .transpose()
            .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))
    }

    /// Within one company at a time (issue 21, part 3): `DueSyncs` reads the longest-due
    /// companies without locking them, then `ClaimSync` takes the first one whose schedule is
    /// still due when its row is updated. Two processes that read the same candidate both update
    /// its row: the second waits for the first's commit, finds `proxima_em` moved past `now`
    /// and changes nothing, so it tries its next candidate. `None` when no candidate could be
    /// claimed (none due, or every one read was taken by another process meanwhile: they are
    /// being synchronized).
    fn claim_due_sync(
        &self,
        now: DateTime<Utc>,
        next: DateTime<Utc>,
    ) -> Result<Option<Company>, RepoError> {
        const OPERATION: &str = "claiming a company's scheduled synchronization";
        let row = with_conn(&self.pool, OPERATION, |conn| {
            let candidates = DueSyncs {
                now,
                limit: SYNC_CANDIDATES,
            }
            .load::<CompanyIdRow>(conn)?;
            for candidate in candidates {
                let claimed = ClaimSync {
                    empresa_id: candidate.id,
                    now,
                    next,
                }
                .get_result::<EmpresaRow>(conn)
                .optional()?;
                if claimed.is_some() {
                    return Ok(claimed);
                }
            }
            Ok(None)
        })?;
        row.map(EmpresaRow::try_into_domain)
            .transpose()
            .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))
    }

    fn list(&self) -> Result<Vec<Company>, RepoError> {
        const OPERATION: &str = "listing companies";
        let rows = with_conn(&self.pool, OPERATION, |conn| {
            empresas::table
                .select(EmpresaRow::as_select())
                .order((empresas::criado_em.asc(), empresas::id.asc()))
                .load(conn)
        })?;
        rows.into_iter()
            .map(EmpresaRow::try_into_domain)
            .collect::<anyhow::Result<_>>()
            .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))
    }

    fn controller_profile(&self, id: CompanyId) -> Result<Option<ControllerProfile>, RepoError> {
        let row = with_conn(
            &self.pool,
            "reading a company's controller profile",
            |conn| {
                empresas::table
                    .find(id.0)
                    .select((
                        empresas::controlador_nome,
                        empresas::controlador_endereco,
                        empresas::controlador_contato_dpo,
                    ))
                    .first::<(Option<String>, Option<String>, Option<String>)>(conn)
                    .optional()
            },
        )?;
        // the CLI sets the three together: a row with any of them unset has no profile
        Ok(match row {
            Some((Some(name), Some(address), Some(dpo_contact))) => Some(ControllerProfile {
                name,
                address,
                dpo_contact,
            }),
            _ => None,
        })
    }

    fn set_controller_profile(
        &self,
        id: CompanyId,
        profile: &ControllerProfile,
    ) -> Result<bool, RepoError> {
        let updated = with_conn(
            &self.pool,
            "setting a company's controller profile",
            |conn| {
                diesel::update(empresas::table.find(id.0))
                    .set((
                        empresas::controlador_nome.eq(&profile.name),
                        empresas::controlador_endereco.eq(&profile.address),
                        empresas::controlador_contato_dpo.eq(&profile.dpo_contact),
                    ))
                    .execute(conn)
            },
        )?;
        Ok(updated == 1)
    }
}

/// How many due companies one claim reads: enough that a few processes claiming at once still
/// find one left each.
const SYNC_CANDIDATES: i64 = 16;

statement! {
    /// The companies whose scheduled synchronization is due at `now`, longest due first (along
    /// the schedule's index on `proxima_em`), read without locks.
    struct DueSyncs {
        now: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    "SELECT empresa_id AS id FROM agenda_sincronizacao
WHERE proxima_em <= $now
ORDER BY proxima_em, empresa_id
LIMIT $limit"
}

statement! {
    /// Claims the company's synchronization if it is still due at `now` (re-checked on the row's
    /// latest version under its lock), making it due again at `next`; answers the company.
    struct ClaimSync {
        empresa_id: Uuid as SqlUuid,
        now: DateTime<Utc> as Timestamptz,
        next: DateTime<Utc> as Timestamptz,
    }
    "WITH reivindicada AS (
    UPDATE agenda_sincronizacao SET proxima_em = $next
    WHERE empresa_id = $empresa_id AND proxima_em <= $now
    RETURNING empresa_id
)
SELECT e.id, e.nome, e.cnpj, e.criado_em
FROM empresas e JOIN reivindicada r ON r.empresa_id = e.id"
}
