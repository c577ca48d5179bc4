//! Pages bounded in bytes (issue 22, part 1): a page of the consent list or of the subject
//! export stops growing once its items hold about `page_max_bytes`, and says where to continue,
//! so `limite` is a maximum, never a promise. Here the rows are read in chunks and reading stops
//! once the plain text read (proofs, reasons) reaches the bound: a page of 500 requests with
//! 60 KB proofs never loads 30 MB. The HTTP layer then cuts the answer exactly at the bound on
//! its serialized bytes (`delivery_http::bounded_page`), which are never fewer than the plain
//! text counted here, so it never needs a row this did not read.

use domain::{ConsentRequest, StatusChange};
use ports::{ListCursor, RepoError};

use crate::consent_requests::cursor::encode_cursor;
use crate::consent_requests::list::next_cursor;

/// `server.page_max_bytes` when configuration says nothing: 1 MiB.
pub const DEFAULT_PAGE_MAX_BYTES: usize = 1 << 20;

/// Rows read per query after the first: with 64 KB proofs, 4 MB at most in flight per page.
const CHUNK: usize = 64;

/// The cursor that resumes a list or export right after `request`.
pub fn resume_after(request: &ConsentRequest) -> String {
    encode_cursor(&position(request))
}

pub(crate) fn position(request: &ConsentRequest) -> ListCursor {
    ListCursor {
        created_at: request.created_at,
        id: request.id,
    }
}

/// The plain text of a request's free-form fields (proof, template, ids) plus a fixed allowance
/// for the rest: a lower bound of its serialized size.
pub(crate) fn plain_bytes(request: &ConsentRequest) -> usize {
    let proof = request
        .content
        .answer
        .as_ref()
        .map_or(0, |a| a.proof_of_collection.len());
    256 + proof + request.content.template_id.len() + request.pgcc_id.len()
}

/// The plain text of a history: its reasons.
pub(crate) fn history_bytes(history: &[StatusChange]) -> usize {
    history
        .iter()
        .map(|c| 64 + c.reason.as_ref().map_or(0, |r| r.as_str().len()))
        .sum()
}

/// Reads up to `limit` items after `after` (plus one, to know whether more exist), `fetch`
/// asked for at most [`CHUNK`] rows at a time after the first query, and stops early once the
/// items read weigh `max_bytes` or more. Returns the items and the cursor of the next page:
/// after the last item when reading stopped early or more rows exist, `None` on the last page.
/// A page's first query asks for `min(limit + 1, CHUNK)` rows, so a page of the default size
/// (50) is one query.
pub(crate) fn fetch_within<T>(
    limit: u32,
    max_bytes: usize,
    after: Option<ListCursor>,
    at: impl Fn(&T) -> ListCursor,
    weight: impl Fn(&T) -> usize,
    mut fetch: impl FnMut(Option<ListCursor>, u32) -> Result<Vec<T>, RepoError>,
) -> Result<(Vec<T>, Option<String>), RepoError> {
    let want = limit as usize + 1;
    let mut items: Vec<T> = Vec::new();
    let mut bytes = 0usize;
    let mut after = after;
    loop {
        let ask = (want - items.len()).min(CHUNK);
        let chunk = fetch(after, ask as u32)?;
        let got = chunk.len();
        for item in chunk {
            bytes = bytes.saturating_add(weight(&item));
            items.push(item);
        }
        if got < ask || items.len() >= want {
            break;
        }
        if bytes >= max_bytes {
            // Enough for a whole answer: the rest waits for the next page.
            let resume = items.last().map(|last| encode_cursor(&at(last)));
            return Ok((items, resume));
        }
        after = items.last().map(&at);
    }
    let next = next_cursor(&mut items, limit, at);
    Ok((items, next))
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone, Utc};
    use uuid::Uuid;

    use super::*;

    fn at(n: &u32) -> ListCursor {
        ListCursor {
            created_at: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap()
                + Duration::seconds(i64::from(*n)),
            id: Uuid::from_u128(u128::from(*n)),
        }
    }

    /// Rows 1..=total, each weighing `each` bytes; records every (after, ask).
    fn run(
        total: u32,
        each: usize,
        limit: u32,
        max_bytes: usize,
    ) -> (Vec<u32>, Option<String>, Vec<(u32, u32)>) {
        let mut asked = Vec::new();
        let (items, next) = fetch_within(
            limit,
            max_bytes,
            None,
            at,
            |_| each,
            |after, n| {
                let from = after.map_or(0, |c| c.id.as_u128() as u32);
                asked.push((from, n));
                Ok(((from + 1)..=(from + n).min(total)).collect())
            },
        )
        .unwrap();
        (items, next, asked)
    }

    #[test]
    fn a_default_page_of_small_items_is_one_query_and_knows_a_next_page_exists() {
        let (items, next, asked) = run(100, 1_000, 50, 1 << 20);
        assert_eq!(items, (1..=50).collect::<Vec<_>>());
        assert_eq!(next, Some(encode_cursor(&at(&50))));
        assert_eq!(asked, [(0, 51)]);
    }

    #[test]
    fn a_large_page_is_read_in_chunks_and_the_last_page_has_no_cursor() {
        let (items, next, asked) = run(130, 1_000, 500, 1 << 20);
        assert_eq!(items.len(), 130);
        assert_eq!(next, None);
        assert_eq!(asked, [(0, 64), (64, 64), (128, 64)]);
    }

    #[test]
    fn heavy_items_stop_the_reading_at_the_bound_and_resume_after_the_last_one_read() {
        // 60 KB each, 1 MiB bound: the first chunk of 64 already weighs 3.8 MB.
        let (items, next, asked) = run(500, 60_000, 500, 1 << 20);
        assert_eq!(items.len(), 64);
        assert_eq!(next, Some(encode_cursor(&at(&64))));
        assert_eq!(asked, [(0, 64)]);
    }

    #[test]
    fn one_item_larger_than_the_bound_still_comes_alone_per_page() {
        let (items, next, _) = run(3, 5_000_000, 500, 1 << 20);
        assert!(!items.is_empty());
        assert!(next.is_some() || items.len() == 3);
    }
}
