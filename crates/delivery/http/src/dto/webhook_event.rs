//! The bodies POSTed to webhook URLs, as documented in the OpenAPI `webhooks` section. Events are
//! serialized by `domain::WebhookPayload`, and their `data` types document themselves (the
//! domain's feature `openapi`: `SolicitacaoNoEvento` is `domain::ConsentSnapshot`,
//! `CasoDeUsoAlterado` `domain::UseCaseChange`, `UrlDesativada` `domain::UrlDisabledData`,
//! `IncidenteIntegridade` `domain::IntegrityIncidentData`, `CheckpointAuditoria`
//! `domain::AuditCheckpointData`, `TesteNoEvento` `domain::TestData`,
//! `MudancaStatusPgcc` `domain::PgccHealthChange`; `Sincronizacao` is the sync answer's DTO).
//! The tests below check that each schema has exactly the fields serde writes (attributes such as
//! `skip_serializing_if` or a `value_type` could still make them differ).

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use chrono::{TimeZone, Utc};
    use domain::{
        AuditCheckpointData, ConsentSnapshot, ConsentStatus, EventData, IntegrityIncidentData,
        PgccHealthChange, PgccHealthCode, SyncCounts, TestData, UrlDisabledData, UseCaseChange,
    };
    use serde_json::Value;
    use utoipa::PartialSchema;
    use uuid::Uuid;

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
        let (properties, required) = properties_and_required::<ConsentSnapshot>();
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
        let sent = keys(EventData::IntegrityIncident(IntegrityIncidentData {
            request_id: Uuid::nil(),
            pgcc_id: "pgcc-1".into(),
            not_found_since: at,
            recorded_at: at,
        }));
        let (properties, required) = properties_and_required::<IntegrityIncidentData>();
        assert_eq!(properties, sent);
        assert_eq!(required, sent);
    }

    #[test]
    fn the_documented_checkpoint_has_exactly_the_fields_the_domain_sends() {
        let note = "o\n1\nAA==\n\n\u{2014} consent-api AAAA\n";
        let sent = keys(EventData::AuditCheckpoint(
            AuditCheckpointData::of_note(note).unwrap(),
        ));
        let (properties, required) = properties_and_required::<AuditCheckpointData>();
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

    #[test]
    fn the_other_events_data_document_exactly_the_fields_the_domain_sends_all_required() {
        let at = Utc.with_ymd_and_hms(2026, 1, 10, 12, 0, 0).unwrap();
        let cases = [
            (
                keys(EventData::UseCaseChange(UseCaseChange {
                    caso_de_uso_id: Uuid::nil(),
                    caso_de_uso_id_template: "tpl".into(),
                    versao_anterior: 1,
                    versao_nova: 2,
                    solicitacoes_ativas: 3,
                    solicitacoes_pendentes: 4,
                })),
                properties_and_required::<UseCaseChange>(),
            ),
            (
                keys(EventData::UrlDisabled(UrlDisabledData {
                    webhook_url_id: Uuid::nil(),
                    url: "https://example.com/hook".into(),
                    desativada_em: at,
                    falhando_desde: at,
                    motivo: "falhas_sem_sucesso".into(),
                })),
                properties_and_required::<UrlDisabledData>(),
            ),
            (
                keys(EventData::Test(TestData {
                    webhook_url_id: Uuid::nil(),
                })),
                properties_and_required::<TestData>(),
            ),
            (
                keys(EventData::PgccHealth(PgccHealthChange {
                    code: PgccHealthCode::Unavailable,
                    unavailable_endpoints: vec!["criacao"],
                    detection_time: at,
                })),
                properties_and_required::<PgccHealthChange>(),
            ),
        ];
        for (sent, (properties, required)) in cases {
            assert_eq!(properties, sent);
            assert_eq!(required, sent);
        }
    }
}
