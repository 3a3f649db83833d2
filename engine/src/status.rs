//! The engine's counters, shown by the server as `SHOW GLOBAL STATUS LIKE 'Rheap%'`.
//!
//! Every temporary table moves several of them (a table made and dropped, blocks taken and
//! given back), from every connection at once. One shared copy would have its cache lines
//! move between CPUs on each of those changes; so a value is kept in parts, changed apart and
//! summed when the server reads it:
//! - the counters of blocks and memory have a part per CPU, which its threads change with
//!   atomic additions ([`change`]); they change when a table takes or gives back a block;
//! - the counters of tables ([`Counter::of_tables`]) change at every temporary table's open
//!   and close, so each thread has its own part ([`thread_change`]): only that thread writes
//!   it, with a plain load and store, and no locked instruction (which would wait for every
//!   store the statement made before it). Parts are listed (under a lock taken when a thread
//!   first counts, when it ends, and when the server reads), and a thread's counts are added
//!   to [`ENDED`] when it ends.
//!
//! The peak of `Rheap_memory_used` is one value, raised only past what it was.

use crate::cpu::{Padded, PerCpu, MAX_PARTS};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Which counter a slot holds (the shim's status variables list them in this order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Counter {
    /// `Rheap_tmp_tables_created`: internal temporary tables the engine served.
    TmpTablesCreated = 0,
    /// `Rheap_tmp_tables_converted`: internal temporary tables that filled up, which the server
    /// then moves to an on-disk engine.
    TmpTablesConverted = 1,
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
    /// `Rheap_tmp_tables_reused`: internal temporary tables served by one kept from an earlier
    /// statement (same definition, emptied; `ffi::recycle`).
    TmpTablesReused = 10,
}

/// How many counters there are.
pub const COUNTERS: usize = 11;

impl Counter {
    /// A counter of tables, kept per thread ([`thread_change`]); else one of blocks and
    /// memory, kept per CPU ([`change`]).
    pub fn of_tables(self) -> bool {
        use Counter::*;
        matches!(
            self,
            TmpTablesCreated | TmpTablesConverted | TablesLive | RowsWritten | TmpTablesReused
        )
    }

    /// The counter at `i` (the shim's order), if there is one.
    pub fn from_index(i: usize) -> Option<Counter> {
        use Counter::*;
        [
            TmpTablesCreated,
            TmpTablesConverted,
            TablesLive,
            RowsWritten,
            MemoryUsed,
            MemoryUsedPeak,
            BlocksAllocated,
            BlockCacheHits,
            BlockCacheMisses,
            BlockCacheBytes,
            TmpTablesReused,
        ]
        .get(i)
        .copied()
    }
}

/// Every counter, per CPU.
static PARTS: PerCpu<[AtomicU64; COUNTERS]> =
    PerCpu::new([const { Padded([const { AtomicU64::new(0) }; COUNTERS]) }; MAX_PARTS]);

/// `Rheap_memory_used_peak`.
static PEAK: AtomicU64 = AtomicU64::new(0);

/// One thread's part of the counters of tables: written by that thread alone, read by anyone.
#[derive(Debug)]
struct ThreadPart([AtomicU64; COUNTERS]);

/// The parts of the threads that have counted and not ended.
static THREADS: Mutex<Vec<Arc<ThreadPart>>> = Mutex::new(Vec::new());

/// The sums of the parts of threads that ended.
static ENDED: [AtomicU64; COUNTERS] = [const { AtomicU64::new(0) }; COUNTERS];

fn threads() -> MutexGuard<'static, Vec<Arc<ThreadPart>>> {
    // Nothing panics while the list is held; a poisoned list is still a valid one.
    THREADS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The running thread's part, listed while the thread lives.
struct Mine(Arc<ThreadPart>);

impl Mine {
    fn new() -> Mine {
        let part = Arc::new(ThreadPart([const { AtomicU64::new(0) }; COUNTERS]));
        threads().push(Arc::clone(&part));
        Mine(part)
    }
}

