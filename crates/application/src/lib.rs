//! The use cases of the consent service: plain synchronous services over the ports.
//!
//! Each service holds the ports it needs as `Arc<dyn Port>` and each operation returns a small
//! error enum with the outcomes a caller branches on, plus `Repo` for repository and unexpected
//! failures. The HTTP layer holds one [`Services`] bundle and the background jobs one [`Workers`]
//! bundle, each built from one [`Ports`] bundle.

use std::sync::Arc;

use cache::ChangeTracker;
use ports::{
    AccessLog, ApiKeyRepository, Clock, CompanyRepository, ConsentRequestRepository, EventLog,
    IdempotencyRepository, ImportRepository, PgccCallBudget, PgccGateway, PgccHealthRepository,
    RetentionRepository, SandboxRepository, SecretCipher, StatusCheckSchedule, TargetGuard,
    UseCaseRepository, WebhookDeliveryRepository, WebhookSender, WebhookUrlRepository,
};

pub mod access;
pub mod audit;
pub mod cache;
pub mod consent_requests;
pub mod evidence;
pub mod imports;
pub mod jobs;
pub mod operations;
pub mod pgcc_health;
pub mod records;
pub mod retention;
pub mod sandbox;
pub mod settings;
pub mod use_cases;
pub mod webhooks;

#[cfg(test)]
mod test_support;

