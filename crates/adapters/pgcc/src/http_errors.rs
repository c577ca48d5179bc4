//! How HTTP outcomes become [`PgccError`]s (architecture page, section 3).

use ports::PgccError;

/// `None` for a 2xx; otherwise the error the status means: 401, 403, 5xx (and any other
/// non-2xx that is not a 4xx, such as an unfollowed redirect) -> `Failed`; other 4xx ->
/// `Rejected`.
pub fn classify_status(status: u16) -> Option<PgccError> {
    match status {
        200..=299 => None,
        401 | 403 => Some(PgccError::Failed { status }),
        400..=499 => Some(PgccError::Rejected { status }),
        _ => Some(PgccError::Failed { status }),
    }
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

    #[test]
    fn statuses_are_classified_as_the_architecture_page_says() {
        assert!(classify_status(200).is_none());
        assert!(classify_status(201).is_none());
        for status in [401, 403, 500, 502, 503, 504, 302] {
            assert!(
                matches!(classify_status(status), Some(PgccError::Failed { status: s }) if s == status),
                "{status}"
            );
        }
        for status in [400, 404, 409, 422, 429] {
            assert!(
                matches!(classify_status(status), Some(PgccError::Rejected { status: s }) if s == status),
                "{status}"
            );
        }
    }
}
