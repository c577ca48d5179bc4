//! The status of a consent request and its state machine.
//!
//! Moves are a table of (status before, event) -> status after, so a later transition is one more
//! arm, not a rewrite. Today only the two creations exist: `criar/ativo` and `criar/pendente`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConsentStatus {
    Pendente,
    Ativo,
    Recusado,
    Expirado,
    Revogado,
}

/// What happens to a consent request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConsentEvent {
    /// Registered as already answered by the subject (`criar/ativo`).
    CreatedActive,
    /// Registered waiting for the subject's answer (`criar/pendente`).
    CreatedPending,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("transição inválida: {event:?} a partir de {from:?}")]
pub struct IllegalTransition {
    pub from: Option<ConsentStatus>,
    pub event: ConsentEvent,
}

impl ConsentStatus {
    /// The wire and database name (`"pendente"`).
    pub fn as_str(self) -> &'static str {
        todo!()
    }

    /// Parses the wire and database name.
    pub fn parse(raw: &str) -> Option<ConsentStatus> {
        todo!("{raw}")
    }

    /// The status after `event` happens to a request in status `from` (`None`: not yet created).
    pub fn apply(from: Option<ConsentStatus>, event: ConsentEvent) -> Result<ConsentStatus, IllegalTransition> {
        todo!("{from:?} {event:?}")
    }

    /// No event moves a request out of a terminal status.
    pub fn is_terminal(self) -> bool {
        todo!()
    }
}
