//! End-to-end tests: the real `consent-api` binary, a real PostgreSQL database per test and the
//! real `pgcc-sim`, all over HTTP. One test binary, a module per resource.

mod access_log;
mod api_keys;
mod batch_check;
mod caches;
mod cli;
mod consent_reads;
mod consent_requests;
mod crash_consistency;
mod dead_database_path;
mod docs_ui;
mod edge;
mod failed_auth;
mod faults;
mod generated_client;
mod hash_salt;
mod helpers;
mod http_contract;
mod idempotency;
mod lifecycle;
mod limits;
mod operability;
mod personal_data;
mod pgcc_answers;
mod poolers;
mod profiles;
mod rate_limits;
mod scheduled_sync;
mod shutdown;
mod subject_export;
mod use_cases;
mod webhook_control;
mod webhook_delivery;
mod webhook_urls;
mod webhooks;
mod workers;
