//! Webhook events: what a company is told, and the exact payload it receives.
//!
//! Payload: `{"type": "...", "timestamp": "...", "data": {...}}`. `data` is a consent request
//! snapshot (CPF masked, no proof of consent) or the counts of a use-case synchronization.

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::{
    CompanyId, ConsentRequest, ConsentStatus, PgccHealthChange, PgccHealthCode, Reason, SyncCounts,
    UseCaseChange,
};

/// The kind of a webhook event; its wire name ([`EventType::as_str`]) is the payload's `type`
/// and part of the public API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// `solicitacao.criada`: a consent request was created (active or pending).
    RequestCreated,
    /// `solicitacao.ativada`: a consent request became `ativo`.
    RequestActivated,
    /// `solicitacao.recusada`: a consent request became `recusado`.
    RequestRefused,
    /// `solicitacao.expirada`: a consent request became `expirado`.
    RequestExpired,
    /// `solicitacao.revogada`: a consent request became `revogado`.
    RequestRevoked,
    /// `casos-de-uso.sincronizados`: the company's use cases were synchronized with the PGCC.
    UseCasesSynced,
    /// `casos-de-uso.alterado`: a synchronization made a new version of a use case (its
    /// purpose-stating fields changed on the PGCC).
    UseCaseChanged,
    /// `pgcc.indisponivel`: the PGCC stopped answering some or all operations (`GET /api/status`
    /// left `OK`); sent to every company once per change.
    PgccUnavailable,
    /// `pgcc.restabelecido`: the PGCC answers every operation again (`GET /api/status` back to
    /// `OK`); sent to every company once per change.
    PgccRestored,
    /// `webhook-url.desativada`: one of the company's URLs was disabled for failing; sent to its
    /// other URLs (and the feed).
    WebhookUrlDisabled,
    /// `auditoria.incidente`: an integrity incident (issue 36): a confirmed request the PGCC has
    /// said it does not know for longer than `workers.reconcile_not_found_seconds`; HashConsulta
    /// no longer answers it valid.
    IntegrityIncident,
    /// `auditoria.checkpoint`: the company's log got a new signed checkpoint (issue 36): its
    /// note (with the witnesses' cosignatures), origin, size and root. Taken only by the URLs
    /// that name it in `eventos` ([`EventType::only_when_named`]).
    AuditCheckpoint,
    /// `importacao.concluida`: one of the company's bulk imports ended (every valid line
    /// registered or failed; docs/imports.md): its id and counts.
    ImportCompleted,
    /// `webhook.teste`: a test the company asked for, sent to one URL at once
    /// (`POST /api/webhook-urls/{id}/testar`). Not an event of the company's data: no URL
    /// subscribes to it and the catch-up list does not show it.
    WebhookTest,
}

impl EventType {
    /// Every event type a delivery may carry, consent request events first, the test last.
    pub const ALL: [EventType; 14] = [
        EventType::RequestCreated,
        EventType::RequestActivated,
        EventType::RequestRefused,
        EventType::RequestExpired,
        EventType::RequestRevoked,
        EventType::UseCasesSynced,
        EventType::UseCaseChanged,
        EventType::PgccUnavailable,
        EventType::PgccRestored,
        EventType::WebhookUrlDisabled,
        EventType::IntegrityIncident,
        EventType::AuditCheckpoint,
        EventType::ImportCompleted,
        EventType::WebhookTest,
    ];

    /// The events of the company's data: what a webhook URL may subscribe to (`eventos`) and
    /// what `GET /api/eventos` lists. Every type but `webhook.teste`.
    pub const SUBSCRIBABLE: [EventType; 13] = [
        EventType::RequestCreated,
        EventType::RequestActivated,
        EventType::RequestRefused,
        EventType::RequestExpired,
        EventType::RequestRevoked,
        EventType::UseCasesSynced,
        EventType::UseCaseChanged,
        EventType::PgccUnavailable,
        EventType::PgccRestored,
        EventType::WebhookUrlDisabled,
        EventType::IntegrityIncident,
        EventType::AuditCheckpoint,
        EventType::ImportCompleted,
    ];

