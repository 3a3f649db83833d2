//! rheap's server-wide memory budget (`rheap_max_memory`): the most bytes all tables' blocks
//! ([`Counter::MemoryUsed`]) and the plugin's heap ([`super::heap`]) may hold together. A
//! block that would take them past it is refused, and the write that needed it gets "table is full", as at a table's own limit: the
//! server moves an internal table to its on-disk engine, and an RHEAP or MEMORY table's
//! statement fails with "The table is full". Lowering the budget never takes anything away
//! from a table: it only stops growth until enough is freed.
//!
//! The check reads the sum of the per-CPU counts, only when a block is taken (each time one
//! fills), never per row. Blocks taken at once on several CPUs may pass the budget by at most
//! one block each. The first block of a table that holds none is never refused
//! ([`super::meter::Meter::take`]): a table can always hold a row, as in HEAP, so new tables
//! may pass the budget by their first, small, block.

use crate::status::{self, Counter};
use std::sync::atomic::{AtomicU64, Ordering};

/// The budget in bytes; 0 for none.
static LIMIT: AtomicU64 = AtomicU64::new(0);

/// Sets the budget (`rheap_max_memory`; 0: none).
pub fn set_limit(bytes: u64) {
    LIMIT.store(bytes, Ordering::Relaxed);
}

/// The budget (0: none).
pub fn limit() -> u64 {
    #[cfg(test)]
    if let Some(l) = THREAD_LIMIT.with(|l| l.get()) {
        return l;
    }
    LIMIT.load(Ordering::Relaxed)
}

#[cfg(test)]
thread_local! {
    /// A unit test's own budget: tests run at once, and one's budget must not refuse
    /// another's blocks.
    static THREAD_LIMIT: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// Sets the running test's own budget (`None`: the server-wide one again).
#[cfg(test)]
pub(crate) fn set_thread_limit(bytes: Option<u64>) {
    THREAD_LIMIT.with(|l| l.set(bytes));
}

/// Whether a block of `size` more bytes fits in the budget; when it does not, the refusal is
/// counted and noted for this thread's write ([`super::refusal`]).
pub(crate) fn admits(size: usize) -> bool {
    let limit = limit();
    let held = status::get(Counter::MemoryUsed).saturating_add(super::heap::used());
    if limit == 0 || held.saturating_add(size as u64) <= limit {
        return true;
    }
    status::add(Counter::BudgetRefusals, 1);
    super::refusal::note();
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_budget_admits_everything_and_a_refusal_is_noted_once() {
        let _g = crate::testing::counters_lock();
        let before = status::get(Counter::BudgetRefusals);
        set_thread_limit(Some(0));
        assert!(admits(usize::MAX));
        assert!(!super::super::refusal::take());
        // Bounds that hold whatever other tests hold meanwhile.
        set_thread_limit(Some(u64::MAX));
        assert!(admits(4096));
        set_thread_limit(Some(1));
        assert!(!admits(4097));
        set_thread_limit(None);
        assert_eq!(status::get(Counter::BudgetRefusals), before + 1);
        assert!(super::super::refusal::take());
    }
}
