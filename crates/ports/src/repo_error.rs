/// What any repository operation can fail with, beyond the outcomes its own signature names.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// The database could not be reached in time (pool checkout timed out, connection refused).
    /// Callers answer "try again later" (503), never a 500.
    #[error("database unavailable")]
    Unavailable(#[source] anyhow::Error),
    /// Anything else: a bug or a broken invariant. Logged whole, never shown to clients.
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}