    /// `solicitacao.criada`, `solicitacao.ativada`, `solicitacao.recusada`,
    /// `solicitacao.expirada`, `solicitacao.revogada`, `casos-de-uso.sincronizados`,
    /// `casos-de-uso.alterado`, `pgcc.indisponivel`, `pgcc.restabelecido`,
    /// `webhook-url.desativada`, `auditoria.incidente`, `auditoria.checkpoint`,
    /// `importacao.concluida`, `webhook.teste`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::RequestCreated => "solicitacao.criada",
            EventType::RequestActivated => "solicitacao.ativada",
            EventType::RequestRefused => "solicitacao.recusada",
            EventType::RequestExpired => "solicitacao.expirada",
            EventType::RequestRevoked => "solicitacao.revogada",
            EventType::UseCasesSynced => "casos-de-uso.sincronizados",
            EventType::UseCaseChanged => "casos-de-uso.alterado",
            EventType::PgccUnavailable => "pgcc.indisponivel",
            EventType::PgccRestored => "pgcc.restabelecido",
            EventType::WebhookUrlDisabled => "webhook-url.desativada",
            EventType::IntegrityIncident => "auditoria.incidente",
            EventType::AuditCheckpoint => "auditoria.checkpoint",
            EventType::ImportCompleted => "importacao.concluida",
            EventType::WebhookTest => "webhook.teste",
        }
    }

    /// Parses the wire and database name; exact, lower-case names only.
    pub fn parse(raw: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| t.as_str() == raw)
    }

    /// Whether a URL may subscribe to it (see [`EventType::SUBSCRIBABLE`]).
    pub fn is_subscribable(self) -> bool {
        self != EventType::WebhookTest
    }

    /// Whether only the URLs that name it in `eventos` take it (a URL taking every type does
    /// not): `auditoria.checkpoint`, which comes with every checkpoint (every minute of a busy
    /// log) and is evidence a company keeps, not a change of its data (docs/webhooks.md).
    pub fn only_when_named(self) -> bool {
        self == EventType::AuditCheckpoint
    }

    /// Whether the event's `data` carries `motivo`: `solicitacao.recusada` and
    /// `solicitacao.revogada`, the changes someone may give a reason for.
    pub fn carries_reason(self) -> bool {
        matches!(self, EventType::RequestRefused | EventType::RequestRevoked)
    }

    /// The event of a status change to `to` (`pendente` has none: it is only ever a creation).
    pub fn for_transition(to: ConsentStatus) -> Option<EventType> {
        match to {
            ConsentStatus::Pending => None,
            ConsentStatus::Active => Some(EventType::RequestActivated),
            ConsentStatus::Refused => Some(EventType::RequestRefused),
            ConsentStatus::Expired => Some(EventType::RequestExpired),
            ConsentStatus::Revoked => Some(EventType::RequestRevoked),
        }
    }
}

// The doc comments of the wire types below are also their descriptions in the OpenAPI document
// (feature `openapi`; component names: `schema(as = ...)`): written for the API's readers.

/// A consent request as an event shows it, right after the change: the CPF masked, never the
/// proof of collection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = SolicitacaoNoEvento))]
#[serde(rename_all = "camelCase")]
pub struct ConsentSnapshot {
    /// Our id of the request.
    pub id: Uuid,
    /// The PGCC's id of the request.
    pub pgcc_id: String,
    /// The status right after the change.
    pub status: ConsentStatus,
    /// The use case's template, as the request named it.
    #[serde(rename = "casoDeUsoIdTemplate")]
    pub template_id: String,
    /// Masked: `***.982.247-**`.
    #[cfg_attr(feature = "openapi", schema(example = "***.982.247-**"))]
    #[serde(rename = "cpfTitular")]
    pub subject_cpf: String,
    /// The subject's type (`PessoaFisica`).
    #[cfg_attr(feature = "openapi", schema(value_type = crate::SubjectType))]
    #[serde(rename = "tipoTitular")]
    pub subject_type: &'static str,
    /// The access mode (`Direto` or `Indireto`).
    #[cfg_attr(feature = "openapi", schema(value_type = crate::AccessMode))]
    #[serde(rename = "modalidadeAcesso")]
    pub access_mode: &'static str,
    /// 14 characters, unmasked; `null` when absent.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    #[serde(rename = "cnpjAnuente")]
    pub consenting_cnpj: Option<String>,
    /// When the consent expires.
    #[serde(rename = "dataExpiracaoConsentimento")]
    pub consent_expires_at: DateTime<Utc>,
    /// `null` unless the request was created active.
    #[cfg_attr(feature = "openapi", schema(required = true))]
    #[serde(rename = "dataTitularRespondeuConsentimento")]
    pub subject_answered_at: Option<DateTime<Utc>>,
    /// The request's content hash (docs/hash-consulta.md).
    pub hash: String,
    /// When the request was created.
    #[serde(rename = "criadoEm")]
    pub created_at: DateTime<Utc>,
    /// When the request last changed.
    #[serde(rename = "atualizadoEm")]
    pub updated_at: DateTime<Utc>,
    /// Only in `solicitacao.recusada` and `solicitacao.revogada` (absent from the other events):
    /// the reason given with the change (the company's with `revogar`, or the subject's as the
    /// PGCC reports it); `null` when none was given.
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = Option<String>, max_length = 500)
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(rename = "motivo")]
    pub reason: Option<Option<Reason>>,
}