pub use access::access_log::{
    AccessListQuery, AccessPage, ListAccessesError, PersonalDataAccesses, RecordAccessError,
};
pub use access::api_keys::{
    api_key_format, hash_api_key, looks_like_api_key, ApiKeyFormat, ApiKeyIssuer, IssueApiKeyError,
    IssuedApiKey, ListApiKeysError, RevokeApiKeyError, RevokedApiKey, API_KEY_LEN, API_KEY_PREFIX,
    SANDBOX_API_KEY_LEN, SANDBOX_API_KEY_PREFIX,
};
pub use access::authenticate::{AuthError, Authenticator, Caller, LAST_USE_RESOLUTION};
pub use access::register_company::{RegisterCompany, RegisterCompanyError};
pub use audit::audit_log::{AuditError, AuditLog, ProvenEntry, RequestProofs, SignedReceipt};
pub use audit::sign_checkpoints::SignCheckpoints;
pub use audit::signer::{public_key_from_base64, AuditSigner, InvalidSigningKey};
pub use audit::verify::{Mismatch, VerifyAuditLog, VerifyError, VerifyReport};
pub use consent_requests::check::{
    looks_like_consent_hash, CheckConsent, CheckConsentError, ConsentCheck,
};
pub use consent_requests::counts::{
    CountConsentError, CountConsentRequests, MAX_COUNT_DAYS, SUMMARY_CAP,
};
pub use consent_requests::create::{
    CreateConsentError, CreateConsentRequest, CreatedConsentRequest,
};
pub use consent_requests::cursor::{decode_cursor, encode_cursor, InvalidCursor};
pub use consent_requests::expire::ExpireConsentRequests;
pub use consent_requests::export_subject::{
    ExportSubject, ExportSubjectError, SubjectExportPage, SubjectExportQuery,
};
pub use consent_requests::get::{GetConsentError, GetConsentRequest};
pub use consent_requests::hash::{canonical_content, consent_hash};
pub use consent_requests::list::{
    ConsentListQuery, ConsentPage, ListConsentError, ListConsentRequests, DEFAULT_LIMIT, MAX_LIMIT,
};
pub use consent_requests::page_bytes::{resume_after, DEFAULT_PAGE_MAX_BYTES};
pub use consent_requests::poll_statuses::{
    PollConsentStatuses, PollError, PollReport, StatusCheckObserver, StatusCheckPolicy,
};
pub use consent_requests::reconcile_creations::{
    ReconcileCreations, ReconcileError, ReconcileReport,
};
pub use consent_requests::revoke::{RevokeConsentError, RevokeConsentRequest};
pub use evidence::{Download, EvidenceError, EvidenceFiles, EvidenceLimits, Upload, Uploaded};
pub use imports::{
    ImportConsents, ImportError, ImportLimits, ImportRoundReport, ImportSession, RegisterImports,
};
pub use operations::{ObservedPgcc, Operations, PgccCallObserver, Readiness};
pub use pgcc_health::{
    found_unavailable, GetPgccStatus, HealthTrackedPgcc, PgccCallNotes, PgccHealthJob,
};
pub use records::annotations::{UseCaseAnnotationError, UseCaseAnnotations};
pub use records::consent_record::{
    receipt_id, ConsentRecordError, ConsentRecordSource, ConsentRecords, RecordSettings,
    RECORD_SCHEMA,
};
pub use records::controller_profile::{SetControllerProfile, SetControllerProfileError};
pub use retention::purge_console_searches::PurgeConsoleSearches;
pub use retention::purge_idempotency_keys::PurgeIdempotencyKeys;
pub use retention::purge_retention::{PurgeReport, PurgeRetention, RetentionPeriods};
pub use sandbox::purge::{PurgeSandboxes, SandboxPurgeReport};
pub use sandbox::routed_pgcc::SandboxRoutedPgcc;
pub use settings::{CacheSettings, ServiceSettings};
pub use use_cases::list::ListUseCases;
pub use use_cases::sync::{SyncError, SyncUseCases};
pub use use_cases::sync_all_companies::{SyncAllCompanies, SyncAllReport};
pub use use_cases::versions::{ListUseCaseVersions, UseCaseVersionsError};
pub use webhooks::deliver::{
    check_encryption_key, generic_error, AttemptResult, DeliverWebhooks, DeliveryReport,
    KeyCheckError,
};
pub use webhooks::deliveries::{
    DeliveryLogError, WebhookDeliveries, DELIVERY_LOG_DEFAULT_LIMIT, DELIVERY_LOG_MAX_LIMIT,
    HEALTH_MAX_DELIVERIES, HEALTH_WINDOW_HOURS, REPLAY_FAILED_MAX,
};
pub use webhooks::event_cursor::encode_event_cursor;
pub use webhooks::events::{EventListQuery, EventPage, ListEvents, ListEventsError};
pub use webhooks::fair_share::{InFlight, Shares};
pub use webhooks::signing::{
    generate_secret, sign, signature_header, InvalidSecret, SECRET_PREFIX,
};
pub use webhooks::test_url::{
    TestWebhookError, TestWebhookUrl, WebhookTestResult, MAX_CONCURRENT_TESTS_PER_COMPANY,
};
pub use webhooks::urls::{
    ChooseEventsError, DeleteWebhookError, ReenableWebhookError, RegisterWebhookError,
    RegisteredWebhook, RotateSecretError, WebhookUrls,
};

/// Every port the services need, built once by the binary from the adapters.
#[derive(Clone)]
pub struct Ports {
    pub companies: Arc<dyn CompanyRepository>,
    pub api_keys: Arc<dyn ApiKeyRepository>,
    pub use_cases: Arc<dyn UseCaseRepository>,
    pub consent_requests: Arc<dyn ConsentRequestRepository>,
    /// When each confirmed request's status is next checked with the PGCC (the status poller).
    pub status_checks: Arc<dyn StatusCheckSchedule>,
    pub webhook_urls: Arc<dyn WebhookUrlRepository>,
    pub webhook_deliveries: Arc<dyn WebhookDeliveryRepository>,
    pub events: Arc<dyn EventLog>,
    pub webhook_sender: Arc<dyn WebhookSender>,
    pub target_guard: Arc<dyn TargetGuard>,
    pub secret_cipher: Arc<dyn SecretCipher>,
    pub pgcc: Arc<dyn PgccGateway>,
    pub clock: Arc<dyn Clock>,
    pub idempotency_keys: Arc<dyn IdempotencyRepository>,
    /// What the retention purge deletes or blanks.
    pub retention: Arc<dyn RetentionRepository>,
    /// The PGCC status calls every process shares (`workers.pgcc_status_calls_per_second`).
    pub status_call_budget: Arc<dyn PgccCallBudget>,
    /// The record of who read personal data.
    pub access_log: Arc<dyn AccessLog>,
    /// The PGCC's health every process shares (`GET /api/status`).
    pub pgcc_health: Arc<dyn PgccHealthRepository>,
    /// The sandbox companies (`api-key issue --sandbox`, the sandbox purge).
    pub sandboxes: Arc<dyn SandboxRepository>,
    /// The bulk imports (docs/imports.md).
    pub imports: Arc<dyn ImportRepository>,
    /// The PGCC calls the imports' registrations share (`importacao.pgcc_calls_per_second`).
    pub import_call_budget: Arc<dyn PgccCallBudget>,
    /// The evidence files' rows and links (docs/evidencias.md).
    pub evidence_files: Arc<dyn ports::EvidenceFileRepository>,
    /// Where the evidence files' bytes are (PostgreSQL, or an S3-compatible bucket).
    pub evidence_store: Arc<dyn ports::EvidenceStore>,
}

