//! Receiving a file: every line validated (the creation's rules: [`domain::ImportLineDraft`]
//! calls [`domain::ConsentRequestDraft::validate`]), its template checked among the company's
//! use cases, and staged in batches; errors by line and field. Nothing is registered until the
//! whole file was read.

use std::collections::HashSet;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use chrono::{DateTime, Utc};
use domain::import::import_field;
use domain::{CompanyId, FieldError, Import, ImportLineDraft, ImportLineError};
use ports::{
    Clock, ImportRepository, RepoError, StagedLine, TakenExternalId, TakenKey, UseCaseRepository,
};
use uuid::Uuid;

use super::estimate::estimated_seconds;

/// Lines staged (and errors recorded) per statement: a few hundred kilobytes at most.
const BATCH: usize = 1_000;

/// The bounds of one file (`importacao.max_bytes`, `importacao.max_linhas`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportLimits {
    pub max_bytes: u64,
    pub max_lines: u64,
    /// `importacao.pgcc_calls_per_second`: what the end of an import is estimated from (shared
    /// by the companies importing at once: `imports::estimate`).
    pub calls_per_second: u32,
}

impl Default for ImportLimits {
    fn default() -> Self {
        Self {
            max_bytes: 2 * 1024 * 1024 * 1024,
            max_lines: 10_000_000,
            calls_per_second: 10,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// More lines than `importacao.max_linhas`: the import was dropped, nothing created.
    #[error("the file has more than {0} lines")]
    TooManyLines(u64),
    /// No such import for the company.
    #[error("no such import")]
    NotFound,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

/// The imports as the API sees them: receive a file, read its status, its errors, cancel it.
#[derive(Clone)]
pub struct ImportConsents {
    imports: Arc<dyn ImportRepository>,
    use_cases: Arc<dyn UseCaseRepository>,
    clock: Arc<dyn Clock>,
    limits: ImportLimits,
    evidence: Option<crate::EvidenceFiles>,
}

impl ImportConsents {
    pub fn new(
        imports: Arc<dyn ImportRepository>,
        use_cases: Arc<dyn UseCaseRepository>,
        clock: Arc<dyn Clock>,
        limits: ImportLimits,
    ) -> Self {
        Self {
            imports,
            use_cases,
            clock,
            limits,
            evidence: None,
        }
    }

    /// Imports whose lines may name the company's evidence files (`arquivosSha256`).
    pub fn with_evidence(mut self, evidence: crate::EvidenceFiles) -> Self {
        self.evidence = Some(evidence);
        self
    }

    pub fn limits(&self) -> ImportLimits {
        self.limits
    }

    /// A new import for `company`, reading its file: push its lines to the session, then
    /// [`ImportSession::finish`] (or [`ImportSession::abort`] when the file broke a limit).
    pub fn start(&self, company: CompanyId) -> Result<ImportSession, ImportError> {
        let now = self.clock.now();
        let id = Uuid::new_v4();
        // the templates a line may name: the company's synchronized use cases, as creation
        // checks them (`begin_creation`'s "unknown template"), read once per file
        let templates = self
            .use_cases
            .list(company, None)?
            .into_iter()
            .filter_map(|u| u.pgcc_provider_template_id)
            .collect();
        self.imports.create(company, id, now)?;
        Ok(ImportSession {
            imports: self.imports.clone(),
            clock: self.clock.clone(),
            company,
            id,
            now,
            templates,
            max_lines: self.limits.max_lines,
            evidence: self.evidence.clone(),
            staged: Vec::with_capacity(BATCH),
            errors: Vec::new(),
            lines: 0,
            failed: 0,
            writer: Some(Writer::start(self.imports.clone(), company, id)),
        })
    }

    pub fn get(&self, company: CompanyId, id: Uuid) -> Result<Import, ImportError> {
        self.imports.get(company, id)?.ok_or(ImportError::NotFound)
    }

    /// `fimEstimado`: registering, now plus the time the lines ahead of its end take at the
    /// imports' PGCC rate shared round-robin by company (`imports::estimate`; docs/imports.md,
    /// "Status"); ended, when it ended; reading its file, unknown. Reads the backlog of the
    /// imports registering (one row per import registering) only for an import registering.
    pub fn estimated_end(&self, import: &Import) -> Result<Option<DateTime<Utc>>, ImportError> {
        Ok(match import.status {
            domain::ImportStatus::Validando => None,
            domain::ImportStatus::Registrando => {
                let backlog = self.imports.backlog(import.company_id, import.id)?;
                let seconds = estimated_seconds(&backlog, self.limits.calls_per_second);
                let seconds = i64::try_from(seconds).unwrap_or(i64::MAX / 1_000);
                Some(self.clock.now() + chrono::Duration::seconds(seconds))
            }
            domain::ImportStatus::Concluida | domain::ImportStatus::Cancelada => import.finished_at,
        })
    }

    /// The company's imports, newest first: at most `limit`, those created before `before`
    /// when given (an import of another company there is a `NotFound`).
    pub fn list(
        &self,
        company: CompanyId,
        before: Option<Uuid>,
        limit: u32,
    ) -> Result<Vec<Import>, ImportError> {
        if let Some(before) = before {
            self.get(company, before)?;
        }
        Ok(self.imports.list(company, before, limit)?)
    }

    /// A page of the import's errors after `(line, order)`; `Err(NotFound)` for another
    /// company's import.
    pub fn errors(
        &self,
        company: CompanyId,
        id: Uuid,
        after: Option<(u64, u64)>,
        limit: u32,
    ) -> Result<Vec<(u64, ImportLineError)>, ImportError> {
        if after.is_none() {
            self.get(company, id)?;
        }
        Ok(self.imports.errors(company, id, after, limit)?)
    }

    pub fn cancel(&self, company: CompanyId, id: Uuid) -> Result<Import, ImportError> {
        self.imports
            .cancel(company, id, self.clock.now())?
            .ok_or(ImportError::NotFound)
    }
}

/// One file being read.
pub struct ImportSession {
    imports: Arc<dyn ImportRepository>,
    clock: Arc<dyn Clock>,
    company: CompanyId,
    id: Uuid,
    now: DateTime<Utc>,
    templates: HashSet<String>,
    max_lines: u64,
    evidence: Option<crate::EvidenceFiles>,
    staged: Vec<StagedLine>,
    errors: Vec<ImportLineError>,
    lines: u64,
    failed: u64,
    /// Writes the batches while the next is read and validated (`None` once ended).
    writer: Option<Writer>,
}

/// A batch of the file: its valid lines and its broken rules.
type Batch = (Vec<StagedLine>, Vec<ImportLineError>);

/// The thread that stages a file's batches, one at a time and in file order, while the reading
/// thread reads and validates the next: the two overlap, one core each. Reading, validating and
/// writing in turn on one thread staged about 35,000 lines a second (`make bench-import`),
/// PostgreSQL taking three quarters of the time. One batch waits in the channel at most, so
/// memory stays two batches whatever the file's size.
struct Writer {
    sender: SyncSender<Batch>,
    thread: JoinHandle<Result<u64, ImportError>>,
}

impl Writer {
    fn start(imports: Arc<dyn ImportRepository>, company: CompanyId, id: Uuid) -> Self {
        let (sender, receiver) = sync_channel::<Batch>(1);
        let thread = std::thread::Builder::new()
            .name("import-staging".to_owned())
            .spawn(move || write_batches(imports.as_ref(), company, id, receiver))
            .expect("spawning the import's staging thread");
        Self { sender, thread }
    }

    /// Hands a batch over; `Err` is the writer's own failure (it stopped at its first).
    fn send(&mut self, batch: Batch) -> Result<(), ()> {
        self.sender.send(batch).map_err(|_| ())
    }

    /// Waits for every batch to be written: the lines failed for an `idExterno` already held.
    fn finish(self) -> Result<u64, ImportError> {
        drop(self.sender);
        self.thread.join().unwrap_or_else(|_| Err(writer_stopped()))
    }
}

/// The writer's loop: each batch staged, the lines whose `idExterno` was held turned into
/// errors, and the batch's errors recorded in line order.
fn write_batches(
    imports: &dyn ImportRepository,
    company: CompanyId,
    id: Uuid,
    batches: Receiver<Batch>,
) -> Result<u64, ImportError> {
    let mut failed = 0;
    for (staged, mut errors) in batches {
        let taken = imports.stage(company, id, &staged)?;
        failed += taken.len() as u64;
        errors.extend(taken.into_iter().map(|t| taken_error(id, t)));
        errors.sort_by_key(|e| e.line);
        imports.record_errors(company, id, &errors)?;
    }
    Ok(failed)
}

fn writer_stopped() -> ImportError {
    ImportError::Repo(RepoError::Unexpected(anyhow::anyhow!(
        "the import's staging thread stopped"
    )))
}

/// The error of a line whose `idExterno` an earlier line (of this file or an earlier import)
/// holds, or whose `pgccId` an earlier line of this file holds.
fn taken_error(id: Uuid, t: TakenExternalId) -> ImportLineError {
    let (field, message) = match t.key {
        TakenKey::ExternalId if t.holder_import == id => (
            import_field::EXTERNAL_ID,
            format!(
                "idExterno repetido: já usado na linha {} deste arquivo",
                t.holder_line
            ),
        ),
        TakenKey::ExternalId => (
            import_field::EXTERNAL_ID,
            format!(
                "idExterno já importado (importação {}, linha {})",
                t.holder_import, t.holder_line
            ),
        ),
        TakenKey::PgccId => (
            import_field::PGCC_ID,
            format!(
                "pgccId repetido: a linha {} deste arquivo já traz esta solicitação do PGCC",
                t.holder_line
            ),
        ),
    };
    ImportLineError {
        line: t.line,
        field: field.to_owned(),
        message,
    }
}

impl ImportSession {
    /// The import's id.
    pub fn id(&self) -> Uuid {
        self.id
    }

    /// Lines read so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// One line, as parsed (`Err`: it could not be read as a line, e.g. not UTF-8).
    pub fn push(
        &mut self,
        number: u64,
        parsed: Result<ImportLineDraft, FieldError>,
    ) -> Result<(), ImportError> {
        self.lines += 1;
        if self.lines > self.max_lines {
            return Err(ImportError::TooManyLines(self.max_lines));
        }
        let broken = match parsed {
            Err(e) => vec![e],
            Ok(draft) => match draft.validate(self.now) {
                Err(e) => e.0,
                Ok(valid) => {
                    let template = valid.consent.template_id.as_deref().map(str::trim);
                    let unknown_files = self.unknown_files(&valid.evidence_sha256)?;
                    if !unknown_files.is_empty() {
                        unknown_files
                    } else if template.is_some_and(|t| self.templates.contains(t)) {
                        self.staged.push(StagedLine {
                            line: number,
                            // time-ordered (UUIDv7): the file's lines land at the end of
                            // `importacao_linhas_solicitacao`, not at 1,000 random leaves a
                            // batch (2 of the 11 microseconds a staged line cost PostgreSQL;
                            // docs/performance.md, "Bulk import")
                            request_id: Uuid::now_v7(),
                            valid,
                        });
                        Vec::new()
                    } else {
                        vec![FieldError::new(
                            domain::consent_request::field::TEMPLATE_ID,
                            "nenhum caso de uso sincronizado da empresa tem este template",
                        )]
                    }
                }
            },
        };
        if !broken.is_empty() {
            self.failed += 1;
            self.errors
                .extend(broken.into_iter().map(|e| ImportLineError {
                    line: number,
                    field: e.field,
                    message: e.message,
                }));
        }
        if self.staged.len() >= BATCH || self.errors.len() >= BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// The errors of the line's evidence files the company does not have (another company's
    /// are not found either: every lookup carries the company).
    fn unknown_files(&self, hashes: &[String]) -> Result<Vec<FieldError>, ImportError> {
        let mut unknown = Vec::new();
        for (i, hash) in hashes.iter().enumerate() {
            let known = match &self.evidence {
                Some(evidence) => evidence.has(self.company, hash)?,
                None => false,
            };
            if !known {
                unknown.push(FieldError::new(
                    format!("{}[{i}]", domain::import::import_field::EVIDENCE_FILES),
                    "arquivo não encontrado entre os da empresa: envie-o antes com PUT /api/arquivos/{sha256}",
                ));
            }
        }
        Ok(unknown)
    }

    fn flush(&mut self) -> Result<(), ImportError> {
        let batch = (
            std::mem::replace(&mut self.staged, Vec::with_capacity(BATCH)),
            std::mem::take(&mut self.errors),
        );
        let Some(writer) = self.writer.as_mut() else {
            return Err(writer_stopped());
        };
        if writer.send(batch).is_err() {
            // the writer stopped at a failure: that failure is the file's
            let writer = self.writer.take().expect("a writer");
            writer.finish()?;
            return Err(writer_stopped());
        }
        Ok(())
    }

    /// The whole file was read: the import goes on to registration (or ends, no line valid).
    pub fn finish(mut self) -> Result<Import, ImportError> {
        self.flush()?;
        if let Some(writer) = self.writer.take() {
            self.failed += writer.finish()?;
        }
        Ok(self.imports.finish_validation(
            self.company,
            self.id,
            self.lines,
            self.failed,
            self.clock.now(),
        )?)
    }

    /// The file broke a limit (or could not be read): nothing of the import stays.
    pub fn abort(mut self) -> Result<(), ImportError> {
        if let Some(writer) = self.writer.take() {
            // its own failure, if any, is moot: nothing of the import stays
            let _ = writer.finish();
        }
        Ok(self.imports.discard(self.company, self.id)?)
    }
}
