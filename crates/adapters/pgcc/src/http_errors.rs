//! How HTTP outcomes become [`PgccError`]s (architecture page, section 3).

use chrono::{DateTime, Utc};
use ports::PgccError;

/// What a `Retry-After` of the PGCC is read with: the header as received, the instant an
/// HTTP-date counts from, and the longest delay passed on (`pgcc.max_retry_after_seconds`).
#[derive(Debug, Clone, Copy)]
pub struct RetryAfter<'a> {
    pub raw: Option<&'a str>,
    pub now: DateTime<Utc>,
    pub max_seconds: u64,
}

/// `None` for a 2xx; otherwise the error the status means: 408, 425, 429 -> `TryLater` (with
/// the answer's `Retry-After` in seconds, at most `retry_after.max_seconds`); 401, 403, 5xx (and
/// any other non-2xx that is not a 4xx, such as an unfollowed redirect) -> `Failed`; other 4xx
/// -> `Rejected`.
pub fn classify_status(status: u16, retry_after: RetryAfter<'_>) -> Option<PgccError> {
    match status {
        200..=299 => None,
        408 | 425 | 429 => Some(PgccError::TryLater {
            status,
            retry_after_seconds: retry_after.raw.and_then(|raw| {
                parse_retry_after(raw, retry_after.now).map(|s| s.min(retry_after.max_seconds))
            }),
        }),
        401 | 403 => Some(PgccError::Failed { status }),
        400..=499 => Some(PgccError::Rejected { status }),
        _ => Some(PgccError::Failed { status }),
    }
}

/// A `Retry-After` value (RFC 9110: delay-seconds or an HTTP-date) as seconds from `now`; a date
/// in the past is 0, a number too long for `u64` is `u64::MAX`. `None` when unreadable.
pub fn parse_retry_after(raw: &str, now: DateTime<Utc>) -> Option<u64> {
    let raw = raw.trim();
    if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) {
        // too many digits for u64 is still "a long time"
        return Some(raw.parse::<u64>().unwrap_or(u64::MAX));
    }
    // IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") is an RFC 2822 date
    let at = DateTime::parse_from_rfc2822(raw).ok()?.with_timezone(&Utc);
    let ahead = (at - now).num_milliseconds().max(0) as u64;
    Some(ahead.div_ceil(1000))
}

/// A transport failure (no status received): a timeout, or the PGCC is unreachable.
pub fn classify_transport(error: ureq::Error) -> PgccError {
    if is_timeout(&error) {
        PgccError::Timeout
    } else {
        PgccError::Unreachable(anyhow::Error::new(error).context("calling the PGCC"))
    }
}

/// A failure while reading a 2xx body: a timeout, or an unreadable body.
pub fn classify_body(error: ureq::Error) -> PgccError {
    if is_timeout(&error) {
        PgccError::Timeout
    } else {
        PgccError::Unexpected(anyhow::Error::new(error).context("reading the PGCC's answer"))
    }
}

fn is_timeout(error: &ureq::Error) -> bool {
    match error {
        ureq::Error::Timeout(_) => true,
        ureq::Error::Io(io) => matches!(
            io.kind(),
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
        ),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 26, 12, 0, 0).unwrap()
    }

    fn classify(status: u16) -> Option<PgccError> {
        classify_status(status, retry_after(None, 60))
    }

    fn retry_after(raw: Option<&str>, max_seconds: u64) -> RetryAfter<'_> {
        RetryAfter {
            raw,
            now: now(),
            max_seconds,
        }
    }

    #[test]
    fn statuses_are_classified_as_the_architecture_page_says() {
        assert!(classify(200).is_none());
        assert!(classify(201).is_none());
        for status in [401, 403, 500, 502, 503, 504, 302] {
            assert!(
                matches!(classify(status), Some(PgccError::Failed { status: s }) if s == status),
                "{status}"
            );
        }
        for status in [400, 404, 409, 422] {
            assert!(
                matches!(classify(status), Some(PgccError::Rejected { status: s }) if s == status),
                "{status}"
            );
        }
        for status in [408, 425, 429] {
            assert!(
                matches!(
                    classify(status),
                    Some(PgccError::TryLater { status: s, retry_after_seconds: None }) if s == status
                ),
                "{status}"
            );
        }
    }

    #[test]
    fn a_retry_after_is_passed_on_in_seconds_from_either_form_at_most_the_cap() {
        let try_later = |raw| match classify_status(429, retry_after(Some(raw), 86_400)) {
            Some(PgccError::TryLater {
                retry_after_seconds,
                ..
            }) => retry_after_seconds,
            other => panic!("{other:?}"),
        };
        assert_eq!(try_later("7"), Some(7));
        assert_eq!(try_later(" 0 "), Some(0));
        assert_eq!(try_later("Thu, 26 Nov 2026 12:00:30 GMT"), Some(30));
        assert_eq!(try_later("Thu, 26 Nov 2026 11:00:00 GMT"), Some(0), "past");
        assert_eq!(try_later("99999999999999999999999"), Some(86_400));
        assert_eq!(try_later("86401"), Some(86_400));
        assert_eq!(
            try_later("Fri, 26 Nov 2027 12:00:00 GMT"),
            Some(86_400),
            "a date a year ahead"
        );
        assert_eq!(try_later("-1"), None);
        assert_eq!(try_later("soon"), None);
        assert!(
            matches!(
                classify_status(503, retry_after(Some("7"), 60)),
                Some(PgccError::Failed { status: 503 })
            ),
            "5xx keep their meaning"
        );
    }

    #[test]
    fn a_day_asked_for_is_passed_on_as_the_configured_cap() {
        for (raw, max, expected) in [
            ("86400", 60, Some(60)),
            ("86400", 5, Some(5)),
            ("3", 60, Some(3)),
            ("Thu, 26 Nov 2026 12:01:30 GMT", 60, Some(60)),
            ("0", 0, Some(0)),
        ] {
            match classify_status(429, retry_after(Some(raw), max)) {
                Some(PgccError::TryLater {
                    retry_after_seconds,
                    ..
                }) => assert_eq!(retry_after_seconds, expected, "{raw} capped at {max}"),
                other => panic!("{other:?}"),
            }
        }
    }
}
