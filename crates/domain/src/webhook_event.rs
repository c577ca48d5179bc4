//! Webhook events: what a company is told, and the exact payload it receives.
//!
//! Payload: `{"type": "...", "timestamp": "...", "data": {...}}`. `data` is a consent request
//! snapshot (CPF masked, no proof of consent) or the counts of a use-case synchronization.

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::{CompanyId, ConsentRequest, ConsentStatus, Motivo, SyncCounts};

/// The kind of a webhook event; its wire name ([`EventType::as_str`]) is the payload's `type`
/// and part of the public API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// `solicitacao.criada`: a consent request was created (active or pending).
    SolicitacaoCriada,
    /// `solicitacao.ativada`: a consent request became `ativo`.
    SolicitacaoAtivada,
    /// `solicitacao.recusada`: a consent request became `recusado`.
    SolicitacaoRecusada,
    /// `solicitacao.expirada`: a consent request became `expirado`.
    SolicitacaoExpirada,
    /// `solicitacao.revogada`: a consent request became `revogado`.
    SolicitacaoRevogada,
    /// `casos-de-uso.sincronizados`: the company's use cases were synchronized with the PGCC.
    CasosDeUsoSincronizados,
    /// `webhook.teste`: a test the company asked for, sent to one URL at once
    /// (`POST /api/webhook-urls/{id}/testar`). Not an event of the company's data: no URL
    /// subscribes to it and the catch-up list does not show it.
    WebhookTeste,
}

impl EventType {
    /// Every event type a delivery may carry, consent request events first, the test last.
    pub const ALL: [EventType; 7] = [
        EventType::SolicitacaoCriada,
        EventType::SolicitacaoAtivada,
        EventType::SolicitacaoRecusada,
        EventType::SolicitacaoExpirada,
        EventType::SolicitacaoRevogada,
        EventType::CasosDeUsoSincronizados,
        EventType::WebhookTeste,
    ];

    /// The events of the company's data: what a webhook URL may subscribe to (`eventos`) and
    /// what `GET /api/eventos` lists. Every type but `webhook.teste`.
    pub const SUBSCRIBABLE: [EventType; 6] = [
        EventType::SolicitacaoCriada,
        EventType::SolicitacaoAtivada,
        EventType::SolicitacaoRecusada,
        EventType::SolicitacaoExpirada,
        EventType::SolicitacaoRevogada,
        EventType::CasosDeUsoSincronizados,
    ];

    /// `solicitacao.criada`, `solicitacao.ativada`, `solicitacao.recusada`,
    /// `solicitacao.expirada`, `solicitacao.revogada`, `casos-de-uso.sincronizados`,
    /// `webhook.teste`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::SolicitacaoCriada => "solicitacao.criada",
            EventType::SolicitacaoAtivada => "solicitacao.ativada",
            EventType::SolicitacaoRecusada => "solicitacao.recusada",
            EventType::SolicitacaoExpirada => "solicitacao.expirada",
            EventType::SolicitacaoRevogada => "solicitacao.revogada",
            EventType::CasosDeUsoSincronizados => "casos-de-uso.sincronizados",
            EventType::WebhookTeste => "webhook.teste",
        }
    }

    /// Parses the wire and database name; exact, lower-case names only.
    pub fn parse(raw: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| t.as_str() == raw)
    }

    /// Whether a URL may subscribe to it (see [`EventType::SUBSCRIBABLE`]).
    pub fn is_subscribable(self) -> bool {
        self != EventType::WebhookTeste
    }

    /// Whether the event's `data` carries `motivo`: `solicitacao.recusada` and
    /// `solicitacao.revogada`, the changes someone may give a reason for.
    pub fn carries_motivo(self) -> bool {
        matches!(
            self,
            EventType::SolicitacaoRecusada | EventType::SolicitacaoRevogada
        )
    }

    /// The event of a status change to `to` (`pendente` has none: it is only ever a creation).
    pub fn for_transition(to: ConsentStatus) -> Option<EventType> {
        match to {
            ConsentStatus::Pendente => None,
            ConsentStatus::Ativo => Some(EventType::SolicitacaoAtivada),
            ConsentStatus::Recusado => Some(EventType::SolicitacaoRecusada),
            ConsentStatus::Expirado => Some(EventType::SolicitacaoExpirada),
            ConsentStatus::Revogado => Some(EventType::SolicitacaoRevogada),
        }
    }
}

