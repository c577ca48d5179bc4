//! The HTTP status names that `pgccCodigoErro` may carry, with their numeric codes: the 61 of
//! spec 2.4, plus `TooEarly` (425), which .NET's list lacks but a PGCC may answer (a "try later",
//! issue 12): without it a 425 would be reported under another status's name.
//!
//! The names are those of .NET's `HttpStatusCode` (the PGCC is a .NET service), hence the
//! spellings `OK`, `IMUsed`, `Unused` (306), `RequestUriTooLong` (414), and so on.

use serde::{Deserialize, Serialize};

/// Declares the enum, its `ALL` table and the name/code lookups from one list, so the three can
/// never disagree.
macro_rules! pgcc_status_codes {
    ($($name:ident = $code:literal,)+) => {
        /// Serialized as its name (`"ServiceUnavailable"`), exactly as spelled in spec 2.4.
        #[allow(clippy::upper_case_acronyms)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum PgccStatusCode {
            $(
                #[doc = concat!("HTTP ", stringify!($code), ".")]
                $name,
            )+
        }

        impl PgccStatusCode {
            /// Every value, in the order of spec 2.4 (ascending codes; `TooEarly` in its place).
            pub const ALL: &'static [PgccStatusCode] = &[$(PgccStatusCode::$name,)+];

            /// The numeric HTTP code (`ServiceUnavailable` -> 503).
            pub fn as_u16(self) -> u16 {
                match self {
                    $(PgccStatusCode::$name => $code,)+
                }
            }

            /// The name for a numeric code, if the spec lists one.
            pub fn from_u16(code: u16) -> Option<Self> {
                match code {
                    $($code => Some(PgccStatusCode::$name),)+
                    _ => None,
                }
            }

            /// The wire name (`"ServiceUnavailable"`).
            pub fn name(self) -> &'static str {
                match self {
                    $(PgccStatusCode::$name => stringify!($name),)+
                }
            }

            /// The value for a wire name (`"ServiceUnavailable"`), exact spelling only.
            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $(stringify!($name) => Some(PgccStatusCode::$name),)+
                    _ => None,
                }
            }
        }
    };
}

pgcc_status_codes! {
    Continue = 100,
    SwitchingProtocols = 101,
    Processing = 102,
    EarlyHints = 103,
    OK = 200,
    Created = 201,
    Accepted = 202,
    NonAuthoritativeInformation = 203,
    NoContent = 204,
    ResetContent = 205,
    PartialContent = 206,
    MultiStatus = 207,
    AlreadyReported = 208,
    IMUsed = 226,
    MultipleChoices = 300,
    MovedPermanently = 301,
    Found = 302,
    SeeOther = 303,
    NotModified = 304,
    UseProxy = 305,
    Unused = 306,
    TemporaryRedirect = 307,
    PermanentRedirect = 308,
    BadRequest = 400,
    Unauthorized = 401,
    PaymentRequired = 402,
    Forbidden = 403,
    NotFound = 404,
    MethodNotAllowed = 405,
    NotAcceptable = 406,
    ProxyAuthenticationRequired = 407,
    RequestTimeout = 408,
    Conflict = 409,
    Gone = 410,
    LengthRequired = 411,
    PreconditionFailed = 412,
    RequestEntityTooLarge = 413,
    RequestUriTooLong = 414,
    UnsupportedMediaType = 415,
    RequestedRangeNotSatisfiable = 416,
    ExpectationFailed = 417,
    MisdirectedRequest = 421,
    UnprocessableEntity = 422,
    Locked = 423,
    FailedDependency = 424,
    TooEarly = 425,
    UpgradeRequired = 426,
    PreconditionRequired = 428,
    TooManyRequests = 429,
    RequestHeaderFieldsTooLarge = 431,
    UnavailableForLegalReasons = 451,
    InternalServerError = 500,
    NotImplemented = 501,
    BadGateway = 502,
    ServiceUnavailable = 503,
    GatewayTimeout = 504,
    HttpVersionNotSupported = 505,
    VariantAlsoNegotiates = 506,
    InsufficientStorage = 507,
    LoopDetected = 508,
    NotExtended = 510,
    NetworkAuthenticationRequired = 511,
}

