use chrono::{DateTime, Utc};
use domain::{CompanyId, ConsentRequest, ConsentStatus, Cpf, StatusChange, TransitionCause};
use uuid::Uuid;

use crate::RepoError;

/// A stored request with its history, oldest change first (creation is the first entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentRequestRecord {
    pub request: ConsentRequest,
    pub historico: Vec<StatusChange>,
}

/// Filters of the list; `None` = no filter. All are combined with AND.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsentFilter {
    /// Effective status at the `now` passed to `list`: `ativo` excludes requests whose expiry
    /// passed, `expirado` includes `pendente`/`ativo` requests whose expiry passed.
    pub status: Option<ConsentStatus>,
    pub caso_de_uso_id_template: Option<String>,
    pub cpf_titular: Option<Cpf>,
    /// Created at or after.
    pub criado_de: Option<DateTime<Utc>>,
    /// Created strictly before.
    pub criado_ate: Option<DateTime<Utc>>,
}

/// Keyset position: the list is ordered by (criado_em, id) ascending and resumes strictly after
/// this pair, so pages never repeat or skip rows even while new requests are created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListCursor {
    pub criado_em: DateTime<Utc>,
    pub id: Uuid,
}

/// A request claimed for a status check with the PGCC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusCheckItem {
    pub id: Uuid,
    pub empresa_id: CompanyId,
    pub pgcc_id: String,
    pub status: ConsentStatus,
}

/// Every read is scoped by the company; the worker operations span companies by design.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait ConsentRequestRepository: Send + Sync {
    /// Stores a consent request created on the PGCC, and its creation as the first history entry
    /// (`de: None`, `para: request.status`, cause `empresa`), in one transaction.
    ///
    /// Outbox: in the same transaction, writes `WebhookEvent::consent(EventType::SolicitacaoCriada, request, request.criado_em)` and one pending delivery per webhook URL of
    /// the company that is neither removed nor disabled (crates/ports/src/webhook_delivery_repository.rs).
    fn insert(&self, request: &ConsentRequest) -> Result<(), RepoError>;

    /// The company's request `id` with its history; `None` if absent or another company's.
    fn get(&self, empresa: CompanyId, id: Uuid) -> Result<Option<ConsentRequestRecord>, RepoError>;

    /// At most `limit` of the company's requests matching `filter`, ordered by (criado_em, id),
    /// strictly after `after` when given.
    fn list(
        &self,
        empresa: CompanyId,
        filter: &ConsentFilter,
        after: Option<ListCursor>,
        limit: u32,
        now: DateTime<Utc>,
    ) -> Result<Vec<ConsentRequest>, RepoError>;

    /// The company's request for this subject and template that is valid at `now` (`ativo` and
    /// expiring after `now`); if several, the one expiring last.
    fn find_valid(
        &self,
        empresa: CompanyId,
        cpf: &Cpf,
        caso_de_uso_id_template: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<ConsentRequest>, RepoError>;

    /// The company's request with this hash.
    fn find_by_hash(
        &self,
        empresa: CompanyId,
        hash: &str,
    ) -> Result<Option<ConsentRequest>, RepoError>;

    /// Compare-and-set: moves the company's request `id` from `from` to `to` and appends the
    /// history entry, in one transaction. `false` (nothing changed) when the stored status is no
    /// longer `from` (another process moved it first) or the request is absent.
    ///
    /// Outbox: in the same transaction, writes `WebhookEvent::consent(EventType::for_transition(to), <the updated request>, at)` and one pending delivery per webhook URL of
    /// the company that is neither removed nor disabled (crates/ports/src/webhook_delivery_repository.rs).
    fn transition(
        &self,
        empresa: CompanyId,
        id: Uuid,
        from: ConsentStatus,
        to: ConsentStatus,
        cause: TransitionCause,
        at: DateTime<Utc>,
    ) -> Result<bool, RepoError>;

    /// Claims up to `limit` `pendente`/`ativo` requests (any company) due for a status check
    /// (next check at or before `now`), oldest due first, and pushes their next check to
    /// `next_check_at`, in one statement with `FOR UPDATE SKIP LOCKED`: two workers never
    /// claim the same request in the same round.
    fn claim_for_status_check(
        &self,
        limit: u32,
        now: DateTime<Utc>,
        next_check_at: DateTime<Utc>,
    ) -> Result<Vec<StatusCheckItem>, RepoError>;

    /// Moves up to `limit` `pendente`/`ativo` requests (any company) whose expiry is at or before
    /// `now` to `expirado`, each with its history entry (cause `expiracao`), in one transaction
    /// with `FOR UPDATE SKIP LOCKED`. Returns how many moved.
    ///
    /// Outbox: in the same transaction, writes for each moved request `WebhookEvent::consent(SolicitacaoExpirada, <it, updated>, now)` and one pending delivery per webhook URL of
    /// the company that is neither removed nor disabled (crates/ports/src/webhook_delivery_repository.rs).
    fn expire_due(&self, now: DateTime<Utc>, limit: u32) -> Result<u32, RepoError>;
}
