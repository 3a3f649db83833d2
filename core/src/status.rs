//! The engine's counters, shown by the server as `SHOW GLOBAL STATUS LIKE 'Rheap%'`.
//!
//! Every temporary table moves several of them (a table made and dropped, blocks taken and
//! given back), from every connection at once. One shared copy would have its cache lines
//! move between CPUs on each of those changes; so each CPU has its own part, which its
//! threads change, and a value is the sum of the parts when the server reads it. The peak of
//! `Rheap_memory_used` is one value, raised only past what it was.

use crate::cpu::{Padded, PerCpu, MAX_PARTS};
use std::sync::atomic::{AtomicU64, Ordering};

/// Which counter a slot holds. The server's status variables are made from this list alone
/// ([`Counter::name`], in this order): the shim asks for them at plugin init.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Counter {
    /// `Rheap_internal_tables_created`: internal temporary tables the engine served. Its slot
    /// counts those built; [`get`] adds those served by a kept table
    /// ([`InternalTablesReused`](Counter::InternalTablesReused)), so that serving one moves one counter.
    InternalTablesCreated = 0,
    /// `Rheap_internal_tables_converted`: internal temporary tables that filled up, which the server
    /// then moves to an on-disk engine.
    InternalTablesConverted = 1,
    /// `Rheap_tables_live`: tables (named or internal) that exist now.
    TablesLive = 2,
    /// `Rheap_rows_written`: rows written by INSERT (and internally), all tables.
    RowsWritten = 3,
    /// `Rheap_memory_used`: bytes in the blocks tables hold now.
    MemoryUsed = 4,
    /// `Rheap_memory_used_peak`: the most `Rheap_memory_used` has been.
    MemoryUsedPeak = 5,
    /// `Rheap_blocks_allocated`: blocks taken from the system (the server's allocator).
    BlocksAllocated = 6,
    /// `Rheap_block_cache_hits` / `_misses`: blocks a table got from the cache, or could not.
    BlockCacheHits = 7,
    BlockCacheMisses = 8,
    /// `Rheap_block_cache_bytes`: bytes in cached blocks.
    BlockCacheBytes = 9,
    /// `Rheap_internal_tables_reused`: internal temporary tables served by one kept from an earlier
    /// statement (same definition, emptied; [`crate::recycle`]).
    InternalTablesReused = 10,
    /// `Rheap_information_schema_tables`: information_schema tables with BLOB/TEXT columns
    /// that rheap served in place of Aria ([`crate::takeover::serves_schema_table`]); also
    /// counted in `Rheap_internal_tables_created`.
    SchemaTablesServed = 11,
    /// `Rheap_memory_budget_refusals`: blocks refused because rheap's memory would have
    /// passed `rheap_max_memory` ([`crate::alloc::budget`]); each made a table full.
    BudgetRefusals = 12,
    /// `Rheap_heap_used`: bytes the plugin holds outside blocks (handler buffers, compare
    /// scratch, definitions; [`crate::alloc::heap`]). Its slot is unused: the heap keeps its
    /// own count, which [`crate::recycle::counter`] reads.
    HeapUsed = 13,
    /// `Rheap_aria_tables`: internal tables with BLOB/TEXT columns of a statement's own that
    /// rheap served in place of Aria ([`crate::takeover::serves_aria_table`]); also counted in
    /// `Rheap_internal_tables_created`.
    AriaTablesServed = 14,
    /// `Rheap_aria_tables_moved`: of those, the tables that passed their limit and moved to
    /// Aria with their rows (each also counted by the server's `Created_tmp_disk_tables`).
    AriaTablesMoved = 15,
}

/// How many counters there are.
pub const COUNTERS: usize = Counter::ALL.len();

