//! The list's page cursor: an opaque, URL-safe text for a keyset position
//! (`v1.<criado_em as unix microseconds>.<id as 32 lower-case hex digits>`).
//!
//! Clients must treat it as opaque; the version prefix lets the format change later while old
//! cursors are still recognized (or cleanly refused).

use chrono::DateTime;
use ports::ListCursor;
use uuid::Uuid;

const PREFIX: &str = "v1";

/// The text does not name a position (garbage, another version, an edited cursor).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cursor inválido")]
pub struct InvalidCursor;

/// The text of `position`: only ASCII letters, digits, `.` and `-`, so it goes in a URL as is.
pub fn encode_cursor(position: &ListCursor) -> String {
    format!(
        "{PREFIX}.{}.{}",
        position.created_at.timestamp_micros(),
        position.id.simple()
    )
}

/// The position named by `raw`, which must be exactly what [`encode_cursor`] writes: any other
/// spelling of the same position (upper-case hex, a hyphenated uuid, a `+` or leading zeros) is
/// refused too.
pub fn decode_cursor(raw: &str) -> Result<ListCursor, InvalidCursor> {
    let mut parts = raw.split('.');
    let (Some(PREFIX), Some(micros), Some(id), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(InvalidCursor);
    };
    let micros: i64 = micros.parse().map_err(|_| InvalidCursor)?;
    let created_at = DateTime::from_timestamp_micros(micros).ok_or(InvalidCursor)?;
    let id = Uuid::try_parse(id).map_err(|_| InvalidCursor)?;
    let position = ListCursor { created_at, id };
    if encode_cursor(&position) != raw {
        return Err(InvalidCursor);
    }
    Ok(position)
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone, Utc};

    use super::*;

    fn position() -> ListCursor {
        ListCursor {
            created_at: Utc.with_ymd_and_hms(2025, 3, 14, 12, 0, 0).unwrap()
                + Duration::microseconds(123_456),
            id: Uuid::parse_str("0f8d5b7e-3c1a-4f2b-9d6e-5a4b3c2d1e0f").unwrap(),
        }
    }

    #[test]
    fn a_cursor_is_the_version_the_microseconds_and_the_simple_uuid() {
        assert_eq!(
            encode_cursor(&position()),
            "v1.1741953600123456.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f"
        );
    }

    #[test]
    fn a_cursor_round_trips_to_the_same_position() {
        assert_eq!(decode_cursor(&encode_cursor(&position())), Ok(position()));
    }

    #[test]
    fn instants_before_1970_and_the_nil_uuid_round_trip_too() {
        let position = ListCursor {
            created_at: Utc.with_ymd_and_hms(1969, 12, 31, 23, 59, 59).unwrap()
                + Duration::microseconds(1),
            id: Uuid::nil(),
        };
        let text = encode_cursor(&position);
        assert_eq!(text, "v1.-999999.00000000000000000000000000000000");
        assert_eq!(decode_cursor(&text), Ok(position));
    }

    #[test]
    fn a_cursor_only_uses_url_safe_characters() {
        let text = encode_cursor(&position());
        assert!(text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-'));
    }

    #[test]
    fn cursors_keep_the_order_of_positions_apart_from_instants() {
        let later = ListCursor {
            created_at: position().created_at + Duration::microseconds(1),
            ..position()
        };
        assert_ne!(encode_cursor(&position()), encode_cursor(&later));
        assert_eq!(decode_cursor(&encode_cursor(&later)), Ok(later));
    }

    #[test]
    fn garbage_is_refused() {
        for raw in [
            "",
            "v1",
            "v1.",
            "v1..",
            "abc",
            "v1.abc.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
            "v1.1741953600123456.not-a-uuid",
            "v1.1741953600123456.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0",
            "v1.1741953600123456",
            "v1.1741953600123456.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f.extra",
            "v2.1741953600123456.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
            "V1.1741953600123456.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
            " v1.1741953600123456.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
            "v1.99999999999999999999.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
            "v1.9223372036854775807.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
        ] {
            assert_eq!(decode_cursor(raw), Err(InvalidCursor), "{raw:?}");
        }
    }

    #[test]
    fn other_spellings_of_a_valid_position_are_refused() {
        for raw in [
            "v1.+1741953600123456.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
            "v1.01741953600123456.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
            "v1.1741953600123456.0F8D5B7E3C1A4F2B9D6E5A4B3C2D1E0F",
            "v1.1741953600123456.0f8d5b7e-3c1a-4f2b-9d6e-5a4b3c2d1e0f",
        ] {
            assert_eq!(decode_cursor(raw), Err(InvalidCursor), "{raw:?}");
        }
    }
}
