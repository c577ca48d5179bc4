//! A file of consents staged as it arrives (docs/imports.md, "How a file is read"): its chunks
//! handed through a bounded channel to a blocking thread that cuts, validates and stages its
//! lines ([`import_file::read`] into [`ImportConsents`]' session). Memory stays a few chunks and
//! one batch whatever the file's size, and no pooled connection is held while the file arrives.
//!
//! One reader for every way a file comes in: the body of `POST /api/importacoes`
//! (`routes::imports`), and the file part of the console's upload form (`/console/importacoes`,
//! a multipart body: `delivery_console`'s `import_form`).

use std::future::Future;
use std::io::Read;
use std::pin::Pin;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::time::Duration;

use actix_web::error::BlockingError;
use actix_web::web::{self, Bytes};
use application::ImportConsents;
use domain::{CompanyId, Import};

use crate::dto::import::Importacao;
use crate::error::ApiError;
use crate::import_file::{self, FileError, Format, ReadError};

/// Chunks waiting for the reading thread.
const CHUNKS_IN_FLIGHT: usize = 16;

/// An import's status as the API answers it (`fimEstimado` read from the imports' backlog: call
/// it on a blocking thread).
pub fn status_of(imports: &ImportConsents, import: &Import) -> Result<Importacao, ApiError> {
    Ok(Importacao {
        id: import.id,
        status: import.status,
        linhas: import.lines,
        validas: import.valid,
        registradas: import.registered,
        falhas: import.failed,
        fim_estimado: imports.estimated_end(import)?,
    })
}

type Reading = Pin<Box<dyn Future<Output = Result<Result<Importacao, ApiError>, BlockingError>>>>;

/// A file being read and staged for a company.
pub struct Upload {
    sender: SyncSender<Result<Bytes, ()>>,
    reading: Reading,
}

impl Upload {
    /// A new import of `company`, its file read in `format` on the blocking pool as its chunks
    /// are sent; past `importacao.max_bytes` bytes (or `max_linhas` lines) it is refused (413)
    /// and nothing of it stays.
    pub fn start(imports: &ImportConsents, company: CompanyId, format: Format) -> Upload {
        let imports = imports.clone();
        let max_bytes = imports.limits().max_bytes;
        let (sender, receiver) = sync_channel::<Result<Bytes, ()>>(CHUNKS_IN_FLIGHT);
        // spawned now: the thread reads while the chunks arrive
        let reading = web::block(move || read_file(&imports, company, format, receiver, max_bytes));
        Upload {
            sender,
            reading: Box::pin(reading),
        }
    }

    /// Hands a chunk over, waiting while the reader is behind (its channel is bounded). `false`:
    /// the reader stopped (a limit, a bad CSV header), the rest need not be read.
    pub async fn send(&self, chunk: Bytes) -> bool {
        self.hand_over(Ok(chunk)).await
    }

    async fn hand_over(&self, item: Result<Bytes, ()>) -> bool {
        let mut item = item;
        loop {
            match self.sender.try_send(item) {
                Ok(()) => return true,
                Err(TrySendError::Full(back)) => {
                    item = back;
                    actix_web::rt::time::sleep(Duration::from_millis(2)).await;
                }
                Err(TrySendError::Disconnected(_)) => return false,
            }
        }
    }

    /// The file ended: `broken` when what carried it failed or held what it must not (a body
    /// over its bound, timed out, a form with a field too many), so nothing of the import stays;
    /// otherwise the import as read, or why the file as a whole was refused (nothing stays).
    pub async fn finish(self, broken: bool) -> Result<Importacao, ApiError> {
        if broken {
            self.hand_over(Err(())).await;
        }
        drop(self.sender);
        self.reading
            .await
            .map_err(|e| ApiError::Internal(anyhow::Error::new(e)))?
    }
}

/// The body as `Read`, from the channel; past `max_bytes` it fails.
struct ChannelReader {
    receiver: Receiver<Result<Bytes, ()>>,
    chunk: Bytes,
    read: u64,
    max_bytes: u64,
}

#[derive(Debug, thiserror::Error)]
#[error("the imported file is over its limit")]
struct OverLimit;

impl Read for ChannelReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.chunk.is_empty() {
            match self.receiver.recv() {
                Ok(Ok(chunk)) => {
                    self.read += chunk.len() as u64;
                    if self.read > self.max_bytes {
                        return Err(std::io::Error::other(OverLimit));
                    }
                    self.chunk = chunk;
                }
                Ok(Err(())) => return Err(std::io::Error::other("the body failed")),
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len());
        buf[..n].copy_from_slice(&self.chunk.split_to(n));
        Ok(n)
    }
}

fn read_file(
    imports: &ImportConsents,
    company: CompanyId,
    format: Format,
    receiver: Receiver<Result<Bytes, ()>>,
    max_bytes: u64,
) -> Result<Importacao, ApiError> {
    let mut session = imports.start(company)?;
    let reader = ChannelReader {
        receiver,
        chunk: Bytes::new(),
        read: 0,
        max_bytes,
    };
    let result = import_file::read(reader, format, |n, line| session.push(n, line));
    let failure = match result {
        Ok(()) => {
            let import = session.finish()?;
            return status_of(imports, &import);
        }
        Err(ReadError::Line(e)) => ApiError::from(e),
        Err(ReadError::File(FileError::Header(why))) => ApiError::BadRequest(why),
        Err(ReadError::File(FileError::Read(e)))
            if e.get_ref().is_some_and(|inner| inner.is::<OverLimit>()) =>
        {
            ApiError::PayloadTooLarge {
                limit: usize::try_from(max_bytes).unwrap_or(usize::MAX),
            }
        }
        Err(ReadError::File(FileError::Read(_))) => {
            ApiError::BadRequest("corpo ilegível".to_owned())
        }
    };
    // a file that broke a limit creates nothing
    session.abort()?;
    Err(failure)
}