impl Counter {
    /// Every counter, in the shim's order: at its own index (`ALL[c as usize] == c`, a test
    /// checks each).
    pub const ALL: &'static [Counter] = {
        use Counter::*;
        &[
            InternalTablesCreated,
            InternalTablesConverted,
            TablesLive,
            RowsWritten,
            MemoryUsed,
            MemoryUsedPeak,
            BlocksAllocated,
            BlockCacheHits,
            BlockCacheMisses,
            BlockCacheBytes,
            InternalTablesReused,
            SchemaTablesServed,
            BudgetRefusals,
            HeapUsed,
            AriaTablesServed,
            AriaTablesMoved,
        ]
    };

    /// The status variable's name, as `SHOW STATUS` shows it.
    pub const fn name(self) -> &'static std::ffi::CStr {
        use Counter::*;
        match self {
            InternalTablesCreated => c"Rheap_internal_tables_created",
            InternalTablesConverted => c"Rheap_internal_tables_converted",
            TablesLive => c"Rheap_tables_live",
            RowsWritten => c"Rheap_rows_written",
            MemoryUsed => c"Rheap_memory_used",
            MemoryUsedPeak => c"Rheap_memory_used_peak",
            BlocksAllocated => c"Rheap_blocks_allocated",
            BlockCacheHits => c"Rheap_block_cache_hits",
            BlockCacheMisses => c"Rheap_block_cache_misses",
            BlockCacheBytes => c"Rheap_block_cache_bytes",
            InternalTablesReused => c"Rheap_internal_tables_reused",
            SchemaTablesServed => c"Rheap_information_schema_tables",
            BudgetRefusals => c"Rheap_memory_budget_refusals",
            HeapUsed => c"Rheap_heap_used",
            AriaTablesServed => c"Rheap_aria_tables",
            AriaTablesMoved => c"Rheap_aria_tables_moved",
        }
    }

    /// The counter at `i` (the shim's order), if there is one.
    pub fn from_index(i: usize) -> Option<Counter> {
        Counter::ALL.get(i).copied()
    }
}

/// Every counter, per CPU.
static PARTS: PerCpu<[AtomicU64; COUNTERS]> =
    PerCpu::new([const { Padded([const { AtomicU64::new(0) }; COUNTERS]) }; MAX_PARTS]);

/// `Rheap_memory_used_peak`.
static PEAK: AtomicU64 = AtomicU64::new(0);

pub fn add(c: Counter, n: u64) {
    PARTS.mine()[c as usize].fetch_add(n, Ordering::Relaxed);
}

/// Takes `n` away (from this CPU's part, which may go below zero: only the sum means
/// anything, and it wraps back).
pub fn sub(c: Counter, n: u64) {
    PARTS.mine()[c as usize].fetch_sub(n, Ordering::Relaxed);
}

/// Several changes at once (negative ones take away, as [`sub`]), with one look at which CPU
/// runs: what a temporary table's open, first change and close move together. A change of 0
/// is skipped.
pub fn change(changes: &[(Counter, i64)]) {
    let part = PARTS.mine();
    for &(c, n) in changes {
        if n != 0 {
            // Two's complement: adding a negative amount as u64 wraps to the subtraction.
            part[c as usize].fetch_add(n as u64, Ordering::Relaxed);
        }
    }
}

/// Raises `Rheap_memory_used_peak` to `n` if it is lower.
pub fn raise_peak(n: u64) {
    if n > PEAK.load(Ordering::Relaxed) {
        PEAK.fetch_max(n, Ordering::Relaxed);
    }
}

pub fn get(c: Counter) -> u64 {
    match c {
        Counter::MemoryUsedPeak => PEAK.load(Ordering::Relaxed),
        Counter::InternalTablesCreated => slot(c).wrapping_add(slot(Counter::InternalTablesReused)),
        _ => slot(c),
    }
}

