//! `GET /api/solicitacao-consentimento/{id}/registro`: what a consent record in the ISO/IEC TS
//! 27560 form is made of (docs/records.md). Gathers the request and its history, the use-case
//! version it was given under with the company's annotation of that use case, and the company's
//! controller profile; names every mandatory field it cannot fill instead of answering a partial
//! record.

use std::collections::HashMap;
use std::sync::Arc;

use domain::{
    Company, ConsentRequest, ControllerProfile, ImportProvenance, StatusChange, UseCaseAnnotation,
    UseCaseVersion, ValidationErrors,
};
use ports::{
    CompanyRepository, ConsentRequestRecord, ConsentRequestRepository, RepoError, UseCaseRepository,
};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// The DPV profile the records conform to (`dct:conformsTo`, the ISO/IEC TS 27560 schema
/// version): DPV's consent-record schema.
pub const RECORD_SCHEMA: &str = "https://w3id.org/dpv/schema/dpv-27560#record";

/// Where the records say personal data is stored and under which jurisdiction, and where the
/// subject withdraws (the `registro` settings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordSettings {
    /// ISO 3166-1 alpha-2 code of the country where the data is stored (`BR`).
    pub storage_location: String,
    /// ISO 3166-1 alpha-2 code of the jurisdiction whose law applies (`BR`).
    pub jurisdiction: String,
    /// Where the subject withdraws consent; `None`: at the use case's notice URL.
    pub withdrawal_url: Option<String>,
}

impl Default for RecordSettings {
    fn default() -> Self {
        Self {
            storage_location: "BR".to_owned(),
            jurisdiction: "BR".to_owned(),
            withdrawal_url: None,
        }
    }
}

