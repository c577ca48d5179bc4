//! How HTTP outcomes become [`PgccError`]s (architecture page, section 3).

use chrono::{DateTime, Utc};
use ports::PgccError;

/// The longest `Retry-After` passed on to our clients: a PGCC asking for more than a day is
/// more likely wrong than meant, and a client told so would give up on a working service.
pub const MAX_RETRY_AFTER_SECONDS: u64 = 86_400;

/// `None` for a 2xx; otherwise the error the status means: 408, 425, 429 -> `TryLater` (with
/// the answer's `Retry-After`, `retry_after` as received); 401, 403, 5xx (and any other non-2xx
/// that is not a 4xx, such as an unfollowed redirect) -> `Failed`; other 4xx -> `Rejected`.
pub fn classify_status(
    status: u16,
    retry_after: Option<&str>,
    now: DateTime<Utc>,
) -> Option<PgccError> {
    match status {
        200..=299 => None,
        408 | 425 | 429 => Some(PgccError::TryLater {
            status,
            retry_after_seconds: retry_after.and_then(|raw| parse_retry_after(raw, now)),
        }),
        401 | 403 => Some(PgccError::Failed { status }),
        400..=499 => Some(PgccError::Rejected { status }),
        _ => Some(PgccError::Failed { status }),
    }
}

/// A `Retry-After` value (RFC 9110: delay-seconds or an HTTP-date) as seconds from `now`, at
/// most [`MAX_RETRY_AFTER_SECONDS`]; a date in the past is 0. `None` when unreadable.
pub fn parse_retry_after(raw: &str, now: DateTime<Utc>) -> Option<u64> {
    let raw = raw.trim();
    let seconds = if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) {
        // too many digits for u64 is still "a long time"
        raw.parse::<u64>().unwrap_or(u64::MAX)
    } else {
        // IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") is an RFC 2822 date
        let at = DateTime::parse_from_rfc2822(raw).ok()?.with_timezone(&Utc);
        let ahead = (at - now).num_milliseconds().max(0) as u64;
        ahead.div_ceil(1000)
    };
    Some(seconds.min(MAX_RETRY_AFTER_SECONDS))
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
        classify_status(status, None, now())
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
    fn a_retry_after_is_passed_on_in_seconds_from_either_form() {
        let try_later = |raw| match classify_status(429, Some(raw), now()) {
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
        assert_eq!(
            try_later("99999999999999999999999"),
            Some(MAX_RETRY_AFTER_SECONDS)
        );
        assert_eq!(try_later("-1"), None);
        assert_eq!(try_later("soon"), None);
        assert!(
            matches!(
                classify_status(503, Some("7"), now()),
                Some(PgccError::Failed { status: 503 })
            ),
            "5xx keep their meaning"
        );
    }
}