/// Counter `c`'s slot: the sum of its parts.
fn slot(c: Counter) -> u64 {
    let sum = PARTS.iter().fold(0u64, |sum, p| {
        sum.wrapping_add(p[c as usize].load(Ordering::Relaxed))
    });
    // The parts are read one after the other: a thread that moved between CPUs meanwhile may
    // have its addition missed and its subtraction seen, so the sum can be briefly low. Never
    // below zero (it would wrap to an enormous value, and raise the peak for good).
    (sum as i64).max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_add_and_subtract() {
        // (Handlers' tests move this counter too: they hold the same lock.)
        let _g = crate::testing::counters_lock();
        let before = get(Counter::TablesLive);
        add(Counter::TablesLive, 2);
        sub(Counter::TablesLive, 1);
        assert_eq!(get(Counter::TablesLive), before + 1);
        sub(Counter::TablesLive, 1);
        assert_eq!(get(Counter::TablesLive), before);
    }

    #[test]
    fn changes_add_and_take_away_together() {
        // (Counters the handlers' tests move too: they hold the same lock.)
        let _g = crate::testing::counters_lock();
        let (a, b) = (
            Counter::InternalTablesCreated,
            Counter::InternalTablesReused,
        );
        let (before_a, before_b) = (get(a), get(b));
        change(&[(a, 3), (b, 5), (a, 0)]);
        // Tables served by a kept table are created ones too.
        assert_eq!((get(a), get(b)), (before_a + 3 + 5, before_b + 5));
        change(&[(a, -3), (b, -5)]);
        assert_eq!((get(a), get(b)), (before_a, before_b));
    }

    #[test]
    fn parts_made_on_other_cpus_add_up() {
        // A thread that moves between CPUs adds on one part and takes away on another.
        // (A counter no other unit test moves; recycle's tests read it, under the lock.)
        let _g = crate::testing::counters_lock();
        let before = get(Counter::InternalTablesConverted);
        PARTS.get(0)[Counter::InternalTablesConverted as usize].fetch_add(5, Ordering::Relaxed);
        let last = PARTS.in_use() - 1;
        PARTS.get(last)[Counter::InternalTablesConverted as usize].fetch_sub(5, Ordering::Relaxed);
        assert_eq!(get(Counter::InternalTablesConverted), before);
    }

    #[test]
    fn a_sum_read_between_an_addition_and_its_subtraction_is_not_below_zero() {
        // As if a reader saw the subtraction (on one part) but not yet the addition. (A
        // counter the handlers' tests move too: they hold the same lock.)
        let _g = crate::testing::counters_lock();
        let c = Counter::RowsWritten as usize;
        let before = get(Counter::RowsWritten);
        PARTS.get(0)[c].fetch_sub(before + 7, Ordering::Relaxed);
        assert_eq!(get(Counter::RowsWritten), 0);
        PARTS.get(0)[c].fetch_add(before + 7, Ordering::Relaxed);
        assert_eq!(get(Counter::RowsWritten), before);
    }

    #[test]
    fn the_peak_only_rises() {
        raise_peak(10);
        let p = get(Counter::MemoryUsedPeak);
        raise_peak(p - 1);
        assert!(get(Counter::MemoryUsedPeak) >= p);
        raise_peak(p + 1);
        // (Other tests may raise it further meanwhile.)
        assert!(get(Counter::MemoryUsedPeak) > p);
    }

    #[test]
    fn every_counter_has_its_own_name() {
        let names: Vec<_> = (0..COUNTERS)
            .map(|i| Counter::from_index(i).unwrap().name())
            .collect();
        for (i, n) in names.iter().enumerate() {
            assert!(n.to_str().unwrap().starts_with("Rheap_"));
            assert!(!names[..i].contains(n), "{n:?} twice");
        }
    }

    #[test]
    fn counters_by_index_are_the_shims_order() {
        for (i, &c) in Counter::ALL.iter().enumerate() {
            assert_eq!(c as usize, i, "{c:?} is not at its own index");
            assert_eq!(Counter::from_index(i), Some(c));
        }
        assert_eq!(Counter::from_index(COUNTERS), None);
    }
}
