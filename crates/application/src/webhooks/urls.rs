//! A company's webhook URLs: register (with its signing secret, within the company's limit and
//! once per URL), list the active ones, rotate the secret, re-enable a disabled one, soft
//! delete.

use std::sync::Arc;

use domain::{Company, EventSelection, ValidationErrors, WebhookUrl};
use ports::{
    Clock, InsertWebhookUrlError, RepoError, SecretCipher, TargetGuard, TargetRefused,
    WebhookUrlRepository,
};
use uuid::Uuid;

use crate::webhooks::signing::generate_secret;

#[derive(Debug, thiserror::Error)]
pub enum RegisterWebhookError {
    /// The URL broke a rule, was refused by the target guard, or the company already has its
    /// maximum of URLs (field `url`); nothing was stored.
    #[error(transparent)]
    Invalid(ValidationErrors),
    /// The company already has this URL (normalized) registered and not removed.
    #[error("webhook URL already registered")]
    Duplicate,
    /// The company already has its share of DNS lookups under way in this process; nothing was
    /// looked up or stored. The same registration may pass once one of them ends.
    #[error("too many DNS lookups under way for the company")]
    LookupsBusy,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Debug, thiserror::Error)]
pub enum DeleteWebhookError {
    /// No active webhook URL of this company has this id (absent, another company's, or
    /// already removed).
    #[error("webhook URL not found")]
    NotFound,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Debug, thiserror::Error)]
pub enum RotateSecretError {
    /// No active webhook URL of this company has this id (absent, another company's, or
    /// removed); nothing changed.
    #[error("webhook URL not found")]
    NotFound,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Debug, thiserror::Error)]
pub enum ChooseEventsError {
    /// `eventos` names an unknown type or is empty (fields `eventos[i]`, `eventos`); nothing
    /// changed.
    #[error(transparent)]
    Invalid(ValidationErrors),
    /// No webhook URL of this company has this id (absent, another company's, or removed).
    #[error("webhook URL not found")]
    NotFound,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Debug, thiserror::Error)]
pub enum ReenableWebhookError {
    /// No webhook URL of this company has this id (absent, another company's, or removed).
    #[error("webhook URL not found")]
    NotFound,
    #[error(transparent)]
    Repo(#[from] RepoError),
}

/// A newly registered URL with its signing secret in plaintext: the only time the company
/// sees it. `Debug` hides the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct RegisteredWebhook {
    pub webhook: WebhookUrl,
    /// `whsec_...`: shown once, stored only encrypted.
    pub secret: String,
}

impl std::fmt::Debug for RegisteredWebhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredWebhook")
            .field("webhook", &self.webhook)
            .field("segredo", &"<redacted>")
            .finish()
    }
}

#[derive(Clone)]
pub struct WebhookUrls {
    webhook_urls: Arc<dyn WebhookUrlRepository>,
    guard: Arc<dyn TargetGuard>,
    cipher: Arc<dyn SecretCipher>,
    clock: Arc<dyn Clock>,
    secret_overlap: chrono::Duration,
    max_per_company: u32,
}

impl WebhookUrls {
    pub fn new(
        webhook_urls: Arc<dyn WebhookUrlRepository>,
        guard: Arc<dyn TargetGuard>,
        cipher: Arc<dyn SecretCipher>,
        clock: Arc<dyn Clock>,
        secret_overlap: chrono::Duration,
        max_per_company: u32,
    ) -> Self {
        Self {
            webhook_urls,
            guard,
            cipher,
            clock,
            secret_overlap,
            max_per_company,
        }
    }

    /// Stores `url` (trimmed) as a new active webhook URL of the company, with a new signing
    /// secret stored encrypted, and returns the secret in plaintext. The URL must pass
    /// [`WebhookUrl::validate_url`] and then the target guard; either failure is `Invalid` on
    /// field `url` and stores nothing. So is a company that already has `max_per_company` URLs
    /// not removed: disabled ones count, since `reativar` can bring each back without a new
    /// registration. The same URL (by [`WebhookUrl::normalized`]) already registered and not
    /// removed is `Duplicate`. The limit and the duplicate are checked before the guard
    /// resolves anything (a company at its limit, or repeating a URL, costs no lookup), and
    /// again by the insert, which holds them under concurrent registrations. A guard refusing
    /// because the company's lookups are all under way is `LookupsBusy`.
    pub fn register(
        &self,
        company: &Company,
        url: &str,
    ) -> Result<RegisteredWebhook, RegisterWebhookError> {
        self.register_choosing(company, url, None)
    }

