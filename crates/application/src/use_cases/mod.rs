//! Use cases: the company's list and its synchronization with the PGCC.

pub mod list;
pub mod sync;
pub mod sync_all_companies;
pub mod versions;
