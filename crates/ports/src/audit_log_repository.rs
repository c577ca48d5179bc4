//! The companies' verifiable logs (docs/auditoria.md): the entries the changes of consent requests
//! appended (in their own transactions, by the consent-request and retention repositories), the
//! signed checkpoints and the public keys that signed them.

use chrono::{DateTime, Utc};
use domain::CompanyId;
use uuid::Uuid;

/// Where an entry stands in its company's log: entries are in `(transaction, sequence)` order, and
/// an entry's leaf index is its rank in that order once its transaction is older than every
/// running one (so no entry can appear before it later).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LogPosition {
    pub transaction: i64,
    pub sequence: i64,
}

/// One entry of a company's log: its canonical JSON bytes, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub request_id: Uuid,
    pub bytes: Vec<u8>,
    pub position: LogPosition,
}

/// A signed checkpoint of a company's log, as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCheckpoint {
    /// Tree size: the number of entries it covers.
    pub size: u64,
    /// RFC 9162 root hash of those entries.
    pub root: [u8; 32],
    /// The position of its last entry.
    pub last: LogPosition,
    /// The C2SP signed note, as served.
    pub note: String,
    /// The key that signed it.
    pub kid: String,
    pub created_at: DateTime<Utc>,
}

/// A node of a company's stored tree (docs/auditoria.md, "Stored tree"): the root of the perfect
/// subtree of leaves `[index * 2^level, (index + 1) * 2^level)`; level 0 is a leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TreeNode {
    pub level: u8,
    pub index: u64,
}

/// A settled entry's place in the tree: its position and its RFC 9162 leaf hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeafHash {
    pub position: LogPosition,
    pub hash: [u8; 32],
}

/// One of a request's entries with its leaf index, once the stored tree holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedEntry {
    pub entry: AuditEntry,
    pub index: Option<u64>,
}

/// An Ed25519 public key that signs (or signed) checkpoints and receipts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedKey {
    pub kid: String,
    pub public_key: [u8; 32],
    /// A sandbox key (`auditoria.signing_key_sandbox`): it signs only the sandbox companies'
    /// receipts and checkpoints, and nothing of a real company verifies with it.
    pub sandbox: bool,
}

/// An entry with the entry before it of the same request (its bytes; `None` for the request's
/// first), read by key: what the checkpoint job holds the entries it signs to (docs/auditoria.md,
/// "A lawful chain").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedEntry {
    pub entry: AuditEntry,
    pub previous: Option<Vec<u8>>,
}

/// A confirmed request of the company with no entry in its log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnloggedRequest {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    /// Created before the log began (the cut-off its migration recorded): named, not a mismatch.
    pub before_log: bool,
}

/// A confirmed request the PGCC said it does not know for longer than
/// `workers.reconcile_not_found_seconds` (issue 36): HashConsulta never answers it valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntegrityIncident {
    pub request: Uuid,
    pub pgcc_id: String,
    /// The PGCC's first "not found" of the stretch that made it an incident.
    pub not_found_since: DateTime<Utc>,
    /// When the status worker recorded the incident.
    pub recorded_at: DateTime<Utc>,
}

