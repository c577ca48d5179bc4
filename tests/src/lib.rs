//! Test harness shared by the PostgreSQL adapter tests and the end-to-end tests:
//! a fresh database per test cloned from a migrated template, and the real binaries
//! (`pgcc-sim`, `consent-api`) started as child processes that die with the test.

pub mod citus;
pub mod client;
pub mod cluster;
pub mod db;
pub mod failover;
pub mod http_relay;
pub mod moto;
pub mod oidc_provider;
pub mod pgbouncer;
pub mod processes;
pub mod receiver;
pub mod relay;

pub use client::{Client, Reply};
pub use cluster::Cluster;
pub use db::TestDb;
pub use http_relay::HttpRelay;
pub use oidc_provider::OidcProvider;
pub use processes::{wait_until, Api, Sim, Worker};
pub use receiver::{
    read_request, verify_with_python, RawRequest, Received, Receiver, SilentReceiver,
};
pub use relay::Relay;
