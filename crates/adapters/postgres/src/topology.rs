//! Whether the database is one PostgreSQL node or a Citus coordinator, for the few statements
//! that cannot be one text for both at the same cost (docs/decisions.md, "What Citus changed in
//! the SQL").

use std::sync::{Arc, OnceLock};

use ports::RepoError;

use crate::PgPool;

/// Whether the database is distributed, read once, on the first statement that needs it (the
/// extension is installed before the service starts, and not removed under it). Clones share
/// the answer.
#[derive(Clone, Default)]
pub(crate) struct Topology(Arc<OnceLock<bool>>);

impl Topology {
    pub(crate) fn distributed(&self, pool: &PgPool) -> Result<bool, RepoError> {
        if let Some(known) = self.0.get() {
            return Ok(*known);
        }
        let citus = crate::pool::is_distributed(pool)?;
        Ok(*self.0.get_or_init(|| citus))
    }

    /// Takes `distributed` as the answer instead of reading it (before any statement read it).
    pub(crate) fn assume(&self, distributed: bool) {
        let _ = self.0.set(distributed);
    }
}
