//! `consent-api import --empresa <id> <file>` (issue 37, part 4; docs/imports.md, "From the
//! command line"): a company's file registered as its import through the HTTP route's own reader
//! and staging (`delivery_http::import_file::read` into `ImportConsents`' session): there is no
//! second validator. A progress bar (the `indicatif` crate) follows the lines staged, then the
//! lines registered by the service's workers; a summary ends it.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use application::{ImportConsents, ImportError};
use delivery_http::import_file::{self, FileError, Format, ReadError};
use domain::{CompanyId, Import, ImportStatus};
use indicatif::{ProgressBar, ProgressStyle};
use ports::CompanyRepository;
use postgres_adapter::PgCompanyRepository;
use uuid::Uuid;

use crate::context::ProcessContext;
use crate::settings::Settings;
use crate::wiring;

/// How many errors the summary prints (the rest: `--erros`, or `GET .../erros`).
const ERRORS_SHOWN: u32 = 10;
/// How often the registration's progress is read while waiting.
const POLL: Duration = Duration::from_millis(500);

/// The command's arguments, as `cli::Command::Import` holds them.
pub struct ImportArgs {
    pub company: String,
    pub file: PathBuf,
    /// `csv` or `jsonl`; default: by the file's extension.
    pub format: Option<String>,
    /// Return once the file is staged; the service's workers register it.
    pub no_wait: bool,
    /// Write every error there (JSON Lines, as `GET /api/importacoes/{id}/erros`).
    pub errors_file: Option<PathBuf>,
}

pub fn run(settings: &Settings, context: &ProcessContext, args: ImportArgs) -> anyhow::Result<()> {
    let Ok(id) = Uuid::parse_str(args.company.trim()) else {
        bail!("--empresa must be a company id (a UUID, from company create)");
    };
    let company = CompanyId(id);
    let format = format_of(&args.file, args.format.as_deref())?;
    let file =
        File::open(&args.file).with_context(|| format!("opening {}", args.file.display()))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let pool = wiring::pool(settings)?;
    if PgCompanyRepository::new(pool.clone())
        .get(company)?
        .is_none()
    {
        bail!("no company with this id");
    }
    let services = wiring::services(settings, context, pool)?;
    let imports = services.imports;
    let limit = imports.limits().max_bytes;
    if size > limit {
        bail!(
            "the file has {size} bytes, more than importacao.max_bytes ({limit}): nothing was imported"
        );
    }

    let staged = stage(&imports, company, file, size, format)?;
    let validated_failures = staged.failed;
    let ended = if args.no_wait || staged.status != ImportStatus::Registrando {
        staged
    } else {
        wait(&imports, &staged, validated_failures)?
    };
    summary(&imports, &ended, args.errors_file.as_deref())
}

/// `--formato`, else the extension: `.csv` is CSV, `.jsonl`/`.ndjson`/`.json` JSON Lines.
fn format_of(file: &Path, given: Option<&str>) -> anyhow::Result<Format> {
    let name = match given {
        Some(f) => f.to_ascii_lowercase(),
        None => file
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default()
            .to_ascii_lowercase(),
    };
    match name.as_str() {
        "csv" => Ok(Format::Csv),
        "jsonl" | "ndjson" | "json" => Ok(Format::JsonLines),
        _ => bail!("unknown format: give --formato csv or --formato jsonl"),
    }
}

/// Reads and stages the file as `POST /api/importacoes` does, the bar following the bytes read.
fn stage(
    imports: &ImportConsents,
    company: CompanyId,
    file: File,
    size: u64,
    format: Format,
) -> anyhow::Result<Import> {
    let bar = ProgressBar::new(size).with_style(
        ProgressStyle::with_template("validando {bar:40} {bytes}/{total_bytes} {msg} ({eta})")
            .expect("a valid template"),
    );
    let mut session = imports.start(company)?;
    let reader = bar.wrap_read(file);
    let result = import_file::read(reader, format, |n, line| {
        let pushed = session.push(n, line);
        if session.lines() % 1_000 == 0 {
            bar.set_message(format!("{} linhas", session.lines()));
        }
        pushed
    });
    bar.finish_and_clear();
    let why = match result {
        Ok(()) => return Ok(session.finish()?),
        Err(ReadError::Line(ImportError::TooManyLines(max))) => {
            format!("the file has more than importacao.max_linhas ({max}) lines")
        }
        Err(ReadError::Line(e)) => return Err(anyhow::Error::new(e).context("staging the file")),
        Err(ReadError::File(FileError::Header(why))) => format!("the CSV header: {why}"),
        Err(ReadError::File(FileError::Read(e))) => format!("reading the file: {e}"),
    };
    // a file that broke a limit creates nothing, as over HTTP
    session.abort()?;
    bail!("{why}: nothing was imported")
}

/// Follows the registration (done by the service's workers: `serve` or `worker`) until the
/// import ends, the bar counting the valid lines settled.
fn wait(
    imports: &ImportConsents,
    staged: &Import,
    validated_failures: u64,
) -> anyhow::Result<Import> {
    let bar = ProgressBar::new(staged.valid).with_style(
        ProgressStyle::with_template("registrando {bar:40} {pos}/{len} ({eta})")
            .expect("a valid template"),
    );
    loop {
        let now = imports.get(staged.company_id, staged.id)?;
        let settled = now.registered + now.failed.saturating_sub(validated_failures);
        bar.set_position(settled);
        if matches!(
            now.status,
            ImportStatus::Concluida | ImportStatus::Cancelada
        ) {
            bar.finish_and_clear();
            return Ok(now);
        }
        std::thread::sleep(POLL);
    }
}

/// The counts on stdout, one `name value` a line (scripts read them), then the first errors.
fn summary(
    imports: &ImportConsents,
    import: &Import,
    errors_file: Option<&Path>,
) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "importacao {}", import.id)?;
    writeln!(out, "status {}", import.status.as_str())?;
    writeln!(out, "linhas {}", import.lines)?;
    writeln!(out, "validas {}", import.valid)?;
    writeln!(out, "registradas {}", import.registered)?;
    writeln!(out, "falhas {}", import.failed)?;
    if let Some(path) = errors_file {
        let written = write_errors(imports, import, path)?;
        writeln!(out, "erros {written} em {}", path.display())?;
    }
    let first = imports.errors(import.company_id, import.id, None, ERRORS_SHOWN)?;
    for (_, e) in &first {
        writeln!(out, "erro linha {} {}: {}", e.line, e.field, e.message)?;
    }
    if import.failed > 0 && errors_file.is_none() {
        writeln!(
            out,
            "todos os erros: --erros <arquivo>, ou GET /api/importacoes/{}/erros",
            import.id
        )?;
    }
    Ok(())
}

/// Every error of the import, a JSON object a line (`linha`, `campo`, `mensagem`), paged.
fn write_errors(imports: &ImportConsents, import: &Import, path: &Path) -> anyhow::Result<u64> {
    let mut file = std::io::BufWriter::new(
        File::create(path).with_context(|| format!("creating {}", path.display()))?,
    );
    let mut after = None;
    let mut written = 0;
    loop {
        let page = imports.errors(import.company_id, import.id, after, 1_000)?;
        let Some((order, last)) = page.last() else {
            break;
        };
        after = Some((last.line, *order));
        for (_, e) in &page {
            serde_json::to_writer(
                &mut file,
                &serde_json::json!({"linha": e.line, "campo": e.field, "mensagem": e.message}),
            )?;
            file.write_all(b"\n")?;
            written += 1;
        }
    }
    file.flush()?;
    Ok(written)
}
