//! A statement's temporary table, made and dropped again and again, takes its blocks from the
//! cache after the first time: no system allocation in steady state, and the memory counters
//! go back to where they were.

mod common;

use rheap_core::alloc::cache;

#[test]
fn tables_reuse_blocks_and_counters_return() {
    let start = cache::stats();
    let fill = |n: i32| {
        let mut t = common::table();
        for a in 0..n {
            t.write(&common::row(a, (a % 7) as u8)).unwrap();
        }
        t.debug_check_consistency();
        let bytes = t.memory_bytes();
        assert!(bytes > 0 && bytes == cache::stats().in_use - start.in_use);
        t.stats()
    };
    let first = fill(1000);
    let warm = cache::stats();
    assert!(warm.system_blocks > start.system_blocks);
    assert_eq!(warm.in_use, start.in_use, "every block went back");
    for _ in 0..50 {
        assert_eq!(fill(1000), first);
    }
    let end = cache::stats();
    assert_eq!(
        end.system_blocks, warm.system_blocks,
        "no block from the system"
    );
    assert!(end.hits >= warm.hits + 50);
    assert_eq!(end.in_use, start.in_use);
    assert!(end.peak >= first.data_length + first.index_length);
    assert!(end.cached <= cache::CACHE.limit());
    cache::CACHE.debug_check_consistency();
    // The data is the rows' own bytes in growing blocks: 1000 slots of 9 bytes (the row, at
    // least a free-list link, and a live marker) fit in 1 + 2 + 4 + 8 KiB, where HEAP's first
    // block for a 1 GiB limit would be 64 MiB.
    assert_eq!(first.data_length, 15 * 1024);
}
