//! Traits the core needs from the world. Each one documents its error contract; adapters
//! translate database and HTTP failures into these variants. With the `mock` feature every trait
//! gets a mockall mock (`MockUseCaseRepository`, ...) for the application's unit tests.

pub mod access_log;
pub mod api_key_repository;
pub mod audit_log_repository;
pub mod change_feed;
pub mod clock;
pub mod company_repository;
pub mod consent_request_repository;
pub mod console_oidc;
pub mod console_search_store;
pub mod console_session_store;
pub mod event_log;
pub mod evidence_files;
pub mod idempotency_repository;
pub mod import_repository;
pub mod operations;
pub mod pgcc_call_budget;
pub mod pgcc_gateway;
pub mod pgcc_health_repository;
pub mod repo_error;
pub mod retention_repository;
pub mod sandbox_repository;
pub mod secret_cipher;
pub mod status_check_schedule;
pub mod target_guard;
pub mod use_case_repository;
pub mod webhook_delivery_repository;
pub mod webhook_sender;
pub mod webhook_url_repository;
pub mod witness_gateway;

pub use access_log::{AccessFilter, AccessLog, AccessRecord};
pub use api_key_repository::{
    ApiKeyRecord, ApiKeyRepository, ApiKeySummary, ResolvedApiKey, RevokeApiKeyOutcome,
};
pub use audit_log_repository::{
    AuditEntry, AuditLogRepository, IndexedEntry, IntegrityIncident, LeafHash, LinkedEntry,
    LogPosition, PublishedKey, StoredCheckpoint, TreeNode, UnloggedRequest,
};
pub use change_feed::{CacheChange, ChangeFeed};
pub use clock::{Clock, SystemClock};
pub use company_repository::{CompanyRepository, CreateCompanyError};
pub use consent_request_repository::{
    Confirmation, ConsentFilter, ConsentRequestRecord, ConsentRequestRepository, CreationRecord,
    CreationStart, DailyCount, ListCursor, RequestSummary, UnfinishedCreation,
};
pub use console_oidc::{ConsoleOidcStore, OidcProvider, PendingSignIn};
pub use console_search_store::ConsoleSearchStore;
pub use console_session_store::{ConsoleSessionStore, SessionHolder, StoredSession};
pub use event_log::{EventFilter, EventLog, EventPosition, StoredEvent};
pub use evidence_files::{
    EvidenceFileRepository, EvidenceStore, ExpiredObject, LocatedFile, StorageKind, StoredFile,
    ABANDONED_UPLOAD_HOURS, EVIDENCE_PART_BYTES,
};
pub use idempotency_repository::{
    IdempotencyBegin, IdempotencyClaim, IdempotencyRepository, StoredOutcome,
};
pub use import_repository::{
    ClaimedLine, ImportBacklog, ImportRepository, LineOutcome, StagedLine, TakenExternalId,
    TakenKey,
};
pub use operations::{
    Backlog, HealthProbe, OperationalStats, PoolState, ProbeReport, ReadRouting, ReplicaState,
};
pub use pgcc_call_budget::PgccCallBudget;
pub use pgcc_gateway::SANDBOX_PGCC_ID_PREFIX;
pub use pgcc_gateway::{
    PgccConsentCreated, PgccConsentStatus, PgccError, PgccGateway, PgccNewConsent,
};
pub use pgcc_health_repository::{PgccCallSecond, PgccHealthRepository};
pub use repo_error::RepoError;
pub use retention_repository::RetentionRepository;
pub use sandbox_repository::{SandboxPurged, SandboxRepository};
pub use secret_cipher::SecretCipher;
pub use status_check_schedule::{
    DueStatusChecks, NextStatusCheck, ScheduledStatusCheck, StatusCheckItem, StatusCheckSchedule,
    StatusSweepLane, StatusSweepLease,
};
pub use target_guard::{CheckedTarget, TargetGuard, TargetRefused};
pub use use_case_repository::UseCaseRepository;
pub use webhook_delivery_repository::{
    CompanyDue, DeliveryAttempt, DeliveryFilter, DeliveryOutcome, DeliveryRecord, DueDelivery,
    Settled, UrlHealth, WebhookDeliveryRepository, DELIVERY_STATUSES, REQUEST_BODY_SHOWN,
    RESPONSE_BODY_KEPT, RESPONSE_BODY_READ_BYTES,
};
pub use webhook_sender::{SendFailure, SendReport, WebhookSender, TRACEPARENT_HEADER};
pub use webhook_url_repository::{EncryptedSecret, InsertWebhookUrlError, WebhookUrlRepository};
pub use witness_gateway::{WitnessAnswer, WitnessGateway};

#[cfg(feature = "mock")]
pub use access_log::MockAccessLog;
#[cfg(feature = "mock")]
pub use api_key_repository::MockApiKeyRepository;
#[cfg(feature = "mock")]
pub use audit_log_repository::MockAuditLogRepository;
#[cfg(feature = "mock")]
pub use change_feed::MockChangeFeed;
#[cfg(feature = "mock")]
pub use clock::MockClock;
#[cfg(feature = "mock")]
pub use company_repository::MockCompanyRepository;
#[cfg(feature = "mock")]
pub use consent_request_repository::MockConsentRequestRepository;
#[cfg(feature = "mock")]
pub use console_oidc::MockConsoleOidcStore;
#[cfg(feature = "mock")]
pub use console_search_store::MockConsoleSearchStore;
#[cfg(feature = "mock")]
pub use console_session_store::MockConsoleSessionStore;
#[cfg(feature = "mock")]
pub use event_log::MockEventLog;
#[cfg(feature = "mock")]
pub use evidence_files::{MockEvidenceFileRepository, MockEvidenceStore};
#[cfg(feature = "mock")]
pub use idempotency_repository::MockIdempotencyRepository;
#[cfg(feature = "mock")]
pub use import_repository::MockImportRepository;
#[cfg(feature = "mock")]
pub use operations::{MockHealthProbe, MockOperationalStats};
#[cfg(feature = "mock")]
pub use pgcc_call_budget::MockPgccCallBudget;
#[cfg(feature = "mock")]
pub use pgcc_gateway::MockPgccGateway;
#[cfg(feature = "mock")]
pub use pgcc_health_repository::MockPgccHealthRepository;
#[cfg(feature = "mock")]
pub use retention_repository::MockRetentionRepository;
#[cfg(feature = "mock")]
pub use sandbox_repository::MockSandboxRepository;
#[cfg(feature = "mock")]
pub use secret_cipher::MockSecretCipher;
#[cfg(feature = "mock")]
pub use status_check_schedule::MockStatusCheckSchedule;
#[cfg(feature = "mock")]
pub use target_guard::MockTargetGuard;
#[cfg(feature = "mock")]
pub use use_case_repository::MockUseCaseRepository;
#[cfg(feature = "mock")]
pub use webhook_delivery_repository::MockWebhookDeliveryRepository;
#[cfg(feature = "mock")]
pub use webhook_sender::MockWebhookSender;
#[cfg(feature = "mock")]
pub use webhook_url_repository::MockWebhookUrlRepository;
