//! The PGCC's health as the service sees it (issue 25, part 3): from the outcomes of the PGCC
//! calls of the last window, per PGCC operation, as Open Finance Brasil's status API reports
//! it (`OK`, `PARTIAL_FAILURE`, `UNAVAILABLE`). The rule is in docs/decisions.md ("The PGCC's
//! health").

use chrono::{DateTime, Utc};
use serde::Serialize;

/// The PGCC operations whose health is told apart, by their wire names (`unavailableEndpoints`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PgccOperation {
    /// Creating a request, and finding one by external reference (the creation's recovery).
    Creation,
    /// Asking the status of requests.
    Status,
    /// Revoking a request.
    Revocation,
    /// Listing a company's use cases (synchronization).
    UseCases,
}

impl PgccOperation {
    /// Every operation, in the order `unavailableEndpoints` lists them.
    pub const ALL: [PgccOperation; 4] = [
        PgccOperation::Creation,
        PgccOperation::Status,
        PgccOperation::Revocation,
        PgccOperation::UseCases,
    ];

    /// `criacao`, `status`, `revogacao`, `casos-de-uso`.
    pub fn as_str(self) -> &'static str {
        match self {
            PgccOperation::Creation => "criacao",
            PgccOperation::Status => "status",
            PgccOperation::Revocation => "revogacao",
            PgccOperation::UseCases => "casos-de-uso",
        }
    }

    /// Parses a wire name.
    pub fn parse(raw: &str) -> Option<PgccOperation> {
        PgccOperation::ALL.into_iter().find(|o| o.as_str() == raw)
    }
}

/// `code` of the status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PgccHealthCode {
    /// No operation unavailable.
    #[serde(rename = "OK")]
    Ok,
    /// Some operations unavailable, another answered.
    #[serde(rename = "PARTIAL_FAILURE")]
    PartialFailure,
    /// Every operation called in the window failed as unavailable; none answered.
    #[serde(rename = "UNAVAILABLE")]
    Unavailable,
}

impl PgccHealthCode {
    /// `OK`, `PARTIAL_FAILURE`, `UNAVAILABLE`.
    pub fn as_str(self) -> &'static str {
        match self {
            PgccHealthCode::Ok => "OK",
            PgccHealthCode::PartialFailure => "PARTIAL_FAILURE",
            PgccHealthCode::Unavailable => "UNAVAILABLE",
        }
    }

    /// Parses a wire name.
    pub fn parse(raw: &str) -> Option<PgccHealthCode> {
        [
            PgccHealthCode::Ok,
            PgccHealthCode::PartialFailure,
            PgccHealthCode::Unavailable,
        ]
        .into_iter()
        .find(|c| c.as_str() == raw)
    }
}

/// The calls of one operation in the window: how many the PGCC answered (any answer, a 4xx
/// included) and how many found it unavailable (a 5xx, a timeout, no connection).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PgccCallTally {
    /// Calls the PGCC answered.
    pub answered: u64,
    /// Calls that found it unavailable.
    pub unavailable: u64,
}

/// What the window's calls say: the code and the unavailable operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgccAssessment {
    /// The status code.
    pub code: PgccHealthCode,
    /// The unavailable operations, in [`PgccOperation::ALL`] order.
    pub unavailable: Vec<PgccOperation>,
}

impl PgccAssessment {
    /// An operation is unavailable when it was called in the window, every call found the PGCC
    /// unavailable and none was answered. `UNAVAILABLE` when some operation is and none was
    /// answered; `PARTIAL_FAILURE` when some is and another was answered; `OK` otherwise (also
    /// when nothing was called: no evidence of a failure).
    pub fn of(tallies: &[(PgccOperation, PgccCallTally)]) -> PgccAssessment {
        let mut unavailable: Vec<PgccOperation> = PgccOperation::ALL
            .into_iter()
            .filter(|op| {
                let (answered, failed) = tallies
                    .iter()
                    .filter(|(o, _)| o == op)
                    .fold((0, 0), |(a, u), (_, t)| (a + t.answered, u + t.unavailable));
                failed > 0 && answered == 0
            })
            .collect();
        unavailable.dedup();
        let any_answered = tallies.iter().any(|(_, t)| t.answered > 0);
        let code = match (unavailable.is_empty(), any_answered) {
            (true, _) => PgccHealthCode::Ok,
            (false, true) => PgccHealthCode::PartialFailure,
            (false, false) => PgccHealthCode::Unavailable,
        };
        PgccAssessment { code, unavailable }
    }
}

