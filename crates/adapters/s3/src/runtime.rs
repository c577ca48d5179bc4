//! The store's own small Tokio runtime. `object_store` is async while the port is called from
//! blocking hops (actix's blocking threads, the workers' jobs), never from an actix worker: each
//! call is spawned here and its blocking caller waits on a channel. Waiting on the actix
//! runtime's handle instead would leave the I/O to be driven by a worker the request may not be
//! on, and `block_on` inside a runtime's blocking thread panics.

use std::future::Future;

use ports::RepoError;

pub(crate) struct ClientRuntime {
    /// `None` only while dropping (shut down in the background: dropping a runtime from within
    /// another runtime's thread would panic).
    runtime: Option<tokio::runtime::Runtime>,
}

impl ClientRuntime {
    pub(crate) fn new() -> anyhow::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("s3-evidence")
            .enable_all()
            .build()?;
        Ok(Self {
            runtime: Some(runtime),
        })
    }

    /// Runs `fut` to its end on this runtime; the calling (blocking) thread waits.
    pub(crate) fn run<T, F>(&self, what: &'static str, fut: F) -> Result<T, RepoError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, object_store::Error>> + Send + 'static,
    {
        let Some(runtime) = self.runtime.as_ref() else {
            return Err(RepoError::Unexpected(anyhow::anyhow!(
                "{what}: the S3 client is stopped"
            )));
        };
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        runtime.spawn(async move {
            let _ = tx.send(fut.await);
        });
        match rx.recv() {
            Ok(result) => result.map_err(|e| repo_error(what, e)),
            Err(_) => Err(RepoError::Unexpected(anyhow::anyhow!(
                "{what}: the S3 client's task ended without an answer"
            ))),
        }
    }
}

impl Drop for ClientRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A bucket that does not answer (after the client's retries) is unavailable (503, try again);
/// anything else is unexpected (500, logged). The error names the key and the HTTP status,
/// never the credentials (object_store does not put them in its errors).
pub(crate) fn repo_error(what: &'static str, e: object_store::Error) -> RepoError {
    match e {
        object_store::Error::Generic { .. } => {
            RepoError::Unavailable(anyhow::Error::new(e).context(what))
        }
        other => RepoError::Unexpected(anyhow::Error::new(other).context(what)),
    }
}