impl Drop for Mine {
    /// The thread ends: its counts go to [`ENDED`] and its part leaves the list, both under
    /// the lock, so that a reader sees them in one place or the other.
    fn drop(&mut self) {
        let mut list = threads();
        for (ended, v) in ENDED.iter().zip(&self.0 .0) {
            ended.fetch_add(v.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        list.retain(|p| !Arc::ptr_eq(p, &self.0));
    }
}

thread_local! {
    static MINE: Mine = Mine::new();
}

pub fn add(c: Counter, n: u64) {
    PARTS.mine()[c as usize].fetch_add(n, Ordering::Relaxed);
}

/// Takes `n` away (from this CPU's part, which may go below zero: only the sum means
/// anything, and it wraps back).
pub fn sub(c: Counter, n: u64) {
    PARTS.mine()[c as usize].fetch_sub(n, Ordering::Relaxed);
}

/// Several changes at once (negative ones take away, as [`sub`]), with one look at which CPU
/// runs: what taking or giving back a block moves together. A change of 0 is skipped.
pub fn change(changes: &[(Counter, i64)]) {
    let part = PARTS.mine();
    for &(c, n) in changes {
        if n != 0 {
            // Two's complement: adding a negative amount as u64 wraps to the subtraction.
            part[c as usize].fetch_add(n as u64, Ordering::Relaxed);
        }
    }
}

/// Several changes of counters of tables ([`Counter::of_tables`]) in the running thread's
/// part. A thread whose part is gone (it is ending) changes the per-CPU parts instead.
pub fn thread_change(changes: &[(Counter, i64)]) {
    debug_assert!(changes.iter().all(|(c, _)| c.of_tables()));
    let done = MINE.try_with(|m| {
        for &(c, n) in changes {
            let v = &m.0 .0[c as usize];
            // Only this thread writes the part: a load and a store, no locked instruction.
            v.store(
                v.load(Ordering::Relaxed).wrapping_add(n as u64),
                Ordering::Relaxed,
            );
        }
    });
    if done.is_err() {
        change(changes);
    }
}

/// Raises `Rheap_memory_used_peak` to `n` if it is lower.
pub fn raise_peak(n: u64) {
    if n > PEAK.load(Ordering::Relaxed) {
        PEAK.fetch_max(n, Ordering::Relaxed);
    }
}

pub fn get(c: Counter) -> u64 {
    if c == Counter::MemoryUsedPeak {
        return PEAK.load(Ordering::Relaxed);
    }
    let i = c as usize;
    let mut sum = PARTS.iter().fold(0u64, |sum, p| {
        sum.wrapping_add(p[i].load(Ordering::Relaxed))
    });
    if c.of_tables() {
        let list = threads();
        sum = list.iter().fold(
            sum.wrapping_add(ENDED[i].load(Ordering::Relaxed)),
            |sum, p| sum.wrapping_add(p.0[i].load(Ordering::Relaxed)),
        );
    }
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
        let before = get(Counter::TablesLive);
        add(Counter::TablesLive, 2);
        sub(Counter::TablesLive, 1);
        assert_eq!(get(Counter::TablesLive), before + 1);
        sub(Counter::TablesLive, 1);
        assert_eq!(get(Counter::TablesLive), before);
    }

    #[test]
    fn changes_add_and_take_away_together() {
        // (Counters no other unit test moves.)
        let (a, b) = (Counter::TmpTablesCreated, Counter::TmpTablesReused);
        let (before_a, before_b) = (get(a), get(b));
        change(&[(a, 3), (b, 5), (a, 0)]);
        assert_eq!((get(a), get(b)), (before_a + 3, before_b + 5));
        change(&[(a, -3), (b, -5)]);
        assert_eq!((get(a), get(b)), (before_a, before_b));
        thread_parts_add_up(b, before_b);
    }

    #[test]
    fn parts_made_on_other_cpus_add_up() {
        // A thread that moves between CPUs adds on one part and takes away on another.
        // (A counter no other unit test moves.)
        let before = get(Counter::TmpTablesConverted);
        PARTS.get(0)[Counter::TmpTablesConverted as usize].fetch_add(5, Ordering::Relaxed);
        let last = PARTS.in_use() - 1;
        PARTS.get(last)[Counter::TmpTablesConverted as usize].fetch_sub(5, Ordering::Relaxed);
        assert_eq!(get(Counter::TmpTablesConverted), before);
    }

    #[test]
    fn a_sum_read_between_an_addition_and_its_subtraction_is_not_below_zero() {
        // As if a reader saw the subtraction (on one part) but not yet the addition. (A
        // counter no other unit test moves.)
        let c = Counter::RowsWritten as usize;
        let before = get(Counter::RowsWritten);
        PARTS.get(0)[c].fetch_sub(before + 7, Ordering::Relaxed);
        assert_eq!(get(Counter::RowsWritten), 0);
        PARTS.get(0)[c].fetch_add(before + 7, Ordering::Relaxed);
        assert_eq!(get(Counter::RowsWritten), before);
    }

    /// Per-thread parts of `c` (at `before`) add up, also those of threads that ended.
    fn thread_parts_add_up(c: Counter, before: u64) {
        thread_change(&[(c, 4)]);
        assert_eq!(get(c), before + 4);
        // Another thread counts, then ends: its counts stay, and its part leaves the list (no
        // other test counts per thread).
        let listed = threads().len();
        std::thread::spawn(move || thread_change(&[(c, 10)]))
            .join()
            .unwrap();
        assert_eq!(get(c), before + 14);
        assert_eq!(threads().len(), listed);
        std::thread::spawn(move || thread_change(&[(c, -14)]))
            .join()
            .unwrap();
        assert_eq!(get(c), before);
        // Per-CPU and per-thread parts of one counter add up.
        add(c, 2);
        thread_change(&[(c, -2)]);
        assert_eq!(get(c), before);
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
    fn counters_by_index_are_the_shims_order() {
        assert_eq!(Counter::from_index(0), Some(Counter::TmpTablesCreated));
        assert_eq!(Counter::from_index(9), Some(Counter::BlockCacheBytes));
        assert_eq!(Counter::from_index(COUNTERS), None);
    }
}
