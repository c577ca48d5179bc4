//! Entities and rules of the consent service.
//!
//! This crate is shared with other teams, so it depends on nothing of ours and on no framework or
//! database: only serde (wire names), uuid, chrono and thiserror (and, with the optional feature
//! `openapi`, utoipa's core for the OpenAPI schemas of its wire types: module `openapi`). What it
//! promises, and how to depend on it, is in its `README.md`.
//!
//! | Module | What it holds |
//! |---|---|
//! | [`cpf`], [`cnpj`] | the tax identifiers of a data subject and of a company, parsed and checked |
//! | [`consent_request`] | the creation draft, its validation rules, the stored request |
//! | [`validation`] | field-level errors, named by the JSON name of the field |
//! | [`consent_status`] | the status of a request and its state machine |
//! | [`consent_history`] | the history of status changes and their causes |
//! | [`reason`] | the reason (`motivo`) given for a revocation or a refusal |
//! | [`envelope`] | the shape of every response body of the public API |
//! | [`pgcc_status_code`] | the status names that `pgccCodigoErro` may carry |
//! | [`webhook_event`], [`webhook_url`] | what a company is notified of, and where |
//! | [`company`], [`use_case`] | the API caller and its use cases |
//! | [`scope`] | what an API key may do (`escopos`) |
//!
//! Wire names (the serde names of statuses, fields and event types) follow the public API spec
//! and are stable. Personal data (a CPF, a proof of consent) is redacted in `Debug`.
//!
//! # Parsing a CPF and a CNPJ
//!
//! [`Cpf::parse`] accepts the formatted and the digits-only form and normalizes both to the 11
//! digits. A CPF is personal data: it has no `Display`, its `Debug` shows only the masked form,
//! and [`Cpf::masked`] is the form that may be shown or logged. Errors never quote the input.
//!
//! ```
//! use domain::{Cpf, CpfError};
//!
//! let formatted = Cpf::parse("123.456.789-09")?;
//! let digits = Cpf::parse("12345678909")?;
//! assert_eq!(formatted, digits);
//! assert_eq!(formatted.as_str(), "12345678909");
//!
//! // What may be shown or logged: only digits 4 to 9.
//! assert_eq!(formatted.masked(), "***.456.789-**");
//! // Debug redacts, so `{:?}` in a log line cannot leak the number.
//! assert_eq!(format!("{formatted:?}"), "Cpf(***.456.789-**)");
//!
//! // Invalid ones: each rule has its own error, with a message for the client.
//! let err = Cpf::parse("123.456.789-00").unwrap_err();
//! assert_eq!(err, CpfError::CheckDigits);
//! assert_eq!(err.to_string(), "os dígitos verificadores do CPF não conferem");
//! assert_eq!(Cpf::parse("111.111.111-11"), Err(CpfError::RepeatedDigits));
//! assert_eq!(Cpf::parse("1234567890"), Err(CpfError::Length));
//! assert_eq!(Cpf::parse("123.456.789/09"), Err(CpfError::Characters));
//! # Ok::<(), CpfError>(())
//! ```
//!
//! [`Cnpj::parse`] does the same for a company's CNPJ, numeric or alphanumeric (letters are
//! upper-cased). A CNPJ identifies a company, not a person, so it is not masked; it serializes as
//! its 14 characters.
//!
//! ```
//! use domain::{Cnpj, CnpjError};
//!
//! let formatted = Cnpj::parse("11.222.333/0001-81")?;
//! assert_eq!(formatted, Cnpj::parse("11222333000181")?);
//! assert_eq!(formatted.as_str(), "11222333000181");
//!
//! let alphanumeric = Cnpj::parse("12.abc.345/01de-35")?;
//! assert_eq!(alphanumeric.as_str(), "12ABC34501DE35");
//! assert_eq!(serde_json::to_string(&alphanumeric).unwrap(), r#""12ABC34501DE35""#);
//!
//! let err = Cnpj::parse("11.222.333/0001-82").unwrap_err();
//! assert_eq!(err, CnpjError::CheckDigits);
//! assert_eq!(err.to_string(), "os dígitos verificadores do CNPJ não conferem");
//! assert_eq!(Cnpj::parse("11.222.333/0001"), Err(CnpjError::Length));
//! # Ok::<(), CnpjError>(())
//! ```
//!
//! # Validating a consent request
//!
//! A creation body arrives as a [`ConsentRequestDraft`]: every field optional and the
//! enumerations as text, so that [`ConsentRequestDraft::validate`] can report every broken rule
//! at once, each under the JSON name of its field ([`consent_request::field`]), instead of
//! stopping at the first. It takes the creation variant and the current instant (the caller's
//! clock, so validation is deterministic).
//!
//! ```
//! use chrono::{Duration, TimeZone, Utc};
//! use domain::consent_request::field;
//! use domain::{ConsentRequestDraft, CreationVariant, AccessMode};
//!
//! let now = Utc.with_ymd_and_hms(2025, 6, 1, 12, 0, 0).unwrap();
//!
//! // A request created active: the subject has already answered.
//! let draft = ConsentRequestDraft {
//!     template_id: Some(" tpl-marketing ".into()),
//!     subject_cpf: Some("123.456.789-09".into()),
//!     access_mode: Some("Direto".into()),
//!     subject_type: Some("PessoaFisica".into()),
//!     consent_expires_at: Some(now + Duration::days(365)),
//!     subject_answered_at: Some(now - Duration::hours(1)),
//!     proof_of_collection: Some("assinatura-digital-do-titular".into()),
//!     consenting_cnpj: None,
//! };
//! let valid = draft.clone().validate(CreationVariant::Active, now).unwrap();
//! assert_eq!(valid.template_id, "tpl-marketing"); // trimmed
//! assert_eq!(valid.subject_cpf.as_str(), "12345678909"); // normalized
//! assert_eq!(valid.access_mode, AccessMode::Direct);
//! assert!(valid.answer.is_some());
//!
//! // A broken draft: every field's first broken rule is reported, in a fixed order.
//! let broken = ConsentRequestDraft {
//!     template_id: Some("   ".into()),
//!     subject_cpf: Some("123.456.789-00".into()),
//!     access_mode: Some("Indireto".into()), // so cnpjAnuente is required
//!     subject_type: Some("PessoaJuridica".into()),
//!     consent_expires_at: Some(now - Duration::days(1)),
//!     subject_answered_at: Some(now + Duration::hours(1)),
//!     proof_of_collection: Some(String::new()),
//!     consenting_cnpj: None,
//! };
//! let errors = broken.validate(CreationVariant::Active, now).unwrap_err();
//! assert_eq!(errors.to_string(), "7 campos inválidos");
//!
//! let reported: Vec<(&str, &str)> = errors
//!     .fields()
//!     .iter()
//!     .map(|e| (e.field.as_str(), e.message.as_str()))
//!     .collect();
//! assert_eq!(
//!     reported,
//!     [
//!         (field::TEMPLATE_ID, "o campo é obrigatório"),
//!         (field::SUBJECT_CPF, "os dígitos verificadores do CPF não conferem"),
//!         (field::SUBJECT_TYPE, "o tipo de titular deve ser PessoaFisica"),
//!         (
//!             field::CONSENT_EXPIRES_AT,
//!             "a data de expiração deve ser posterior ao momento atual",
//!         ),
//!         (
//!             field::SUBJECT_ANSWERED_AT,
//!             "a data da resposta do titular não pode estar no futuro",
//!         ),
//!         (field::PROOF_OF_COLLECTION, "o campo é obrigatório"),
//!         (
//!             field::CONSENTING_CNPJ,
//!             "o CNPJ anuente é obrigatório quando a modalidade de acesso é Indireto",
//!         ),
//!     ]
//! );
//! // The field names are the JSON names of the public API.
//! assert_eq!(field::SUBJECT_CPF, "cpfTitular");
//! // No message quotes the submitted value.
//! assert!(errors.fields().iter().all(|e| !e.message.contains("123")));
//!
//! // A pending request must not carry the subject's answer.
//! let errors = draft.validate(CreationVariant::Pending, now).unwrap_err();
//! let fields: Vec<&str> = errors.fields().iter().map(|e| e.field.as_str()).collect();
//! assert_eq!(fields, [field::SUBJECT_ANSWERED_AT, field::PROOF_OF_COLLECTION]);
//! assert_eq!(errors.fields()[0].message, "não é aceito em solicitação pendente");
//! ```
//!
//! # Walking the state machine
//!
//! [`ConsentStatus::apply`] is the whole state machine: the status after an event, or an
//! [`IllegalTransition`]. `None` stands for a request not yet created. `recusado`, `expirado` and
//! `revogado` are terminal: no event leaves them.
//!
//! ```
//! use domain::{ConsentEvent, ConsentStatus, IllegalTransition};
//!
//! let pending = ConsentStatus::apply(None, ConsentEvent::CreatedPending)?;
//! assert_eq!(pending, ConsentStatus::Pending);
//! let active = ConsentStatus::apply(Some(pending), ConsentEvent::SubjectAccepted)?;
//! assert_eq!(active, ConsentStatus::Active);
//! let revoked = ConsentStatus::apply(Some(active), ConsentEvent::Revoked)?;
//! assert_eq!(revoked, ConsentStatus::Revoked);
//! assert!(revoked.is_terminal());
//! assert!(!active.is_terminal());
//!
//! // A refused move names where it started and what was tried.
//! let err = ConsentStatus::apply(Some(ConsentStatus::Active), ConsentEvent::SubjectRefused);
//! assert_eq!(
//!     err,
//!     Err(IllegalTransition {
//!         from: Some(ConsentStatus::Active),
//!         event: ConsentEvent::SubjectRefused,
//!     })
//! );
//! // Creation applies only to a request not yet created.
//! assert!(ConsentStatus::apply(Some(active), ConsentEvent::CreatedActive).is_err());
//! // A terminal status accepts no event at all.
//! for event in ConsentEvent::ALL {
//!     assert!(ConsentStatus::apply(Some(revoked), event).is_err());
//! }
//!
//! // The event that explains an observed change of status, if the machine allows it.
//! assert_eq!(
//!     ConsentStatus::event_towards(ConsentStatus::Active, ConsentStatus::Expired),
//!     Some(ConsentEvent::Expired)
//! );
//! assert_eq!(
//!     ConsentStatus::event_towards(ConsentStatus::Active, ConsentStatus::Pending),
//!     None
//! );
//!
//! // Wire names: lower-case Portuguese, the same in JSON, in `Display` and in the database.
//! assert_eq!(ConsentStatus::Active.as_str(), "ativo");
//! assert_eq!(serde_json::to_string(&ConsentStatus::Active).unwrap(), r#""ativo""#);
//! assert_eq!(ConsentStatus::parse("revogado"), Some(ConsentStatus::Revoked));
//! assert_eq!(ConsentStatus::parse("Ativo"), None);
//! # Ok::<(), IllegalTransition>(())
//! ```
//!
//! # Building an envelope
//!
//! Every response body of the public API is an [`Envelope`] of five fields: `sucesso`,
//! `isPgccErro`, `pgccCodigoErro`, `mensagem` and `data`. `pgccCodigoErro` is `OK` unless the
//! failure came from the PGCC, in which case it carries the PGCC's status name
//! ([`PgccStatusCode`]).
//!
//! ```
//! use domain::{Envelope, FieldError, PgccStatusCode};
//! use serde_json::json;
//!
//! // A success.
//! let ok = Envelope::ok(json!({"id": 1}));
//! assert_eq!(
//!     serde_json::to_value(&ok).unwrap(),
//!     json!({
//!         "sucesso": true,
//!         "isPgccErro": false,
//!         "pgccCodigoErro": "OK",
//!         "mensagem": null,
//!         "data": {"id": 1}
//!     })
//! );
//!
//! // A failure of ours, here carrying field errors: `pgccCodigoErro` stays `OK`.
//! let errors = vec![FieldError::new("cpfTitular", "o campo é obrigatório")];
//! let failure = Envelope::failure("1 campo inválido", errors);
//! assert_eq!(
//!     serde_json::to_value(&failure).unwrap(),
//!     json!({
//!         "sucesso": false,
//!         "isPgccErro": false,
//!         "pgccCodigoErro": "OK",
//!         "mensagem": "1 campo inválido",
//!         "data": [{"campo": "cpfTitular", "mensagem": "o campo é obrigatório"}]
//!     })
//! );
//!
//! // A failure reported by the PGCC, under the PGCC's status name.
//! let code = PgccStatusCode::from_u16(503).unwrap();
//! assert_eq!(code, PgccStatusCode::ServiceUnavailable);
//! let pgcc = Envelope::pgcc_failure(code, "o PGCC está indisponível", json!(null));
//! let value = serde_json::to_value(&pgcc).unwrap();
//! assert_eq!(value["sucesso"], false);
//! assert_eq!(value["isPgccErro"], true);
//! assert_eq!(value["pgccCodigoErro"], "ServiceUnavailable");
//!
//! // Exactly the five wire fields, whatever the constructor.
//! let mut keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
//! keys.sort_unstable();
//! assert_eq!(keys, ["data", "isPgccErro", "mensagem", "pgccCodigoErro", "sucesso"]);
//! ```