impl std::fmt::Display for PgccStatusCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// Spec 2.4, verbatim and in order.
    const SPEC_NAMES: &str = "Continue, SwitchingProtocols, Processing, EarlyHints, OK, Created, \
        Accepted, NonAuthoritativeInformation, NoContent, ResetContent, PartialContent, \
        MultiStatus, AlreadyReported, IMUsed, MultipleChoices, MovedPermanently, Found, SeeOther, \
        NotModified, UseProxy, Unused, TemporaryRedirect, PermanentRedirect, BadRequest, \
        Unauthorized, PaymentRequired, Forbidden, NotFound, MethodNotAllowed, NotAcceptable, \
        ProxyAuthenticationRequired, RequestTimeout, Conflict, Gone, LengthRequired, \
        PreconditionFailed, RequestEntityTooLarge, RequestUriTooLong, UnsupportedMediaType, \
        RequestedRangeNotSatisfiable, ExpectationFailed, MisdirectedRequest, UnprocessableEntity, \
        Locked, FailedDependency, UpgradeRequired, PreconditionRequired, TooManyRequests, \
        RequestHeaderFieldsTooLarge, UnavailableForLegalReasons, InternalServerError, \
        NotImplemented, BadGateway, ServiceUnavailable, GatewayTimeout, HttpVersionNotSupported, \
        VariantAlsoNegotiates, InsufficientStorage, LoopDetected, NotExtended, \
        NetworkAuthenticationRequired";

    /// Ours beyond spec 2.4.
    const EXTENSIONS: [PgccStatusCode; 1] = [PgccStatusCode::TooEarly];

    #[test]
    fn all_holds_the_61_values_of_the_spec_and_too_early() {
        assert_eq!(PgccStatusCode::ALL.len(), 62);
        assert_eq!(
            PgccStatusCode::from_u16(425),
            Some(PgccStatusCode::TooEarly)
        );
        assert_eq!(PgccStatusCode::TooEarly.name(), "TooEarly");
    }

    #[test]
    fn all_lists_the_names_of_the_spec_in_its_order() {
        let spec: Vec<&str> = SPEC_NAMES.split(',').map(str::trim).collect();
        let ours: Vec<&str> = PgccStatusCode::ALL
            .iter()
            .filter(|c| !EXTENSIONS.contains(c))
            .map(|c| c.name())
            .collect();
        assert_eq!(ours, spec);
    }

    #[test]
    fn names_are_unique() {
        let names: HashSet<&str> = PgccStatusCode::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), PgccStatusCode::ALL.len());
    }

    #[test]
    fn numeric_codes_are_unique_and_ascending() {
        let codes: Vec<u16> = PgccStatusCode::ALL.iter().map(|c| c.as_u16()).collect();
        assert!(codes.windows(2).all(|w| w[0] < w[1]), "{codes:?}");
    }

    #[test]
    fn every_name_round_trips_through_its_numeric_code() {
        for &code in PgccStatusCode::ALL {
            assert_eq!(
                PgccStatusCode::from_u16(code.as_u16()),
                Some(code),
                "{code}"
            );
        }
    }

    #[test]
    fn every_name_round_trips_through_serde_as_its_exact_spelling() {
        for &code in PgccStatusCode::ALL {
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.name()));
            let back: PgccStatusCode = serde_json::from_str(&json).unwrap();
            assert_eq!(back, code);
        }
    }

    #[test]
    fn every_name_round_trips_through_from_name() {
        for &code in PgccStatusCode::ALL {
            assert_eq!(PgccStatusCode::from_name(code.name()), Some(code));
        }
        assert_eq!(PgccStatusCode::from_name("ok"), None);
        assert_eq!(PgccStatusCode::from_name("ImATeapot"), None);
    }

    #[test]
    fn dotnet_specific_names_map_to_their_codes() {
        let expected = [
            (PgccStatusCode::EarlyHints, 103),
            (PgccStatusCode::OK, 200),
            (PgccStatusCode::IMUsed, 226),
            (PgccStatusCode::Unused, 306),
            (PgccStatusCode::RequestEntityTooLarge, 413),
            (PgccStatusCode::RequestUriTooLong, 414),
            (PgccStatusCode::RequestedRangeNotSatisfiable, 416),
            (PgccStatusCode::MisdirectedRequest, 421),
            (PgccStatusCode::UnprocessableEntity, 422),
            (PgccStatusCode::UnavailableForLegalReasons, 451),
            (PgccStatusCode::ServiceUnavailable, 503),
            (PgccStatusCode::GatewayTimeout, 504),
            (PgccStatusCode::NetworkAuthenticationRequired, 511),
        ];
        for (code, number) in expected {
            assert_eq!(code.as_u16(), number, "{code}");
        }
    }

    #[test]
    fn ok_and_im_used_serialize_as_spelled_in_the_spec() {
        assert_eq!(
            serde_json::to_string(&PgccStatusCode::OK).unwrap(),
            "\"OK\""
        );
        assert_eq!(
            serde_json::to_string(&PgccStatusCode::IMUsed).unwrap(),
            "\"IMUsed\""
        );
    }

    #[test]
    fn unknown_numeric_codes_give_none() {
        for code in [
            0, 99, 104, 209, 299, 309, 418, 420, 427, 499, 509, 512, 599, 999,
        ] {
            assert_eq!(PgccStatusCode::from_u16(code), None, "{code}");
        }
    }

    #[test]
    fn unknown_or_miscased_names_fail_to_deserialize() {
        for json in ["\"Ok\"", "\"ok\"", "\"ImATeapot\"", "\"\"", "503"] {
            assert!(
                serde_json::from_str::<PgccStatusCode>(json).is_err(),
                "{json}"
            );
        }
    }

    #[test]
    fn display_writes_the_wire_name() {
        assert_eq!(
            PgccStatusCode::ServiceUnavailable.to_string(),
            "ServiceUnavailable"
        );
    }
}