    /// [`WebhookUrls::register`] of a URL that receives only the types named in `eventos`
    /// (`None`: every type, including ones added later; see [`EventSelection::parse`]). A
    /// broken rule of `eventos` is reported with one of `url`, all at once, before the target
    /// guard resolves anything.
    pub fn register_choosing(
        &self,
        company: &Company,
        url: &str,
        events: Option<&[String]>,
    ) -> Result<RegisteredWebhook, RegisterWebhookError> {
        let url = WebhookUrl::validate_url(url).map_err(|e| e.to_string());
        let events = EventSelection::parse(events);
        let (url, events) = match (url, events) {
            (Ok(url), Ok(events)) => (url, events),
            (url, events) => {
                let mut errors = ValidationErrors::default();
                if let Err(message) = url {
                    errors.push("url", message);
                }
                if let Err(broken) = events {
                    errors.0.extend(broken.0);
                }
                return Err(RegisterWebhookError::Invalid(errors));
            }
        };
        self.refuse_known_outcome(company, &url)?;
        self.guard
            .check(company.id, &url)
            .map_err(|refused| match refused {
                TargetRefused::LookupsBusy => RegisterWebhookError::LookupsBusy,
                refused => invalid_url(refused.to_string()),
            })?;
        let secret = generate_secret();
        let encrypted = self.cipher.encrypt(&secret);
        let webhook = WebhookUrl {
            id: Uuid::new_v4(),
            company_id: company.id,
            url,
            created_at: self.clock.now(),
            removed_at: None,
            disabled_at: None,
            failing_since: None,
            disabled_reason: None,
            events,
        };
        self.webhook_urls
            .insert(&webhook, &encrypted, self.max_per_company)
            .map_err(|e| match e {
                InsertWebhookUrlError::LimitReached => self.limit_reached(),
                InsertWebhookUrlError::Duplicate => RegisterWebhookError::Duplicate,
                InsertWebhookUrlError::Repo(e) => RegisterWebhookError::Repo(e),
            })?;
        tracing::info!(empresa_id = %company.id, webhook_url_id = %webhook.id, "webhook URL registered");
        Ok(RegisteredWebhook { webhook, secret })
    }

    /// The insert's own refusals, found before any lookup: the company at its limit, or with
    /// this URL already.
    fn refuse_known_outcome(
        &self,
        company: &Company,
        url: &str,
    ) -> Result<(), RegisterWebhookError> {
        let registered = self.webhook_urls.list_active(company.id)?;
        let normalized = WebhookUrl::normalized(url);
        if registered
            .iter()
            .any(|w| WebhookUrl::normalized(&w.url) == normalized)
        {
            return Err(RegisterWebhookError::Duplicate);
        }
        if registered.len() >= self.max_per_company as usize {
            return Err(self.limit_reached());
        }
        Ok(())
    }

    fn limit_reached(&self) -> RegisterWebhookError {
        invalid_url(format!(
            "a empresa já tem o máximo de {} URLs de webhook (desativadas incluídas); remova uma antes de registrar outra",
            self.max_per_company
        ))
    }

    /// The company's active webhook URLs, oldest first.
    pub fn list(&self, company: &Company) -> Result<Vec<WebhookUrl>, RepoError> {
        self.webhook_urls.list_active(company.id)
    }

    /// Gives the company's active webhook URL `id` a new signing secret (stored encrypted) and
    /// returns it in plaintext; the previous secret keeps signing alongside it for the
    /// configured overlap.
    pub fn rotate_secret(&self, company: &Company, id: Uuid) -> Result<String, RotateSecretError> {
        let secret = generate_secret();
        let encrypted = self.cipher.encrypt(&secret);
        let previous_valid_until = self.clock.now() + self.secret_overlap;
        if !self
            .webhook_urls
            .rotate_secret(company.id, id, &encrypted, previous_valid_until)?
        {
            return Err(RotateSecretError::NotFound);
        }
        tracing::info!(empresa_id = %company.id, webhook_url_id = %id, "webhook secret rotated");
        Ok(secret)
    }

