//! Test harness shared by the PostgreSQL adapter tests and the end-to-end tests:
//! a fresh database per test cloned from a migrated template, and (for end-to-end tests) the real
//! binaries started as child processes.

pub mod db;

pub use db::TestDb;
