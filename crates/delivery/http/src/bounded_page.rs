//! Answers bounded in bytes (issue 22, part 1): every paged answer (the consent list, the
//! subject export, `GET /api/eventos`, the delivery log) stops adding items once their
//! serialized bytes would pass `server.page_max_bytes`, and gives the cursor to continue right
//! after the last item it kept. One item larger than the bound still goes, alone. Each item is
//! serialized once, into the answer; nothing is built twice.

use serde::Serialize;
use serde_json::value::RawValue;

/// The items kept, serialized, and where to continue when some were left out.
pub(crate) struct Bounded {
    pub items: Vec<Box<RawValue>>,
    /// The cursor after the last kept item when the bound cut the page; `None` when every item
    /// fitted (the service's own next cursor then applies).
    pub cut_after: Option<String>,
}

/// Serializes `sources` in order through `to_wire` while their total stays within `max_bytes`
/// (the first always goes); `cursor_of` names the place right after an item.
pub(crate) fn within<S, T: Serialize>(
    sources: Vec<S>,
    max_bytes: usize,
    cursor_of: impl Fn(&S) -> String,
    to_wire: impl Fn(S) -> anyhow::Result<T>,
) -> anyhow::Result<Bounded> {
    let mut items = Vec::with_capacity(sources.len());
    let mut total = 0usize;
    let mut last_cursor = None;
    for source in sources {
        let cursor = cursor_of(&source);
        let raw = serde_json::value::to_raw_value(&to_wire(source)?)?;
        // one byte more per item: the comma between items
        let size = raw.get().len() + 1;
        if !items.is_empty() && total + size > max_bytes {
            return Ok(Bounded {
                items,
                cut_after: last_cursor,
            });
        }
        total += size;
        items.push(raw);
        last_cursor = Some(cursor);
    }
    Ok(Bounded {
        items,
        cut_after: None,
    })
}

/// A page on the wire: the same fields as the documented page types (`itens`,
/// `proximoCursor`), its items already serialized.
#[derive(Serialize)]
pub(crate) struct Page {
    #[serde(rename = "itens")]
    pub items: Vec<Box<RawValue>>,
    #[serde(rename = "proximoCursor")]
    pub next_cursor: Option<String>,
}

impl Page {
    /// The page of `bounded`, continuing at the cut when there was one, at `next_cursor`
    /// (the service's) otherwise.
    pub fn of(bounded: Bounded, next_cursor: Option<String>) -> Self {
        Page {
            items: bounded.items,
            next_cursor: bounded.cut_after.or(next_cursor),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(sizes: &[usize], max: usize) -> Bounded {
        within(
            sizes.iter().copied().enumerate().collect(),
            max,
            |(i, _)| format!("c{i}"),
            |(_, n)| Ok("x".repeat(n)),
        )
        .unwrap()
    }

    #[test]
    fn items_stop_before_the_one_that_would_pass_the_bound_and_continue_after_the_last_kept() {
        // each item is its text plus two quotes and a comma: 13 bytes
        let page = run(&[10, 10, 10, 10], 30);
        assert_eq!(page.items.len(), 2);
        assert_eq!(page.cut_after.as_deref(), Some("c1"));
    }

    #[test]
    fn everything_within_the_bound_keeps_the_services_cursor() {
        let page = run(&[10, 10], 1_000);
        assert_eq!(page.items.len(), 2);
        assert!(page.cut_after.is_none());
        let wire = Page::of(page, Some("next".into()));
        assert_eq!(
            serde_json::to_string(&wire).unwrap(),
            format!(
                r#"{{"itens":["{0}","{0}"],"proximoCursor":"next"}}"#,
                "x".repeat(10)
            )
        );
    }

    #[test]
    fn one_item_larger_than_the_bound_goes_alone() {
        let page = run(&[100, 1], 10);
        assert_eq!(page.items.len(), 1);
        assert_eq!(page.cut_after.as_deref(), Some("c0"));
    }
}