impl ConsentSnapshot {
    /// `request` as it is now: CPF masked, proof of consent left out.
    pub fn of(request: &ConsentRequest) -> ConsentSnapshot {
        let content = &request.content;
        ConsentSnapshot {
            id: request.id,
            pgcc_id: request.pgcc_id.clone(),
            status: request.status,
            template_id: content.template_id.clone(),
            subject_cpf: content.subject_cpf.masked(),
            subject_type: content.subject_type.as_str(),
            access_mode: content.access_mode.as_str(),
            consenting_cnpj: content
                .consenting_cnpj
                .as_ref()
                .map(|c| c.as_str().to_owned()),
            consent_expires_at: content.consent_expires_at,
            subject_answered_at: content.answer.as_ref().map(|r| r.subject_answered_at),
            hash: request.hash.clone(),
            created_at: request.created_at,
            updated_at: request.updated_at,
            reason: None,
        }
    }
}

/// The `data` of an event, serialized as the bare snapshot or counts (no tag: the payload's
/// `type` says which).
// Events are built once and serialized; boxing the snapshot would only change the public shape.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum EventData {
    /// The request, for the `solicitacao.*` events.
    Consent(ConsentSnapshot),
    /// The counts, for `casos-de-uso.sincronizados`.
    Sync(SyncCounts),
    /// The use case, its versions and the counts, for `casos-de-uso.alterado`.
    UseCaseChange(UseCaseChange),
    /// The PGCC's status at the change, for `pgcc.indisponivel` and `pgcc.restabelecido`.
    PgccHealth(PgccHealthChange),
    /// The URL disabled, for `webhook-url.desativada`.
    UrlDisabled(UrlDisabledData),
    /// The request the PGCC does not know, for `auditoria.incidente`.
    IntegrityIncident(IntegrityIncidentData),
    /// The signed checkpoint, for `auditoria.checkpoint`.
    AuditCheckpoint(AuditCheckpointData),
    /// The import and its counts, for `importacao.concluida`.
    ImportCompleted(crate::ImportCompletedData),
    /// The URL tested, for `webhook.teste`.
    Test(TestData),
}

/// The `data` of `webhook-url.desativada`: the company's URL disabled for failing (its other
/// URLs get this event; re-enable it with `POST /api/webhook-urls/{id}/reativar`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = UrlDesativada))]
#[serde(rename_all = "camelCase")]
pub struct UrlDisabledData {
    /// The URL disabled.
    pub webhook_url_id: Uuid,
    /// Its address, as registered.
    pub url: String,
    /// When it was disabled.
    pub desativada_em: DateTime<Utc>,
    /// Its first failure after its last success: every attempt since failed, for at least
    /// `webhooks.disable_after_seconds` (5 days by default).
    pub falhando_desde: DateTime<Utc>,
    /// Why: `falhas_sem_sucesso` (the one reason today).
    pub motivo: String,
}

/// The `data` of `auditoria.incidente`: a confirmed request the PGCC does not know (an integrity
/// incident, docs/auditoria.md): HashConsulta no longer answers it valid.
// Ids and instants only: no personal data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = IncidenteIntegridade))]
pub struct IntegrityIncidentData {
    /// Our id of the request.
    #[serde(rename = "solicitacaoId")]
    pub request_id: Uuid,
    /// The PGCC id we hold for it, which the PGCC does not know.
    #[serde(rename = "pgccId")]
    pub pgcc_id: String,
    /// The PGCC's first "not found" of the stretch.
    #[serde(rename = "naoEncontradaDesde")]
    pub not_found_since: DateTime<Utc>,
    /// When the incident was recorded.
    #[serde(rename = "registradoEm")]
    pub recorded_at: DateTime<Utc>,
}

/// The `data` of `auditoria.checkpoint`: the checkpoint the company's log was signed at, as
/// `GET /api/auditoria/checkpoint` serves it (docs/auditoria.md, "Checkpoints"). No personal data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = CheckpointAuditoria))]
pub struct AuditCheckpointData {
    /// The log's origin line, `<name>/empresas/<cnpj>`.
    #[serde(rename = "origem")]
    pub origin: String,
    /// The tree size: how many entries the checkpoint covers.
    #[serde(rename = "tamanho")]
    #[cfg_attr(
        feature = "openapi",
        schema(format = Int64, minimum = 1, maximum = 9223372036854775807_i64)
    )]
    pub size: u64,
    /// The base64 root hash (the note's third line).
    #[serde(rename = "raiz")]
    pub root: String,
    /// The whole signed note (C2SP signed note): the log's signature line and any witness's
    /// cosignature lines; check it with the JWKS key of its key hash.
    #[serde(rename = "nota")]
    pub note: String,
    /// Whether a witness's cosignature is on the note.
    #[serde(rename = "cossinado")]
    pub cosigned: bool,
}