#![warn(missing_docs)]

pub mod cnpj;
pub mod company;
pub mod consent_history;
pub mod consent_record;
pub mod consent_request;
pub mod consent_status;
pub mod cpf;
pub mod envelope;
pub mod event_selection;
pub mod evidence_file;
pub mod import;
#[cfg(feature = "openapi")]
pub mod openapi;
pub mod person;
pub mod pgcc_health;
pub mod pgcc_status_code;
pub mod reason;
pub mod scope;
pub mod use_case;
pub mod validation;
pub mod webhook_event;
pub mod webhook_url;

pub use cnpj::{Cnpj, CnpjError};
pub use company::{Company, CompanyId};
pub use consent_history::{StatusChange, TransitionCause};
pub use consent_record::{
    ControllerProfile, LegalBasis, LegalHypothesis, LgpdArticle, UseCaseAnnotation,
    UseCaseAnnotationDraft,
};
pub use consent_request::{
    AccessMode, ActiveAnswer, ConsentRequest, ConsentRequestDraft, CreationVariant, SubjectType,
    ValidConsentRequest, MAX_PROOF_OF_COLLECTION, MAX_TEMPLATE_ID, NUL_CHARACTER_MESSAGE,
};
pub use consent_status::{ConsentEvent, ConsentStatus, IllegalTransition};
pub use cpf::{Cpf, CpfError};
pub use envelope::Envelope;
pub use event_selection::EventSelection;
pub use evidence_file::{
    evidence_media_type, is_sha256_hex, EvidenceFile, EvidenceLink, EVIDENCE_MEDIA_TYPES,
};
pub use import::{
    Import, ImportCompletedData, ImportLineDraft, ImportLineError, ImportProvenance, ImportStatus,
    ValidImportLine,
};
pub use person::{scopes_of_roles, Person, Role};
pub use pgcc_health::{
    PgccAssessment, PgccCallTally, PgccHealth, PgccHealthChange, PgccHealthCode, PgccOperation,
    PgccOutageThreshold, PgccWindowCalls,
};
pub use pgcc_status_code::PgccStatusCode;
pub use reason::{Reason, ReasonError};
pub use scope::{Scope, Scopes, ScopesError};
pub use use_case::{PgccUseCase, SyncCounts, UseCase, UseCaseChange, UseCaseVersion};
pub use validation::{FieldError, ValidationErrors};
pub use webhook_event::{
    AuditCheckpointData, ConsentSnapshot, EventData, EventType, IntegrityIncidentData, TestData,
    UrlDisabledData, WebhookEvent, WebhookPayload,
};
pub use webhook_url::{WebhookUrl, WebhookUrlError};