/// A consent request as webhooks show it: no full CPF, no proof of consent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsentSnapshot {
    /// `id`: our id of the request.
    pub id: Uuid,
    /// `pgccId`: the PGCC's id of the request.
    pub pgcc_id: String,
    /// `status`: the stored status at the time of the event.
    pub status: ConsentStatus,
    /// `casoDeUsoIdTemplate`.
    pub caso_de_uso_id_template: String,
    /// Masked: `***.456.789-**`.
    pub cpf_titular: String,
    /// `tipoTitular`: `PessoaFisica`.
    pub tipo_titular: &'static str,
    /// `modalidadeAcesso`: `Direto` or `Indireto`.
    pub modalidade_acesso: &'static str,
    /// `cnpjAnuente`: 14 characters, unmasked; `null` when absent.
    pub cnpj_anuente: Option<String>,
    /// `dataExpiracaoConsentimento`.
    pub data_expiracao_consentimento: DateTime<Utc>,
    /// `dataTitularRespondeuConsentimento`: `null` unless the request was created active.
    pub data_titular_respondeu_consentimento: Option<DateTime<Utc>>,
    /// `hash`: the request's content hash (docs/hash-consulta.md).
    pub hash: String,
    /// `criadoEm`.
    pub criado_em: DateTime<Utc>,
    /// `atualizadoEm`.
    pub atualizado_em: DateTime<Utc>,
    /// `motivo`: only in `solicitacao.recusada` and `solicitacao.revogada` (absent from the other
    /// events), the reason given with the change, `null` when none was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub motivo: Option<Option<Motivo>>,
}

impl ConsentSnapshot {
    /// `request` as it is now: CPF masked, proof of consent left out.
    pub fn of(request: &ConsentRequest) -> ConsentSnapshot {
        let dados = &request.dados;
        ConsentSnapshot {
            id: request.id,
            pgcc_id: request.pgcc_id.clone(),
            status: request.status,
            caso_de_uso_id_template: dados.caso_de_uso_id_template.clone(),
            cpf_titular: dados.cpf_titular.masked(),
            tipo_titular: dados.tipo_titular.as_str(),
            modalidade_acesso: dados.modalidade_acesso.as_str(),
            cnpj_anuente: dados.cnpj_anuente.as_ref().map(|c| c.as_str().to_owned()),
            data_expiracao_consentimento: dados.data_expiracao_consentimento,
            data_titular_respondeu_consentimento: dados
                .resposta
                .as_ref()
                .map(|r| r.data_titular_respondeu_consentimento),
            hash: request.hash.clone(),
            criado_em: request.criado_em,
            atualizado_em: request.atualizado_em,
            motivo: None,
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
    Solicitacao(ConsentSnapshot),
    /// The counts, for `casos-de-uso.sincronizados`.
    Sincronizacao(SyncCounts),
    /// The URL tested, for `webhook.teste`.
    Teste(TestData),
}

/// The `data` of `webhook.teste`: which of the company's URLs was tested.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TestData {
    /// `webhookUrlId`: the URL the test was sent to.
    pub webhook_url_id: Uuid,
}

/// One event for one company, delivered to each of its active webhook URLs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookEvent {
    /// Also the `webhook-id` header: the same on every attempt and replay.
    pub id: Uuid,
    /// The company notified.
    pub empresa_id: CompanyId,
    /// What happened.
    pub tipo: EventType,
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
    pub tipo: &'static str,
    /// `timestamp`: when the event happened.
    pub timestamp: DateTime<Utc>,
    /// `data`: the snapshot or the counts.
    pub data: &'a EventData,
}