impl AuditCheckpointData {
    /// The data of a signed note (C2SP: origin, size and root lines, an empty line, then one
    /// signature line each, the log's first); `None` when `note` is not one.
    pub fn of_note(note: &str) -> Option<AuditCheckpointData> {
        let (text, signatures) = note.split_once("\n\n")?;
        let mut lines = text.lines();
        let origin = lines.next()?.to_owned();
        let size = lines.next()?.parse().ok()?;
        let root = lines.next()?.to_owned();
        let signed = signatures
            .lines()
            .filter(|l| l.starts_with("\u{2014} "))
            .count();
        Some(AuditCheckpointData {
            origin,
            size,
            root,
            note: note.to_owned(),
            cosigned: signed > 1,
        })
    }
}

/// The `data` of `webhook.teste`: the company's URL the test was sent to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TesteNoEvento))]
#[serde(rename_all = "camelCase")]
pub struct TestData {
    /// The URL the test was sent to.
    pub webhook_url_id: Uuid,
}

/// One event for one company, delivered to each of its active webhook URLs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookEvent {
    /// Also the `webhook-id` header: the same on every attempt and replay.
    pub id: Uuid,
    /// The company notified.
    pub company_id: CompanyId,
    /// What happened.
    pub event_type: EventType,
    /// When it happened; the payload's `timestamp`.
    pub timestamp: DateTime<Utc>,
    /// The payload's `data`.
    pub data: EventData,
}

/// The wire form: `{"type", "timestamp", "data"}`.
#[derive(Debug, Serialize)]
pub struct WebhookPayload<'a> {
    /// `type`: the event type's wire name.
    #[serde(rename = "type")]
    pub event_type: &'static str,
    /// `timestamp`: when the event happened.
    pub timestamp: DateTime<Utc>,
    /// `data`: the snapshot or the counts.
    pub data: &'a EventData,
}

impl WebhookEvent {
    /// The event about `request` (its snapshot as it is now, status = `request.status`); a
    /// refusal or a revocation carries `motivo: null` (see [`WebhookEvent::with_reason`]).
    pub fn consent(
        event_type: EventType,
        request: &ConsentRequest,
        at: DateTime<Utc>,
    ) -> WebhookEvent {
        let mut snapshot = ConsentSnapshot::of(request);
        if event_type.carries_reason() {
            snapshot.reason = Some(None);
        }
        WebhookEvent {
            id: Uuid::new_v4(),
            company_id: request.company_id,
            event_type,
            timestamp: at,
            data: EventData::Consent(snapshot),
        }
    }

    /// The event with the reason given for its change, for the types that carry one
    /// ([`EventType::carries_reason`]); others are returned unchanged.
    pub fn with_reason(mut self, reason: Option<Reason>) -> WebhookEvent {
        if let EventData::Consent(snapshot) = &mut self.data {
            if self.event_type.carries_reason() {
                snapshot.reason = Some(reason);
            }
        }
        self
    }

    /// One of the company's imports ended.
    pub fn import_completed(
        company: CompanyId,
        data: crate::ImportCompletedData,
        at: DateTime<Utc>,
    ) -> WebhookEvent {
        WebhookEvent {
            id: Uuid::new_v4(),
            company_id: company,
            event_type: EventType::ImportCompleted,
            timestamp: at,
            data: EventData::ImportCompleted(data),
        }
    }

    /// A company's use cases were synchronized.
    pub fn sync(company: CompanyId, counts: SyncCounts, at: DateTime<Utc>) -> WebhookEvent {
        WebhookEvent {
            id: Uuid::new_v4(),
            company_id: company,
            event_type: EventType::UseCasesSynced,
            timestamp: at,
            data: EventData::Sync(counts),
        }
    }

    /// A synchronization made a new version of one of the company's use cases.
    pub fn use_case_changed(
        company: CompanyId,
        change: UseCaseChange,
        at: DateTime<Utc>,
    ) -> WebhookEvent {
        WebhookEvent {
            id: Uuid::new_v4(),
            company_id: company,
            event_type: EventType::UseCaseChanged,
            timestamp: at,
            data: EventData::UseCaseChange(change),
        }
    }

    /// The PGCC's status changed to or from `OK`: `pgcc.restabelecido` when `change.code` is
    /// `OK`, `pgcc.indisponivel` otherwise. `company` is one of every company told.
    pub fn pgcc_health(company: CompanyId, change: PgccHealthChange) -> WebhookEvent {
        let event_type = if change.code == PgccHealthCode::Ok {
            EventType::PgccRestored
        } else {
            EventType::PgccUnavailable
        };
        WebhookEvent {
            id: Uuid::new_v4(),
            company_id: company,
            event_type,
            timestamp: change.detection_time,
            data: EventData::PgccHealth(change),
        }
    }

