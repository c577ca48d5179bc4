//! The bodies POSTed to webhook URLs, as documented in the OpenAPI `webhooks` section. Events are
//! serialized by `domain::WebhookPayload`; the tests below check that these schemas have exactly
//! the fields the domain writes, so the two cannot drift apart.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::consent_request::{AccessMode, SubjectType};
use super::enumerations::StatusSolicitacao;

/// A consent request as an event shows it, right after the change: the CPF masked, never the
/// proof of collection.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // documentation only; events are serialized by domain::ConsentSnapshot
pub struct SolicitacaoNoEvento {
    pub id: Uuid,
    pub pgcc_id: String,
    /// The status right after the change.
    #[schema(value_type = StatusSolicitacao)]
    pub status: String,
    #[serde(rename = "casoDeUsoIdTemplate")]
    pub template_id: String,
    /// Masked: `***.982.247-**`.
    #[schema(example = "***.982.247-**")]
    #[serde(rename = "cpfTitular")]
    pub subject_cpf: String,
    #[schema(value_type = SubjectType)]
    #[serde(rename = "tipoTitular")]
    pub subject_type: String,
    #[schema(value_type = AccessMode)]
    #[serde(rename = "modalidadeAcesso")]
    pub access_mode: String,
    /// 14 characters, unmasked; `null` when absent.
    #[schema(required = true)]
    #[serde(rename = "cnpjAnuente")]
    pub consenting_cnpj: Option<String>,
    #[serde(rename = "dataExpiracaoConsentimento")]
    pub consent_expires_at: DateTime<Utc>,
    /// `null` unless the request was created active.
    #[schema(required = true)]
    #[serde(rename = "dataTitularRespondeuConsentimento")]
    pub subject_answered_at: Option<DateTime<Utc>>,
    /// The request's content hash (docs/hash-consulta.md).
    pub hash: String,
    #[serde(rename = "criadoEm")]
    pub created_at: DateTime<Utc>,
    #[serde(rename = "atualizadoEm")]
    pub updated_at: DateTime<Utc>,
    /// Only in `solicitacao.recusada` and `solicitacao.revogada` (absent from the other events):
    /// the reason given with the change (the company's with `revogar`, or the subject's as the
    /// PGCC reports it); `null` when none was given.
    #[schema(max_length = 500)]
    #[serde(rename = "motivo")]
    pub reason: Option<String>,
}

/// The `data` of `casos-de-uso.alterado`: a synchronization made a new version of a use case
/// (its title, link or another purpose field changed on the PGCC).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // documentation only; events are serialized by domain::UseCaseChange
pub struct CasoDeUsoAlterado {
    /// Our id of the use case (as in `GET /api/casos-de-uso`; its versions at
    /// `GET /api/casos-de-uso/{id}/versoes`).
    pub caso_de_uso_id: Uuid,
    /// The template, as consent requests name it.
    pub caso_de_uso_id_template: String,
    /// The version before the change.
    #[schema(format = Int64, minimum = 1, maximum = 9223372036854775807_i64)]
    pub versao_anterior: i64,
    /// The new version.
    #[schema(format = Int64, minimum = 2, maximum = 9223372036854775807_i64)]
    pub versao_nova: i64,
    /// The company's requests of this use case stored `ativo` under an older version.
    #[schema(format = Int64, minimum = 0, maximum = 9223372036854775807_i64)]
    pub solicitacoes_ativas: u64,
    /// The company's requests of this use case stored `pendente` under an older version.
    #[schema(format = Int64, minimum = 0, maximum = 9223372036854775807_i64)]
    pub solicitacoes_pendentes: u64,
}

