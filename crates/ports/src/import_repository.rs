//! The bulk imports (docs/imports.md): the file's staged lines, its errors by line, and the
//! queue the import worker registers from.

use chrono::{DateTime, Utc};
use domain::{
    CompanyId, ConsentRequestDraft, CreationVariant, Import, ImportLineError, ValidImportLine,
};
use uuid::Uuid;

use crate::RepoError;

/// A valid line to stage, under the consent request id fixed for it now (the PGCC's
/// `referenciaExterna`: a line registered again after a crash is the same creation).
#[derive(Debug, Clone)]
pub struct StagedLine {
    pub line: u64,
    pub request_id: Uuid,
    pub valid: ValidImportLine,
}

/// A staged line refused because an earlier line holds one of its keys: not staged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TakenExternalId {
    /// The line refused.
    pub line: u64,
    /// Which of its keys is held.
    pub key: TakenKey,
    /// The import and line that hold it.
    pub holder_import: Uuid,
    pub holder_line: u64,
}

/// The key of a staged line that an earlier line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TakenKey {
    /// `idExterno`: unique per company, across every import.
    ExternalId,
    /// `pgccId`: once per file (a second line naming the same consent on the PGCC would be
    /// claimed beside the first and fail at its confirmation; docs/imports.md).
    PgccId,
}

/// The lines that stand between an import registering and its end (`fimEstimado`;
/// docs/imports.md, "Status").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportBacklog {
    /// The import's own lines still to register.
    pub left: u64,
    /// Lines still to register of the company's imports registering before this one (older).
    pub ahead: u64,
    /// Lines still to register of each other company with an import registering.
    pub others: Vec<u64>,
}

/// A line claimed for registration until its lease ends.
#[derive(Debug, Clone)]
pub struct ClaimedLine {
    pub company_id: CompanyId,
    pub import_id: Uuid,
    pub line: u64,
    pub request_id: Uuid,
    pub variant: CreationVariant,
    pub pgcc_id: Option<String>,
    pub draft: ConsentRequestDraft,
    /// Evidence files to link to the request once created (`arquivosSha256`).
    pub evidence_sha256: Vec<String>,
}

/// How a claimed line ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineOutcome {
    Registered,
    /// Refused: the field and message go to the import's errors.
    Failed {
        field: String,
        message: String,
    },
}

#[cfg_attr(feature = "mock", mockall::automock)]
pub trait ImportRepository: Send + Sync {
    /// A new import, `validando`.
    fn create(&self, company: CompanyId, id: Uuid, now: DateTime<Utc>) -> Result<(), RepoError>;

    /// Stages valid lines; those whose `idExterno` the company holds already (in this import or
    /// an earlier one), or whose `pgccId` an earlier line of this import holds, are not staged
    /// and come back.
    fn stage(
        &self,
        company: CompanyId,
        import: Uuid,
        lines: &[StagedLine],
    ) -> Result<Vec<TakenExternalId>, RepoError>;

    /// Records broken rules by line and field.
    fn record_errors(
        &self,
        company: CompanyId,
        import: Uuid,
        errors: &[ImportLineError],
    ) -> Result<(), RepoError>;

    /// The whole file was read: its counts are stored, and it goes on `registrando`, or ends
    /// `concluida` (with its `importacao.concluida` event) when no line was valid.
    fn finish_validation(
        &self,
        company: CompanyId,
        import: Uuid,
        lines: u64,
        failed: u64,
        now: DateTime<Utc>,
    ) -> Result<Import, RepoError>;

    /// Drops an import whose file broke a limit: nothing of it stays.
    fn discard(&self, company: CompanyId, import: Uuid) -> Result<(), RepoError>;

    /// The company's import, with its counts.
    fn get(&self, company: CompanyId, import: Uuid) -> Result<Option<Import>, RepoError>;

    /// The company's imports, newest first, at most `limit`, those created before import
    /// `before` when given (the next page of the console's list).
    fn list(
        &self,
        company: CompanyId,
        before: Option<Uuid>,
        limit: u32,
    ) -> Result<Vec<Import>, RepoError>;

    /// What stands between the company's import `import` and its end: its lines left, the
    /// company's older imports' and every other company's, among the imports registering.
    fn backlog(&self, company: CompanyId, import: Uuid) -> Result<ImportBacklog, RepoError>;

    /// The company's consent request holding `pgcc_id`, if any: a `pgccId` line naming a
    /// consent the company holds already is a line error, not a second row.
    fn request_holding(&self, company: CompanyId, pgcc_id: &str)
        -> Result<Option<Uuid>, RepoError>;

    /// At most `limit` of the import's errors in line order, after `(line, order)` when given.
    fn errors(
        &self,
        company: CompanyId,
        import: Uuid,
        after: Option<(u64, u64)>,
        limit: u32,
    ) -> Result<Vec<(u64, ImportLineError)>, RepoError>;

    /// Cancels the import: no further line is registered (a line being registered now ends as
    /// it does); its lines are cleared later by [`Self::clear_cancelled_lines`]. `None`: no
    /// such import. An import already ended is returned as it is.
    fn cancel(
        &self,
        company: CompanyId,
        import: Uuid,
        now: DateTime<Utc>,
    ) -> Result<Option<Import>, RepoError>;

    /// Clears up to `limit` lines of one cancelled import (state `cancelada`, data dropped),
    /// skipping lines under a live lease; the number cleared (0: none left anywhere).
    fn clear_cancelled_lines(&self, now: DateTime<Utc>, limit: u32) -> Result<u64, RepoError>;

    /// The companies with an import `registrando`.
    fn companies_registering(&self) -> Result<Vec<CompanyId>, RepoError>;

    /// Claims the company's next pending line (in import and file order) until `lease_until`;
    /// a line whose lease ended (its worker died) is claimed again.
    fn claim_line(
        &self,
        company: CompanyId,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
    ) -> Result<Option<ClaimedLine>, RepoError>;

    /// Settles a claimed line and counts it; the import's last line ends it `concluida` with
    /// its `importacao.concluida` event, in the same transaction.
    fn settle_line(
        &self,
        line: &ClaimedLine,
        outcome: &LineOutcome,
        now: DateTime<Utc>,
    ) -> Result<(), RepoError>;
}
