//! The witnesses that cosign checkpoints (C2SP `tlog-witness`, docs/auditoria.md, "Witnesses"):
//! the checkpoint job submits each new checkpoint to each of them.

/// What a witness answered to `add-checkpoint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WitnessAnswer {
    /// 200: the body, one or more note signature lines (the cosignatures).
    Cosigned(String),
    /// 409: the size of the latest checkpoint the witness cosigned for the origin.
    Conflict(u64),
    /// Any other answer: its HTTP status (404 unknown origin, 403 bad signature, 422 proof
    /// refused, 400 malformed).
    Refused(u16),
}

/// One witness, reached over HTTP.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait WitnessGateway: Send + Sync {
    /// POSTs `body` (the `old` line, the proof lines, an empty line and the signed checkpoint)
    /// to the witness's `add-checkpoint`. `Err` when the witness could not be reached or
    /// answered something unreadable (the job counts it as not answering).
    fn add_checkpoint(&self, body: &str) -> anyhow::Result<WitnessAnswer>;
}