/// The status `GET /api/status` answers, in Open Finance Brasil's field names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PgccHealth {
    /// `OK`, `PARTIAL_FAILURE` or `UNAVAILABLE`.
    pub code: PgccHealthCode,
    /// A sentence for people (Portuguese); never parse it.
    pub explanation: String,
    /// When the current code began (the change that led to it was detected).
    pub detection_time: DateTime<Utc>,
    /// When the status was last computed.
    pub update_time: DateTime<Utc>,
    /// The unavailable operations (`criacao`, `status`, `revogacao`, `casos-de-uso`).
    pub unavailable_endpoints: Vec<&'static str>,
}

impl PgccHealth {
    /// The status of `assessment`, with its explanation.
    pub fn new(
        assessment: &PgccAssessment,
        detection_time: DateTime<Utc>,
        update_time: DateTime<Utc>,
    ) -> PgccHealth {
        let names: Vec<&'static str> = assessment.unavailable.iter().map(|o| o.as_str()).collect();
        let explanation = match assessment.code {
            PgccHealthCode::Ok => {
                "A PGCC respondeu às chamadas do último intervalo observado.".to_owned()
            }
            PgccHealthCode::PartialFailure => format!(
                "A PGCC não respondeu a nenhuma chamada destas operações: {}; as demais respondem.",
                names.join(", ")
            ),
            PgccHealthCode::Unavailable => {
                "A PGCC não respondeu a nenhuma chamada do último intervalo observado.".to_owned()
            }
        };
        PgccHealth {
            code: assessment.code,
            explanation,
            detection_time,
            update_time,
            unavailable_endpoints: names,
        }
    }
}

/// The `data` of `pgcc.indisponivel` and `pgcc.restabelecido`: the status at the change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PgccHealthChange {
    /// The code after the change.
    pub code: PgccHealthCode,
    /// The unavailable operations after the change (empty for `pgcc.restabelecido`).
    pub unavailable_endpoints: Vec<&'static str>,
    /// When the change was detected.
    pub detection_time: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(answered: u64, unavailable: u64) -> PgccCallTally {
        PgccCallTally {
            answered,
            unavailable,
        }
    }

    #[test]
    fn nothing_called_is_ok() {
        assert_eq!(PgccAssessment::of(&[]).code, PgccHealthCode::Ok);
    }

    #[test]
    fn an_operation_is_unavailable_only_when_none_of_its_calls_was_answered() {
        let some_answered = PgccAssessment::of(&[(PgccOperation::Creation, tally(1, 9))]);
        assert_eq!(some_answered.code, PgccHealthCode::Ok);
        let all_failed = PgccAssessment::of(&[(PgccOperation::Creation, tally(0, 2))]);
        assert_eq!(all_failed.code, PgccHealthCode::Unavailable);
        assert_eq!(all_failed.unavailable, [PgccOperation::Creation]);
    }

    #[test]
    fn some_unavailable_and_another_answered_is_a_partial_failure() {
        let assessment = PgccAssessment::of(&[
            (PgccOperation::Status, tally(0, 3)),
            (PgccOperation::UseCases, tally(0, 1)),
            (PgccOperation::Creation, tally(5, 0)),
        ]);
        assert_eq!(assessment.code, PgccHealthCode::PartialFailure);
        assert_eq!(
            assessment.unavailable,
            [PgccOperation::Status, PgccOperation::UseCases]
        );
        let health = PgccHealth::new(
            &assessment,
            chrono::DateTime::UNIX_EPOCH,
            chrono::DateTime::UNIX_EPOCH,
        );
        assert_eq!(health.unavailable_endpoints, ["status", "casos-de-uso"]);
        let json = serde_json::to_value(&health).unwrap();
        let mut keys: Vec<&String> = json.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "code",
                "detectionTime",
                "explanation",
                "unavailableEndpoints",
                "updateTime"
            ]
        );
        assert_eq!(json["code"], "PARTIAL_FAILURE");
    }

    #[test]
    fn names_parse_back() {
        for op in PgccOperation::ALL {
            assert_eq!(PgccOperation::parse(op.as_str()), Some(op));
        }
        for code in ["OK", "PARTIAL_FAILURE", "UNAVAILABLE"] {
            assert_eq!(PgccHealthCode::parse(code).unwrap().as_str(), code);
        }
    }
}
