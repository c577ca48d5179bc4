//! The process context: what one process of the binary shares among everything it runs (the
//! HTTP server, the PGCC decorator of every service, the background jobs), built once by `main`
//! and handed down. Nothing of it lives in a static: a test or a second wiring in the same
//! process gets its own.
//!
//! The values that need the database ready (the audit signer, the read replicas' pools) are not
//! in it: `serve` and `worker` build them once after `wiring::start_database` and pass them on.

use std::sync::Arc;

use application::audit::witness::submit::{Witness, Witnesses};
use application::PgccCallNotes;
use metrics::Metrics;
use ports::SystemClock;

use crate::settings::Settings;

pub struct ProcessContext {
    /// The process's metrics: one registry for the HTTP server (which renders it at
    /// `/metrics`), the PGCC decorator and the jobs.
    pub metrics: Arc<Metrics>,
    /// The process's PGCC calls not yet added to the shared health tallies: noted by the PGCC
    /// decorator of every service of the process, taken by its `wiring::pgcc_health_job`.
    pub pgcc_call_notes: Arc<PgccCallNotes>,
    /// The witnesses of `auditoria.witnesses`: the checkpoint job submits to them and
    /// `/metrics` reads how they answered (`WitnessHealth`).
    pub witnesses: Witnesses,
}

impl ProcessContext {
    pub fn new(settings: &Settings) -> Self {
        let witnesses = settings.audit.witness_list().unwrap_or_default();
        ProcessContext {
            metrics: Arc::new(Metrics::new()),
            pgcc_call_notes: Arc::new(PgccCallNotes::new(Arc::new(SystemClock))),
            witnesses: Witnesses::new(
                witnesses
                    .into_iter()
                    .map(|(url, key)| Witness {
                        gateway: Arc::new(crate::witness_client::HttpWitness::new(&url)),
                        label: url,
                        key,
                    })
                    .collect(),
            ),
        }
    }
}
