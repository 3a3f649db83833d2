//! The engine's counters, shown by the server as `SHOW GLOBAL STATUS LIKE 'Rheap%'`.
//!
//! The shim points each status variable at one slot of [`rheap_status`] (the server reads an
//! 8-byte integer there); the engine only adds to them atomically.

use std::sync::atomic::{AtomicU64, Ordering};

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
}

/// How many counters there are.
pub const COUNTERS: usize = 10;

/// The counters, in [`Counter`] order. Exported under this name for the shim.
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static rheap_status: [AtomicU64; COUNTERS] = [const { AtomicU64::new(0) }; COUNTERS];

pub fn add(c: Counter, n: u64) {
    rheap_status[c as usize].fetch_add(n, Ordering::Relaxed);
}

pub fn sub(c: Counter, n: u64) {
    rheap_status[c as usize].fetch_sub(n, Ordering::Relaxed);
}

/// Raises `c` to `n` if it is lower (a peak).
pub fn max(c: Counter, n: u64) {
    rheap_status[c as usize].fetch_max(n, Ordering::Relaxed);
}

pub fn get(c: Counter) -> u64 {
    rheap_status[c as usize].load(Ordering::Relaxed)
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
    }
}
