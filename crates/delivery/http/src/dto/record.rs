//! The wire shapes of the records in the ISO/IEC TS 27560 form (issue 37, part 6;
//! docs/records.md): the annotations of a use case, and the consent record in DPV's JSON-LD.

use chrono::{DateTime, SecondsFormat, Utc};
use domain::{ConsentStatus, TransitionCause, UseCaseAnnotation, UseCaseAnnotationDraft};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::borrow::Cow;

use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};
use uuid::Uuid;

use application::ConsentRecordSource;

/// The JSON-LD context the records point to, served by the service itself at
/// [`CONTEXT_PATH`] (no fetch at run time): DPV's, DCMI's and schema.org's namespaces, and which
/// properties hold IRIs or typed dates.
pub const CONTEXT_DOCUMENT: &str = include_str!("../records/consent-record-v1.jsonld");
/// Where [`CONTEXT_DOCUMENT`] is served.
pub const CONTEXT_PATH: &str = "/contexts/consent-record-v1.jsonld";

/// The legal basis of a use case under the LGPD.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BaseLegalEntrada {
    /// The LGPD article: 7 (personal data) or 11 (sensitive personal data).
    #[schema(example = 7, minimum = 7, maximum = 11)]
    pub artigo: Option<i64>,
    /// The hypothesis of that article: `consentimento` (art. 7 I, art. 11 I),
    /// `obrigacao-legal`, `politicas-publicas`, `estudos-pesquisa`, `execucao-contrato` (art. 7
    /// only), `exercicio-direitos`, `protecao-vida`, `tutela-saude`, `interesse-legitimo` (art. 7
    /// only), `protecao-credito` (art. 7 only), `prevencao-fraude` (art. 11 only).
    #[schema(example = "consentimento", max_length = 32)]
    pub hipotese: Option<String>,
}

/// A personal-data category: documented as the enumeration of the DPV `pd:` terms the service
/// supports (`domain::consent_record::PERSONAL_DATA_CATEGORIES`, one list for the check and the document).
pub struct CategoriaDados;

impl PartialSchema for CategoriaDados {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(
                domain::consent_record::PERSONAL_DATA_CATEGORIES
                    .iter()
                    .copied(),
            ))
            .into()
    }
}

impl ToSchema for CategoriaDados {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("CategoriaDados")
    }
}

/// Body of `PUT /api/casos-de-uso/{id}/anotacoes`: every field is required.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AnotacoesCasoDeUso {
    #[serde(rename = "baseLegal")]
    pub legal_basis: Option<BaseLegalEntrada>,
    /// The personal-data categories the use case processes: DPV `pd:` terms from the list in
    /// docs/records.md (1 to 64, no repeats).
    #[serde(rename = "categoriasDados")]
    #[schema(
        example = json!(["pd:Name", "pd:EmailAddress"]),
        value_type = Option<Vec<CategoriaDados>>,
        min_items = 1,
        max_items = 64
    )]
    pub categories: Option<Vec<String>>,
    /// The absolute http(s) URL of the privacy notice the subject is shown.
    #[serde(rename = "urlAviso")]
    #[schema(example = "https://exemplo.com.br/privacidade", max_length = 2048)]
    pub notice_url: Option<String>,
    /// The notice's language, a BCP 47 tag.
    #[serde(rename = "idiomaAviso")]
    #[schema(example = "pt-BR", max_length = 35)]
    pub notice_language: Option<String>,
}

impl From<AnotacoesCasoDeUso> for UseCaseAnnotationDraft {
    fn from(body: AnotacoesCasoDeUso) -> Self {
        let (article, hypothesis) = match body.legal_basis {
            Some(b) => (b.artigo, b.hipotese),
            None => (None, None),
        };
        UseCaseAnnotationDraft {
            article,
            hypothesis,
            categories: body.categories,
            notice_url: body.notice_url,
            notice_language: body.notice_language,
        }
    }
}

/// A stored legal basis, with how the record states it.
#[derive(Debug, Serialize, ToSchema)]
pub struct BaseLegal {
    /// 7 or 11.
    #[schema(minimum = 7, maximum = 11)]
    pub artigo: i16,
    /// The hypothesis (see the request body).
    pub hipotese: String,
    /// The citation the record carries (`LGPD (Lei 13.709/2018), art. 7, I`).
    pub citacao: String,
    /// The DPV concept the record maps it to (docs/records.md, "Legal bases").
    pub dpv: String,
}

