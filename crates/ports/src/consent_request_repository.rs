use chrono::{DateTime, Utc};
use domain::{
    Cnpj, CompanyId, ConsentRequest, ConsentStatus, Cpf, ImportProvenance, Reason, StatusChange,
    TransitionCause,
};
use uuid::Uuid;

use crate::RepoError;

/// A stored request with its history, oldest change first (creation is the first entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentRequestRecord {
    pub request: ConsentRequest,
    pub history: Vec<StatusChange>,
    /// Where it came from, when it was imported (docs/imports.md, "Provenance"); `None` for a
    /// consent created through the API. Read by [`ConsentRequestRepository::get`] (the record
    /// and the receipt); the subject's export leaves it `None`.
    pub provenance: Option<ImportProvenance>,
}

/// How many of a company's confirmed requests were created on one day (UTC) under one template,
/// by their stored status: a cell of the console's counts over time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DailyCount {
    pub day: chrono::NaiveDate,
    pub template_id: String,
    pub status: ConsentStatus,
    pub count: u64,
}

/// A company's requests at a glance (the console's home page, issue 38 part 6). Each figure is
/// a capped count: at most the cap asked plus one, so a figure past the cap says "more than the
/// cap" and its read never grows with the company's rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestSummary {
    /// Confirmed requests by their effective status at `now` (a pending or active request whose
    /// expiry passed counts as expired, as the list's status filter does), in
    /// [`ConsentStatus`] order: pending, active, refused, expired, revoked.
    pub by_status: Vec<(ConsentStatus, u64)>,
    /// Active consents whose expiry falls in `[now, now + 30 days)`.
    pub expiring_in_30_days: u64,
    /// Revocations (status changes to `revogado`) in `[now - 7 days, now]`.
    pub revoked_in_7_days: u64,
    /// Requests with an integrity incident (issue 36: confirmed, and the PGCC does not know them).
    pub integrity_incidents: u64,
    /// The index entries the counts read (the sum of the figures): what the caller charges.
    pub rows_read: u64,
}

/// Filters of the list; `None` = no filter. All are combined with AND.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsentFilter {
    /// Effective status at the `now` passed to `list`: `ativo` excludes requests whose expiry
    /// passed, `expirado` includes `pendente`/`ativo` requests whose expiry passed.
    pub status: Option<ConsentStatus>,
    pub template_id: Option<String>,
    pub subject_cpf: Option<Cpf>,
    /// Created at or after.
    pub created_from: Option<DateTime<Utc>>,
    /// Created strictly before.
    pub created_until: Option<DateTime<Utc>>,
    /// Last changed (created, or its status changed) at or after: catching up after an outage.
    pub updated_from: Option<DateTime<Utc>>,
    /// Last changed strictly before.
    pub updated_until: Option<DateTime<Utc>>,
    /// Only requests whose use case has a newer version than the one they were created under
    /// (`versaoDesatualizada=true`); `false` is no filter.
    pub outdated_version: bool,
    /// Only imported requests of this `origem` (exact match).
    pub origin: Option<String>,
}

/// Keyset position: the list is ordered by (criado_em, id) ascending and resumes strictly after
/// this pair, so pages never repeat or skip rows even while new requests are created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListCursor {
    pub created_at: DateTime<Utc>,
    pub id: Uuid,
}

/// Where the creation of a stored request stands. Only [`CreationRecord::Confirmed`] requests are consents: every
/// read, list, lookup and worker of this port ignores the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreationRecord {
    /// Stored before the PGCC was asked; not (yet) known to hold on the PGCC. The request as
    /// stored, with an empty `pgcc_id` (boxed: the other variants are small).
    InProgress(Box<ConsentRequest>),
    /// The PGCC holds it, under this id.
    Confirmed { pgcc_id: String },
    /// The PGCC refused it, or did not hold it when the reconciler asked.
    Cancelled,
}

/// What [`ConsentRequestRepository::begin_creation`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreationStart {
    /// The row is stored `em_andamento` and stamped with this attempt: ask the PGCC now,
    /// under `link`, the PGCC link of the company's live use case for the template (`None`: it
    /// has none, or the use case was removed since a first attempt stored the request).
    Started { link: Option<Uuid> },
    /// No live use case of the company has the request's template and no request with this id
    /// is stored: nothing was stored.
    UnknownTemplate,
    /// A request with this id is already confirmed: nothing changed, nothing to ask.
    AlreadyConfirmed { pgcc_id: String },
}

