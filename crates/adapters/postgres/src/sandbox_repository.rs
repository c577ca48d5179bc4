//! [`SandboxRepository`] on `empresas.sandbox_de` and the sandbox companies' rows.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{Array, BigInt, Timestamptz, Uuid as SqlUuid};
use domain::{Cnpj, Company, CompanyId};
use ports::{CreateCompanyError, RepoError, SandboxPurged, SandboxRepository};
use uuid::Uuid;

use crate::company_repository::{schedule_first_sync, CNPJ_UNIQUE};
use crate::conn::{count_u32, is_constraint, violated_constraint, with_conn};
use crate::fixed_sql::statement;
use crate::models::EmpresaRow;
use crate::schema::empresas;
use crate::PgPool;

statement! {
    /// The sandbox company, through the owner's `empresa_criar_sandbox` (issue 36: the service's
    /// role writes no company itself); it refuses a sandbox of a sandbox.
    struct CreateSandbox<'a> {
        id: Uuid as SqlUuid,
        nome: &'a str as diesel::sql_types::Text,
        cnpj: &'a str as diesel::sql_types::Text,
        criado_em: DateTime<Utc> as Timestamptz,
        real: Uuid as SqlUuid,
    }
    "SELECT empresa_criar_sandbox($id, $nome, $cnpj, $criado_em, $real)"
}

/// One sandbox per real company (migration `index_empresas_sandbox_de`).
const ONE_SANDBOX: &str = "empresas_sandbox_de_key";

statement! {
    /// Up to `limit` of the sandbox's requests created before `before`, oldest first along
    /// `solicitacoes_consentimento_empresa_criado_em_idx`, locked (`SKIP LOCKED`: one another
    /// purge or a status check holds is left for the next round).
    struct LockOldRequests {
        empresa_id: Uuid as SqlUuid,
        before: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    "SELECT id FROM solicitacoes_consentimento
WHERE empresa_id = $empresa_id AND criado_em < $before
ORDER BY criado_em, id
LIMIT $limit
FOR UPDATE SKIP LOCKED"
}

statement! {
    /// The sandbox's requests `ids` and their history; their status schedule goes with them
    /// (ON DELETE CASCADE).
    struct DeleteRequests {
        empresa_id: Uuid as SqlUuid,
        ids: Vec<Uuid> as Array<SqlUuid>,
    }
    // the owner's `sandbox_apagar_solicitacoes`, which refuses any company but a sandbox
    // (issue 36: the service's role deletes no request itself); called alone in the SELECT list
    // so that Citus runs it on the sandbox's worker (scripts/citus/distribute.sql), over the
    // connection that locked the rows
    "SELECT sandbox_apagar_solicitacoes($empresa_id, $ids) AS apagadas"
}

/// What [`DeleteRequests`] answers: the requests deleted.
#[derive(QueryableByName)]
struct Deleted {
    #[diesel(sql_type = BigInt)]
    apagadas: i64,
}

statement! {
    /// Up to `limit` of the sandbox's events created before `before` none of whose deliveries is
    /// still pending (a receiver still being retried keeps its event until the delivery ends),
    /// along `webhook_eventos (empresa_id, criado_em, id)`, locked.
    struct LockOldEvents {
        empresa_id: Uuid as SqlUuid,
        before: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    "SELECT ev.id FROM webhook_eventos ev
WHERE ev.empresa_id = $empresa_id AND ev.criado_em < $before
  AND NOT EXISTS (
    SELECT 1 FROM webhook_entregas d
    WHERE d.empresa_id = ev.empresa_id AND d.evento_id = ev.id AND d.status = 'pendente'
  )
ORDER BY ev.criado_em, ev.id
LIMIT $limit
FOR UPDATE SKIP LOCKED"
}

statement! {
    /// The attempts of the deliveries of the events `ids`.
    struct DeleteEventAttempts {
        empresa_id: Uuid as SqlUuid,
        ids: Vec<Uuid> as Array<SqlUuid>,
    }
    "DELETE FROM webhook_tentativas t USING webhook_entregas d
WHERE t.empresa_id = $empresa_id AND t.entrega_id = d.id
  AND d.empresa_id = $empresa_id AND d.evento_id = ANY ($ids)"
}

statement! {
    /// The deliveries of the events `ids`.
    struct DeleteEventDeliveries {
        empresa_id: Uuid as SqlUuid,
        ids: Vec<Uuid> as Array<SqlUuid>,
    }
    "DELETE FROM webhook_entregas WHERE empresa_id = $empresa_id AND evento_id = ANY ($ids)"
}

statement! {
    /// The events `ids`.
    struct DeleteEvents {
        empresa_id: Uuid as SqlUuid,
        ids: Vec<Uuid> as Array<SqlUuid>,
    }
    "DELETE FROM webhook_eventos WHERE empresa_id = $empresa_id AND id = ANY ($ids)"
}

statement! {
    /// Up to `limit` of the sandbox's records of reads of personal data from before `before`.
    struct PurgeSandboxAccesses {
        empresa_id: Uuid as SqlUuid,
        before: DateTime<Utc> as Timestamptz,
        limit: i64 as BigInt,
    }
    "WITH alvo AS MATERIALIZED (
    SELECT id FROM acessos_dados_pessoais
    WHERE empresa_id = $empresa_id AND em < $before
    ORDER BY em
    LIMIT $limit
    FOR UPDATE SKIP LOCKED
)
DELETE FROM acessos_dados_pessoais a
USING alvo
WHERE a.empresa_id = $empresa_id AND a.id = alvo.id"
}

#[derive(QueryableByName)]
struct IdRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
}