/// Every service, wired to the same ports: what the HTTP layer holds.
#[derive(Clone)]
pub struct Services {
    pub auth: Authenticator,
    pub api_keys: ApiKeyIssuer,
    pub register_company: RegisterCompany,
    pub list_use_cases: ListUseCases,
    pub list_use_case_versions: ListUseCaseVersions,
    /// The companies' annotations of their use cases (`/api/casos-de-uso/{id}/anotacoes`).
    pub use_case_annotations: UseCaseAnnotations,
    /// The consent records in the ISO/IEC TS 27560 form (docs/records.md).
    pub consent_records: ConsentRecords,
    /// `consent-api company profile` (the owner's connection).
    pub set_controller_profile: SetControllerProfile,
    pub sync_use_cases: SyncUseCases,
    pub create_consent_request: CreateConsentRequest,
    pub get_consent_request: GetConsentRequest,
    pub list_consent_requests: ListConsentRequests,
    pub count_consent_requests: CountConsentRequests,
    pub list_events: ListEvents,
    pub export_subject: ExportSubject,
    pub revoke_consent_request: RevokeConsentRequest,
    pub check_consent: CheckConsent,
    /// The bulk imports (`/api/importacoes`).
    pub imports: ImportConsents,
    /// The evidence files (`.../arquivos`, docs/evidencias.md).
    pub evidence_files: EvidenceFiles,
    pub webhook_urls: WebhookUrls,
    pub webhook_deliveries: WebhookDeliveries,
    pub test_webhook_url: TestWebhookUrl,
    /// The record of who read personal data: written by the routes that answer it, paged by
    /// `GET /api/auditoria/acessos`.
    pub personal_data_accesses: PersonalDataAccesses,
    /// `GET /api/status`.
    pub pgcc_status: GetPgccStatus,
    /// The companies' verifiable logs (docs/auditoria.md); built apart because its signing key
    /// comes from the configuration or, in development, from the database.
    pub audit_log: Option<AuditLog>,
    /// Decides whether cached values are still valid; fed by `cache::follow_changes`.
    pub change_tracker: Arc<ChangeTracker>,
    /// The bound on a paged answer's items, in bytes (`server.page_max_bytes`): the services
    /// stop reading there, the HTTP layer cuts the serialized answer there.
    pub page_max_bytes: usize,
}