impl WebhookEvent {
    /// The event about `request` (its snapshot as it is now, status = `request.status`); a
    /// refusal or a revocation carries `motivo: null` (see [`WebhookEvent::with_motivo`]).
    pub fn consent(tipo: EventType, request: &ConsentRequest, at: DateTime<Utc>) -> WebhookEvent {
        let mut snapshot = ConsentSnapshot::of(request);
        if tipo.carries_motivo() {
            snapshot.motivo = Some(None);
        }
        WebhookEvent {
            id: Uuid::new_v4(),
            empresa_id: request.empresa_id,
            tipo,
            timestamp: at,
            data: EventData::Solicitacao(snapshot),
        }
    }

    /// The event with the reason given for its change, for the types that carry one
    /// ([`EventType::carries_motivo`]); others are returned unchanged.
    pub fn with_motivo(mut self, motivo: Option<Motivo>) -> WebhookEvent {
        if let EventData::Solicitacao(snapshot) = &mut self.data {
            if self.tipo.carries_motivo() {
                snapshot.motivo = Some(motivo);
            }
        }
        self
    }

    /// A company's use cases were synchronized.
    pub fn sync(company: CompanyId, counts: SyncCounts, at: DateTime<Utc>) -> WebhookEvent {
        WebhookEvent {
            id: Uuid::new_v4(),
            empresa_id: company,
            tipo: EventType::CasosDeUsoSincronizados,
            timestamp: at,
            data: EventData::Sincronizacao(counts),
        }
    }

    /// A test for the company's URL `webhook_url_id`.
    pub fn test(company: CompanyId, webhook_url_id: Uuid, at: DateTime<Utc>) -> WebhookEvent {
        WebhookEvent {
            id: Uuid::new_v4(),
            empresa_id: company,
            tipo: EventType::WebhookTeste,
            timestamp: at,
            data: EventData::Teste(TestData { webhook_url_id }),
        }
    }

    /// What is serialized as the request body.
    pub fn payload(&self) -> WebhookPayload<'_> {
        WebhookPayload {
            tipo: self.tipo.as_str(),
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
        ActiveAnswer, Cnpj, Cpf, CreationVariant, ModalidadeAcesso, TipoTitular,
        ValidConsentRequest,
    };