/// The `data` of `webhook-url.desativada`: the company's URL disabled for failing (its other
/// URLs get this event; re-enable it with `POST /api/webhook-urls/{id}/reativar`).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // documentation only; events are serialized by domain::UrlDisabledData
pub struct UrlDesativada {
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
#[derive(Serialize, ToSchema)]
#[allow(dead_code)] // documentation only; events are serialized by domain::IntegrityIncidentData
pub struct IncidenteIntegridade {
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

/// The `data` of `auditoria.checkpoint`: the company's log's new signed checkpoint
/// (docs/auditoria.md, "Checkpoints"), as `GET /api/auditoria/checkpoint` serves it.
#[derive(Serialize, ToSchema)]
#[allow(dead_code)] // documentation only; events are serialized by domain::AuditCheckpointData
pub struct CheckpointAuditoria {
    /// The log's origin line, `<name>/empresas/<cnpj>`.
    #[schema(example = "consent-api/empresas/11222333000181")]
    pub origem: String,
    /// The tree size: how many entries the checkpoint covers.
    pub tamanho: u64,
    /// The base64 root hash (the note's third line).
    pub raiz: String,
    /// The whole signed note (C2SP signed note): the log's signature line and any witness's
    /// cosignature lines; check it with the JWKS key of its key hash.
    pub nota: String,
    /// Whether a witness's cosignature is on the note.
    pub cossinado: bool,
}

/// The `data` of `webhook.teste`: the company's URL the test was sent to.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // documentation only; events are serialized by domain::TestData
pub struct TesteNoEvento {
    pub webhook_url_id: Uuid,
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use chrono::TimeZone;
    use domain::{ConsentSnapshot, ConsentStatus, EventData, SyncCounts};
    use serde_json::Value;
    use utoipa::PartialSchema;

    use super::*;

    fn properties_and_required<T: PartialSchema>() -> (BTreeSet<String>, BTreeSet<String>) {
        let schema = serde_json::to_value(T::schema()).unwrap();
        let names = |v: &Value| -> BTreeSet<String> {
            match v {
                Value::Object(m) => m.keys().cloned().collect(),
                Value::Array(a) => a.iter().map(|s| s.as_str().unwrap().to_owned()).collect(),
                _ => BTreeSet::new(),
            }
        };
        (names(&schema["properties"]), names(&schema["required"]))
    }

    fn keys(data: EventData) -> BTreeSet<String> {
        serde_json::to_value(data)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    }

    #[test]
    fn the_documented_snapshot_has_exactly_the_fields_the_domain_sends_all_required() {
        let at = Utc.with_ymd_and_hms(2026, 1, 10, 12, 0, 0).unwrap();
        let sent = keys(EventData::Consent(ConsentSnapshot {
            id: Uuid::nil(),
            pgcc_id: "pgcc-1".into(),
            status: ConsentStatus::Active,
            template_id: "tpl".into(),
            subject_cpf: "***.982.247-**".into(),
            subject_type: "PessoaFisica",
            access_mode: "Direto",
            consenting_cnpj: None,
            consent_expires_at: at,
            subject_answered_at: None,
            hash: "ab".repeat(32),
            created_at: at,
            updated_at: at,
            reason: None,
        }));
        let (properties, required) = properties_and_required::<SolicitacaoNoEvento>();
        let mut with_reason = sent.clone();
        with_reason.insert("motivo".to_owned());
        assert_eq!(
            properties, with_reason,
            "motivo: only in refusals and revocations"
        );
        assert_eq!(
            required, sent,
            "every other field is always sent (null when absent)"
        );
    }

    #[test]
    fn the_documented_integrity_incident_has_exactly_the_fields_the_domain_sends() {
        let at = Utc.with_ymd_and_hms(2026, 1, 10, 12, 0, 0).unwrap();
        let sent = keys(EventData::IntegrityIncident(
            domain::IntegrityIncidentData {
                request_id: Uuid::nil(),
                pgcc_id: "pgcc-1".into(),
                not_found_since: at,
                recorded_at: at,
            },
        ));
        let (properties, required) = properties_and_required::<IncidenteIntegridade>();
        assert_eq!(properties, sent);
        assert_eq!(required, sent);
    }

    #[test]
    fn the_documented_checkpoint_has_exactly_the_fields_the_domain_sends() {
        let note = "o\n1\nAA==\n\n\u{2014} consent-api AAAA\n";
        let sent = keys(EventData::AuditCheckpoint(
            domain::AuditCheckpointData::of_note(note).unwrap(),
        ));
        let (properties, required) = properties_and_required::<CheckpointAuditoria>();
        assert_eq!(properties, sent);
        assert_eq!(required, sent);
    }

    #[test]
    fn the_documented_sync_counts_are_the_fields_the_domain_sends() {
        let sent = keys(EventData::Sync(SyncCounts {
            inserted: 1,
            updated: 2,
            removed: 3,
            total: 4,
        }));
        let (properties, required) = properties_and_required::<super::super::sync::Sincronizacao>();
        assert_eq!(properties, sent);
        assert_eq!(required, sent);
    }
}