    /// Re-enables the company's webhook URL `id` disabled for failing: same id, secret and log;
    /// its pending deliveries become due again and new events reach it. Re-enabling an active
    /// URL changes nothing and answers it too (so a retried call is harmless).
    pub fn reenable(
        &self,
        company: &Company,
        id: Uuid,
    ) -> Result<WebhookUrl, ReenableWebhookError> {
        let webhook = self
            .webhook_urls
            .reenable(company.id, id, self.clock.now())?
            .ok_or(ReenableWebhookError::NotFound)?;
        tracing::info!(empresa_id = %company.id, webhook_url_id = %id, "webhook URL re-enabled");
        Ok(webhook)
    }

    /// Sets which events the company's webhook URL `id` receives from now on: the types named
    /// in `eventos`, or every type (including ones added later) for `None`.
    pub fn choose_events(
        &self,
        company: &Company,
        id: Uuid,
        events: Option<&[String]>,
    ) -> Result<WebhookUrl, ChooseEventsError> {
        let events = EventSelection::parse(events).map_err(ChooseEventsError::Invalid)?;
        let webhook = self
            .webhook_urls
            .set_events(company.id, id, &events)?
            .ok_or(ChooseEventsError::NotFound)?;
        tracing::info!(empresa_id = %company.id, webhook_url_id = %id, "webhook URL events chosen");
        Ok(webhook)
    }

    /// Soft deletes the company's active webhook URL `id`.
    pub fn delete(&self, company: &Company, id: Uuid) -> Result<(), DeleteWebhookError> {
        if !self
            .webhook_urls
            .soft_delete(company.id, id, self.clock.now())?
        {
            return Err(DeleteWebhookError::NotFound);
        }
        tracing::info!(empresa_id = %company.id, webhook_url_id = %id, "webhook URL removed");
        Ok(())
    }
}

