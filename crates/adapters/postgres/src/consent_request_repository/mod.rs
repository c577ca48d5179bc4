//! [`PgConsentRequestRepository`]: one file per seam of the port, as its tests are split.
//!
//! - `creation.rs`: the two-phase creation (begin, confirm, cancel, the reconciler's claims).
//! - `reads.rs`: what the API reads (one request with its history, the list, the HashConsulta
//!   lookups); `subject_records.rs`: a subject's requests with their histories (the export).
//! - `lifecycle.rs`: status changes (transition, expiry). The status poller's schedule is a port
//!   of its own, `crate::status_check_schedule`.
//!
//! The SQL rules that restate the domain's state machine (which statuses are effectively
//! `expirado`, which expire, which the poller claims) are held against it by
//! `tests/consent_request_state_machine.rs`.

mod creation;
mod lifecycle;
mod reads;
mod subject_records;

use chrono::{DateTime, Utc};
use diesel::result::Error as DieselError;
use diesel::QueryResult;
use domain::{CompanyId, ConsentRequest, ConsentStatus, Cpf, Reason, TransitionCause};
use ports::{
    Confirmation, ConsentFilter, ConsentRequestRecord, ConsentRequestRepository, CreationRecord,
    CreationStart, ListCursor, RepoError, UnfinishedCreation,
};
use uuid::Uuid;

use crate::models::SolicitacaoConsentimentoRow;
use crate::per_company::CompanyIdRow;
use crate::topology::Topology;
use crate::{PgPool, ReadPools};

/// [`ConsentRequestRepository`] on `solicitacoes_consentimento` and `solicitacoes_historico`.
/// Every read filters by `empresa_id`; the worker operations span companies. Only confirmed
/// requests (`criacao = 'confirmada'`) are read, listed, moved or claimed for a status check;
/// the creation operations alone see the others.
#[derive(Clone)]
pub struct PgConsentRequestRepository {
    pool: PgPool,
    /// One node or Citus: the confirmation of a creation is written differently on each.
    topology: Topology,
    /// Where the list is read (a replica within the lag bound, else `pool`); every other
    /// operation, get-by-id and HashConsulta included, is on `pool`.
    reads: ReadPools,
}

impl PgConsentRequestRepository {
    pub fn new(pool: PgPool) -> Self {
        Self {
            reads: ReadPools::primary_only(pool.clone()),
            pool,
            topology: Topology::default(),
        }
    }

    /// Writes as on a Citus coordinator (the confirmation of a creation inside a transaction
    /// that names the coordinator's transaction id, `creation.rs`) whatever the database. It is
    /// plain SQL: the tests run it on one node, where CI can (it has no Citus).
    pub fn writing_as_on_citus(self) -> Self {
        self.topology.assume(true);
        self
    }

    /// The list read through `reads` (a replica when one is within its lag bound).
    pub fn reading_from(mut self, reads: ReadPools) -> Self {
        self.reads = reads;
        self
    }
}

impl ConsentRequestRepository for PgConsentRequestRepository {
    fn begin_creation(
        &self,
        request: &ConsentRequest,
        attempt_at: DateTime<Utc>,
    ) -> Result<CreationStart, RepoError> {
        creation::begin(&self.pool, request, attempt_at)
    }

    fn confirm_creation(
        &self,
        stored: &ConsentRequest,
        pgcc_id: &str,
        at: DateTime<Utc>,
    ) -> Result<Confirmation, RepoError> {
        creation::confirm(&self.pool, &self.topology, stored, pgcc_id, at)
    }

    fn cancel_creation(
        &self,
        empresa: CompanyId,
        id: Uuid,
        attempt_at: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        creation::cancel(&self.pool, empresa, id, attempt_at)
    }

    fn record_creation_not_found(
        &self,
        empresa: CompanyId,
        id: Uuid,
        attempt_at: DateTime<Utc>,
        at: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        creation::record_not_found(&self.pool, empresa, id, attempt_at, at)
    }

