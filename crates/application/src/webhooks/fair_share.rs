//! The fair sender's rule: how many deliveries of each company one claim may take.
//!
//! A process has `senders` threads; each company may hold at most `per_company` of them at once,
//! so a company whose receivers never answer keeps at most that many busy and the rest keep
//! delivering everyone else's webhooks. A claim fills the free senders by turns: the companies
//! with due work, the one waiting longest first, each take one delivery per turn until the free
//! senders or their room run out ([`round_robin`]). The claim itself
//! ([`crate::DeliverWebhooks::claim`]) then asks the repository for each company's quota, one
//! statement per company.

use std::collections::HashMap;

use domain::CompanyId;

/// The shape of a sender pool: `senders` deliveries attempted at once, `per_company` of them at
/// most for one company.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shares {
    pub senders: u32,
    pub per_company: u32,
}

/// What a process's senders are doing now: deliveries being attempted, in all and by company.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InFlight {
    total: u32,
    by_company: HashMap<CompanyId, u32>,
}

impl InFlight {
    /// A delivery of `company` handed to a sender.
    pub fn take(&mut self, company: CompanyId) {
        self.total += 1;
        *self.by_company.entry(company).or_default() += 1;
    }

    /// A delivery of `company` finished (whatever its outcome).
    pub fn release(&mut self, company: CompanyId) {
        self.total = self.total.saturating_sub(1);
        if let Some(n) = self.by_company.get_mut(&company) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.by_company.remove(&company);
            }
        }
    }

    /// Deliveries being attempted.
    pub fn total(&self) -> u32 {
        self.total
    }

    /// Deliveries of `company` being attempted.
    pub fn of(&self, company: CompanyId) -> u32 {
        self.by_company.get(&company).copied().unwrap_or(0)
    }

    /// Companies with a delivery being attempted.
    pub fn companies(&self) -> usize {
        self.by_company.len()
    }
}

/// Shares out `free` deliveries among `rooms` (each company and how many more it may take), in
/// the order given: one each per turn, a company leaving when its room is used up. Companies
/// that get nothing (no free sender left for them this time) are left out.
pub fn round_robin(rooms: &[(CompanyId, u32)], free: u32) -> Vec<(CompanyId, u32)> {
    let mut quotas: Vec<(CompanyId, u32)> = rooms.iter().map(|(c, _)| (*c, 0)).collect();
    let mut left = free;
    let mut progressed = true;
    while left > 0 && progressed {
        progressed = false;
        for ((_, quota), (_, room)) in quotas.iter_mut().zip(rooms) {
            if left == 0 {
                break;
            }
            if *quota < *room {
                *quota += 1;
                left -= 1;
                progressed = true;
            }
        }
    }
    quotas.retain(|(_, q)| *q > 0);
    quotas
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;

    fn company(n: u128) -> CompanyId {
        CompanyId(Uuid::from_u128(n))
    }

    #[test]
    fn in_flight_counts_per_company_and_forgets_a_company_at_zero() {
        let (a, b) = (company(1), company(2));
        let mut busy = InFlight::default();
        busy.take(a);
        busy.take(a);
        busy.take(b);
        assert_eq!((busy.total(), busy.of(a), busy.of(b)), (3, 2, 1));

        busy.release(b);
        busy.release(a);
        assert_eq!(busy.total(), 1);
        assert_eq!(busy.of(b), 0);
        assert_eq!(busy.companies(), 1);

        busy.release(a);
        busy.release(a);
        assert_eq!((busy.total(), busy.companies()), (0, 0));
    }

    #[test]
    fn free_senders_are_shared_by_turns_in_the_order_given() {
        let rooms = [(company(1), 4), (company(2), 4), (company(3), 1)];

        assert_eq!(
            round_robin(&rooms, 7),
            [(company(1), 3), (company(2), 3), (company(3), 1)]
        );
        assert_eq!(round_robin(&rooms, 2), [(company(1), 1), (company(2), 1)]);
    }

    #[test]
    fn no_company_gets_more_than_its_room_even_with_senders_left() {
        let rooms = [(company(1), 2), (company(2), 1)];

        assert_eq!(round_robin(&rooms, 32), [(company(1), 2), (company(2), 1)]);
        assert!(round_robin(&rooms, 0).is_empty());
        assert!(round_robin(&[], 5).is_empty());
    }
}