/// Everything one record states.
#[derive(Debug, Clone)]
pub struct ConsentRecordSource {
    pub company: Company,
    pub controller: ControllerProfile,
    pub request: ConsentRequest,
    /// Oldest first; the creation is the first entry.
    pub history: Vec<StatusChange>,
    /// Our id of the request's use case.
    pub use_case_id: Uuid,
    /// The version the request was stored under.
    pub use_case_version: UseCaseVersion,
    /// Lower-case hex SHA-256 of the version's purpose text (its fingerprint).
    pub notice_digest: String,
    pub annotation: UseCaseAnnotation,
    /// The id of the request's receipt in its current state ([`receipt_id`]).
    pub receipt_id: Uuid,
    pub settings: RecordSettings,
    /// Where it came from, when a bulk import brought it in (docs/imports.md, "Provenance").
    pub provenance: Option<ImportProvenance>,
    /// The request's evidence files (docs/evidencias.md), oldest link first.
    pub evidence: Vec<domain::EvidenceFile>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConsentRecordError {
    /// No such request for the company.
    #[error("consent request not found")]
    NotFound,
    /// Mandatory fields the service cannot fill, each named (`campo`) with how to fill it.
    #[error(transparent)]
    Missing(ValidationErrors),
    #[error(transparent)]
    Repo(#[from] RepoError),
}

/// The id of the request's receipt (`jti`) in the request's current state: derived from the
/// request's id, content hash and last change, so the receipt and the record of one state name
/// the same id, and a new state a new one. A UUID version 8 made of the first 16 bytes of a
/// SHA-256.
pub fn receipt_id(request: &ConsentRequest) -> Uuid {
    let digest = Sha256::digest(
        format!(
            "recibo\n{}\n{}\n{}",
            request.id,
            request.hash,
            request.updated_at.timestamp_micros()
        )
        .as_bytes(),
    );
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}

#[derive(Clone)]
pub struct ConsentRecords {
    consent_requests: Arc<dyn ConsentRequestRepository>,
    use_cases: Arc<dyn UseCaseRepository>,
    companies: Arc<dyn CompanyRepository>,
    settings: RecordSettings,
    evidence: Option<crate::EvidenceFiles>,
}

impl ConsentRecords {
    pub fn new(
        consent_requests: Arc<dyn ConsentRequestRepository>,
        use_cases: Arc<dyn UseCaseRepository>,
        companies: Arc<dyn CompanyRepository>,
        settings: RecordSettings,
    ) -> Self {
        Self {
            consent_requests,
            use_cases,
            companies,
            settings,
            evidence: None,
        }
    }

    /// Records that list the requests' evidence files.
    pub fn with_evidence(mut self, evidence: crate::EvidenceFiles) -> Self {
        self.evidence = Some(evidence);
        self
    }

    /// The record of the company's request `id`, or every mandatory field it lacks.
    pub fn execute(
        &self,
        company: &Company,
        id: Uuid,
    ) -> Result<ConsentRecordSource, ConsentRecordError> {
        let record = self
            .consent_requests
            .get(company.id, id)?
            .ok_or(ConsentRecordError::NotFound)?;
        self.source(company, record, &mut Lookups::default())
    }

    /// The records of `ids` (an export's page, in that order; an id gone since the page was
    /// listed is left out). The controller profile and each use case's version and annotation
    /// are read once per page, not once per record: a page costs two reads a request (the
    /// request, its history) plus three per use case it names. The first record missing a
    /// mandatory field fails the page, naming the fields as [`ConsentRecords::execute`] does:
    /// what is missing is the company's profile or a use case's annotation, shared by the
    /// page's other records.
    pub fn many(
        &self,
        company: &Company,
        ids: &[Uuid],
    ) -> Result<Vec<ConsentRecordSource>, ConsentRecordError> {
        let mut lookups = Lookups::default();
        let mut sources = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(record) = self.consent_requests.get(company.id, *id)? {
                sources.push(self.source(company, record, &mut lookups)?);
            }
        }
        Ok(sources)
    }

    fn source(
        &self,
        company: &Company,
        record: ConsentRequestRecord,
        lookups: &mut Lookups,
    ) -> Result<ConsentRecordSource, ConsentRecordError> {
        let request = record.request;
        let mut missing = ValidationErrors::default();
        let controller = match &lookups.controller {
            Some(known) => known.clone(),
            None => {
                let read = self.companies.controller_profile(company.id)?;
                lookups.controller = Some(read.clone());
                read
            }
        };
        if controller.is_none() {
            for field in [
                "controlador.nome",
                "controlador.endereco",
                "controlador.contatoDpo",
            ] {
                missing.push(
                    field,
                    "Perfil de controlador da empresa não definido: consent-api company profile.",
                );
            }
        }
        let use_case = match lookups.use_cases.get(&request.content.template_id) {
            Some(known) => known.clone(),
            None => {
                let read = self.use_case_of(company, &request.content.template_id)?;
                lookups
                    .use_cases
                    .insert(request.content.template_id.clone(), read.clone());
                read
            }
        };
        let (use_case_id, version, annotation) = match use_case {
            None => {
                missing.push(
                    "casoDeUso",
                    "O caso de uso da solicitação não está mais entre os da empresa.",
                );
                (Uuid::nil(), None, None)
            }
            Some(use_case) => {
                let wanted = request.use_case_version.unwrap_or(1);
                let version = use_case
                    .versions
                    .iter()
                    .find(|v| v.version == wanted)
                    .cloned();
                if version.is_none() {
                    missing.push(
                        "casoDeUso.versao",
                        "A versão do caso de uso não foi encontrada.",
                    );
                }
                if use_case.annotation.is_none() {
                    let how = format!(
                        "Caso de uso sem anotações: PUT /api/casos-de-uso/{}/anotacoes.",
                        use_case.id
                    );
                    for field in [
                        "casoDeUso.baseLegal",
                        "casoDeUso.categoriasDados",
                        "casoDeUso.urlAviso",
                        "casoDeUso.idiomaAviso",
                    ] {
                        missing.push(field, how.clone());
                    }
                }
                (use_case.id, version, use_case.annotation)
            }
        };
        match (controller, version, annotation) {
            (Some(controller), Some(version), Some(annotation)) if missing.is_empty() => {
                let notice_digest = version
                    .fingerprint
                    .clone()
                    .unwrap_or_else(|| hex::encode(Sha256::digest(purpose_text(&version))));
                let evidence = match &self.evidence {
                    Some(files) => files.of_request(company.id, request.id)?,
                    None => Vec::new(),
                };
                Ok(ConsentRecordSource {
                    evidence,
                    company: company.clone(),
                    controller,
                    receipt_id: receipt_id(&request),
                    request,
                    history: record.history,
                    use_case_id,
                    use_case_version: version,
                    notice_digest,
                    annotation,
                    settings: self.settings.clone(),
                    provenance: record.provenance,
                })
            }
            _ => Err(ConsentRecordError::Missing(missing)),
        }
    }

    /// The company's use case of `template`, with its versions and annotation; `None` when the
    /// company no longer has it.
    fn use_case_of(
        &self,
        company: &Company,
        template: &str,
    ) -> Result<Option<UseCaseForRecords>, RepoError> {
        let Some(use_case) = self.use_cases.find_by_template(company.id, template)? else {
            return Ok(None);
        };
        Ok(Some(UseCaseForRecords {
            id: use_case.id,
            versions: self
                .use_cases
                .versions(company.id, use_case.id)?
                .unwrap_or_default(),
            annotation: self.use_cases.annotation(company.id, use_case.id)?,
        }))
    }
}

/// What the records of one page share, read once for the page.
#[derive(Default)]
struct Lookups {
    /// The controller profile, once read (`Some(None)`: read, and not set).
    controller: Option<Option<ControllerProfile>>,
    /// By template: the use case, once read (`None`: read, and gone).
    use_cases: HashMap<String, Option<UseCaseForRecords>>,
}

/// A use case as the records need it.
#[derive(Clone)]
struct UseCaseForRecords {
    id: Uuid,
    versions: Vec<UseCaseVersion>,
    annotation: Option<UseCaseAnnotation>,
}

/// The purpose text of a version stored before fingerprints (docs/decisions.md, "Use-case
/// versions"), as `PgccUseCase::purpose_text` makes it (an unknown link as empty).
fn purpose_text(version: &UseCaseVersion) -> String {
    let link = version.link_id.map(|l| l.to_string()).unwrap_or_default();
    let mut text = String::new();
    for (name, value) in [
        ("titulo", version.title.as_str()),
        ("vinculoId", link.as_str()),
        ("outros", version.other_fields.as_str()),
    ] {
        text.push_str(&format!("{name}:{}:{value}\n", value.len()));
    }
    text
}

#[cfg(test)]
mod tests {
    use ports::{
        ConsentRequestRecord, MockCompanyRepository, MockConsentRequestRepository,
        MockUseCaseRepository,
    };

