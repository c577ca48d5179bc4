//! End-to-end tests: the real `consent-api` binary, a real PostgreSQL database per test and the
//! real `pgcc-sim`, all over HTTP. One test binary, a module per resource.

mod cli;
mod consent_reads;
mod consent_requests;
mod helpers;
mod http_contract;
mod lifecycle;
mod use_cases;
mod webhook_urls;
mod webhooks;
mod workers;