impl Services {
    /// Each in-process cache by name, with its counters (for `/metrics`).
    pub fn cache_stats(&self) -> [(&'static str, cache::CacheStats); 2] {
        [
            ("api_keys", self.auth.cache_stats()),
            ("unknown_api_keys", self.auth.unknown_key_stats()),
        ]
    }

    /// Whether the caches are in use now (enabled and the change feed alive).
    pub fn caches_in_use(&self) -> bool {
        self.change_tracker.stamp().is_some()
    }

    pub fn new(ports: Ports, settings: &ServiceSettings) -> Self {
        let Ports {
            companies,
            api_keys,
            use_cases,
            consent_requests,
            status_checks: _,
            webhook_urls,
            webhook_deliveries,
            events,
            webhook_sender,
            target_guard,
            secret_cipher,
            pgcc,
            clock,
            idempotency_keys: _,
            retention: _,
            status_call_budget: _,
            access_log,
            pgcc_health,
            sandboxes,
            imports,
            import_call_budget: _,
            evidence_files,
            evidence_store,
        } = ports;
        let evidence_files = EvidenceFiles::new(
            evidence_files,
            evidence_store,
            consent_requests.clone(),
            clock.clone(),
            settings.evidence_limits,
        );
        let change_tracker = Arc::new(ChangeTracker::new(
            settings.cache.enabled,
            settings.cache.max_silence,
        ));
        Self {
            auth: Authenticator::cached(
                api_keys.clone(),
                clock.clone(),
                change_tracker.clone(),
                settings.cache.api_keys,
                settings.cache.api_key_ttl,
            )
            .remembering_unknown(cache::UnknownKeys::new(
                change_tracker.clone(),
                settings.cache.unknown_api_keys,
                settings.cache.unknown_api_key_ttl,
            )),
            api_keys: ApiKeyIssuer::new(companies.clone(), api_keys, clock.clone())
                .with_sandboxes(sandboxes),
            register_company: RegisterCompany::new(companies.clone(), clock.clone()),
            list_use_cases: ListUseCases::new(use_cases.clone()),
            list_use_case_versions: ListUseCaseVersions::new(use_cases.clone()),
            use_case_annotations: UseCaseAnnotations::new(use_cases.clone(), clock.clone()),
            consent_records: ConsentRecords::new(
                consent_requests.clone(),
                use_cases.clone(),
                companies.clone(),
                settings.records.clone(),
            )
            .with_evidence(evidence_files.clone()),
            set_controller_profile: SetControllerProfile::new(companies),
            sync_use_cases: SyncUseCases::new(pgcc.clone(), use_cases.clone(), clock.clone())
                .invalidating(change_tracker.clone()),
            create_consent_request: CreateConsentRequest::new(
                pgcc.clone(),
                consent_requests.clone(),
                clock.clone(),
            ),
            get_consent_request: GetConsentRequest::new(consent_requests.clone(), clock.clone()),
            list_consent_requests: ListConsentRequests::new(
                consent_requests.clone(),
                clock.clone(),
            )
            .within_bytes(settings.page_max_bytes),
            count_consent_requests: CountConsentRequests::new(consent_requests.clone()),
            list_events: ListEvents::new(events),
            export_subject: ExportSubject::new(consent_requests.clone(), clock.clone())
                .within_bytes(settings.page_max_bytes),
            revoke_consent_request: RevokeConsentRequest::new(
                consent_requests.clone(),
                pgcc,
                clock.clone(),
            ),
            check_consent: CheckConsent::new(consent_requests, clock.clone()),
            imports: ImportConsents::new(
                imports,
                use_cases.clone(),
                clock.clone(),
                settings.import_limits,
            )
            .with_evidence(evidence_files.clone()),
            evidence_files,
            pgcc_status: GetPgccStatus::new(pgcc_health),
            test_webhook_url: TestWebhookUrl::new(
                webhook_deliveries.clone(),
                DeliverWebhooks::new(
                    webhook_deliveries.clone(),
                    webhook_sender,
                    target_guard.clone(),
                    secret_cipher.clone(),
                    clock.clone(),
                    settings.clone(),
                ),
                clock.clone(),
                settings.webhook_lease,
            ),
            webhook_urls: WebhookUrls::new(
                webhook_urls.clone(),
                target_guard,
                secret_cipher,
                clock.clone(),
                settings.webhook_secret_overlap,
                settings.webhook_max_urls_per_company,
            ),
            webhook_deliveries: WebhookDeliveries::new(
                webhook_deliveries,
                webhook_urls,
                clock.clone(),
            ),
            personal_data_accesses: PersonalDataAccesses::new(access_log, clock.clone()),
            audit_log: None,
            change_tracker,
            page_max_bytes: settings.page_max_bytes,
        }
    }

    /// The services with the audit routes' service.
    pub fn with_audit_log(mut self, audit_log: AuditLog) -> Self {
        // a consent whose request has an integrity incident is never valid (issue 36)
        self.check_consent = self
            .check_consent
            .clone()
            .with_incidents(audit_log.repository());
        self.audit_log = Some(audit_log);
        self
    }
}

/// The background jobs, wired to the same ports: what the binary runs on timers.
#[derive(Clone)]
pub struct Workers {
    pub poll_consent_statuses: PollConsentStatuses,
    pub reconcile_creations: ReconcileCreations,
    pub purge_idempotency_keys: PurgeIdempotencyKeys,
    pub expire_consent_requests: ExpireConsentRequests,
    pub sync_all_companies: SyncAllCompanies,
    pub deliver_webhooks: DeliverWebhooks,
    pub purge_retention: PurgeRetention,
    /// The sandbox companies' data past `sandbox.retention_days`.
    pub purge_sandboxes: PurgeSandboxes,
    /// The bulk imports' registrations (docs/imports.md).
    pub register_imports: RegisterImports,
    /// The audit log's checkpoints (set by the binary with its signing key).
    pub sign_checkpoints: Option<SignCheckpoints>,
    /// The console's expired CPF searches (set by the binary, which keeps them in PostgreSQL).
    pub purge_console_searches: Option<PurgeConsoleSearches>,
}

impl Workers {
    pub fn new(ports: Ports, settings: &ServiceSettings) -> Self {
        let Ports {
            companies,
            api_keys: _,
            use_cases,
            consent_requests,
            status_checks,
            webhook_urls: _,
            webhook_deliveries,
            events: _,
            webhook_sender,
            target_guard,
            secret_cipher,
            pgcc,
            clock,
            idempotency_keys,
            retention,
            status_call_budget,
            access_log: _,
            pgcc_health: _,
            sandboxes,
            imports,
            import_call_budget,
            evidence_files,
            evidence_store,
        } = ports;
        let evidence = EvidenceFiles::new(
            evidence_files,
            evidence_store,
            consent_requests.clone(),
            clock.clone(),
            settings.evidence_limits,
        );
        Self {
            register_imports: RegisterImports::new(
                imports,
                companies.clone(),
                CreateConsentRequest::new(pgcc.clone(), consent_requests.clone(), clock.clone()),
                pgcc.clone(),
                consent_requests.clone(),
                import_call_budget,
                clock.clone(),
                settings.import_lease,
            )
            .with_evidence(evidence.clone()),
            purge_retention: PurgeRetention::new(retention, clock.clone(), settings.retention)
                .with_evidence(evidence),
            purge_sandboxes: PurgeSandboxes::new(
                sandboxes,
                clock.clone(),
                settings.sandbox_retention,
            ),
            sign_checkpoints: None,
            purge_console_searches: None,
            reconcile_creations: ReconcileCreations::new(
                consent_requests.clone(),
                pgcc.clone(),
                clock.clone(),
            ),
            purge_idempotency_keys: PurgeIdempotencyKeys::new(
                idempotency_keys,
                clock.clone(),
                settings.idempotency_retention,
            ),
            poll_consent_statuses: PollConsentStatuses::new(
                consent_requests.clone(),
                status_checks,
                pgcc.clone(),
                status_call_budget,
                clock.clone(),
                settings.status_checks,
            ),
            expire_consent_requests: ExpireConsentRequests::new(consent_requests, clock.clone()),
            sync_all_companies: SyncAllCompanies::new(
                companies,
                SyncUseCases::new(pgcc, use_cases, clock.clone()),
                clock.clone(),
                settings.sync_period,
            ),
            deliver_webhooks: DeliverWebhooks::new(
                webhook_deliveries,
                webhook_sender,
                target_guard,
                secret_cipher,
                clock,
                settings.clone(),
            ),
        }
    }
}