    const CPF: &str = "52998224725";
    const CNPJ: &str = "11222333000181";
    const PROVA: &str = "aceite eletrônico registrado pelo titular";

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 3, 14, 12, 0, 0).unwrap()
    }

    fn company() -> CompanyId {
        CompanyId(Uuid::from_u128(0x0e4a))
    }

    fn request(status: ConsentStatus) -> ConsentRequest {
        let criado_em = at() - Duration::days(1);
        ConsentRequest {
            id: Uuid::from_u128(0x5011),
            empresa_id: company(),
            dados: ValidConsentRequest {
                variant: CreationVariant::Active,
                caso_de_uso_id_template: "tpl-credito".to_owned(),
                cpf_titular: Cpf::parse(CPF).unwrap(),
                modalidade_acesso: ModalidadeAcesso::Indireto,
                tipo_titular: TipoTitular::PessoaFisica,
                data_expiracao_consentimento: at() + Duration::days(365),
                resposta: Some(ActiveAnswer {
                    data_titular_respondeu_consentimento: criado_em - Duration::hours(1),
                    prova_coleta: PROVA.to_owned(),
                }),
                cnpj_anuente: Some(Cnpj::parse(CNPJ).unwrap()),
            },
            status,
            pgcc_id: "pgcc-5011".to_owned(),
            hash: "ab".repeat(32),
            hash_salt: "00112233445566778899aabbccddeeff".into(),
            criado_em,
            atualizado_em: criado_em + Duration::minutes(5),
        }
    }

    fn counts() -> SyncCounts {
        SyncCounts {
            inseridos: 1,
            atualizados: 2,
            removidos: 3,
            total: 4,
        }
    }

    /// The event of type `tipo`: about [`request`] or, for a synchronization, [`counts`].
    fn event_of(tipo: EventType) -> WebhookEvent {
        match tipo {
            EventType::CasosDeUsoSincronizados => WebhookEvent::sync(company(), counts(), at()),
            EventType::WebhookTeste => WebhookEvent::test(company(), Uuid::from_u128(0x7e57), at()),
            _ => WebhookEvent::consent(tipo, &request(ConsentStatus::Ativo), at()),
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
        for tipo in EventType::ALL {
            assert_eq!(EventType::parse(tipo.as_str()), Some(tipo), "{tipo:?}");
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
                "webhook.teste",
            ]
        );
        assert_eq!(EventType::SUBSCRIBABLE, EventType::ALL[..6]);
        assert!(EventType::SUBSCRIBABLE.iter().all(|t| t.is_subscribable()));
        assert!(!EventType::WebhookTeste.is_subscribable());
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
            (ConsentStatus::Pendente, None),
            (ConsentStatus::Ativo, Some(EventType::SolicitacaoAtivada)),
            (
                ConsentStatus::Recusado,
                Some(EventType::SolicitacaoRecusada),
            ),
            (
                ConsentStatus::Expirado,
                Some(EventType::SolicitacaoExpirada),
            ),
            (
                ConsentStatus::Revogado,
                Some(EventType::SolicitacaoRevogada),
            ),
        ];
        assert_eq!(expected.len(), ConsentStatus::ALL.len());
        for (status, event) in expected {
            assert_eq!(EventType::for_transition(status), event, "{status:?}");
        }
    }

    #[test]
    fn a_consent_event_snapshots_the_request_for_its_company_at_the_given_time() {
        let request = request(ConsentStatus::Revogado);

        let event = WebhookEvent::consent(EventType::SolicitacaoRevogada, &request, at());

        assert_eq!(event.id.get_version_num(), 4);
        assert_eq!(event.empresa_id, company());
        assert_eq!(event.tipo, EventType::SolicitacaoRevogada);
        assert_eq!(event.timestamp, at());
        assert_eq!(
            event.data,
            EventData::Solicitacao(ConsentSnapshot {
                id: request.id,
                pgcc_id: "pgcc-5011".to_owned(),
                status: ConsentStatus::Revogado,
                caso_de_uso_id_template: "tpl-credito".to_owned(),
                cpf_titular: "***.982.247-**".to_owned(),
                tipo_titular: "PessoaFisica",
                modalidade_acesso: "Indireto",
                cnpj_anuente: Some(CNPJ.to_owned()),
                data_expiracao_consentimento: request.dados.data_expiracao_consentimento,
                data_titular_respondeu_consentimento: Some(
                    at() - Duration::days(1) - Duration::hours(1)
                ),
                hash: "ab".repeat(32),
                criado_em: request.criado_em,
                atualizado_em: request.atualizado_em,
                motivo: Some(None),
            })
        );
    }

    #[test]
    fn a_pending_direct_request_snapshots_without_answer_date_or_consenting_cnpj() {
        let mut request = request(ConsentStatus::Pendente);
        request.dados.variant = CreationVariant::Pending;
        request.dados.resposta = None;
        request.dados.modalidade_acesso = ModalidadeAcesso::Direto;
        request.dados.cnpj_anuente = None;

        let event = WebhookEvent::consent(EventType::SolicitacaoCriada, &request, at());

        let EventData::Solicitacao(snapshot) = &event.data else {
            panic!("{:?}", event.data);
        };
        assert_eq!(snapshot.status, ConsentStatus::Pendente);
        assert_eq!(snapshot.modalidade_acesso, "Direto");
        assert_eq!(snapshot.cnpj_anuente, None);
        assert_eq!(snapshot.data_titular_respondeu_consentimento, None);
    }

    #[test]
    fn every_consent_event_gets_a_new_id() {
        let request = request(ConsentStatus::Ativo);
        let a = WebhookEvent::consent(EventType::SolicitacaoAtivada, &request, at());
        let b = WebhookEvent::consent(EventType::SolicitacaoAtivada, &request, at());
        assert_ne!(a.id, b.id);
    }

    #[test]
    fn a_sync_event_carries_the_counts_for_the_company_at_the_given_time() {
        let event = WebhookEvent::sync(company(), counts(), at());

        assert_eq!(event.id.get_version_num(), 4);
        assert_eq!(event.empresa_id, company());
        assert_eq!(event.tipo, EventType::CasosDeUsoSincronizados);
        assert_eq!(event.timestamp, at());
        assert_eq!(event.data, EventData::Sincronizacao(counts()));
        assert_ne!(event.id, WebhookEvent::sync(company(), counts(), at()).id);
    }

    #[test]
    fn every_payload_has_exactly_type_timestamp_and_data() {
        for tipo in EventType::ALL {
            let value = serde_json::to_value(event_of(tipo).payload()).unwrap();

            assert_eq!(
                keys(&value),
                BTreeSet::from(["type", "timestamp", "data"]),
                "{tipo:?}"
            );
            assert_eq!(value["type"], tipo.as_str(), "{tipo:?}");
            assert_eq!(value["timestamp"], "2025-03-14T12:00:00Z", "{tipo:?}");
        }
    }

    #[test]
    fn the_data_of_a_consent_payload_has_exactly_the_snapshot_fields() {
        for tipo in EventType::ALL {
            if matches!(
                tipo,
                EventType::CasosDeUsoSincronizados | EventType::WebhookTeste
            ) {
                continue;
            }
            let value = serde_json::to_value(event_of(tipo).payload()).unwrap();

            let mut expected = BTreeSet::from(SNAPSHOT_KEYS);
            if tipo.carries_motivo() {
                expected.insert("motivo");
                assert_eq!(value["data"]["motivo"], Value::Null, "{tipo:?}");
            }
            assert_eq!(keys(&value["data"]), expected, "{tipo:?}");
        }
    }

    #[test]
    fn the_snapshot_fields_carry_the_wire_values() {
        let value =
            serde_json::to_value(event_of(EventType::SolicitacaoAtivada).payload()).unwrap();
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
        let value =
            serde_json::to_value(event_of(EventType::CasosDeUsoSincronizados).payload()).unwrap();

        assert_eq!(
            value["data"],
            serde_json::json!({"inseridos": 1, "atualizados": 2, "removidos": 3, "total": 4})
        );
    }

    #[test]
    fn only_refusals_and_revocations_carry_the_reason_given() {
        let motivo = crate::Motivo::parse("cliente encerrou a conta").unwrap();
        for tipo in EventType::ALL {
            let event = event_of(tipo).with_motivo(Some(motivo.clone()));
            let value = serde_json::to_value(event.payload()).unwrap();
            if tipo.carries_motivo() {
                assert_eq!(
                    value["data"]["motivo"], "cliente encerrou a conta",
                    "{tipo:?}"
                );
            } else {
                assert!(value["data"].get("motivo").is_none(), "{tipo:?}: {value}");
            }
        }
        assert!(EventType::SolicitacaoRecusada.carries_motivo());
        assert!(EventType::SolicitacaoRevogada.carries_motivo());
    }

    #[test]
    fn no_payload_contains_the_full_cpf_or_the_proof_of_consent() {
        for tipo in EventType::ALL {
            let body = serde_json::to_string(&event_of(tipo).payload()).unwrap();

            assert!(!body.contains(CPF), "{tipo:?}: {body}");
            assert!(!body.contains("529.982.247-25"), "{tipo:?}: {body}");
            assert!(!body.contains(PROVA), "{tipo:?}: {body}");
            assert!(!body.contains("provaColeta"), "{tipo:?}: {body}");
        }
    }
}
