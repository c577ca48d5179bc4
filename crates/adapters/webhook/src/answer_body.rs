//! The start of a receiver's answer body, kept with the attempt for the console's delivery log
//! (issue 38, part 5): read with a byte limit (a receiver that streams forever holds the sender
//! no longer than the call's timeout, and never more than the limit in memory), made text that
//! PostgreSQL stores (invalid UTF-8 and NUL replaced), cut at a number of characters.

use std::io::{self, Read};

use ports::{RESPONSE_BODY_KEPT, RESPONSE_BODY_READ_BYTES};

/// Reads at most [`RESPONSE_BODY_READ_BYTES`] of `body` and keeps its start as [`text`] does;
/// what was read before a read error is kept (the status is the outcome, the body a courtesy).
pub fn read_start(body: impl Read) -> Option<String> {
    let mut bytes = Vec::with_capacity(RESPONSE_BODY_READ_BYTES);
    let limit = u64::try_from(RESPONSE_BODY_READ_BYTES).unwrap_or(u64::MAX);
    if let Err(error) = body.take(limit).read_to_end(&mut bytes) {
        // the kind only: an error's text may quote what the receiver sent
        tracing::debug!(kind = ?error.kind(), "webhook answer body not fully read");
    }
    let whole = bytes.len() < RESPONSE_BODY_READ_BYTES;
    text(&bytes, whole)
}

/// `bytes` as text of at most [`RESPONSE_BODY_KEPT`] characters: invalid UTF-8 replaced by
/// U+FFFD, except an incomplete character at the end of a cut read (`whole` false), which is
/// dropped; NUL (which a PostgreSQL `text` cannot hold) replaced by U+FFFD. `None` when empty.
pub fn text(bytes: &[u8], whole: bool) -> Option<String> {
    let bytes = if whole {
        bytes
    } else {
        match std::str::from_utf8(bytes) {
            // an incomplete sequence at the end (no `error_len`): the read cut a character
            Err(e) if e.error_len().is_none() => &bytes[..e.valid_up_to()],
            _ => bytes,
        }
    };
    let kept: String = String::from_utf8_lossy(bytes)
        .chars()
        .take(RESPONSE_BODY_KEPT)
        .map(|c| {
            if c == '\0' {
                char::REPLACEMENT_CHARACTER
            } else {
                c
            }
        })
        .collect();
    (!kept.is_empty()).then_some(kept)
}

/// Reads and throws away at most `limit` more bytes of `body` (so a short remainder lets the
/// connection be reused); a failure is only noted.
pub fn drain(body: impl Read, limit: u64) {
    if let Err(error) = io::copy(&mut body.take(limit), &mut io::sink()) {
        tracing::debug!(kind = ?error.kind(), "webhook answer body not fully drained");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_body_is_none_and_a_short_one_is_kept_whole() {
        assert_eq!(read_start(&b""[..]), None);
        assert_eq!(
            read_start(&b"{\"ok\":true}"[..]).as_deref(),
            Some("{\"ok\":true}")
        );
    }

    #[test]
    fn a_long_body_is_read_up_to_the_byte_limit_and_cut_at_the_characters_kept() {
        let huge = vec![b'a'; 10 * 1024 * 1024];
        let mut reader = &huge[..];
        let kept = read_start(&mut reader).unwrap();
        assert_eq!(kept.chars().count(), RESPONSE_BODY_KEPT);
        // the rest was not read
        assert_eq!(reader.len(), huge.len() - RESPONSE_BODY_READ_BYTES);
    }

    #[test]
    fn invalid_utf8_and_nul_are_replaced_and_a_cut_character_is_dropped() {
        assert_eq!(
            text(b"a\xffb\0c", true).as_deref(),
            Some("a\u{fffd}b\u{fffd}c")
        );
        // "é" is two bytes: the read stopped after the first
        assert_eq!(text(b"ab\xc3", false).as_deref(), Some("ab"));
        assert_eq!(text(b"ab\xc3", true).as_deref(), Some("ab\u{fffd}"));
        let multibyte = "é".repeat(RESPONSE_BODY_READ_BYTES);
        let read = &multibyte.as_bytes()[..RESPONSE_BODY_READ_BYTES - 1];
        let kept = text(read, false).unwrap();
        assert!(kept.chars().all(|c| c == 'é'));
        assert_eq!(kept.chars().count(), RESPONSE_BODY_KEPT);
    }
}
