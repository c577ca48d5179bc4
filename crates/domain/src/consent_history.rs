//! The history of a consent request: every status change, with its cause.

use chrono::{DateTime, Utc};

use crate::{ConsentStatus, Reason};

/// Why a status changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransitionCause {
    /// Reported by the PGCC: the subject answered or revoked there.
    Pgcc,
    /// Done by the company through this API (creation, revocation).
    Company,
    /// The expiry date passed.
    Expiry,
}

impl TransitionCause {
    /// Every cause.
    pub const ALL: [TransitionCause; 3] = [
        TransitionCause::Pgcc,
        TransitionCause::Company,
        TransitionCause::Expiry,
    ];

    /// The wire and database name: `pgcc`, `empresa`, `expiracao`.
    pub fn as_str(self) -> &'static str {
        match self {
            TransitionCause::Pgcc => "pgcc",
            TransitionCause::Company => "empresa",
            TransitionCause::Expiry => "expiracao",
        }
    }

    /// Parses the wire and database name; exact, lower-case names only.
    pub fn parse(raw: &str) -> Option<TransitionCause> {
        TransitionCause::ALL
            .into_iter()
            .find(|cause| cause.as_str() == raw)
    }
}

/// One entry of a request's history. Creation is the first entry (`de: None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusChange {
    /// The status before (`de`); `None` for the creation.
    pub from: Option<ConsentStatus>,
    /// The status after (`para`).
    pub to: ConsentStatus,
    /// When the change happened (`em`).
    pub at: DateTime<Utc>,
    /// Why it happened (`causa`).
    pub cause: TransitionCause,
    /// The reason given (`motivo`): by the company with its revocation, or by the subject on the
    /// PGCC, when the PGCC reports one.
    pub reason: Option<Reason>,
}

impl std::fmt::Display for TransitionCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_str_gives_the_lower_case_names() {
        let names: Vec<&str> = TransitionCause::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names, ["pgcc", "empresa", "expiracao"]);
    }

    #[test]
    fn every_cause_round_trips_through_as_str_and_parse() {
        for cause in TransitionCause::ALL {
            assert_eq!(TransitionCause::parse(cause.as_str()), Some(cause));
        }
    }

    #[test]
    fn parse_rejects_unknown_or_miscased_names() {
        for raw in [
            "",
            "PGCC",
            "Empresa",
            " pgcc",
            "expiração",
            "expiracao ",
            "sistema",
        ] {
            assert_eq!(TransitionCause::parse(raw), None, "{raw:?}");
        }
    }

    #[test]
    fn display_writes_the_wire_name() {
        assert_eq!(TransitionCause::Expiry.to_string(), "expiracao");
    }
}
