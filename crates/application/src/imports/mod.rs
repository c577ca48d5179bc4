//! Bulk import (issue 37, parts 1 and 2; docs/imports.md): a file's lines validated with the
//! creation's own rules and staged ([`ImportConsents`]), then registered in the background at a
//! PGCC budget of their own, fairly across companies ([`RegisterImports`]).

mod estimate;
mod register;
mod stage;

pub use estimate::estimated_seconds;
pub use register::{ImportRoundReport, RegisterImports};
pub use stage::{ImportConsents, ImportError, ImportLimits, ImportSession};