fn invalid_url(message: String) -> RegisterWebhookError {
    RegisterWebhookError::Invalid(ValidationErrors::single("url", message))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use domain::FieldError;
    use ports::{EncryptedSecret, MockSecretCipher, MockTargetGuard, MockWebhookUrlRepository};

    use super::*;
    use crate::test_support::{company, fixed_clock, now};
    use crate::webhooks::signing::sign;

    fn overlap() -> chrono::Duration {
        chrono::Duration::hours(24)
    }

    fn allowing_guard() -> MockTargetGuard {
        let mut guard = MockTargetGuard::new();
        guard.expect_check().returning(|_, _| Ok(()));
        guard
    }

    /// Encrypts `s` as `enc:s`.
    fn cipher() -> MockSecretCipher {
        recording_cipher(Arc::default())
    }

    /// Encrypts `s` as `enc:s` and records each plaintext it was given.
    fn recording_cipher(plaintexts: Arc<Mutex<Vec<String>>>) -> MockSecretCipher {
        let mut cipher = MockSecretCipher::new();
        cipher.expect_encrypt().returning(move |plain| {
            plaintexts.lock().unwrap().push(plain.to_owned());
            EncryptedSecret(format!("enc:{plain}"))
        });
        cipher.expect_decrypt().times(0);
        cipher
    }

    fn service_with(
        repo: MockWebhookUrlRepository,
        guard: MockTargetGuard,
        cipher: MockSecretCipher,
    ) -> WebhookUrls {
        WebhookUrls::new(
            Arc::new(repo),
            Arc::new(guard),
            Arc::new(cipher),
            fixed_clock(),
            overlap(),
            MAX,
        )
    }

    const MAX: u32 = 10;

    fn service(repo: MockWebhookUrlRepository) -> WebhookUrls {
        service_with(repo, allowing_guard(), cipher())
    }

    /// A repository of a company with no URL yet (the check before the lookup finds none).
    fn no_urls_yet() -> MockWebhookUrlRepository {
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_list_active()
            .withf(|company_id| *company_id == company().id)
            .returning(|_| Ok(Vec::new()));
        repo
    }

    fn webhook(url: &str) -> WebhookUrl {
        WebhookUrl {
            id: Uuid::new_v4(),
            company_id: company().id,
            url: url.to_owned(),
            created_at: now(),
            removed_at: None,
            disabled_at: None,
            failing_since: None,
            disabled_reason: None,
            events: domain::EventSelection::All,
        }
    }

    fn names(raw: &[&str]) -> Vec<String> {
        raw.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_registration_choosing_events_stores_only_those_types() {
        let mut repo = no_urls_yet();
        repo.expect_insert()
            .withf(|w, _, _| {
                w.events == EventSelection::Only(vec![domain::EventType::RequestRevoked])
            })
            .times(1)
            .returning(|_, _, _| Ok(()));

        let registered = service(repo)
            .register_choosing(
                &company(),
                "https://example.com/hook",
                Some(&names(&["solicitacao.revogada"])),
            )
            .unwrap();

        assert_eq!(
            registered.webhook.events,
            EventSelection::Only(vec![domain::EventType::RequestRevoked])
        );
    }

    #[test]
    fn a_bad_url_and_unknown_events_are_reported_together_and_nothing_is_checked_or_stored() {
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_insert().times(0);
        let mut guard = MockTargetGuard::new();
        guard.expect_check().times(0);

        let result = service_with(repo, guard, cipher()).register_choosing(
            &company(),
            "ftp://x",
            Some(&names(&["solicitacao.criada", "nada"])),
        );

        let Err(RegisterWebhookError::Invalid(errors)) = result else {
            panic!("{result:?}");
        };
        let fields: Vec<&str> = errors.fields().iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["url", "eventos[1]"]);
    }

    #[test]
    fn choosing_events_stores_the_selection_and_answers_the_url_or_not_found() {
        let mut repo = MockWebhookUrlRepository::new();
        let id = Uuid::from_u128(7);
        repo.expect_set_events()
            .withf(move |e, i, sel| *e == company().id && *i == id && *sel == EventSelection::All)
            .times(1)
            .returning(|_, _, _| Ok(Some(webhook("https://example.com/hook"))));
        repo.expect_set_events()
            .withf(move |_, i, _| *i != id)
            .times(1)
            .returning(|_, _, _| Ok(None));
        let service = service(repo);

        assert!(service.choose_events(&company(), id, None).is_ok());
        assert!(matches!(
            service.choose_events(
                &company(),
                Uuid::from_u128(8),
                Some(&names(&["solicitacao.criada"]))
            ),
            Err(ChooseEventsError::NotFound)
        ));
        assert!(matches!(
            service.choose_events(&company(), id, Some(&[])),
            Err(ChooseEventsError::Invalid(_))
        ));
    }

    #[test]
    fn registering_a_valid_url_checks_it_encrypts_a_new_secret_and_stores_both() {
        let stored = Arc::new(Mutex::new(Vec::<(WebhookUrl, EncryptedSecret)>::new()));
        let sink = stored.clone();
        let mut repo = no_urls_yet();
        repo.expect_insert()
            .withf(|_, _, max| *max == MAX)
            .times(1)
            .returning(move |w, s, _| {
                sink.lock().unwrap().push((w.clone(), s.clone()));
                Ok(())
            });
        let mut guard = MockTargetGuard::new();
        guard
            .expect_check()
            .withf(|company_id, url| {
                *company_id == company().id && url == "https://example.com/hooks/consent"
            })
            .times(1)
            .returning(|_, _| Ok(()));
        let plaintexts = Arc::new(Mutex::new(Vec::<String>::new()));

        let registered = service_with(repo, guard, recording_cipher(plaintexts.clone()))
            .register(&company(), "  https://example.com/hooks/consent  ")
            .unwrap();

        let webhook = &registered.webhook;
        assert_eq!(webhook.url, "https://example.com/hooks/consent");
        assert_eq!(webhook.company_id, company().id);
        assert_eq!(webhook.created_at, now());
        assert_eq!(webhook.removed_at, None);
        assert_eq!(webhook.disabled_at, None);
        assert_eq!(webhook.id.get_version_num(), 4);
        assert!(
            registered.secret.starts_with("whsec_"),
            "{}",
            registered.secret
        );
        assert!(sign(&registered.secret, "msg", 1, "{}").is_ok());
        assert_eq!(*plaintexts.lock().unwrap(), vec![registered.secret.clone()]);
        assert_eq!(
            *stored.lock().unwrap(),
            vec![(
                webhook.clone(),
                EncryptedSecret(format!("enc:{}", registered.secret))
            )]
        );
    }

    #[test]
    fn each_registration_gets_its_own_secret() {
        let mut repo = no_urls_yet();
        repo.expect_insert().times(2).returning(|_, _, _| Ok(()));
        let service = service_with(repo, allowing_guard(), cipher());

        let a = service.register(&company(), "https://a.example/h").unwrap();
        let b = service.register(&company(), "https://a.example/h").unwrap();

        assert_ne!(a.secret, b.secret);
        assert_ne!(a.webhook.id, b.webhook.id);
    }

    #[test]
    fn the_debug_form_of_a_registration_hides_the_secret() {
        let registered = RegisteredWebhook {
            webhook: webhook("https://a.example/h"),
            secret: "whsec_c2VncmVkbw==".to_owned(),
        };

        let debug = format!("{registered:?}");

        assert!(!debug.contains("c2VncmVkbw"), "{debug}");
        assert!(debug.contains("<redacted>"), "{debug}");
        assert!(debug.contains("https://a.example/h"), "{debug}");
    }

    #[test]
    fn registering_an_invalid_url_is_invalid_on_the_url_field_and_checks_encrypts_and_stores_nothing(
    ) {
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_insert().times(0);
        let mut guard = MockTargetGuard::new();
        guard.expect_check().times(0);
        let mut cipher = MockSecretCipher::new();
        cipher.expect_encrypt().times(0);
        let service = service_with(repo, guard, cipher);

        for raw in ["", "not a url", "ftp://example.com/hook", "/relative/path"] {
            match service.register(&company(), raw) {
                Err(RegisterWebhookError::Invalid(errors)) => {
                    assert_eq!(errors.fields().len(), 1, "{raw:?}");
                    assert_eq!(errors.fields()[0].field, "url", "{raw:?}");
                }
                other => panic!("{raw:?}: expected Invalid, got {other:?}"),
            }
        }
    }

    #[test]
    fn registering_a_url_longer_than_the_limit_is_invalid_and_stores_nothing() {
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_insert().times(0);
        let mut guard = MockTargetGuard::new();
        guard.expect_check().times(0);
        let raw = format!("https://example.com/{}", "a".repeat(WebhookUrl::MAX_LEN));

        let result = service_with(repo, guard, cipher()).register(&company(), &raw);

        assert!(
            matches!(result, Err(RegisterWebhookError::Invalid(_))),
            "{result:?}"
        );
    }

    #[test]
    fn registering_a_url_the_guard_refuses_is_invalid_on_the_url_field_with_its_reason() {
        for refused in [
            TargetRefused::HttpsRequired,
            TargetRefused::Unresolvable,
            TargetRefused::NonPublicAddress,
        ] {
            let mut repo = no_urls_yet();
            repo.expect_insert().times(0);
            let mut guard = MockTargetGuard::new();
            let answer = refused.clone();
            guard
                .expect_check()
                .withf(|_, url| url == "http://10.0.0.1/hook")
                .times(1)
                .returning(move |_, _| Err(answer.clone()));
            let mut cipher = MockSecretCipher::new();
            cipher.expect_encrypt().times(0);

            let result =
                service_with(repo, guard, cipher).register(&company(), " http://10.0.0.1/hook ");

            match result {
                Err(RegisterWebhookError::Invalid(errors)) => assert_eq!(
                    errors.fields(),
                    [FieldError::new("url", refused.to_string())],
                    "{refused:?}"
                ),
                other => panic!("{refused:?}: expected Invalid, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_failing_insert_is_a_repository_error() {
        let mut repo = no_urls_yet();
        repo.expect_insert().times(1).returning(|_, _, _| {
            Err(InsertWebhookUrlError::Repo(RepoError::Unavailable(
                anyhow::anyhow!("pool timeout"),
            )))
        });

        let result = service(repo).register(&company(), "https://example.com/hook");

        assert!(
            matches!(
                result,
                Err(RegisterWebhookError::Repo(RepoError::Unavailable(_)))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn rotating_stores_a_new_encrypted_secret_keeping_the_previous_one_for_the_overlap() {
        let id = Uuid::new_v4();
        let company_id = company().id;
        let stored = Arc::new(Mutex::new(Vec::<EncryptedSecret>::new()));
        let sink = stored.clone();
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_rotate_secret()
            .withf(move |company, got, _, until| {
                *company == company_id && *got == id && *until == now() + overlap()
            })
            .times(1)
            .returning(move |_, _, secret, _| {
                sink.lock().unwrap().push(secret.clone());
                Ok(true)
            });
        let mut guard = MockTargetGuard::new();
        guard.expect_check().times(0);
        let plaintexts = Arc::new(Mutex::new(Vec::<String>::new()));

        let secret = service_with(repo, guard, recording_cipher(plaintexts.clone()))
            .rotate_secret(&company(), id)
            .unwrap();

        assert!(secret.starts_with("whsec_"), "{secret}");
        assert!(sign(&secret, "msg", 1, "{}").is_ok());
        assert_eq!(*plaintexts.lock().unwrap(), vec![secret.clone()]);
        assert_eq!(
            *stored.lock().unwrap(),
            vec![EncryptedSecret(format!("enc:{secret}"))]
        );
    }

    #[test]
    fn rotating_the_secret_of_an_absent_another_companys_or_removed_url_is_not_found() {
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_rotate_secret()
            .times(1)
            .returning(|_, _, _, _| Ok(false));

        let result = service(repo).rotate_secret(&company(), Uuid::new_v4());

        assert!(
            matches!(result, Err(RotateSecretError::NotFound)),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_rotation_is_a_repository_error() {
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_rotate_secret()
            .times(1)
            .returning(|_, _, _, _| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));

        let result = service(repo).rotate_secret(&company(), Uuid::new_v4());

        assert!(
            matches!(
                result,
                Err(RotateSecretError::Repo(RepoError::Unavailable(_)))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn listing_returns_the_companys_active_urls() {
        let expected = vec![
            webhook("https://a.example/h"),
            webhook("https://b.example/h"),
        ];
        let answer = expected.clone();
        let company_id = company().id;
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_list_active()
            .withf(move |company| *company == company_id)
            .times(1)
            .returning(move |_| Ok(answer.clone()));

        let listed = service(repo).list(&company()).unwrap();

        assert_eq!(listed, expected);
    }

    #[test]
    fn a_failing_list_is_a_repository_error() {
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_list_active()
            .times(1)
            .returning(|_| Err(RepoError::Unexpected(anyhow::anyhow!("boom"))));

        let result = service(repo).list(&company());

        assert!(
            matches!(result, Err(RepoError::Unexpected(_))),
            "{result:?}"
        );
    }

    #[test]
    fn deleting_an_active_url_soft_deletes_it_for_the_company_at_the_clock_time() {
        let id = Uuid::new_v4();
        let company_id = company().id;
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_soft_delete()
            .withf(move |company, got, at| *company == company_id && *got == id && *at == now())
            .times(1)
            .returning(|_, _, _| Ok(true));

        service(repo).delete(&company(), id).unwrap();
    }

    #[test]
    fn deleting_an_absent_another_companys_or_removed_url_is_not_found() {
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_soft_delete()
            .times(1)
            .returning(|_, _, _| Ok(false));

        let result = service(repo).delete(&company(), Uuid::new_v4());

        assert!(
            matches!(result, Err(DeleteWebhookError::NotFound)),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_delete_is_a_repository_error() {
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_soft_delete()
            .times(1)
            .returning(|_, _, _| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));

        let result = service(repo).delete(&company(), Uuid::new_v4());

        assert!(
            matches!(
                result,
                Err(DeleteWebhookError::Repo(RepoError::Unavailable(_)))
            ),
            "{result:?}"
        );
    }

    #[test]
    fn registering_past_the_companys_limit_found_only_by_the_insert_is_invalid_on_the_url_field_naming_the_limit(
    ) {
        let mut repo = no_urls_yet();
        repo.expect_insert()
            .withf(|_, _, max| *max == MAX)
            .times(1)
            .returning(|_, _, _| Err(InsertWebhookUrlError::LimitReached));

        let result = service(repo).register(&company(), "https://example.com/hook");

        match result {
            Err(RegisterWebhookError::Invalid(errors)) => {
                assert_eq!(errors.fields().len(), 1);
                assert_eq!(errors.fields()[0].field, "url");
                assert!(
                    errors.fields()[0].message.contains("10"),
                    "{:?}",
                    errors.fields()
                );
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn registering_a_url_the_insert_finds_already_registered_is_a_duplicate() {
        let mut repo = no_urls_yet();
        repo.expect_insert()
            .times(1)
            .returning(|_, _, _| Err(InsertWebhookUrlError::Duplicate));

        let result = service(repo).register(&company(), "https://example.com/hook");

        assert!(
            matches!(result, Err(RegisterWebhookError::Duplicate)),
            "{result:?}"
        );
    }

    #[test]
    fn reenabling_clears_the_disabling_of_the_companys_url_at_the_clock_time_and_answers_it() {
        let id = Uuid::new_v4();
        let company_id = company().id;
        let answer = webhook("https://a.example/h");
        let expected = answer.clone();
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_reenable()
            .withf(move |company, got, at| *company == company_id && *got == id && *at == now())
            .times(1)
            .returning(move |_, _, _| Ok(Some(answer.clone())));

        let reenabled = service(repo).reenable(&company(), id).unwrap();

        assert_eq!(reenabled, expected);
    }

    #[test]
    fn reenabling_an_absent_another_companys_or_removed_url_is_not_found() {
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_reenable()
            .times(1)
            .returning(|_, _, _| Ok(None));

        let result = service(repo).reenable(&company(), Uuid::new_v4());

        assert!(
            matches!(result, Err(ReenableWebhookError::NotFound)),
            "{result:?}"
        );
    }

    /// A guard that must not be asked anything.
    fn untouched_guard() -> MockTargetGuard {
        let mut guard = MockTargetGuard::new();
        guard.expect_check().times(0);
        guard.expect_resolve().times(0);
        guard
    }

    #[test]
    fn a_company_at_its_limit_is_refused_before_any_lookup_and_nothing_is_stored() {
        let mut repo = MockWebhookUrlRepository::new();
        let full: Vec<WebhookUrl> = (0..MAX)
            .map(|n| webhook(&format!("https://h{n}.example/")))
            .collect();
        repo.expect_list_active()
            .times(1)
            .returning(move |_| Ok(full.clone()));
        repo.expect_insert().times(0);

        let result = service_with(repo, untouched_guard(), cipher())
            .register(&company(), "https://never-resolved.example/hook");

        match result {
            Err(RegisterWebhookError::Invalid(errors)) => {
                assert_eq!(errors.fields()[0].field, "url");
                assert!(errors.fields()[0].message.contains("10"), "{errors:?}");
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn a_url_the_company_already_has_is_a_duplicate_before_any_lookup_and_nothing_is_stored() {
        let mut repo = MockWebhookUrlRepository::new();
        let registered = vec![webhook("https://Example.com/hook")];
        repo.expect_list_active()
            .times(1)
            .returning(move |_| Ok(registered.clone()));
        repo.expect_insert().times(0);

        let result = service_with(repo, untouched_guard(), cipher())
            .register(&company(), "https://example.COM/hook");

        assert!(
            matches!(result, Err(RegisterWebhookError::Duplicate)),
            "{result:?}"
        );
    }

    #[test]
    fn a_guard_with_the_companys_lookups_all_under_way_is_lookups_busy_and_nothing_is_stored() {
        let mut repo = no_urls_yet();
        repo.expect_insert().times(0);
        let mut guard = MockTargetGuard::new();
        guard
            .expect_check()
            .times(1)
            .returning(|_, _| Err(TargetRefused::LookupsBusy));
        let mut cipher = MockSecretCipher::new();
        cipher.expect_encrypt().times(0);

        let result =
            service_with(repo, guard, cipher).register(&company(), "https://slow.example/hook");

        assert!(
            matches!(result, Err(RegisterWebhookError::LookupsBusy)),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_read_before_the_lookup_is_a_repository_error_and_nothing_is_looked_up() {
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_list_active()
            .times(1)
            .returning(|_| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));
        repo.expect_insert().times(0);

        let result = service_with(repo, untouched_guard(), cipher())
            .register(&company(), "https://example.com/hook");

        assert!(
            matches!(
                result,
                Err(RegisterWebhookError::Repo(RepoError::Unavailable(_)))
            ),
            "{result:?}"
        );
    }
}
