//! The 61 HTTP status names that `pgccCodigoErro` may carry (spec 2.4), with their numeric codes.

use serde::{Deserialize, Serialize};

/// Serialized as its name (`"ServiceUnavailable"`), exactly as spelled in spec 2.4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PgccStatusCode {
    Continue,
    // ... all 61 names of spec 2.4, in its order
    OK,
}

impl PgccStatusCode {
    /// Every value, in the order of spec 2.4.
    pub const ALL: &'static [PgccStatusCode] = &[];

    /// The numeric HTTP code (`ServiceUnavailable` -> 503).
    pub fn as_u16(self) -> u16 {
        todo!()
    }

    /// The name for a numeric code, if the spec lists one.
    pub fn from_u16(code: u16) -> Option<Self> {
        todo!("{code}")
    }

    /// The wire name (`"ServiceUnavailable"`).
    pub fn name(self) -> &'static str {
        todo!()
    }
}