    use super::*;
    use crate::test_support::{company, consent_request};

    #[test]
    fn every_missing_mandatory_field_is_named() {
        let request = consent_request(Uuid::from_u128(7), domain::ConsentStatus::Active);
        let id = request.id;
        let mut consent_requests = MockConsentRequestRepository::new();
        consent_requests.expect_get().returning(move |_, _| {
            Ok(Some(ConsentRequestRecord {
                request: request.clone(),
                history: vec![],
                provenance: None,
            }))
        });
        let mut companies = MockCompanyRepository::new();
        companies
            .expect_controller_profile()
            .returning(|_| Ok(None));
        let mut use_cases = MockUseCaseRepository::new();
        use_cases
            .expect_find_by_template()
            .returning(|_, _| Ok(None));
        let records = ConsentRecords::new(
            Arc::new(consent_requests),
            Arc::new(use_cases),
            Arc::new(companies),
            RecordSettings::default(),
        );
        let Err(ConsentRecordError::Missing(missing)) = records.execute(&company(), id) else {
            panic!("expected missing fields");
        };
        let fields: Vec<_> = missing.fields().iter().map(|f| f.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "controlador.nome",
                "controlador.endereco",
                "controlador.contatoDpo",
                "casoDeUso"
            ]
        );
    }

    #[test]
    fn the_receipt_id_follows_the_requests_state() {
        let mut request = consent_request(Uuid::from_u128(7), domain::ConsentStatus::Active);
        let first = receipt_id(&request);
        assert_eq!(first, receipt_id(&request));
        request.updated_at += chrono::Duration::seconds(1);
        assert_ne!(first, receipt_id(&request));
    }
}
