//! What the HTTP tests with mocked ports share: the app's state over mocks, given the two ports
//! the tests program (keys and use cases); every other port is a mock that fails the test if
//! called.

use std::sync::Arc;

use application::{Ports, ServiceSettings, Services};
use chrono::Utc;
use delivery_http::ApiState;
use ports::{
    MockApiKeyRepository, MockClock, MockCompanyRepository, MockConsentRequestRepository,
    MockEventLog, MockIdempotencyRepository, MockPgccCallBudget, MockPgccGateway,
    MockPgccHealthRepository, MockRetentionRepository, MockSecretCipher, MockTargetGuard,
    MockUseCaseRepository, MockWebhookDeliveryRepository, MockWebhookSender,
    MockWebhookUrlRepository, SystemClock,
};

pub fn api_state(
    api_keys: MockApiKeyRepository,
    use_cases: MockUseCaseRepository,
) -> Arc<ApiState> {
    let mut clock = MockClock::new();
    clock.expect_now().returning(Utc::now);
    Arc::new(ApiState::new(
        Services::new(
            Ports {
                companies: Arc::new(MockCompanyRepository::new()),
                api_keys: Arc::new(api_keys),
                use_cases: Arc::new(use_cases),
                consent_requests: Arc::new(MockConsentRequestRepository::new()),
                status_checks: Arc::new(ports::MockStatusCheckSchedule::new()),
                webhook_urls: Arc::new(MockWebhookUrlRepository::new()),
                webhook_deliveries: Arc::new(MockWebhookDeliveryRepository::new()),
                events: Arc::new(MockEventLog::new()),
                webhook_sender: Arc::new(MockWebhookSender::new()),
                target_guard: Arc::new(MockTargetGuard::new()),
                secret_cipher: Arc::new(MockSecretCipher::new()),
                pgcc: Arc::new(MockPgccGateway::new()),
                clock: Arc::new(clock),
                idempotency_keys: Arc::new(MockIdempotencyRepository::new()),
                retention: Arc::new(MockRetentionRepository::new()),
                status_call_budget: Arc::new(MockPgccCallBudget::new()),
                access_log: Arc::new(ports::MockAccessLog::new()),
                pgcc_health: Arc::new(MockPgccHealthRepository::new()),
                sandboxes: Arc::new(ports::MockSandboxRepository::new()),
                imports: Arc::new(ports::MockImportRepository::new()),
                import_call_budget: Arc::new(MockPgccCallBudget::new()),
                evidence_files: Arc::new(ports::MockEvidenceFileRepository::new()),
                evidence_store: Arc::new(ports::MockEvidenceStore::new()),
            },
            &ServiceSettings::default(),
        ),
        Arc::new(MockIdempotencyRepository::new()),
        Arc::new(SystemClock),
    ))
}
