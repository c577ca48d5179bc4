//! `fimEstimado` (docs/imports.md, "Status"): when an import registering should end, given that
//! the imports' PGCC budget is shared round-robin by company, one line per company a turn.
//!
//! Until this import's last line, each turn serves one line of every company that still has
//! lines: the company's own lines ahead of the import's end (its older imports' lines left, as a
//! company's imports are registered oldest first, then this one's), and of every other company
//! as many as it has left, up to that number. So the lines served until this import ends are
//!
//! `mine + Σ min(theirs_j, mine)`, `mine = ahead + left`,
//!
//! and they take that many calls of the budget (`importacao.pgcc_calls_per_second`). A company
//! that ends sooner gives its share back, which the `min` counts; a company alone has the whole
//! rate. Not counted: imports that start later (they only make it later), lines retried after a
//! PGCC failure, and the lines of a file still being read (not yet `registrando`).

use ports::ImportBacklog;

/// The longest estimate given, in seconds (about 317 years): past it the figure means nothing.
const MAX_SECONDS: u64 = 10_000_000_000;

/// Seconds until the import's last line is registered, at `calls_per_second` shared
/// round-robin by company (see the module's formula); `0` when nothing is left.
pub fn estimated_seconds(backlog: &ImportBacklog, calls_per_second: u32) -> u64 {
    if backlog.left == 0 {
        return 0;
    }
    let mine = backlog.ahead.saturating_add(backlog.left);
    let served = backlog
        .others
        .iter()
        .fold(mine, |sum, theirs| sum.saturating_add((*theirs).min(mine)));
    let rate = u64::from(calls_per_second.max(1));
    served.div_ceil(rate).min(MAX_SECONDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backlog(left: u64, ahead: u64, others: &[u64]) -> ImportBacklog {
        ImportBacklog {
            left,
            ahead,
            others: others.to_vec(),
        }
    }

    #[test]
    fn alone_an_import_has_the_whole_rate() {
        assert_eq!(estimated_seconds(&backlog(100, 0, &[]), 10), 10);
        assert_eq!(estimated_seconds(&backlog(101, 0, &[]), 10), 11);
    }

    #[test]
    fn companies_importing_at_once_share_the_rate_by_company() {
        // two others with more lines than this one: a third of the rate to the end
        assert_eq!(estimated_seconds(&backlog(100, 0, &[500, 1_000]), 10), 30);
        // another with fewer lines gives its share back when it ends: 100 + 20 lines served
        assert_eq!(estimated_seconds(&backlog(100, 0, &[20]), 10), 12);
        assert_eq!(estimated_seconds(&backlog(100, 0, &[20, 100, 7]), 10), 23);
    }

    #[test]
    fn the_companys_older_imports_go_first() {
        // 50 lines of an older import of the same company, then these 100; another company
        // with 1,000 lines takes a turn for each of the 150
        assert_eq!(estimated_seconds(&backlog(100, 50, &[1_000]), 10), 30);
        assert_eq!(estimated_seconds(&backlog(100, 50, &[]), 10), 15);
    }

    #[test]
    fn nothing_left_is_now_and_a_zero_rate_counts_as_one_call_a_second() {
        assert_eq!(estimated_seconds(&backlog(0, 50, &[1_000]), 10), 0);
        assert_eq!(estimated_seconds(&backlog(3, 0, &[]), 0), 3);
        assert_eq!(
            estimated_seconds(&backlog(u64::MAX, u64::MAX, &[u64::MAX]), 1),
            MAX_SECONDS
        );
    }
}
