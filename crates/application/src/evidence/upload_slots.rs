//! The uploads each company has under way in this process: a bound, so one company's many slow
//! uploads cannot take every blocking thread and connection from the others.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use domain::CompanyId;

/// The uploads under way, per company, in this process.
#[derive(Debug)]
pub struct UploadSlots {
    per_company: u32,
    running: Mutex<HashMap<CompanyId, u32>>,
}

impl UploadSlots {
    pub fn new(per_company: u32) -> Self {
        Self {
            per_company,
            running: Mutex::new(HashMap::new()),
        }
    }

    /// A slot for one more upload of `company`, or `None` when it has its bound under way.
    /// Given back when dropped (the upload ended, failed, or its client went away).
    pub fn take(self: &Arc<Self>, company: CompanyId) -> Option<UploadSlot> {
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        let n = running.entry(company).or_insert(0);
        if *n >= self.per_company {
            return None;
        }
        *n += 1;
        Some(UploadSlot {
            slots: self.clone(),
            company,
        })
    }
}

/// One upload under way (see [`UploadSlots::take`]).
#[derive(Debug)]
pub struct UploadSlot {
    slots: Arc<UploadSlots>,
    company: CompanyId,
}

impl Drop for UploadSlot {
    fn drop(&mut self) {
        let mut running = self.slots.running.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = running.get_mut(&self.company) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                running.remove(&self.company);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    #[test]
    fn a_company_past_its_bound_waits_and_another_does_not() {
        let slots = Arc::new(UploadSlots::new(2));
        let a = CompanyId(Uuid::from_u128(1));
        let b = CompanyId(Uuid::from_u128(2));
        let first = slots.take(a).expect("first");
        let _second = slots.take(a).expect("second");
        assert!(slots.take(a).is_none());
        assert!(slots.take(b).is_some());
        drop(first);
        assert!(slots.take(a).is_some());
    }
}