    /// The company's URL `webhook_url_id` was disabled for failing.
    pub fn url_disabled(company: CompanyId, data: UrlDisabledData) -> WebhookEvent {
        WebhookEvent {
            id: Uuid::new_v4(),
            company_id: company,
            event_type: EventType::WebhookUrlDisabled,
            timestamp: data.desativada_em,
            data: EventData::UrlDisabled(data),
        }
    }

    /// An integrity incident of one of the company's requests.
    pub fn integrity_incident(company: CompanyId, data: IntegrityIncidentData) -> WebhookEvent {
        WebhookEvent {
            id: Uuid::new_v4(),
            company_id: company,
            event_type: EventType::IntegrityIncident,
            timestamp: data.recorded_at,
            data: EventData::IntegrityIncident(data),
        }
    }

    /// A new checkpoint of the company's log, signed at `at`.
    pub fn audit_checkpoint(
        company: CompanyId,
        data: AuditCheckpointData,
        at: DateTime<Utc>,
    ) -> WebhookEvent {
        WebhookEvent {
            id: Uuid::new_v4(),
            company_id: company,
            event_type: EventType::AuditCheckpoint,
            timestamp: at,
            data: EventData::AuditCheckpoint(data),
        }
    }

    /// A test for the company's URL `webhook_url_id`.
    pub fn test(company: CompanyId, webhook_url_id: Uuid, at: DateTime<Utc>) -> WebhookEvent {
        WebhookEvent {
            id: Uuid::new_v4(),
            company_id: company,
            event_type: EventType::WebhookTest,
            timestamp: at,
            data: EventData::Test(TestData { webhook_url_id }),
        }
    }

