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
    /// Every status, in the order of the lifecycle (pendente, ativo, then the terminal ones).
    pub const ALL: [ConsentStatus; 5] = [
        ConsentStatus::Pendente,
        ConsentStatus::Ativo,
        ConsentStatus::Recusado,
        ConsentStatus::Expirado,
        ConsentStatus::Revogado,
    ];

    /// The wire and database name (`"pendente"`).
    pub fn as_str(self) -> &'static str {
        match self {
            ConsentStatus::Pendente => "pendente",
            ConsentStatus::Ativo => "ativo",
            ConsentStatus::Recusado => "recusado",
            ConsentStatus::Expirado => "expirado",
            ConsentStatus::Revogado => "revogado",
        }
    }

    /// Parses the wire and database name.
    /// Exact, lower-case names only.
    pub fn parse(raw: &str) -> Option<ConsentStatus> {
        ConsentStatus::ALL.into_iter().find(|s| s.as_str() == raw)
    }

    /// The status after `event` happens to a request in status `from` (`None`: not yet created).
    pub fn apply(
        from: Option<ConsentStatus>,
        event: ConsentEvent,
    ) -> Result<ConsentStatus, IllegalTransition> {
        use ConsentEvent::*;
        use ConsentStatus::*;
        match (from, event) {
            (None, CreatedActive) => Ok(Ativo),
            (None, CreatedPending) => Ok(Pendente),
            (from, event) => Err(IllegalTransition { from, event }),
        }
    }

    /// No event moves a request out of a terminal status.
    pub fn is_terminal(self) -> bool {
        match self {
            ConsentStatus::Recusado | ConsentStatus::Expirado | ConsentStatus::Revogado => true,
            ConsentStatus::Pendente | ConsentStatus::Ativo => false,
        }
    }
}

impl std::fmt::Display for ConsentStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL_EVENTS: [ConsentEvent; 2] =
        [ConsentEvent::CreatedActive, ConsentEvent::CreatedPending];

    #[test]
    fn as_str_gives_the_lower_case_portuguese_names() {
        let names: Vec<&str> = ConsentStatus::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(
            names,
            ["pendente", "ativo", "recusado", "expirado", "revogado"]
        );
    }

    #[test]
    fn every_status_round_trips_through_as_str_and_parse() {
        for status in ConsentStatus::ALL {
            assert_eq!(ConsentStatus::parse(status.as_str()), Some(status));
        }
    }

    #[test]
    fn parse_rejects_unknown_or_miscased_names() {
        for raw in ["", "Ativo", "ATIVO", " ativo", "active", "cancelado"] {
            assert_eq!(ConsentStatus::parse(raw), None, "{raw:?}");
        }
    }

    #[test]
    fn serde_uses_the_same_names_as_as_str() {
        for status in ConsentStatus::ALL {
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(json, format!("\"{}\"", status.as_str()));
            assert_eq!(
                serde_json::from_str::<ConsentStatus>(&json).unwrap(),
                status
            );
        }
    }

    #[test]
    fn display_writes_the_wire_name() {
        assert_eq!(ConsentStatus::Revogado.to_string(), "revogado");
    }

    #[test]
    fn creating_active_from_nothing_gives_ativo() {
        assert_eq!(
            ConsentStatus::apply(None, ConsentEvent::CreatedActive),
            Ok(ConsentStatus::Ativo)
        );
    }

    #[test]
    fn creating_pending_from_nothing_gives_pendente() {
        assert_eq!(
            ConsentStatus::apply(None, ConsentEvent::CreatedPending),
            Ok(ConsentStatus::Pendente)
        );
    }

    #[test]
    fn no_creation_event_applies_to_an_existing_request() {
        for from in ConsentStatus::ALL {
            for event in ALL_EVENTS {
                assert_eq!(
                    ConsentStatus::apply(Some(from), event),
                    Err(IllegalTransition {
                        from: Some(from),
                        event
                    }),
                    "{from:?} {event:?}"
                );
            }
        }
    }

    #[test]
    fn every_pair_of_state_and_event_has_the_expected_outcome() {
        let froms = std::iter::once(None).chain(ConsentStatus::ALL.map(Some));
        let mut pairs = 0;
        for from in froms {
            for event in ALL_EVENTS {
                pairs += 1;
                let expected = match (from, event) {
                    (None, ConsentEvent::CreatedActive) => Ok(ConsentStatus::Ativo),
                    (None, ConsentEvent::CreatedPending) => Ok(ConsentStatus::Pendente),
                    _ => Err(IllegalTransition { from, event }),
                };
                assert_eq!(
                    ConsentStatus::apply(from, event),
                    expected,
                    "{from:?} {event:?}"
                );
            }
        }
        assert_eq!(pairs, 12);
    }

    #[test]
    fn recusado_expirado_and_revogado_are_terminal() {
        assert!(ConsentStatus::Recusado.is_terminal());
        assert!(ConsentStatus::Expirado.is_terminal());
        assert!(ConsentStatus::Revogado.is_terminal());
    }

    #[test]
    fn pendente_and_ativo_are_not_terminal() {
        assert!(!ConsentStatus::Pendente.is_terminal());
        assert!(!ConsentStatus::Ativo.is_terminal());
    }

    #[test]
    fn illegal_transition_message_names_the_state_and_event() {
        let err = ConsentStatus::apply(Some(ConsentStatus::Ativo), ConsentEvent::CreatedPending)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "transição inválida: CreatedPending a partir de Some(Ativo)"
        );
    }
}
