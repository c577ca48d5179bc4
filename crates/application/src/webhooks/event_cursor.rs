//! The event feed's cursor: an opaque, URL-safe text for a feed position
//! (`e1.<transaction>.<sequence>.<id as 32 lower-case hex digits>`, see [`EventPosition`]).
//!
//! Another prefix than the consent list's `v1` cursors: the feed's order is not the list's (it
//! follows commits, not timestamps), and a cursor of one is refused by the other.

use ports::EventPosition;
use uuid::Uuid;

use crate::consent_requests::cursor::InvalidCursor;

const PREFIX: &str = "e1";

/// The text of `position`: only ASCII letters, digits, `.` and `-`, so it goes in a URL as is.
pub fn encode_event_cursor(position: &EventPosition) -> String {
    format!(
        "{PREFIX}.{}.{}.{}",
        position.transaction,
        position.sequence,
        position.id.simple()
    )
}

/// The position named by `raw`, which must be exactly what [`encode_event_cursor`] writes (any
/// other spelling of the same position is refused).
pub fn decode_event_cursor(raw: &str) -> Result<EventPosition, InvalidCursor> {
    let mut parts = raw.split('.');
    let (Some(PREFIX), Some(transaction), Some(sequence), Some(id), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return Err(InvalidCursor);
    };
    let position = EventPosition {
        transaction: transaction.parse().map_err(|_| InvalidCursor)?,
        sequence: sequence.parse().map_err(|_| InvalidCursor)?,
        id: Uuid::try_parse(id).map_err(|_| InvalidCursor)?,
    };
    if encode_event_cursor(&position) != raw {
        return Err(InvalidCursor);
    }
    Ok(position)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position() -> EventPosition {
        EventPosition {
            transaction: 7_4021,
            sequence: 12,
            id: Uuid::parse_str("0f8d5b7e-3c1a-4f2b-9d6e-5a4b3c2d1e0f").unwrap(),
        }
    }

    #[test]
    fn a_cursor_is_the_prefix_the_transaction_the_sequence_and_the_simple_uuid() {
        let text = encode_event_cursor(&position());
        assert_eq!(text, "e1.74021.12.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f");
        assert_eq!(decode_event_cursor(&text), Ok(position()));
    }

    #[test]
    fn other_spellings_list_cursors_and_garbage_are_refused() {
        for raw in [
            "",
            "e1",
            "e1.74021.12",
            "e1.074021.12.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
            "e1.+74021.12.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
            "e1.74021.12.0F8D5B7E3C1A4F2B9D6E5A4B3C2D1E0F",
            "e1.74021.12.0f8d5b7e-3c1a-4f2b-9d6e-5a4b3c2d1e0f",
            "e1.74021.12.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f.1",
            "e2.74021.12.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
            "v1.1741953600123456.0f8d5b7e3c1a4f2b9d6e5a4b3c2d1e0f",
        ] {
            assert_eq!(decode_event_cursor(raw), Err(InvalidCursor), "{raw}");
        }
    }
}