    /// What is serialized as the request body.
    pub fn payload(&self) -> WebhookPayload<'_> {
        WebhookPayload {
            event_type: self.event_type.as_str(),
            timestamp: self.timestamp,
            data: &self.data,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use chrono::{Duration, TimeZone};
    use serde_json::Value;

    use super::*;
    use crate::{
        AccessMode, ActiveAnswer, Cnpj, Cpf, CreationVariant, SubjectType, ValidConsentRequest,
    };

    const CPF: &str = "52998224725";
    const CNPJ: &str = "11222333000181";
    const PROOF: &str = "aceite eletrônico registrado pelo titular";

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 3, 14, 12, 0, 0).unwrap()
    }

    fn company() -> CompanyId {
        CompanyId(Uuid::from_u128(0x0e4a))
    }

    fn request(status: ConsentStatus) -> ConsentRequest {
        let created_at = at() - Duration::days(1);
        ConsentRequest {
            id: Uuid::from_u128(0x5011),
            company_id: company(),
            content: ValidConsentRequest {
                variant: CreationVariant::Active,
                template_id: "tpl-credito".to_owned(),
                subject_cpf: Cpf::parse(CPF).unwrap(),
                access_mode: AccessMode::Indirect,
                subject_type: SubjectType::NaturalPerson,
                consent_expires_at: at() + Duration::days(365),
                answer: Some(ActiveAnswer {
                    subject_answered_at: created_at - Duration::hours(1),
                    proof_of_collection: PROOF.to_owned(),
                }),
                consenting_cnpj: Some(Cnpj::parse(CNPJ).unwrap()),
            },
            status,
            pgcc_id: "pgcc-5011".to_owned(),
            hash: "ab".repeat(32),
            hash_salt: "00112233445566778899aabbccddeeff".into(),
            created_at,
            updated_at: created_at + Duration::minutes(5),
            use_case_version: Some(1),
        }
    }

    fn counts() -> SyncCounts {
        SyncCounts {
            inserted: 1,
            updated: 2,
            removed: 3,
            total: 4,
        }
    }

    fn change() -> UseCaseChange {
        UseCaseChange {
            caso_de_uso_id: Uuid::from_u128(0xca5e),
            caso_de_uso_id_template: "tpl-credito".to_owned(),
            versao_anterior: 1,
            versao_nova: 2,
            solicitacoes_ativas: 7,
            solicitacoes_pendentes: 3,
        }
    }

    #[test]
    fn an_import_completed_event_carries_the_import_and_its_counts_only() {
        let value = serde_json::to_value(event_of(EventType::ImportCompleted).payload()).unwrap();
        assert_eq!(value["type"], "importacao.concluida");
        assert_eq!(
            value["data"],
            serde_json::json!({"importacaoId": Uuid::from_u128(0x1490), "linhas": 3,
                "validas": 2, "registradas": 2, "falhas": 1})
        );
    }

    #[test]
    fn a_use_case_change_names_the_use_case_both_versions_and_the_counts() {
        let value = serde_json::to_value(event_of(EventType::UseCaseChanged).payload()).unwrap();
        assert_eq!(value["type"], "casos-de-uso.alterado");
        assert_eq!(
            value["data"],
            serde_json::json!({
                "casoDeUsoId": Uuid::from_u128(0xca5e),
                "casoDeUsoIdTemplate": "tpl-credito",
                "versaoAnterior": 1,
                "versaoNova": 2,
                "solicitacoesAtivas": 7,
                "solicitacoesPendentes": 3
            })
        );
    }

    /// The event of type `tipo`: about [`request`] or, for a synchronization, [`counts`].
    fn event_of(event_type: EventType) -> WebhookEvent {
        match event_type {
            EventType::UseCasesSynced => WebhookEvent::sync(company(), counts(), at()),
            EventType::UseCaseChanged => WebhookEvent::use_case_changed(company(), change(), at()),
            EventType::WebhookTest => WebhookEvent::test(company(), Uuid::from_u128(0x7e57), at()),
            EventType::IntegrityIncident => WebhookEvent::integrity_incident(
                company(),
                IntegrityIncidentData {
                    request_id: Uuid::from_u128(0x5011),
                    pgcc_id: "pgcc-5011".to_owned(),
                    not_found_since: at() - Duration::minutes(10),
                    recorded_at: at(),
                },
            ),
            EventType::AuditCheckpoint => WebhookEvent::audit_checkpoint(
                company(),
                AuditCheckpointData::of_note(NOTE).unwrap(),
                at(),
            ),
            EventType::ImportCompleted => WebhookEvent::import_completed(
                company(),
                crate::ImportCompletedData {
                    import_id: Uuid::from_u128(0x1490),
                    linhas: 3,
                    validas: 2,
                    registradas: 2,
                    falhas: 1,
                },
                at(),
            ),
            _ => WebhookEvent::consent(event_type, &request(ConsentStatus::Active), at()),
        }
    }

    fn keys(value: &Value) -> BTreeSet<&str> {
        value
            .as_object()
            .unwrap_or_else(|| panic!("not an object: {value}"))
            .keys()
            .map(String::as_str)
            .collect()
    }

    const SNAPSHOT_KEYS: [&str; 13] = [
        "id",
        "pgccId",
        "status",
        "casoDeUsoIdTemplate",
        "cpfTitular",
        "tipoTitular",
        "modalidadeAcesso",
        "cnpjAnuente",
        "dataExpiracaoConsentimento",
        "dataTitularRespondeuConsentimento",
        "hash",
        "criadoEm",
        "atualizadoEm",
    ];

    #[test]
    fn every_event_type_name_parses_back_to_itself() {
        for event_type in EventType::ALL {
            assert_eq!(
                EventType::parse(event_type.as_str()),
                Some(event_type),
                "{event_type:?}"
            );
        }
    }

    #[test]
    fn event_type_names_are_the_documented_ones() {
        let names: Vec<&str> = EventType::ALL.into_iter().map(EventType::as_str).collect();
        assert_eq!(
            names,
            [
                "solicitacao.criada",
                "solicitacao.ativada",
                "solicitacao.recusada",
                "solicitacao.expirada",
                "solicitacao.revogada",
                "casos-de-uso.sincronizados",
                "casos-de-uso.alterado",
                "pgcc.indisponivel",
                "pgcc.restabelecido",
                "webhook-url.desativada",
                "auditoria.incidente",
                "auditoria.checkpoint",
                "importacao.concluida",
                "webhook.teste",
            ]
        );
        assert_eq!(EventType::SUBSCRIBABLE, EventType::ALL[..13]);
        assert!(EventType::SUBSCRIBABLE.iter().all(|t| t.is_subscribable()));
        assert!(!EventType::WebhookTest.is_subscribable());
    }

    const NOTE: &str = "consent-api/empresas/11222333000181\n3\nfZqkIVzLLysO7tgn81kFNHZ6LMA7RLACFUinvTaTPRc=\n\n\u{2014} consent-api AAAA\n\u{2014} witness BBBB\n";

    #[test]
    fn a_checkpoint_event_carries_the_note_its_origin_size_root_and_whether_cosigned() {
        let event = event_of(EventType::AuditCheckpoint);
        let value = serde_json::to_value(event.payload()).unwrap();
        assert_eq!(value["type"], "auditoria.checkpoint");
        assert_eq!(
            value["data"]["origem"],
            "consent-api/empresas/11222333000181"
        );
        assert_eq!(value["data"]["tamanho"], 3);
        assert_eq!(
            value["data"]["raiz"],
            "fZqkIVzLLysO7tgn81kFNHZ6LMA7RLACFUinvTaTPRc="
        );
        assert_eq!(value["data"]["nota"], NOTE);
        assert_eq!(value["data"]["cossinado"], true);
        let alone = NOTE.replace("\u{2014} witness BBBB\n", "");
        assert!(!AuditCheckpointData::of_note(&alone).unwrap().cosigned);
        assert!(AuditCheckpointData::of_note("not a note").is_none());
        assert!(EventType::AuditCheckpoint.only_when_named());
        assert!(!EventType::IntegrityIncident.only_when_named());
    }

    #[test]
    fn a_test_event_names_the_url_tested() {
        let event = WebhookEvent::test(company(), Uuid::from_u128(0x7e57), at());
        let value = serde_json::to_value(event.payload()).unwrap();
        assert_eq!(value["type"], "webhook.teste");
        assert_eq!(
            value["data"],
            serde_json::json!({"webhookUrlId": Uuid::from_u128(0x7e57).to_string()})
        );
    }

    #[test]
    fn unknown_or_differently_spelled_event_names_do_not_parse() {
        for raw in [
            "",
            "solicitacao",
            "SOLICITACAO.CRIADA",
            "solicitacao.criada ",
            "solicitacao_criada",
            "casos_de_uso.sincronizados",
        ] {
            assert_eq!(EventType::parse(raw), None, "{raw:?}");
        }
    }

    #[test]
    fn each_status_change_names_its_event_and_pendente_has_none() {
        let expected = [
            (ConsentStatus::Pending, None),
            (ConsentStatus::Active, Some(EventType::RequestActivated)),
            (ConsentStatus::Refused, Some(EventType::RequestRefused)),
            (ConsentStatus::Expired, Some(EventType::RequestExpired)),
            (ConsentStatus::Revoked, Some(EventType::RequestRevoked)),
        ];
        assert_eq!(expected.len(), ConsentStatus::ALL.len());
        for (status, event) in expected {
            assert_eq!(EventType::for_transition(status), event, "{status:?}");
        }
    }

    #[test]
    fn a_consent_event_snapshots_the_request_for_its_company_at_the_given_time() {
        let request = request(ConsentStatus::Revoked);

        let event = WebhookEvent::consent(EventType::RequestRevoked, &request, at());

        assert_eq!(event.id.get_version_num(), 4);
        assert_eq!(event.company_id, company());
        assert_eq!(event.event_type, EventType::RequestRevoked);
        assert_eq!(event.timestamp, at());
        assert_eq!(
            event.data,
            EventData::Consent(ConsentSnapshot {
                id: request.id,
                pgcc_id: "pgcc-5011".to_owned(),
                status: ConsentStatus::Revoked,
                template_id: "tpl-credito".to_owned(),
                subject_cpf: "***.982.247-**".to_owned(),
                subject_type: "PessoaFisica",
                access_mode: "Indireto",
                consenting_cnpj: Some(CNPJ.to_owned()),
                consent_expires_at: request.content.consent_expires_at,
                subject_answered_at: Some(at() - Duration::days(1) - Duration::hours(1)),
                hash: "ab".repeat(32),
                created_at: request.created_at,
                updated_at: request.updated_at,
                reason: Some(None),
            })
        );
    }

    #[test]
    fn a_pending_direct_request_snapshots_without_answer_date_or_consenting_cnpj() {
        let mut request = request(ConsentStatus::Pending);
        request.content.variant = CreationVariant::Pending;
        request.content.answer = None;
        request.content.access_mode = AccessMode::Direct;
        request.content.consenting_cnpj = None;

        let event = WebhookEvent::consent(EventType::RequestCreated, &request, at());

        let EventData::Consent(snapshot) = &event.data else {
            panic!("{:?}", event.data);
        };
        assert_eq!(snapshot.status, ConsentStatus::Pending);
        assert_eq!(snapshot.access_mode, "Direto");
        assert_eq!(snapshot.consenting_cnpj, None);
        assert_eq!(snapshot.subject_answered_at, None);
    }

    #[test]
    fn every_consent_event_gets_a_new_id() {
        let request = request(ConsentStatus::Active);
        let a = WebhookEvent::consent(EventType::RequestActivated, &request, at());
        let b = WebhookEvent::consent(EventType::RequestActivated, &request, at());
        assert_ne!(a.id, b.id);
    }

    #[test]
    fn a_sync_event_carries_the_counts_for_the_company_at_the_given_time() {
        let event = WebhookEvent::sync(company(), counts(), at());

        assert_eq!(event.id.get_version_num(), 4);
        assert_eq!(event.company_id, company());
        assert_eq!(event.event_type, EventType::UseCasesSynced);
        assert_eq!(event.timestamp, at());
        assert_eq!(event.data, EventData::Sync(counts()));
        assert_ne!(event.id, WebhookEvent::sync(company(), counts(), at()).id);
    }

    #[test]
    fn every_payload_has_exactly_type_timestamp_and_data() {
        for event_type in EventType::ALL {
            let value = serde_json::to_value(event_of(event_type).payload()).unwrap();

            assert_eq!(
                keys(&value),
                BTreeSet::from(["type", "timestamp", "data"]),
                "{event_type:?}"
            );
            assert_eq!(value["type"], event_type.as_str(), "{event_type:?}");
            assert_eq!(value["timestamp"], "2025-03-14T12:00:00Z", "{event_type:?}");
        }
    }

    #[test]
    fn the_data_of_a_consent_payload_has_exactly_the_snapshot_fields() {
        for event_type in EventType::ALL {
            if matches!(
                event_type,
                EventType::UseCasesSynced
                    | EventType::UseCaseChanged
                    | EventType::PgccUnavailable
                    | EventType::PgccRestored
                    | EventType::WebhookUrlDisabled
                    | EventType::IntegrityIncident
                    | EventType::AuditCheckpoint
                    | EventType::ImportCompleted
                    | EventType::WebhookTest
            ) {
                continue;
            }
            let value = serde_json::to_value(event_of(event_type).payload()).unwrap();

            let mut expected = BTreeSet::from(SNAPSHOT_KEYS);
            if event_type.carries_reason() {
                expected.insert("motivo");
                assert_eq!(value["data"]["motivo"], Value::Null, "{event_type:?}");
            }
            assert_eq!(keys(&value["data"]), expected, "{event_type:?}");
        }
    }

    #[test]
    fn the_snapshot_fields_carry_the_wire_values() {
        let value = serde_json::to_value(event_of(EventType::RequestActivated).payload()).unwrap();
        let data = &value["data"];

        assert_eq!(data["id"], Uuid::from_u128(0x5011).to_string());
        assert_eq!(data["pgccId"], "pgcc-5011");
        assert_eq!(data["status"], "ativo");
        assert_eq!(data["casoDeUsoIdTemplate"], "tpl-credito");
        assert_eq!(data["cpfTitular"], "***.982.247-**");
        assert_eq!(data["tipoTitular"], "PessoaFisica");
        assert_eq!(data["modalidadeAcesso"], "Indireto");
        assert_eq!(data["cnpjAnuente"], CNPJ);
        assert_eq!(data["dataExpiracaoConsentimento"], "2026-03-14T12:00:00Z");
        assert_eq!(
            data["dataTitularRespondeuConsentimento"],
            "2025-03-13T11:00:00Z"
        );
        assert_eq!(data["hash"], "ab".repeat(32));
        assert_eq!(data["criadoEm"], "2025-03-13T12:00:00Z");
        assert_eq!(data["atualizadoEm"], "2025-03-13T12:05:00Z");
    }

    #[test]
    fn the_data_of_a_sync_payload_has_exactly_the_counts() {
        let value = serde_json::to_value(event_of(EventType::UseCasesSynced).payload()).unwrap();

        assert_eq!(
            value["data"],
            serde_json::json!({"inseridos": 1, "atualizados": 2, "removidos": 3, "total": 4})
        );
    }

    #[test]
    fn only_refusals_and_revocations_carry_the_reason_given() {
        let reason = crate::Reason::parse("cliente encerrou a conta").unwrap();
        for event_type in EventType::ALL {
            let event = event_of(event_type).with_reason(Some(reason.clone()));
            let value = serde_json::to_value(event.payload()).unwrap();
            if event_type.carries_reason() {
                assert_eq!(
                    value["data"]["motivo"], "cliente encerrou a conta",
                    "{event_type:?}"
                );
            } else {
                assert!(
                    value["data"].get("motivo").is_none(),
                    "{event_type:?}: {value}"
                );
            }
        }
        assert!(EventType::RequestRefused.carries_reason());
        assert!(EventType::RequestRevoked.carries_reason());
    }

    #[test]
    fn no_payload_contains_the_full_cpf_or_the_proof_of_consent() {
        for event_type in EventType::ALL {
            let body = serde_json::to_string(&event_of(event_type).payload()).unwrap();

            assert!(!body.contains(CPF), "{event_type:?}: {body}");
            assert!(!body.contains("529.982.247-25"), "{event_type:?}: {body}");
            assert!(!body.contains(PROOF), "{event_type:?}: {body}");
            assert!(!body.contains("provaColeta"), "{event_type:?}: {body}");
        }
    }
}
