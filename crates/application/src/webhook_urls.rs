//! A company's webhook URLs: register, list the active ones, soft delete.

use std::sync::Arc;

use domain::{Company, ValidationErrors, WebhookUrl};
use ports::{Clock, RepoError, WebhookUrlRepository};
use uuid::Uuid;

#[derive(Debug, thiserror::Error)]
pub enum RegisterWebhookError {
    /// The URL broke a rule (field `url`); nothing was stored.
    #[error(transparent)]
    Invalid(ValidationErrors),
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

#[derive(Clone)]
pub struct WebhookUrls {
    webhook_urls: Arc<dyn WebhookUrlRepository>,
    clock: Arc<dyn Clock>,
}

impl WebhookUrls {
    pub fn new(webhook_urls: Arc<dyn WebhookUrlRepository>, clock: Arc<dyn Clock>) -> Self {
        Self {
            webhook_urls,
            clock,
        }
    }

    /// Stores `url` (trimmed) as a new active webhook URL of the company.
    pub fn register(
        &self,
        empresa: &Company,
        url: &str,
    ) -> Result<WebhookUrl, RegisterWebhookError> {
        let url = WebhookUrl::validate_url(url).map_err(|e| {
            RegisterWebhookError::Invalid(ValidationErrors::single("url", e.to_string()))
        })?;
        let webhook = WebhookUrl {
            id: Uuid::new_v4(),
            empresa_id: empresa.id,
            url,
            criado_em: self.clock.now(),
            removido_em: None,
        };
        self.webhook_urls.insert(&webhook)?;
        tracing::info!(empresa_id = %empresa.id, webhook_url_id = %webhook.id, "webhook URL registered");
        Ok(webhook)
    }

    /// The company's active webhook URLs, oldest first.
    pub fn list(&self, empresa: &Company) -> Result<Vec<WebhookUrl>, RepoError> {
        self.webhook_urls.list_active(empresa.id)
    }

    /// Soft deletes the company's active webhook URL `id`.
    pub fn delete(&self, empresa: &Company, id: Uuid) -> Result<(), DeleteWebhookError> {
        if !self
            .webhook_urls
            .soft_delete(empresa.id, id, self.clock.now())?
        {
            return Err(DeleteWebhookError::NotFound);
        }
        tracing::info!(empresa_id = %empresa.id, webhook_url_id = %id, "webhook URL removed");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use ports::MockWebhookUrlRepository;

    use super::*;
    use crate::test_support::{company, fixed_clock, now};

    fn service(repo: MockWebhookUrlRepository) -> WebhookUrls {
        WebhookUrls::new(Arc::new(repo), fixed_clock())
    }

    fn webhook(url: &str) -> WebhookUrl {
        WebhookUrl {
            id: Uuid::new_v4(),
            empresa_id: company().id,
            url: url.to_owned(),
            criado_em: now(),
            removido_em: None,
        }
    }

    #[test]
    fn registering_a_valid_url_stores_it_active_for_the_company_at_the_clock_time() {
        let stored = Arc::new(Mutex::new(Vec::<WebhookUrl>::new()));
        let sink = stored.clone();
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_insert().times(1).returning(move |w| {
            sink.lock().unwrap().push(w.clone());
            Ok(())
        });

        let registered = service(repo)
            .register(&company(), "  https://example.com/hooks/consent  ")
            .unwrap();

        assert_eq!(registered.url, "https://example.com/hooks/consent");
        assert_eq!(registered.empresa_id, company().id);
        assert_eq!(registered.criado_em, now());
        assert_eq!(registered.removido_em, None);
        assert_eq!(registered.id.get_version_num(), 4);
        assert_eq!(*stored.lock().unwrap(), vec![registered]);
    }

    #[test]
    fn registering_an_invalid_url_is_invalid_on_the_url_field_and_stores_nothing() {
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_insert().times(0);
        let service = service(repo);

        for raw in ["", "not a url", "ftp://example.com/hook", "/relative/path"] {
            match service.register(&company(), raw) {
                Err(RegisterWebhookError::Invalid(errors)) => {
                    assert_eq!(errors.fields().len(), 1, "{raw:?}");
                    assert_eq!(errors.fields()[0].campo, "url", "{raw:?}");
                }
                other => panic!("{raw:?}: expected Invalid, got {other:?}"),
            }
        }
    }

    #[test]
    fn registering_a_url_longer_than_the_limit_is_invalid_and_stores_nothing() {
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_insert().times(0);
        let raw = format!("https://example.com/{}", "a".repeat(WebhookUrl::MAX_LEN));

        let result = service(repo).register(&company(), &raw);

        assert!(
            matches!(result, Err(RegisterWebhookError::Invalid(_))),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_insert_is_a_repository_error() {
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_insert()
            .times(1)
            .returning(|_| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));

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
    fn listing_returns_the_companys_active_urls() {
        let expected = vec![
            webhook("https://a.example/h"),
            webhook("https://b.example/h"),
        ];
        let answer = expected.clone();
        let empresa_id = company().id;
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_list_active()
            .withf(move |empresa| *empresa == empresa_id)
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
        let empresa_id = company().id;
        let mut repo = MockWebhookUrlRepository::new();
        repo.expect_soft_delete()
            .withf(move |empresa, got, at| *empresa == empresa_id && *got == id && *at == now())
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
}
