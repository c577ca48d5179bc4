//! One database connection per request: the repositories called while a scope is open on a
//! thread share the one connection the first of them checked out.

/// Opens and closes connection scopes. The PostgreSQL adapter keeps the shared connection in a
/// thread-local, so a scope covers exactly the code run on the thread that entered it (a
/// request's blocking hop).
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait ConnectionScope: Send + Sync {
    /// Opens a scope on this thread until the guard drops; then the connection, if one was
    /// checked out, goes back to the pool. Nested scopes share the outer one.
    fn enter(&self) -> ScopeGuard;

    /// Gives this thread's shared connection back to the pool now, the scope staying open (the
    /// next repository call checks one out again). Called before waiting on something that is
    /// not the database (a PGCC call), so a slow peer cannot hold the pool's connections.
    fn release(&self);
}

/// Closes its scope when dropped.
#[must_use = "the scope closes when the guard drops"]
pub struct ScopeGuard {
    close: Option<Box<dyn FnOnce()>>,
}

impl ScopeGuard {
    pub fn new(close: impl FnOnce() + 'static) -> Self {
        Self {
            close: Some(Box::new(close)),
        }
    }

    /// A guard that closes nothing (no scope was opened).
    pub fn none() -> Self {
        Self { close: None }
    }
}

impl Drop for ScopeGuard {
    fn drop(&mut self) {
        if let Some(close) = self.close.take() {
            close();
        }
    }
}

impl std::fmt::Debug for ScopeGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopeGuard")
            .field("open", &self.close.is_some())
            .finish()
    }
}

/// No scopes: every repository call checks out its own connection (unit tests, the CLI).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoConnectionScope;

impl ConnectionScope for NoConnectionScope {
    fn enter(&self) -> ScopeGuard {
        ScopeGuard::none()
    }

    fn release(&self) {}
}
