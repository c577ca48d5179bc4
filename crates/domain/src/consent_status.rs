//! The status of a consent request and its state machine.
//!
//! Moves are a table of (status before, event) -> status after, so a later transition is one more
//! arm, not a rewrite.
//!
//! ```text
//! (none) --CreatedActive--> ativo      (none) --CreatedPending--> pendente
//! pendente --SubjectAccepted--> ativo | --SubjectRefused--> recusado | --Expired--> expirado
//! pendente --Revoked--> revogado (the company withdrew it before any answer)
//! ativo --Revoked--> revogado | --Expired--> expirado
//! recusado, expirado, revogado: terminal
//! ```

use serde::{Deserialize, Serialize};

/// The status of a consent request. Serialized, displayed and stored as its lower-case
/// Portuguese name ([`ConsentStatus::as_str`]); those names are part of the public API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ConsentStatus {
    /// `pendente`: waiting for the subject's answer.
    #[serde(rename = "pendente")]
    Pending,
    /// `ativo`: the subject consented; the consent holds until it expires or is revoked.
    #[serde(rename = "ativo")]
    Active,
    /// `recusado`: the subject refused. Terminal.
    #[serde(rename = "recusado")]
    Refused,
    /// `expirado`: the expiry date passed before an answer or while active. Terminal.
    #[serde(rename = "expirado")]
    Expired,
    /// `revogado`: an active consent was revoked, or a pending request withdrawn by the
    /// company. Terminal.
    #[serde(rename = "revogado")]
    Revoked,
}

/// What happens to a consent request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConsentEvent {
    /// Registered as already answered by the subject (`criar/ativo`).
    CreatedActive,
    /// Registered waiting for the subject's answer (`criar/pendente`).
    CreatedPending,
    /// The subject accepted a pending request (reported by the PGCC).
    SubjectAccepted,
    /// The subject refused a pending request (reported by the PGCC).
    SubjectRefused,
    /// The expiry date passed.
    Expired,
    /// Revoked: an active consent by the subject on the PGCC or by the company through us, or a
    /// pending request withdrawn by the company (through us).
    Revoked,
}

impl ConsentEvent {
    /// Every event, creations first.
    pub const ALL: [ConsentEvent; 6] = [
        ConsentEvent::CreatedActive,
        ConsentEvent::CreatedPending,
        ConsentEvent::SubjectAccepted,
        ConsentEvent::SubjectRefused,
        ConsentEvent::Expired,
        ConsentEvent::Revoked,
    ];
}

/// An event the state machine does not allow from a status: [`ConsentStatus::apply`] refuses
/// it and the request is left as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("transição inválida: {event:?} a partir de {}", wire_debug(.from))]
pub struct IllegalTransition {
    /// The status the request was in (`None`: not yet created).
    pub from: Option<ConsentStatus>,
    /// The event that was refused.
    pub event: ConsentEvent,
}

/// `from` as the message has always spelled it (`Some(Ativo)`, `None`): the status's wire name,
/// capitalized, whatever the Rust variant is called.
fn wire_debug(from: &Option<ConsentStatus>) -> String {
    match from {
        None => "None".to_owned(),
        Some(status) => {
            let name = status.as_str();
            format!("Some({}{})", name[..1].to_uppercase(), &name[1..])
        }
    }
}

impl ConsentStatus {
    /// Every status, in the order of the lifecycle (pendente, ativo, then the terminal ones).
    pub const ALL: [ConsentStatus; 5] = [
        ConsentStatus::Pending,
        ConsentStatus::Active,
        ConsentStatus::Refused,
        ConsentStatus::Expired,
        ConsentStatus::Revoked,
    ];

    /// The wire and database name (`"pendente"`).
    pub fn as_str(self) -> &'static str {
        match self {
            ConsentStatus::Pending => "pendente",
            ConsentStatus::Active => "ativo",
            ConsentStatus::Refused => "recusado",
            ConsentStatus::Expired => "expirado",
            ConsentStatus::Revoked => "revogado",
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
        use ConsentEvent::{CreatedActive, CreatedPending, SubjectAccepted, SubjectRefused};
        use ConsentStatus::*;
        match (from, event) {
            (None, CreatedActive) => Ok(Active),
            (None, CreatedPending) => Ok(Pending),
            (Some(Pending), SubjectAccepted) => Ok(Active),
            (Some(Pending), SubjectRefused) => Ok(Refused),
            (Some(Pending), ConsentEvent::Expired) => Ok(Expired),
            (Some(Pending), ConsentEvent::Revoked) => Ok(Revoked),
            (Some(Active), ConsentEvent::Revoked) => Ok(Revoked),
            (Some(Active), ConsentEvent::Expired) => Ok(Expired),
            (from, event) => Err(IllegalTransition { from, event }),
        }
    }

