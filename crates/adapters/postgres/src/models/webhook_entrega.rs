use anyhow::Context;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Integer, Nullable, Text};
use domain::CompanyId;
use ports::{DeliveryAttempt, DueDelivery, EncryptedSecret};
use uuid::Uuid;

use crate::schema::{webhook_entregas, webhook_tentativas};

/// The names of `webhook_entregas.status` (its check constraint).
pub mod status {
    /// Due at `proxima_tentativa_em`.
    pub const PENDENTE: &str = "pendente";
    pub const ENTREGUE: &str = "entregue";
    /// The retry schedule was exhausted (or the target refused).
    pub const FALHOU: &str = "falhou";
    /// Its URL was removed before it was delivered.
    pub const CANCELADA: &str = "cancelada";
}

/// A row of `webhook_entregas`: one event to one URL.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = webhook_entregas, check_for_backend(diesel::pg::Pg))]
pub struct WebhookEntregaRow {
    pub id: Uuid,
    pub evento_id: Uuid,
    pub webhook_url_id: Uuid,
    pub empresa_id: Uuid,
    pub status: String,
    pub tentativas: i32,
    pub proxima_tentativa_em: Option<DateTime<Utc>>,
    pub criado_em: DateTime<Utc>,
    pub atualizado_em: DateTime<Utc>,
    pub entregue_em: Option<DateTime<Utc>>,
}

/// A delivery claimed by `claim_due`, joined with its URL and event. Its `Debug` hides the
/// secrets.
#[derive(Clone, PartialEq, Eq, QueryableByName)]
pub struct DueDeliveryRow {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    pub id: Uuid,
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    pub empresa_id: Uuid,
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    pub webhook_url_id: Uuid,
    #[diesel(sql_type = Text)]
    pub url: String,
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    pub evento_id: Uuid,
    #[diesel(sql_type = Text)]
    pub payload: String,
    #[diesel(sql_type = Integer)]
    pub tentativas: i32,
    #[diesel(sql_type = Text)]
    pub segredo_cifrado: String,
    /// NULL once the rotation overlap is over.
    #[diesel(sql_type = Nullable<Text>)]
    pub segredo_anterior_cifrado: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    pub token_reivindicacao: Uuid,
    /// The event's trace context (telemetry on when it was written).
    #[diesel(sql_type = Nullable<Text>)]
    pub traceparent: Option<String>,
}

impl std::fmt::Debug for DueDeliveryRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DueDeliveryRow")
            .field("id", &self.id)
            .field("empresa_id", &self.empresa_id)
            .field("webhook_url_id", &self.webhook_url_id)
            .field("url", &self.url)
            .field("evento_id", &self.evento_id)
            .field("tentativas", &self.tentativas)
            .finish_non_exhaustive()
    }
}

impl DueDeliveryRow {
    pub fn try_into_domain(self) -> anyhow::Result<DueDelivery> {
        let tentativas = u32::try_from(self.tentativas)
            .context("a claimed delivery has a negative tentativas")?;
        Ok(DueDelivery {
            id: self.id,
            company_id: CompanyId(self.empresa_id),
            webhook_url_id: self.webhook_url_id,
            url: self.url,
            event_id: self.evento_id,
            payload: self.payload,
            attempts: tentativas,
            secret: EncryptedSecret(self.segredo_cifrado),
            previous_secret: self.segredo_anterior_cifrado.map(EncryptedSecret),
            lease: self.token_reivindicacao,
            traceparent: self.traceparent,
        })
    }
}

/// A row of `webhook_tentativas`: one attempt of a delivery. `id` (an identity) orders the
/// attempts recorded at the same instant.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = webhook_tentativas, check_for_backend(diesel::pg::Pg))]
pub struct WebhookTentativaRow {
    pub id: i64,
    pub entrega_id: Uuid,
    pub em: DateTime<Utc>,
    pub status_http: Option<i32>,
    pub latencia_ms: i32,
    pub erro: Option<String>,
    /// The start of the receiver's answer (at most `ports::RESPONSE_BODY_KEPT` characters).
    pub corpo_resposta: Option<String>,
}

impl WebhookTentativaRow {
    pub fn try_into_domain(self) -> anyhow::Result<DeliveryAttempt> {
        let status_http = self
            .status_http
            .map(u16::try_from)
            .transpose()
            .context("a stored delivery attempt has an invalid status_http")?;
        let latencia_ms = u32::try_from(self.latencia_ms)
            .context("a stored delivery attempt has a negative latencia_ms")?;
        Ok(DeliveryAttempt {
            at: self.em,
            http_status: status_http,
            latency_ms: latencia_ms,
            error: self.erro,
            response_body: self.corpo_resposta,
        })
    }
}

/// A new row of `webhook_tentativas` (the id is generated). A latency beyond `i32::MAX`
/// milliseconds (24 days) is stored as `i32::MAX`.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = webhook_tentativas, check_for_backend(diesel::pg::Pg))]
pub struct NewWebhookTentativa<'a> {
    /// The delivery's company (issue 23: every tenant row carries it).
    pub empresa_id: Uuid,
    pub entrega_id: Uuid,
    pub em: DateTime<Utc>,
    pub status_http: Option<i32>,
    pub latencia_ms: i32,
    pub erro: Option<&'a str>,
    pub corpo_resposta: Option<&'a str>,
}

impl<'a> NewWebhookTentativa<'a> {
    pub fn new(empresa_id: Uuid, entrega_id: Uuid, attempt: &'a DeliveryAttempt) -> Self {
        NewWebhookTentativa {
            empresa_id,
            entrega_id,
            em: attempt.at,
            status_http: attempt.http_status.map(i32::from),
            latencia_ms: i32::try_from(attempt.latency_ms).unwrap_or(i32::MAX),
            erro: attempt.error.as_deref(),
            corpo_resposta: attempt.response_body.as_deref(),
        }
    }
}