/// The annotations of a use case, as stored.
#[derive(Debug, Serialize, ToSchema)]
pub struct AnotacoesCasoDeUsoSalvas {
    /// Our id of the use case.
    #[serde(rename = "casoDeUsoId")]
    pub use_case_id: Uuid,
    #[serde(rename = "baseLegal")]
    pub legal_basis: BaseLegal,
    #[serde(rename = "categoriasDados")]
    pub categories: Vec<String>,
    #[serde(rename = "urlAviso")]
    pub notice_url: String,
    #[serde(rename = "idiomaAviso")]
    pub notice_language: String,
    /// When they were last set.
    #[serde(rename = "atualizadoEm")]
    pub updated_at: DateTime<Utc>,
}

impl AnotacoesCasoDeUsoSalvas {
    pub fn new(use_case_id: Uuid, a: UseCaseAnnotation) -> Self {
        Self {
            use_case_id,
            legal_basis: BaseLegal {
                artigo: a.legal_basis.article.number(),
                hipotese: a.legal_basis.hypothesis.as_str().to_owned(),
                citacao: a.legal_basis.citation(),
                dpv: a.legal_basis.dpv_term().to_owned(),
            },
            categories: a.categories,
            notice_url: a.notice_url,
            notice_language: a.notice_language,
            updated_at: a.updated_at,
        }
    }
}

fn time(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn urn(id: Uuid) -> String {
    format!("urn:uuid:{id}")
}

/// The DPV consent status a stored status change is an event of.
fn consent_state(to: ConsentStatus) -> &'static str {
    match to {
        ConsentStatus::Pending => "dpv:ConsentRequested",
        ConsentStatus::Active => "dpv:ConsentGiven",
        ConsentStatus::Refused => "dpv:ConsentRefused",
        ConsentStatus::Expired => "dpv:ConsentExpired",
        ConsentStatus::Revoked => "dpv:ConsentWithdrawn",
    }
}

/// Who indicated an event: the subject on the PGCC, or the company (its own calls, and the
/// expiry it set and this service applies on its behalf).
fn actor(cause: TransitionCause) -> &'static str {
    match cause {
        TransitionCause::Pgcc => "dpv:DataSubject",
        TransitionCause::Company | TransitionCause::Expiry => "dpv:DataController",
    }
}

fn method(cause: TransitionCause) -> &'static str {
    match cause {
        TransitionCause::Pgcc => "PGCC (plataforma nacional de consentimento)",
        TransitionCause::Company => "API da empresa (consent-api)",
        TransitionCause::Expiry => "expiração (dataExpiracaoConsentimento)",
    }
}

/// The record of `source` in DPV's JSON-LD (DPV-27560 `record` profile), its `@context` the
/// document at `context_url`. Every mandatory field of the guide's table is filled: the
/// mapping is docs/records.md's.
/// The records' `@context` URL on the host the request came to (the service serves it).
pub fn context_url(req: &actix_web::HttpRequest) -> String {
    let info = req.connection_info();
    format!("{}://{}{CONTEXT_PATH}", info.scheme(), info.host())
}

