//! Work done one company at a time (issue 21, part 3): a worker statement first finds the
//! companies with due work (one index probe per company, never the due rows), then changes each
//! company's rows in a statement scoped to it. This is what a distributed database needs (no
//! lock across companies) and what keeps one company's backlog from being read for another's.

use ports::RepoError;
use uuid::Uuid;

/// A company id, as the statements that find companies with due work answer it.
#[derive(diesel::QueryableByName)]
pub(crate) struct CompanyIdRow {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    pub(crate) id: Uuid,
}

/// Runs `one` for each company in order with what is left of `limit` (its answer is how much of
/// it the company used), and stops once nothing is left; returns the total used. A company with
/// a large backlog takes what is left, the next ones get theirs in a later call: the callers
/// repeat while a call comes back full.
pub(crate) fn share_among(
    companies: Vec<CompanyIdRow>,
    limit: u32,
    mut one: impl FnMut(Uuid, u32) -> Result<u32, RepoError>,
) -> Result<u32, RepoError> {
    let mut used = 0u32;
    for company in companies {
        let room = limit.saturating_sub(used);
        if room == 0 {
            break;
        }
        used = used.saturating_add(one(company.id, room)?.min(room));
    }
    Ok(used)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn companies(n: u128) -> Vec<CompanyIdRow> {
        (1..=n)
            .map(|i| CompanyIdRow {
                id: Uuid::from_u128(i),
            })
            .collect()
    }

    #[test]
    fn each_company_gets_what_is_left_and_the_call_stops_when_nothing_is() {
        let mut asked = Vec::new();
        let used = share_among(companies(4), 10, |id, room| {
            asked.push((id.as_u128(), room));
            Ok(room.min(4))
        })
        .unwrap();

        assert_eq!(used, 10);
        assert_eq!(asked, vec![(1, 10), (2, 6), (3, 2)]);
    }

    #[test]
    fn an_error_stops_the_call() {
        let result = share_among(companies(3), 10, |id, _| {
            if id.as_u128() == 2 {
                Err(RepoError::Unavailable(anyhow::anyhow!("down")))
            } else {
                Ok(1)
            }
        });
        assert!(matches!(result, Err(RepoError::Unavailable(_))));
    }
}