    /// The event that moves an existing request from `from` to `to`, if the state machine has
    /// one: what the status poller applies when the PGCC reports `to` for a request stored as
    /// `from`. `None` for `from == to`, for any move out of a terminal status, and for moves the
    /// machine does not allow (`ativo` back to `pendente`, `recusado` to `ativo`).
    pub fn event_towards(from: ConsentStatus, to: ConsentStatus) -> Option<ConsentEvent> {
        ConsentEvent::ALL
            .into_iter()
            .find(|&event| ConsentStatus::apply(Some(from), event) == Ok(to))
    }

    /// Whether the state machine has a move from `from` (`None`: not yet created) to `to`: a
    /// creation (`None` to `ativo` or `pendente`) or an event of [`ConsentStatus::apply`] from an
    /// existing status. What the audit log's chain is held to (a recorded change the machine
    /// does not allow, `revogado` back to `ativo`, was not made by the service).
    pub fn allows_move(from: Option<ConsentStatus>, to: ConsentStatus) -> bool {
        ConsentEvent::ALL
            .into_iter()
            .any(|event| ConsentStatus::apply(from, event) == Ok(to))
    }

    /// No event moves a request out of a terminal status.
    pub fn is_terminal(self) -> bool {
        match self {
            ConsentStatus::Refused | ConsentStatus::Expired | ConsentStatus::Revoked => true,
            ConsentStatus::Pending | ConsentStatus::Active => false,
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
        assert_eq!(ConsentStatus::Revoked.to_string(), "revogado");
    }

    #[test]
    fn creating_active_from_nothing_gives_ativo() {
        assert_eq!(
            ConsentStatus::apply(None, ConsentEvent::CreatedActive),
            Ok(ConsentStatus::Active)
        );
    }

    #[test]
    fn creating_pending_from_nothing_gives_pendente() {
        assert_eq!(
            ConsentStatus::apply(None, ConsentEvent::CreatedPending),
            Ok(ConsentStatus::Pending)
        );
    }

    #[test]
    fn no_creation_event_applies_to_an_existing_request() {
        for from in ConsentStatus::ALL {
            for event in [ConsentEvent::CreatedActive, ConsentEvent::CreatedPending] {
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
    fn a_pending_request_accepted_by_the_subject_becomes_ativo() {
        assert_eq!(
            ConsentStatus::apply(Some(ConsentStatus::Pending), ConsentEvent::SubjectAccepted),
            Ok(ConsentStatus::Active)
        );
    }

    #[test]
    fn a_pending_request_refused_by_the_subject_becomes_recusado() {
        assert_eq!(
            ConsentStatus::apply(Some(ConsentStatus::Pending), ConsentEvent::SubjectRefused),
            Ok(ConsentStatus::Refused)
        );
    }

    #[test]
    fn a_pending_or_active_request_past_its_expiry_becomes_expirado() {
        for from in [ConsentStatus::Pending, ConsentStatus::Active] {
            assert_eq!(
                ConsentStatus::apply(Some(from), ConsentEvent::Expired),
                Ok(ConsentStatus::Expired),
                "{from:?}"
            );
        }
    }

    #[test]
    fn an_active_request_revoked_becomes_revogado() {
        assert_eq!(
            ConsentStatus::apply(Some(ConsentStatus::Active), ConsentEvent::Revoked),
            Ok(ConsentStatus::Revoked)
        );
    }

    #[test]
    fn a_pending_request_revoked_is_withdrawn_and_becomes_revogado() {
        assert_eq!(
            ConsentStatus::apply(Some(ConsentStatus::Pending), ConsentEvent::Revoked),
            Ok(ConsentStatus::Revoked)
        );
    }

    #[test]
    fn an_active_request_cannot_be_answered_again() {
        for event in [ConsentEvent::SubjectAccepted, ConsentEvent::SubjectRefused] {
            assert_eq!(
                ConsentStatus::apply(Some(ConsentStatus::Active), event),
                Err(IllegalTransition {
                    from: Some(ConsentStatus::Active),
                    event
                }),
                "{event:?}"
            );
        }
    }

    #[test]
    fn only_creation_events_apply_to_a_request_not_yet_created() {
        for event in [
            ConsentEvent::SubjectAccepted,
            ConsentEvent::SubjectRefused,
            ConsentEvent::Expired,
            ConsentEvent::Revoked,
        ] {
            assert_eq!(
                ConsentStatus::apply(None, event),
                Err(IllegalTransition { from: None, event }),
                "{event:?}"
            );
        }
    }

    #[test]
    fn terminal_statuses_accept_no_event_at_all() {
        for from in ConsentStatus::ALL.into_iter().filter(|s| s.is_terminal()) {
            for event in ConsentEvent::ALL {
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
        use ConsentEvent::{CreatedActive, CreatedPending, SubjectAccepted, SubjectRefused};
        use ConsentStatus::*;
        let froms = std::iter::once(None).chain(ConsentStatus::ALL.map(Some));
        let mut pairs = 0;
        let mut legal = 0;
        for from in froms {
            for event in ConsentEvent::ALL {
                pairs += 1;
                // written out independently of `apply`, so a wrong arm there shows here
                let expected = match (from, event) {
                    (None, CreatedActive) => Ok(Active),
                    (None, CreatedPending) => Ok(Pending),
                    (Some(Pending), SubjectAccepted) => Ok(Active),
                    (Some(Pending), SubjectRefused) => Ok(Refused),
                    (Some(Pending), ConsentEvent::Expired) => Ok(Expired),
                    (Some(Pending), ConsentEvent::Revoked) => Ok(Revoked),
                    (Some(Active), ConsentEvent::Revoked) => Ok(Revoked),
                    (Some(Active), ConsentEvent::Expired) => Ok(Expired),
                    _ => Err(IllegalTransition { from, event }),
                };
                legal += usize::from(expected.is_ok());
                assert_eq!(
                    ConsentStatus::apply(from, event),
                    expected,
                    "{from:?} {event:?}"
                );
            }
        }
        assert_eq!(pairs, 36);
        assert_eq!(legal, 8);
    }

    #[test]
    fn all_events_lists_each_event_once() {
        // a new variant breaks this match, a reminder to add it to `ALL`
        for event in ConsentEvent::ALL {
            match event {
                ConsentEvent::CreatedActive
                | ConsentEvent::CreatedPending
                | ConsentEvent::SubjectAccepted
                | ConsentEvent::SubjectRefused
                | ConsentEvent::Expired
                | ConsentEvent::Revoked => {}
            }
        }
        for (i, a) in ConsentEvent::ALL.iter().enumerate() {
            assert!(!ConsentEvent::ALL[i + 1..].contains(a), "{a:?} twice");
        }
    }

    #[test]
    fn event_towards_names_the_event_of_each_legal_move() {
        use ConsentEvent::{SubjectAccepted, SubjectRefused};
        use ConsentStatus::*;
        let cases = [
            (Pending, Active, SubjectAccepted),
            (Pending, Refused, SubjectRefused),
            (Pending, Expired, ConsentEvent::Expired),
            (Pending, Revoked, ConsentEvent::Revoked),
            (Active, Revoked, ConsentEvent::Revoked),
            (Active, Expired, ConsentEvent::Expired),
        ];
        for (from, to, event) in cases {
            assert_eq!(
                ConsentStatus::event_towards(from, to),
                Some(event),
                "{from:?} -> {to:?}"
            );
        }
    }

    #[test]
    fn event_towards_is_none_for_every_move_the_machine_does_not_allow() {
        use ConsentStatus::*;
        let legal = [
            (Pending, Active),
            (Pending, Refused),
            (Pending, Expired),
            (Pending, Revoked),
            (Active, Revoked),
            (Active, Expired),
        ];
        let mut checked = 0;
        for from in ConsentStatus::ALL {
            for to in ConsentStatus::ALL {
                if legal.contains(&(from, to)) {
                    continue;
                }
                checked += 1;
                assert_eq!(
                    ConsentStatus::event_towards(from, to),
                    None,
                    "{from:?} -> {to:?}"
                );
            }
        }
        // 25 pairs, 6 legal: staying put, going back, leaving a terminal status, skipping ahead
        assert_eq!(checked, 19);
    }

    #[test]
    fn the_event_found_by_event_towards_applies_to_the_target_status() {
        for from in ConsentStatus::ALL {
            for to in ConsentStatus::ALL {
                if let Some(event) = ConsentStatus::event_towards(from, to) {
                    assert_eq!(ConsentStatus::apply(Some(from), event), Ok(to));
                }
            }
        }
    }

    #[test]
    fn allows_move_is_apply_for_every_pair_and_nothing_leaves_a_terminal_status() {
        let froms = std::iter::once(None).chain(ConsentStatus::ALL.into_iter().map(Some));
        for from in froms {
            for to in ConsentStatus::ALL {
                let by_apply = ConsentEvent::ALL
                    .into_iter()
                    .any(|e| ConsentStatus::apply(from, e) == Ok(to));
                assert_eq!(
                    ConsentStatus::allows_move(from, to),
                    by_apply,
                    "{from:?} {to:?}"
                );
                if from.is_some_and(ConsentStatus::is_terminal) {
                    assert!(!ConsentStatus::allows_move(from, to), "{from:?} {to:?}");
                }
            }
        }
        assert!(ConsentStatus::allows_move(None, ConsentStatus::Active));
        assert!(!ConsentStatus::allows_move(
            Some(ConsentStatus::Revoked),
            ConsentStatus::Active
        ));
    }

    #[test]
    fn recusado_expirado_and_revogado_are_terminal() {
        assert!(ConsentStatus::Refused.is_terminal());
        assert!(ConsentStatus::Expired.is_terminal());
        assert!(ConsentStatus::Revoked.is_terminal());
    }

    #[test]
    fn pendente_and_ativo_are_not_terminal() {
        assert!(!ConsentStatus::Pending.is_terminal());
        assert!(!ConsentStatus::Active.is_terminal());
    }

    #[test]
    fn illegal_transition_message_names_the_state_and_event() {
        let err = ConsentStatus::apply(Some(ConsentStatus::Active), ConsentEvent::CreatedPending)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "transição inválida: CreatedPending a partir de Some(Ativo)"
        );
    }
}