/// Errors: `Unavailable` when the database cannot be reached, `Unexpected` otherwise.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait AuditLogRepository: Send + Sync {
    /// Companies (up to `limit`, in id order) whose log holds settled entries (below the
    /// watermark) past their latest checkpoint.
    fn companies_with_unsigned_entries(&self, limit: u32) -> Result<Vec<CompanyId>, RepoError>;
    /// Companies that have a log, or confirmed requests (which must have one).
    fn companies_with_entries(&self) -> Result<Vec<CompanyId>, RepoError>;
    /// The company's settled entries in log order: up to and including `up_to`, or, without it,
    /// every entry whose transaction is older than every running one.
    fn entries(
        &self,
        company: CompanyId,
        up_to: Option<LogPosition>,
    ) -> Result<Vec<AuditEntry>, RepoError>;
    /// Every entry of the company (settled or not), in log order: what `audit verify` reads.
    fn all_entries(&self, company: CompanyId) -> Result<Vec<AuditEntry>, RepoError>;
    fn latest_checkpoint(&self, company: CompanyId) -> Result<Option<StoredCheckpoint>, RepoError>;
    /// The company's checkpoint of that size, if one was signed.
    fn checkpoint(
        &self,
        company: CompanyId,
        size: u64,
    ) -> Result<Option<StoredCheckpoint>, RepoError>;
    /// Every checkpoint of the company, smallest first.
    fn checkpoints(&self, company: CompanyId) -> Result<Vec<StoredCheckpoint>, RepoError>;
    /// Keeps a checkpoint; `false` when one of that size was kept already (another process
    /// signed the same tree).
    fn add_checkpoint(
        &self,
        company: CompanyId,
        checkpoint: &StoredCheckpoint,
    ) -> Result<bool, RepoError>;
    /// How many leaves the company's stored tree holds, and the position of its last one (`None`
    /// before the first).
    fn stored_tree(&self, company: CompanyId) -> Result<Option<(u64, LogPosition)>, RepoError>;
    /// Up to `limit` settled entries past `after` (from the first without it), in log order:
    /// their positions and leaf hashes, the leaves the stored tree takes next.
    fn leaves_after(
        &self,
        company: CompanyId,
        after: Option<LogPosition>,
        limit: u32,
    ) -> Result<Vec<LeafHash>, RepoError>;
    /// The stored nodes among `ids` (those not stored are left out).
    fn nodes(
        &self,
        company: CompanyId,
        ids: &[TreeNode],
    ) -> Result<Vec<(TreeNode, [u8; 32])>, RepoError>;
    /// Every stored node of one level, by index: what `audit verify` holds against the entries.
    fn level(&self, company: CompanyId, level: u8) -> Result<Vec<(u64, [u8; 32])>, RepoError>;
    /// The position of every stored leaf, by index (`audit verify`).
    fn leaf_positions(&self, company: CompanyId) -> Result<Vec<(u64, LogPosition)>, RepoError>;
    /// The position of stored leaf `index`.
    fn leaf_position(
        &self,
        company: CompanyId,
        index: u64,
    ) -> Result<Option<LogPosition>, RepoError>;
    /// Stores leaves `first_index ..` (their positions, in order) and the nodes they complete,
    /// in one transaction; `false` (nothing stored) when the stored tree no longer holds exactly
    /// `first_index` leaves (another process extended it).
    fn extend_tree(
        &self,
        company: CompanyId,
        first_index: u64,
        leaves: &[LogPosition],
        nodes: &[(TreeNode, [u8; 32])],
    ) -> Result<bool, RepoError>;
    /// The request's entries up to and including `up_to`, in log order, each with its leaf
    /// index when the stored tree holds it.
    fn request_entries(
        &self,
        company: CompanyId,
        request: Uuid,
        up_to: LogPosition,
    ) -> Result<Vec<IndexedEntry>, RepoError>;
    /// The company's entries past `after` (from the first without it) up to and including
    /// `up_to`, in log order, each with its request's previous entry read by key (the checkpoint
    /// job's chain check: the entries it signs, never the whole log).
    fn linked_entries(
        &self,
        company: CompanyId,
        after: Option<LogPosition>,
        up_to: LogPosition,
    ) -> Result<Vec<LinkedEntry>, RepoError>;
    /// Whether the company's request `request` was created before the log began (the cut-off
    /// recorded by migration `2026-12-07-003601_record_auditoria_inicio`).
    fn created_before_log(&self, company: CompanyId, request: Uuid) -> Result<bool, RepoError>;
    /// When the log began (the recorded cut-off), if recorded.
    fn log_began(&self) -> Result<Option<DateTime<Utc>>, RepoError>;
    /// The company's confirmed requests that have no entry (`audit verify`).
    fn unlogged_requests(&self, company: CompanyId) -> Result<Vec<UnloggedRequest>, RepoError>;
    /// The request's last entry (settled or not), by key.
    fn last_entry(
        &self,
        company: CompanyId,
        request: Uuid,
    ) -> Result<Option<AuditEntry>, RepoError>;
    /// The PGCC answered that it does not know the confirmed request: the first such answer is
    /// noted; one at least `window` after the first noted makes it an integrity incident,
    /// recorded once with its `auditoria.incidente` event in one transaction (the incident is
    /// answered then, `None` otherwise).
    fn note_pgcc_not_found(
        &self,
        company: CompanyId,
        request: Uuid,
        now: DateTime<Utc>,
        window: chrono::Duration,
    ) -> Result<Option<IntegrityIncident>, RepoError>;
    /// The PGCC knows these requests again: their noted "not found" is forgotten (a recorded
    /// incident stays).
    fn forget_pgcc_not_found(&self, company: CompanyId, requests: &[Uuid])
        -> Result<(), RepoError>;
    /// The request's integrity incident, if one was recorded.
    fn integrity_incident(
        &self,
        company: CompanyId,
        request: Uuid,
    ) -> Result<Option<IntegrityIncident>, RepoError>;
    /// Every integrity incident of the company, oldest first.
    fn integrity_incidents(&self, company: CompanyId) -> Result<Vec<IntegrityIncident>, RepoError>;
    /// Every key that ever signed, oldest first.
    fn published_keys(&self) -> Result<Vec<PublishedKey>, RepoError>;
    /// Records a signing key's public half (kept if already there).
    fn publish_key(&self, key: &PublishedKey) -> Result<(), RepoError>;
    /// The development key this database keeps: `generated` (with its public half) is kept and
    /// answered when none is kept yet, else the kept seed.
    fn development_seed(
        &self,
        generated: [u8; 32],
        key: &PublishedKey,
    ) -> Result<[u8; 32], RepoError>;
}

use crate::RepoError;
