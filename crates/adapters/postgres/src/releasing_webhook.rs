//! The webhook side of the request's connection scope (see `releasing_pgcc.rs`): a request that
//! waits on a receiver (`POST /api/webhook-urls/{id}/testar`) or on a name server (a
//! registration's address check) gives its scoped connection back to the pool first, so a slow
//! receiver or DNS cannot drain the pool for the other requests. Outside a scope (the
//! background sender) there is nothing to give back and they only forward.

use std::sync::Arc;

use domain::CompanyId;
use ports::{CheckedTarget, SendReport, TargetGuard, TargetRefused, WebhookSender};

use crate::PgConnectionScope;

/// A [`WebhookSender`] that releases this thread's scoped connection before each send.
pub struct ReleasingWebhookSender {
    inner: Arc<dyn WebhookSender>,
}

impl ReleasingWebhookSender {
    pub fn new(inner: Arc<dyn WebhookSender>) -> Self {
        Self { inner }
    }
}

impl WebhookSender for ReleasingWebhookSender {
    fn send(
        &self,
        url: &str,
        target: &CheckedTarget,
        headers: &[(String, String)],
        body: &str,
    ) -> SendReport {
        PgConnectionScope.release();
        self.inner.send(url, target, headers, body)
    }
}

/// A [`TargetGuard`] that releases this thread's scoped connection before each lookup.
pub struct ReleasingTargetGuard {
    inner: Arc<dyn TargetGuard>,
}

impl ReleasingTargetGuard {
    pub fn new(inner: Arc<dyn TargetGuard>) -> Self {
        Self { inner }
    }
}

impl TargetGuard for ReleasingTargetGuard {
    fn check(&self, company: CompanyId, url: &str) -> Result<(), TargetRefused> {
        PgConnectionScope.release();
        self.inner.check(company, url)
    }

    fn resolve(&self, company: CompanyId, url: &str) -> Result<CheckedTarget, TargetRefused> {
        PgConnectionScope.release();
        self.inner.resolve(company, url)
    }
}
