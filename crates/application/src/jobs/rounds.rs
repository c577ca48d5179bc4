//! Each background service as a [`Job`]: its round, what it logs (ids and counts only, never
//! personal data) and what it reports to the metrics ([`JobObserver`]).

use std::sync::Arc;

use chrono::Duration;

use super::{Job, Outcome};
use crate::{
    ExpireConsentRequests, PollConsentStatuses, PurgeConsoleSearches, PurgeIdempotencyKeys,
    PurgeReport, PurgeRetention, ReconcileCreations, SignCheckpoints, SyncAllCompanies,
};

/// Told what the rounds did, for `/metrics`.
pub trait JobObserver: Send + Sync {
    /// `count` items of one round of `job` failed on their own account.
    fn worker_item_failures(&self, job: &'static str, count: u64);
    /// Requests a status round skipped because the PGCC named a status we do not know.
    fn pgcc_unknown_statuses(&self, count: u64);
    /// Results of a scheduled synchronization round.
    fn sync_results(&self, succeeded: u64, failed: u64);
    /// Pending deliveries failed by the cap of pending deliveries per company.
    fn webhook_deliveries_dropped(&self, count: u64);
    /// Integrity incidents a status round recorded (confirmed requests the PGCC does not know).
    fn integrity_incidents(&self, count: u64);
}

/// More may be due when a round filled its batch.
fn more_if(full: bool) -> Outcome {
    if full {
        Outcome::MoreDue
    } else {
        Outcome::Done
    }
}

/// The status checks: one PGCC call's worth a round, as long as checks are due and the budget
/// allows.
pub struct StatusPollJob {
    pub poll: PollConsentStatuses,
    pub observer: Arc<dyn JobObserver>,
}

impl Job for StatusPollJob {
    fn name(&self) -> &'static str {
        "status-poll"
    }

    fn run_once(&mut self) -> anyhow::Result<Outcome> {
        let report = self.poll.run_once()?;
        if report.unknown > 0 {
            self.observer
                .pgcc_unknown_statuses(u64::from(report.unknown));
        }
        if report.failed > 0 {
            self.observer
                .worker_item_failures("status_poll", u64::from(report.failed));
        }
        if report.integrity_incidents > 0 {
            self.observer
                .integrity_incidents(u64::from(report.integrity_incidents));
        }
        if report.changed > 0 || report.unknown > 0 || report.failed > 0 {
            tracing::info!(
                checked = report.checked,
                changed = report.changed,
                unknown = report.unknown,
                failed = report.failed,
                "status poll"
            );
        }
        Ok(match report.throttled {
            Some(wait) => Outcome::Throttled(wait),
            None => more_if(report.more_due),
        })
    }
}

/// Requests past their expiry.
pub struct ExpiryJob {
    pub expire: ExpireConsentRequests,
    pub batch: u32,
}

impl Job for ExpiryJob {
    fn name(&self) -> &'static str {
        "expiry"
    }

    fn run_once(&mut self) -> anyhow::Result<Outcome> {
        // the service drains by itself
        let expired = self.expire.run_once(self.batch)?;
        if expired > 0 {
            tracing::info!(expired, "consent requests expired");
        }
        Ok(Outcome::Done)
    }
}

/// The bulk imports' lines, registered on the PGCC at their own budget (docs/imports.md).
pub struct ImportJob {
    pub register: crate::RegisterImports,
}

impl Job for ImportJob {
    fn name(&self) -> &'static str {
        "import"
    }

    fn run_once(&mut self) -> anyhow::Result<Outcome> {
        // a cancelled import's lines, a batch a round, before the next line is registered
        let cleared = self.register.clear_cancelled()?;
        let report = self.register.run_round()?;
        if report.registered > 0 || report.failed > 0 || report.retried > 0 {
            tracing::debug!(
                registered = report.registered,
                failed = report.failed,
                retried = report.retried,
                "imported lines registered"
            );
        }
        Ok(match report.throttled {
            Some(wait) => Outcome::Throttled(wait),
            None if report.more || cleared > 0 => Outcome::MoreDue,
            None => Outcome::Done,
        })
    }
}

/// Creations left unfinished, settled with the PGCC.
pub struct ReconcileJob {
    pub reconcile: ReconcileCreations,
    pub batch: u32,
    pub grace: Duration,
    pub not_found_window: Duration,
    pub observer: Arc<dyn JobObserver>,
}

impl Job for ReconcileJob {
    fn name(&self) -> &'static str {
        "reconcile"
    }

    fn run_once(&mut self) -> anyhow::Result<Outcome> {
        let report = self
            .reconcile
            .run_once(self.batch, self.grace, self.not_found_window)?;
        if report.failed > 0 {
            self.observer
                .worker_item_failures("reconcile", u64::from(report.failed));
        }
        if report.confirmed > 0 || report.cancelled > 0 || report.not_found > 0 || report.failed > 0
        {
            tracing::info!(
                checked = report.checked,
                confirmed = report.confirmed,
                cancelled = report.cancelled,
                not_found = report.not_found,
                failed = report.failed,
                "unfinished creations reconciled"
            );
        }
        Ok(more_if(report.checked + report.failed >= self.batch))
    }
}

/// Idempotency keys past their retention.
pub struct IdempotencyPurgeJob {
    pub purge: PurgeIdempotencyKeys,
    pub batch: u32,
}

impl Job for IdempotencyPurgeJob {
    fn name(&self) -> &'static str {
        "idempotency-purge"
    }

    fn run_once(&mut self) -> anyhow::Result<Outcome> {
        let purged = self.purge.run_once(self.batch)?;
        if purged > 0 {
            tracing::info!(purged, "idempotency keys past their retention purged");
        }
        Ok(more_if(purged >= self.batch))
    }
}

