//! One database connection per request, on a thread-local: while a [`PgConnectionScope`] is
//! open on a thread, every repository call made on it (through `with_conn`) shares one pooled
//! connection, checked out by the first call and returned when the scope closes or is released.
//! A request's blocking hop is one thread, so a request makes one checkout however many
//! repositories it calls.
//!
//! Nothing outside this crate knows about it but the binary, which opens a scope around each
//! request's blocking work and wraps the PGCC gateway in [`crate::ReleasingPgcc`], so that the
//! connection goes back to the pool while the request waits on the PGCC.
//!
//! A process has one pool: the scope's connection is lent to any repository on the thread.

use std::cell::RefCell;

use crate::conn::PgPooledConnection;

#[derive(Default)]
struct Scope {
    /// Open scopes on this thread (nested ones share the outer's connection).
    depth: u32,
    /// The connection kept between calls; `None` before the first call, after a release, and
    /// while lent.
    conn: Option<PgPooledConnection>,
    /// A call holds the connection: a call nested in it checks out its own.
    lent: bool,
}

thread_local! {
    static SCOPE: RefCell<Scope> = RefCell::new(Scope::default());
}

/// The scope's connection, lent to one call; [`Lent::give_back`] keeps it for the next call.
/// Dropped without giving back (the query panicked), the connection goes back to the pool.
pub(crate) struct Lent {
    conn: Option<PgPooledConnection>,
}

impl Lent {
    /// The kept connection, or `None`: check one out (it is kept when given back).
    pub(crate) fn connection(&self) -> Option<PgPooledConnection> {
        SCOPE.with(|s| s.borrow_mut().conn.take())
    }

    pub(crate) fn give_back(mut self, conn: PgPooledConnection) {
        self.conn = Some(conn);
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        let conn = self.conn.take();
        SCOPE.with(|s| {
            let mut s = s.borrow_mut();
            s.lent = false;
            if s.depth > 0 {
                s.conn = conn;
            }
        });
    }
}

/// Lends the scope's connection when a scope is open and no call holds it.
pub(crate) fn borrow() -> Option<Lent> {
    SCOPE.with(|s| {
        let mut s = s.borrow_mut();
        if s.depth == 0 || s.lent {
            return None;
        }
        s.lent = true;
        Some(Lent { conn: None })
    })
}

/// Opens and releases the connection scope of the current thread, for the repositories of this
/// crate.
#[derive(Debug, Clone, Copy, Default)]
pub struct PgConnectionScope;

impl PgConnectionScope {
    /// Opens a scope on this thread until the guard drops; then the connection, if one was
    /// checked out, goes back to the pool. Nested scopes share the outer one.
    pub fn enter(&self) -> ScopeGuard {
        SCOPE.with(|s| s.borrow_mut().depth += 1);
        ScopeGuard {
            _not_send: std::marker::PhantomData,
        }
    }

    /// Runs `work` inside a scope on this thread.
    pub fn run<T>(&self, work: impl FnOnce() -> T) -> T {
        let _scope = self.enter();
        work()
    }

    /// Gives this thread's shared connection back to the pool now, the scope staying open (the
    /// next repository call checks one out again). Called before waiting on something that is
    /// not the database (a PGCC call), so a slow peer cannot hold the pool's connections.
    /// Without a scope (or before its first query) it does nothing.
    pub fn release(&self) {
        let released = SCOPE.with(|s| s.borrow_mut().conn.take());
        drop(released);
    }
}

/// Closes its thread's scope when dropped (so it stays on the thread that opened it).
#[must_use = "the scope closes when the guard drops"]
#[derive(Debug)]
pub struct ScopeGuard {
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Drop for ScopeGuard {
    fn drop(&mut self) {
        let released = SCOPE.with(|s| {
            let mut s = s.borrow_mut();
            s.depth -= 1;
            if s.depth == 0 {
                s.conn.take()
            } else {
                None
            }
        });
        // returned to the pool outside the RefCell borrow
        drop(released);
    }
}

/// Whether this thread's scope holds a connection now (tests).
#[doc(hidden)]
pub fn holds_connection() -> bool {
    SCOPE.with(|s| s.borrow().conn.is_some())
}
