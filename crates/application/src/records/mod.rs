//! Records in the ISO/IEC TS 27560 form (issue 37, part 6; docs/records.md): the companies'
//! annotations of their use cases, their controller profile, and what a consent record is
//! made of (rendered in DPV's JSON-LD by the HTTP layer).

pub mod annotations;
pub mod consent_record;
pub mod controller_profile;