pub fn consent_record(source: &ConsentRecordSource, context_url: &str) -> Value {
    let request = &source.request;
    let content = &request.content;
    let controller_id = urn(source.company.id.0);
    let validity = json!({
        "@type": "dpv:UntilTimeDuration",
        "dct:valid": time(content.consent_expires_at),
    });
    let country = |code: &str| json!({ "@type": "dpv:Country", "dct:identifier": code });
    let mut recipients = vec![json!({ "@id": controller_id })];
    if let Some(cnpj) = &content.consenting_cnpj {
        recipients.push(json!({
            "@type": ["dpv:Recipient", "dpv:ThirdParty"],
            "dct:identifier": cnpj.as_str(),
        }));
    }
    let answered_at = content.answer.as_ref().map(|a| a.subject_answered_at);
    let events: Vec<Value> = source
        .history
        .iter()
        .map(|change| {
            // a consent given at creation (criar/ativo) was given when the subject answered
            let at = match (change.from, change.to, answered_at) {
                (None, ConsentStatus::Active, Some(answered)) => answered,
                _ => change.at,
            };
            let by = if change.from.is_none() && change.to == ConsentStatus::Active {
                "dpv:DataSubject"
            } else {
                actor(change.cause)
            };
            json!({
                "@type": consent_state(change.to),
                "dpv:isIndicatedAtTime": time(at),
                "dpv:isIndicatedBy": by,
                "dpv:hasIndicationMethod": method(change.cause),
                "dpv:hasDuration": validity,
            })
        })
        .collect();
    let annotation = &source.annotation;
    let version = &source.use_case_version;
    let withdrawal = source
        .settings
        .withdrawal_url
        .clone()
        .unwrap_or_else(|| annotation.notice_url.clone());
    let mut record = json!({
        "@context": context_url,
        "@id": urn(request.id),
        "@type": "dpv:ConsentRecord",
        "dct:conformsTo": application::RECORD_SCHEMA,
        "dct:identifier": request.id.to_string(),
        "dpv:hasIdentifier": source.receipt_id.to_string(),
        "dpv:hasDataSubject": {
            "@type": "dpv:DataSubject",
            "dct:identifier": request.hash,
        },
        "dpv:hasNotice": {
            "@type": "dpv:ConsentNotice",
            "schema:url": annotation.notice_url,
            "schema:version": version.version.to_string(),
            "dct:identifier": format!("sha256:{}", source.notice_digest),
            "dct:title": version.title,
            "dct:language": annotation.notice_language,
            "dct:date": time(version.started_at),
        },
        "dpv:hasDataController": {
            "@id": controller_id,
            "@type": "dpv:DataController",
            "dct:identifier": source.company.cnpj.as_str(),
            "dpv:hasName": source.controller.name,
            "dpv:hasAddress": source.controller.address,
            "dpv:hasContact": source.controller.dpo_contact,
            "dpv:hasDataProtectionOfficer": {
                "@type": "dpv:DataProtectionOfficer",
                "dpv:hasContact": source.controller.dpo_contact,
            },
        },
        "dpv:hasJurisdiction": country(&source.settings.jurisdiction),
        "dpv:hasApplicableLaw": {
            "@type": "dpv:Law",
            "dct:title": "Lei 13.709/2018 (LGPD)",
        },
        "dpv:hasProcess": {
            "@type": "dpv:Process",
            "dpv:hasPurpose": {
                "@type": "dpv:Purpose",
                "dct:identifier": content.template_id,
                "dct:title": version.title,
            },
            "dpv:hasLegalBasis": {
                "@type": annotation.legal_basis.dpv_term(),
                "dct:title": annotation.legal_basis.citation(),
            },
            "dpv:hasPersonalData": annotation.categories,
            "dpv:hasDataController": { "@id": controller_id },
            "dpv:hasRecipient": recipients,
            "dpv:hasStorageCondition": [
                {
                    "@type": "dpv:StorageLocation",
                    "dpv:hasLocation": country(&source.settings.storage_location),
                },
                {
                    "@type": "dpv:StorageDuration",
                    "dpv:hasDuration": validity,
                },
            ],
        },
        "dpv:hasConsentControl": {
            "@type": "dpv:WithdrawConsent",
            "dpv:isExercisedAt": withdrawal,
        },
        "dpv:hasConsentStatus": events,
    });
    // An imported consent names where it came from (docs/records.md, "Imported consents"): the
    // import (its id as the source's IRI), the company's own id of the consent and the system
    // or channel it came from; its original answer date is its `dpv:ConsentGiven` event's time.
    if let Some(p) = &source.provenance {
        record["dpv:hasDataSource"] = json!({
            "@id": urn(p.import_id),
            "@type": "dpv:DataSource",
            "dct:title": "importação em lote (POST /api/importacoes)",
            "dct:identifier": p.external_id,
            "dct:source": p.origin,
        });
    }
    if !source.evidence.is_empty() {
        // the evidence files the record derives from (docs/records.md, "Evidence files"): DPV has
        // no term of its own for a consent's evidence; `dct:source` is DCMI's "a related resource
        // from which the described resource is derived"
        record["dct:source"] = source
            .evidence
            .iter()
            .map(|file| {
                json!({
                    "dct:identifier": format!("sha256:{}", file.sha256),
                    "dct:format": file.media_type,
                    "dpv:hasDataVolume": {
                        "@type": "dpv:DataVolume",
                        "dct:identifier": format!("{} bytes", file.size),
                    },
                })
            })
            .collect();
    }
    record
}
