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

/// How much evidence takes an operation from answering to unavailable (issue 39: one timeout in
/// a quiet window was an outage told to every company, and its end a second event): at least
/// `min_failed_calls` calls of the window found the PGCC unavailable, and the first of them is
/// at least `min_duration` old. An operation already unavailable stays so on the plain rule
/// (none answered), so the status does not flap on the threshold (hysteresis).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgccOutageThreshold {
    /// Calls of the operation that found the PGCC unavailable in the window, at least.
    pub min_failed_calls: u64,
    /// How long before the assessment the first of them came, at least.
    pub min_duration: chrono::TimeDelta,
}

impl PgccOutageThreshold {
    /// No threshold: the first unavailable call, with no answer, is an outage.
    pub const NONE: PgccOutageThreshold = PgccOutageThreshold {
        min_failed_calls: 1,
        min_duration: chrono::TimeDelta::zero(),
    };
}

/// The calls of one operation in the window, with the second of its first call that found the
/// PGCC unavailable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgccWindowCalls {
    /// The operation.
    pub operation: PgccOperation,
    /// Its calls in the window.
    pub tally: PgccCallTally,
    /// The first second of the window in which one of its calls found the PGCC unavailable.
    pub first_unavailable: Option<DateTime<Utc>>,
}

impl PgccAssessment {
    /// [`PgccAssessment::of`], where an operation not unavailable `before` becomes so only past
    /// `threshold` at `now`.
    pub fn past_threshold(
        calls: &[PgccWindowCalls],
        before: &PgccAssessment,
        threshold: PgccOutageThreshold,
        now: DateTime<Utc>,
    ) -> PgccAssessment {
        let tallies: Vec<(PgccOperation, PgccCallTally)> =
            calls.iter().map(|c| (c.operation, c.tally)).collect();
        let plain = PgccAssessment::of(&tallies);
        let unavailable: Vec<PgccOperation> = plain
            .unavailable
            .into_iter()
            .filter(|op| {
                if before.unavailable.contains(op) {
                    return true;
                }
                let of_op = calls.iter().filter(|c| c.operation == *op);
                let failed: u64 = of_op.clone().map(|c| c.tally.unavailable).sum();
                let first = of_op.filter_map(|c| c.first_unavailable).min();
                failed >= threshold.min_failed_calls
                    && first.is_some_and(|first| now - first >= threshold.min_duration)
            })
            .collect();
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

/// The `data` of `pgcc.indisponivel` and `pgcc.restabelecido`: the status after the change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = MudancaStatusPgcc))]
#[serde(rename_all = "camelCase")]
pub struct PgccHealthChange {
    /// The code after the change.
    pub code: PgccHealthCode,
    /// The unavailable operations after the change (empty for `pgcc.restabelecido`).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::PgccOperation>))]
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

    fn window(
        op: PgccOperation,
        answered: u64,
        unavailable: u64,
        first: Option<DateTime<Utc>>,
    ) -> PgccWindowCalls {
        PgccWindowCalls {
            operation: op,
            tally: tally(answered, unavailable),
            first_unavailable: first,
        }
    }

    fn ok() -> PgccAssessment {
        PgccAssessment::of(&[])
    }

    #[test]
    fn one_failed_call_or_a_short_failure_does_not_leave_ok_but_enough_for_long_enough_does() {
        let now: DateTime<Utc> = "2026-05-01T12:01:00Z".parse().unwrap();
        let threshold = PgccOutageThreshold {
            min_failed_calls: 3,
            min_duration: chrono::TimeDelta::seconds(30),
        };
        let judge = |calls: &[PgccWindowCalls], before: &PgccAssessment| {
            PgccAssessment::past_threshold(calls, before, threshold, now)
        };
        let secs_ago = |s: i64| Some(now - chrono::TimeDelta::seconds(s));
        // one timeout in a quiet window, however old
        let one = [window(PgccOperation::Status, 0, 1, secs_ago(50))];
        assert_eq!(judge(&one, &ok()), ok());
        // many failures, but only for 10 s
        let short = [window(PgccOperation::Status, 0, 9, secs_ago(10))];
        assert_eq!(judge(&short, &ok()), ok());
        // enough, long enough
        let long = [window(PgccOperation::Status, 0, 3, secs_ago(30))];
        let down = judge(&long, &ok());
        assert_eq!(down.code, PgccHealthCode::Unavailable);
        assert_eq!(down.unavailable, [PgccOperation::Status]);
        // once out of OK, it stays out on the plain rule, under the threshold
        assert_eq!(judge(&one, &down), down);
        // an answer brings it back
        let answered = [window(PgccOperation::Status, 1, 5, secs_ago(50))];
        assert_eq!(judge(&answered, &down), ok());
        // without a threshold, the plain rule
        assert_eq!(
            PgccAssessment::past_threshold(&one, &ok(), PgccOutageThreshold::NONE, now).code,
            PgccHealthCode::Unavailable
        );
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