/// The console's expired CPF searches.
pub struct SearchPurgeJob {
    pub purge: PurgeConsoleSearches,
    pub batch: u32,
}

impl Job for SearchPurgeJob {
    fn name(&self) -> &'static str {
        "console-search-purge"
    }

    fn run_once(&mut self) -> anyhow::Result<Outcome> {
        let purged = self.purge.run_once(self.batch)?;
        if purged > 0 {
            tracing::info!(purged, "expired console searches purged");
        }
        Ok(more_if(purged >= self.batch))
    }
}

/// Webhook deliveries, events, cancelled creations' personal data and the record of reads of
/// personal data past retention.
pub struct RetentionJob {
    pub purge: PurgeRetention,
    pub batch: u32,
}

impl Job for RetentionJob {
    fn name(&self) -> &'static str {
        "retention"
    }

    fn run_once(&mut self) -> anyhow::Result<Outcome> {
        let report: PurgeReport = self.purge.run_once(self.batch)?;
        if !report.is_empty() {
            tracing::info!(
                deliveries = report.deliveries,
                events = report.events,
                cancelled_creations_blanked = report.blanked,
                access_log = report.accesses,
                evidence_files_bytes_deleted = report.evidence_files,
                evidence_uploads_abandoned_deleted = report.abandoned_uploads,
                "retention purge"
            );
        }
        Ok(more_if(report.full(self.batch)))
    }
}

/// The sandbox companies' data past `sandbox.retention_days`.
pub struct SandboxPurgeJob {
    pub purge: crate::PurgeSandboxes,
    pub batch: u32,
}

impl Job for SandboxPurgeJob {
    fn name(&self) -> &'static str {
        "sandbox-purge"
    }

    fn run_once(&mut self) -> anyhow::Result<Outcome> {
        let report = self.purge.run_once(self.batch)?;
        let purged = report.purged;
        if purged.requests + purged.events + purged.accesses > 0 {
            tracing::info!(
                companies = report.companies,
                requests = purged.requests,
                events = purged.events,
                access_log = purged.accesses,
                "sandbox purge"
            );
        }
        Ok(more_if(report.full))
    }
}

/// The audit logs' checkpoints: up to `batch` companies a round (docs/auditoria.md).
pub struct CheckpointJob {
    pub sign: SignCheckpoints,
    pub batch: u32,
}

impl Job for CheckpointJob {
    fn name(&self) -> &'static str {
        "audit-checkpoints"
    }

    fn run_once(&mut self) -> anyhow::Result<Outcome> {
        let round = self.sign.run_once(self.batch)?;
        if round.signed > 0 {
            tracing::info!(checkpoints = round.signed, "audit checkpoints signed");
        }
        // a stored tree still catching up runs the next batch at once
        Ok(more_if(round.signed >= self.batch || round.backlog))
    }
}

/// Every company's use cases, synchronized with the PGCC.
pub struct SyncJob {
    pub sync: SyncAllCompanies,
    pub observer: Arc<dyn JobObserver>,
}

impl Job for SyncJob {
    fn name(&self) -> &'static str {
        "use-case-sync"
    }

    fn run_once(&mut self) -> anyhow::Result<Outcome> {
        let report = self.sync.run_once()?;
        self.observer
            .sync_results(u64::from(report.synced), u64::from(report.failed));
        tracing::info!(
            synced = report.synced,
            failed = report.failed,
            "scheduled use-case sync"
        );
        Ok(Outcome::Done)
    }
}

/// Webhook URLs whose deliveries failed for the whole window, disabled.
pub struct WebhookDisableJob {
    pub deliver: crate::DeliverWebhooks,
}

impl Job for WebhookDisableJob {
    fn name(&self) -> &'static str {
        "webhook-disable"
    }

    fn run_once(&mut self) -> anyhow::Result<Outcome> {
        let disabled = self.deliver.disable_failing_urls()?;
        if disabled > 0 {
            tracing::warn!(
                disabled,
                "webhook URLs disabled after failing for the whole window"
            );
        }
        Ok(Outcome::Done)
    }
}

/// The pending deliveries of URLs removed, disabled or re-enabled since: cancelled, parked or
/// brought back, a bounded batch per URL and round.
pub struct WebhookSettleJob {
    pub deliver: crate::DeliverWebhooks,
    pub urls: u32,
    pub batch: u32,
}

impl Job for WebhookSettleJob {
    fn name(&self) -> &'static str {
        "webhook-settle"
    }

    fn run_once(&mut self) -> anyhow::Result<Outcome> {
        let changed = self.deliver.settle_urls(self.urls, self.batch)?;
        Ok(more_if(changed > 0))
    }
}

/// Each company's pending deliveries held to `max_pending`: past it the oldest fail, with their
/// reason.
pub struct WebhookCapJob {
    pub deliver: crate::DeliverWebhooks,
    pub max_pending: u32,
    pub batch: u32,
    pub observer: Arc<dyn JobObserver>,
}

impl Job for WebhookCapJob {
    fn name(&self) -> &'static str {
        "webhook-cap"
    }

    fn run_once(&mut self) -> anyhow::Result<Outcome> {
        let dropped = self.deliver.cap_pending(self.max_pending, self.batch)?;
        if dropped > 0 {
            self.observer.webhook_deliveries_dropped(u64::from(dropped));
            tracing::warn!(
                dropped,
                "pending webhook deliveries past the company's cap failed"
            );
        }
        Ok(Outcome::Done)
    }
}
