//! Entities and rules of the consent service.
//!
//! This crate is shared with other teams, so it depends on nothing of ours and on no framework or
//! database: only serde (wire names), uuid, chrono and thiserror.

pub mod cnpj;
pub mod company;
pub mod consent_history;
pub mod consent_request;
pub mod consent_status;
pub mod cpf;
pub mod envelope;
pub mod pgcc_status_code;
pub mod use_case;
pub mod validation;
pub mod webhook_event;
pub mod webhook_url;

pub use cnpj::{Cnpj, CnpjError};
pub use company::{Company, CompanyId};
pub use consent_history::{StatusChange, TransitionCause};
pub use consent_request::{
    ActiveAnswer, ConsentRequest, ConsentRequestDraft, CreationVariant, ModalidadeAcesso,
    TipoTitular, ValidConsentRequest,
};
pub use consent_status::{ConsentEvent, ConsentStatus, IllegalTransition};
pub use cpf::{Cpf, CpfError};
pub use envelope::Envelope;
pub use pgcc_status_code::PgccStatusCode;
pub use use_case::{PgccUseCase, SyncCounts, UseCase};
pub use validation::{FieldError, ValidationErrors};
pub use webhook_event::{ConsentSnapshot, EventData, EventType, WebhookEvent, WebhookPayload};
pub use webhook_url::{WebhookUrl, WebhookUrlError};
