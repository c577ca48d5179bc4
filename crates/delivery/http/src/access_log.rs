//! Recording a read of personal data (issue 24, part 7; docs/security.md, "Access log"): what
//! a handler calls, inside its blocking hop ([`crate::blocking::as_caller`]) and before it
//! answers, whenever its answer carries a full CPF or a proof of collection, and what every audit
//! route calls. Recorded in the request's own connection: when recording fails, the answer is
//! not sent (503), so no read of personal data goes unrecorded.
//!
//! ```ignore
//! let page = as_caller(&state, key, move |s, call| {
//!     let page = s.some_read.execute(call.company(), query)?;
//!     access_log::record_read(s, call, page.items.iter().map(|r| (r.id, r.hash.as_str())))?;
//!     Ok(page)
//! })
//! .await?;
//! ```

use std::cell::RefCell;

use application::{RecordAccessError, Services};
use uuid::Uuid;

use crate::blocking::Call;
use crate::dto::consent_read::Solicitacao;
use crate::error::ApiError;

/// Records that the key of `call` read, through `call.route`, the personal data of `requests`
/// (each request's id and salted consent hash; never a CPF). May be empty (an export that found
/// nothing, an audit route): the read itself is recorded. Fails 503 when it cannot be recorded.
pub fn record_read<'a>(
    services: &Services,
    call: &Call,
    requests: impl IntoIterator<Item = (Uuid, &'a str)>,
) -> Result<(), ApiError> {
    services
        .personal_data_accesses
        .record(&call.caller, call.route, requests)
        .map_err(ApiError::from)
}

impl From<RecordAccessError> for ApiError {
    /// Whatever the cause, the read is refused as the service being unavailable for a moment:
    /// the client may retry, and nothing was answered.
    fn from(e: RecordAccessError) -> Self {
        ApiError::Unavailable(anyhow::Error::new(e))
    }
}

/// The requests a paged answer rendered, noted while it renders them (`bounded_page::within`
/// serializes each item once and may leave the last ones out): what [`Answered::record`] records
/// is exactly the items answered.
#[derive(Default)]
pub struct Answered {
    /// (id, salted hash) of each rendered item, in order.
    requests: RefCell<Vec<(Uuid, String)>>,
    /// Whether each rendered item carries a full CPF or a proof.
    personal: RefCell<Vec<bool>>,
}

impl Answered {
    /// Notes `item` (rendered with the full CPF when `show_cpf`) and gives it back.
    pub fn note(&self, item: Solicitacao, show_cpf: bool) -> Solicitacao {
        self.requests
            .borrow_mut()
            .push((item.id, item.hash.clone()));
        self.personal
            .borrow_mut()
            .push(show_cpf || item.proof_of_collection.is_some());
        item
    }

    /// Records the read of the first `answered` items noted (those the page kept).
    pub fn record(
        &self,
        services: &Services,
        call: &Call,
        answered: usize,
    ) -> Result<(), ApiError> {
        let requests = self.requests.borrow();
        let kept = &requests[..answered.min(requests.len())];
        record_read(
            services,
            call,
            kept.iter().map(|(id, hash)| (*id, hash.as_str())),
        )
    }

    /// [`Answered::record`] when one of the first `answered` items carries a full CPF or a
    /// proof; nothing otherwise.
    pub fn record_if_personal(
        &self,
        services: &Services,
        call: &Call,
        answered: usize,
    ) -> Result<(), ApiError> {
        let personal = self.personal.borrow().iter().take(answered).any(|p| *p);
        if personal {
            self.record(services, call, answered)?;
        }
        Ok(())
    }
}
