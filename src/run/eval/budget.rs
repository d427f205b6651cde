//! The memory a run's responses may hold. Each response is charged what it
//! costs ([`crate::base::data::Parsed::cost`], or its length as text) before it is
//! kept, against the run's own budget and, when runs share one (a server),
//! against the shared budget too. A charge is given back when the response
//! is dropped. A response that does not fit fails its run (B321) and
//! leaves the process and every other run alone.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The default budget of one run: 256 MiB.
pub const DEFAULT_RUN_BUDGET: u64 = 256 * 1024 * 1024;

/// Bytes that responses may hold at once.
#[derive(Debug)]
pub struct Budget {
    limit: u64,
    used: AtomicU64,
}

/// Why a charge was refused: the limit of the budget that refused it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exceeded {
    pub limit: u64,
    /// Whether the budget is shared by every run of the process.
    pub shared: bool,
}

impl Budget {
    pub fn new(limit: u64) -> Arc<Budget> {
        Arc::new(Budget { limit, used: AtomicU64::new(0) })
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Takes `bytes` from the budget, or refuses without taking any.
    fn take(&self, bytes: u64) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|total| *total <= self.limit)
            })
            .is_ok()
    }

    fn give_back(&self, bytes: u64) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }
}

/// The budgets one run charges: its own and, maybe, one shared by runs.
#[derive(Debug, Clone)]
pub struct Budgets {
    run: Arc<Budget>,
    shared: Option<Arc<Budget>>,
}

impl Budgets {
    pub fn new(run_limit: u64, shared: Option<Arc<Budget>>) -> Budgets {
        Budgets { run: Budget::new(run_limit), shared }
    }

    /// Charges `bytes` to every budget, or to none.
    pub fn charge(&self, bytes: u64) -> Result<Charge, Exceeded> {
        if !self.run.take(bytes) {
            return Err(Exceeded { limit: self.run.limit, shared: false });
        }
        if let Some(shared) = &self.shared {
            if !shared.take(bytes) {
                self.run.give_back(bytes);
                return Err(Exceeded { limit: shared.limit, shared: true });
            }
        }
        Ok(Charge { budgets: self.clone(), bytes })
    }
}

/// Bytes held from the budgets; given back when dropped.
#[derive(Debug)]
pub struct Charge {
    budgets: Budgets,
    bytes: u64,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budgets.run.give_back(self.bytes);
        if let Some(shared) = &self.budgets.shared {
            shared.give_back(self.bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_charge_is_all_or_nothing_and_given_back_when_dropped() {
        let shared = Budget::new(100);
        let a = Budgets::new(80, Some(shared.clone()));
        let b = Budgets::new(80, Some(shared.clone()));
        let first = a.charge(60).unwrap();
        assert_eq!(a.charge(30).unwrap_err(), Exceeded { limit: 80, shared: false });
        assert_eq!(b.charge(50).unwrap_err(), Exceeded { limit: 100, shared: true });
        assert_eq!(b.run.used(), 0, "a refused charge takes nothing");
        let second = b.charge(40).unwrap();
        assert_eq!(shared.used(), 100);
        drop(first);
        drop(second);
        assert_eq!((shared.used(), a.run.used(), b.run.used()), (0, 0, 0));
    }
}