/// [`SandboxRepository`] on PostgreSQL.
#[derive(Clone)]
pub struct PgSandboxRepository {
    pool: PgPool,
}

impl PgSandboxRepository {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

fn company(row: Option<EmpresaRow>, operation: &'static str) -> Result<Option<Company>, RepoError> {
    row.map(EmpresaRow::try_into_domain)
        .transpose()
        .map_err(|e| RepoError::Unexpected(e.context(operation)))
}

impl SandboxRepository for PgSandboxRepository {
    fn sandbox_of(&self, real: CompanyId) -> Result<Option<Company>, RepoError> {
        const OPERATION: &str = "reading a company's sandbox";
        let row = with_conn(&self.pool, OPERATION, |conn| {
            empresas::table
                .filter(empresas::sandbox_de.eq(real.0))
                .select(EmpresaRow::as_select())
                .first(conn)
                .optional()
        })?;
        company(row, OPERATION)
    }

    fn create_sandbox(
        &self,
        real: CompanyId,
        sandbox: &Company,
    ) -> Result<Company, CreateCompanyError> {
        const OPERATION: &str = "creating a company's sandbox";
        let inserted = with_conn(&self.pool, OPERATION, |conn| {
            match conn.transaction(|conn| {
                CreateSandbox {
                    id: sandbox.id.0,
                    nome: &sandbox.name,
                    cnpj: sandbox.cnpj.as_str(),
                    criado_em: sandbox.created_at,
                    real: real.0,
                }
                .execute(conn)?;
                schedule_first_sync(conn, sandbox.id.0)
            }) {
                Ok(_) => Ok(Ok(())),
                Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info)) => {
                    Ok(Err(violated_constraint(&*info)))
                }
                Err(e) => Err(e),
            }
        })?;
        match inserted {
            Ok(()) => Ok(sandbox.clone()),
            Err(Some(name)) if is_constraint(Some(&name), ONE_SANDBOX) => {
                self.sandbox_of(real)?.ok_or_else(|| {
                    RepoError::Unexpected(anyhow::anyhow!("{OPERATION}: the sandbox vanished"))
                        .into()
                })
            }
            Err(Some(name)) if is_constraint(Some(&name), CNPJ_UNIQUE) => {
                Err(CreateCompanyError::DuplicateCnpj)
            }
            Err(_) => Err(RepoError::Unexpected(anyhow::anyhow!(
                "{OPERATION}: an unexpected unique violation"
            ))
            .into()),
        }
    }

    fn real_company_of(&self, id: CompanyId) -> Result<Option<CompanyId>, RepoError> {
        const OPERATION: &str = "reading whether a company is a sandbox";
        let real = with_conn(&self.pool, OPERATION, |conn| {
            empresas::table
                .find(id.0)
                .select(empresas::sandbox_de)
                .first::<Option<Uuid>>(conn)
                .optional()
        })?;
        Ok(real.flatten().map(CompanyId))
    }

    fn is_sandbox_cnpj(&self, cnpj: &Cnpj) -> Result<bool, RepoError> {
        const OPERATION: &str = "reading whether a CNPJ is a sandbox's";
        let real = with_conn(&self.pool, OPERATION, |conn| {
            empresas::table
                .filter(empresas::cnpj.eq(cnpj.as_str()))
                .select(empresas::sandbox_de)
                .first::<Option<Uuid>>(conn)
                .optional()
        })?;
        Ok(matches!(real, Some(Some(_))))
    }

    fn sandboxes_after(
        &self,
        after: Option<CompanyId>,
        limit: u32,
    ) -> Result<Vec<CompanyId>, RepoError> {
        const OPERATION: &str = "listing the sandbox companies";
        let ids = with_conn(&self.pool, OPERATION, |conn| {
            let mut query = empresas::table
                .filter(empresas::sandbox_de.is_not_null())
                .select(empresas::id)
                .order(empresas::id.asc())
                .limit(i64::from(limit))
                .into_boxed();
            if let Some(after) = after {
                query = query.filter(empresas::id.gt(after.0));
            }
            query.load::<Uuid>(conn)
        })?;
        Ok(ids.into_iter().map(CompanyId).collect())
    }

    /// Three short transactions, each scoped to the sandbox: its requests (history first),
    /// its events (attempts and deliveries first), its records of reads. A real company's id
    /// purges nothing: the first statement checks the flag.
    fn purge_sandbox(
        &self,
        sandbox: CompanyId,
        before: DateTime<Utc>,
        limit: u32,
    ) -> Result<SandboxPurged, RepoError> {
        const OPERATION: &str = "purging a sandbox's old data";
        if self.real_company_of(sandbox)?.is_none() {
            return Ok(SandboxPurged::default());
        }
        let empresa_id = sandbox.0;
        let limit = i64::from(limit);
        let requests = with_conn(&self.pool, OPERATION, |conn| {
            conn.transaction(|conn| {
                let ids: Vec<Uuid> = LockOldRequests {
                    empresa_id,
                    before,
                    limit,
                }
                .load::<IdRow>(conn)?
                .into_iter()
                .map(|r| r.id)
                .collect();
                if ids.is_empty() {
                    return Ok(0);
                }
                DeleteRequests { empresa_id, ids }
                    .get_result::<Deleted>(conn)
                    .map(|d| usize::try_from(d.apagadas).unwrap_or(0))
            })
        })?;
        let events = with_conn(&self.pool, OPERATION, |conn| {
            conn.transaction(|conn| {
                let ids: Vec<Uuid> = LockOldEvents {
                    empresa_id,
                    before,
                    limit,
                }
                .load::<IdRow>(conn)?
                .into_iter()
                .map(|r| r.id)
                .collect();
                if ids.is_empty() {
                    return Ok(0);
                }
                DeleteEventAttempts {
                    empresa_id,
                    ids: ids.clone(),
                }
                .execute(conn)?;
                DeleteEventDeliveries {
                    empresa_id,
                    ids: ids.clone(),
                }
                .execute(conn)?;
                DeleteEvents { empresa_id, ids }.execute(conn)
            })
        })?;
        let accesses = with_conn(&self.pool, OPERATION, |conn| {
            PurgeSandboxAccesses {
                empresa_id,
                before,
                limit,
            }
            .execute(conn)
        })?;
        Ok(SandboxPurged {
            requests: count_u32(requests),
            events: count_u32(events),
            accesses: count_u32(accesses),
        })
    }
}