    fn find_creation(
        &self,
        empresa: CompanyId,
        id: Uuid,
    ) -> Result<Option<CreationRecord>, RepoError> {
        creation::find(&self.pool, empresa, id)
    }

    fn claim_unfinished_creations(
        &self,
        limit: u32,
        attempted_before: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Vec<UnfinishedCreation>, RepoError> {
        creation::claim_unfinished(&self.pool, limit, attempted_before, now)
    }

    fn get(&self, empresa: CompanyId, id: Uuid) -> Result<Option<ConsentRequestRecord>, RepoError> {
        reads::get(&self.pool, empresa, id)
    }

    fn list_of_subject(
        &self,
        company: CompanyId,
        cpf: &Cpf,
        after: Option<ListCursor>,
        limit: u32,
    ) -> Result<Vec<ConsentRequestRecord>, RepoError> {
        subject_records::list_of_subject(&self.pool, company, cpf, after, limit)
    }

    fn counts_by_day(
        &self,
        empresa: CompanyId,
        from: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Vec<ports::DailyCount>, RepoError> {
        reads::counts_by_day(&self.reads, empresa, from, until)
    }

    fn summary(
        &self,
        empresa: CompanyId,
        now: DateTime<Utc>,
        cap: u32,
    ) -> Result<ports::RequestSummary, RepoError> {
        reads::summary(&self.reads, empresa, now, cap)
    }

    fn list(
        &self,
        empresa: CompanyId,
        filter: &ConsentFilter,
        after: Option<ListCursor>,
        limit: u32,
        now: DateTime<Utc>,
    ) -> Result<Vec<ConsentRequest>, RepoError> {
        reads::list(&self.reads, empresa, filter, after, limit, now)
    }

    fn find_valid(
        &self,
        empresa: CompanyId,
        cpf: &Cpf,
        caso_de_uso_id_template: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<ConsentRequest>, RepoError> {
        reads::find_valid(&self.pool, empresa, cpf, caso_de_uso_id_template, now)
    }

    fn find_valid_many(
        &self,
        empresa: CompanyId,
        subjects: &[(Cpf, String)],
        now: DateTime<Utc>,
    ) -> Result<Vec<Option<ConsentRequest>>, RepoError> {
        reads::find_valid_many(&self.pool, empresa, subjects, now)
    }

    fn find_by_hash(
        &self,
        empresa: CompanyId,
        hash: &str,
    ) -> Result<Option<ConsentRequest>, RepoError> {
        reads::find_by_hash(&self.pool, empresa, hash)
    }

    #[allow(clippy::too_many_arguments)]
    fn transition(
        &self,
        empresa: CompanyId,
        id: Uuid,
        from: ConsentStatus,
        to: ConsentStatus,
        cause: TransitionCause,
        motivo: Option<Reason>,
        at: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        lifecycle::transition(
            &self.pool,
            lifecycle::Change {
                empresa,
                id,
                from,
                to,
                cause,
                motivo,
                at,
            },
        )
    }

    fn expire_due(&self, now: DateTime<Utc>, limit: u32) -> Result<u32, RepoError> {
        lifecycle::expire_due(&self.pool, now, limit)
    }
}

/// A limit from the port as SQL's `bigint`.
fn sql_limit(limit: u32) -> i64 {
    i64::from(limit)
}

fn into_domain(
    row: SolicitacaoConsentimentoRow,
    operation: &'static str,
) -> Result<ConsentRequest, RepoError> {
    row.try_into_domain()
        .map_err(|e| RepoError::Unexpected(e.context(operation)))
}

/// [`SolicitacaoConsentimentoRow::try_into_domain`] inside a transaction: a row the domain
/// refuses aborts it (and is reported as `Unexpected`).
fn into_domain_in_tx(row: SolicitacaoConsentimentoRow) -> QueryResult<ConsentRequest> {
    row.try_into_domain()
        .map_err(|e| DieselError::DeserializationError(e.into()))
}