/// What [`ConsentRequestRepository::confirm_creation`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmation {
    /// Confirmed now, with its creation history entry and its `solicitacao.criada` event.
    Confirmed,
    /// Another process confirmed it first (with this PGCC id); nothing written.
    AlreadyConfirmed { pgcc_id: String },
    /// No such request for the company.
    Missing,
}

/// An unfinished creation claimed by the reconciler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnfinishedCreation {
    pub id: Uuid,
    pub company_id: CompanyId,
    /// The company's CNPJ, to ask the PGCC by external reference.
    pub company_cnpj: Cnpj,
    /// The instant the claim stamped on the row: pass it back to
    /// [`ConsentRequestRepository::cancel_creation`].
    pub claimed_at: DateTime<Utc>,
    /// When the PGCC first answered that it holds no request under our id (`None`: it has not
    /// yet, or the creation was attempted again since). The reconciler cancels only once the
    /// "not found" answers span its window: a PGCC may commit a creation after answering us.
    pub not_found_since: Option<DateTime<Utc>>,
    /// The request as stored (an empty `pgcc_id`): what
    /// [`ConsentRequestRepository::confirm_creation`] confirms when the PGCC holds it.
    pub request: Box<ConsentRequest>,
}

/// Every read is scoped by the company; the worker operations span companies by design.
///
/// Creation is two-phase (docs/decisions.md, "No consent lost or duplicated"): `begin_creation`
/// stores the request `em_andamento` before the PGCC is asked; `confirm_creation` or
/// `cancel_creation` settle it. Every other operation sees confirmed requests only. When each
/// confirmed request's status is checked next is a port of its own,
/// [`crate::StatusCheckSchedule`].
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait ConsentRequestRepository: Send + Sync {
    /// First phase of a creation: stores `request` as `em_andamento` (no PGCC id: `pgcc_id` is
    /// ignored; no history, no event) with `attempt_at` as its last attempt, under the
    /// company's live use case for its template, looked up in the same round trip (none:
    /// `UnknownTemplate`, nothing stored). If a request with
    /// this id already exists for the company (a retry under the same idempotency key), it is
    /// taken over instead (back to `em_andamento` if it was cancelled, stamped with `attempt_at`;
    /// its stored content is kept), unless it is confirmed: then nothing changes and the PGCC id
    /// is returned. An id that exists for another company is `Unexpected`.
    fn begin_creation(
        &self,
        request: &ConsentRequest,
        attempt_at: DateTime<Utc>,
    ) -> Result<CreationStart, RepoError>;

    /// Second phase: the PGCC holds `stored` under `pgcc_id`. `stored` is the request as
    /// stored by `begin_creation` (as the caller passed it, or as `find_creation` or
    /// `claim_unfinished_creations` read it back). Moves it from `em_andamento` or `cancelada`
    /// (the PGCC's word beats our guess) to `confirmada` with `pgcc_id`, due for a status check
    /// at `at`, and writes its creation as the first history entry (`de: None`, `para: status`,
    /// at `criado_em`, cause `empresa`) and, in the same transaction, the outbox event
    /// `WebhookEvent::consent(EventType::RequestCreated, <the confirmed request>, criado_em)`
    /// with one pending delivery per active webhook URL of the company. If the stored row no
    /// longer holds `stored`'s content, it is confirmed from its content as stored.
    fn confirm_creation(
        &self,
        stored: &ConsentRequest,
        pgcc_id: &str,
        at: DateTime<Utc>,
    ) -> Result<Confirmation, RepoError>;

    /// Moves an `em_andamento` request to `cancelada`, only if its last attempt is still
    /// `attempt_at` (nobody attempted or claimed it since): `false` otherwise, nothing changed.
    fn cancel_creation(
        &self,
        company: CompanyId,
        id: Uuid,
        attempt_at: DateTime<Utc>,
    ) -> Result<bool, RepoError>;

    /// Records on an `em_andamento` request that the PGCC answered, at `at`, that it holds none
    /// under our id, unless a first such answer is recorded already (the first one is kept), and
    /// only if its last attempt is still `attempt_at` (a retry since starts the count again):
    /// `false` otherwise, nothing changed.
    fn record_creation_not_found(
        &self,
        company: CompanyId,
        id: Uuid,
        attempt_at: DateTime<Utc>,
        at: DateTime<Utc>,
    ) -> Result<bool, RepoError>;

    /// The company's request `id` whatever its creation state; `None` if absent or another
    /// company's.
    fn find_creation(
        &self,
        company: CompanyId,
        id: Uuid,
    ) -> Result<Option<CreationRecord>, RepoError>;

    /// Claims up to `limit` `em_andamento` requests (any company) whose last attempt is at or
    /// before `attempted_before`, oldest first, stamping `now` as their last attempt, in one
    /// statement with `FOR UPDATE SKIP LOCKED`: two reconcilers never claim the same request, and
    /// a claimed request is not claimed again before another grace has passed. `begin_creation`
    /// forgets a recorded "not found" (a new attempt may create it).
    fn claim_unfinished_creations(
        &self,
        limit: u32,
        attempted_before: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Vec<UnfinishedCreation>, RepoError>;

    /// The company's request `id` with its history; `None` if absent or another company's.
    fn get(&self, company: CompanyId, id: Uuid) -> Result<Option<ConsentRequestRecord>, RepoError>;

    /// Every request of the company for the subject `cpf` (an LGPD art. 18 access request),
    /// each with its history, ordered by (criado_em, id), at most `limit`, strictly after
    /// `after` when given. Requests and histories are read in one snapshot, so each history
    /// matches its request's stored status.
    fn list_of_subject(
        &self,
        company: CompanyId,
        cpf: &Cpf,
        after: Option<ListCursor>,
        limit: u32,
    ) -> Result<Vec<ConsentRequestRecord>, RepoError>;

    /// The company's confirmed requests created in `[from, until)`, counted by day of creation
    /// (UTC), template and stored status. One index range of the company's creations: its cost
    /// follows the requests of the period (callers bound the period).
    fn counts_by_day(
        &self,
        company: CompanyId,
        from: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Vec<DailyCount>, RepoError>;

    /// The company's [`RequestSummary`] at `now`, each count capped at `cap + 1`: a handful of
    /// index ranges (docs/console.md, "The home page's reads"), never the company's rows.
    fn summary(
        &self,
        company: CompanyId,
        now: DateTime<Utc>,
        cap: u32,
    ) -> Result<RequestSummary, RepoError>;

    /// At most `limit` of the company's requests matching `filter`, ordered by (criado_em, id),
    /// strictly after `after` when given.
    fn list(
        &self,
        company: CompanyId,
        filter: &ConsentFilter,
        after: Option<ListCursor>,
        limit: u32,
        now: DateTime<Utc>,
    ) -> Result<Vec<ConsentRequest>, RepoError>;

    /// The company's request for this subject and template that is valid at `now` (`ativo` and
    /// expiring after `now`); if several, the one expiring last.
    fn find_valid(
        &self,
        company: CompanyId,
        cpf: &Cpf,
        template_id: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<ConsentRequest>, RepoError>;

    /// [`ConsentRequestRepository::find_valid`] for each `(cpf, template)` of `subjects`, in
    /// their order, in one statement (a batch check: one round trip and one statement timeout
    /// for all of them, whatever their number).
    fn find_valid_many(
        &self,
        company: CompanyId,
        subjects: &[(Cpf, String)],
        now: DateTime<Utc>,
    ) -> Result<Vec<Option<ConsentRequest>>, RepoError>;

    /// The company's request with this hash.
    fn find_by_hash(
        &self,
        company: CompanyId,
        hash: &str,
    ) -> Result<Option<ConsentRequest>, RepoError>;

    /// Compare-and-set: moves the company's request `id` from `from` to `to` and appends the
    /// history entry (with `motivo`, the reason given, if any), in one transaction. `false`
    /// (nothing changed) when the stored status is no longer `from` (another process moved it
    /// first) or the request is absent.
    ///
    /// Outbox: in the same transaction, writes `WebhookEvent::consent(EventType::for_transition(to), <the updated request>, at).with_reason(motivo)` and one pending delivery per webhook URL of
    /// the company that is neither removed nor disabled and takes that event type (crates/ports/src/webhook_delivery_repository.rs).
    #[allow(clippy::too_many_arguments)]
    fn transition(
        &self,
        company: CompanyId,
        id: Uuid,
        from: ConsentStatus,
        to: ConsentStatus,
        cause: TransitionCause,
        reason: Option<Reason>,
        at: DateTime<Utc>,
    ) -> Result<bool, RepoError>;

    /// Moves up to `limit` `pendente`/`ativo` requests (any company) whose expiry is at or before
    /// `now` to `expirado`, each with its history entry (cause `expiracao`), in one transaction
    /// with `FOR UPDATE SKIP LOCKED`. Returns how many moved.
    ///
    /// Outbox: in the same transaction, writes for each moved request
    /// `WebhookEvent::consent(EventType::RequestExpired, <it, updated>, now)` and one pending
    /// delivery per webhook URL of the company that is neither removed nor disabled (see
    /// [`crate::WebhookDeliveryRepository`]).
    fn expire_due(&self, now: DateTime<Utc>, limit: u32) -> Result<u32, RepoError>;
}
