//! The sandbox (issue 25, part 2; docs/decisions.md, "The sandbox"): a real company's sandbox
//! is a company of its own whose PGCC calls go to a PGCC simulated in process
//! ([`routed_pgcc::SandboxRoutedPgcc`]) and whose data is purged after `sandbox.retention_days`
//! ([`purge::PurgeSandboxes`]).

pub mod purge;
pub mod routed_pgcc;
