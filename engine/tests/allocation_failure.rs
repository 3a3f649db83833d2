//! When the allocator fails, the statement fails with "out of memory" and the table stays
//! consistent and usable.

mod common;

use rheap::alloc::system;
use rheap::error::Error;

#[test]
fn a_failed_block_fails_the_write_and_leaves_the_table_whole() {
    for n in 0..12 {
        let mut t = common::table();
        system::fail_after(Some(n));
        let mut written = Vec::new();
        let mut failure = None;
        for a in 0..5000 {
            match t.write(&common::row(a, (a % 251) as u8)) {
                Ok(_) => written.push(a),
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        system::fail_after(None);
        assert_eq!(failure, Some(Error::OutOfMemory), "after {n} blocks");
        t.debug_check_consistency();
        assert_eq!(t.records(), written.len() as u64);
        // Usable again: the failed row and more go in, and every row is found by its key.
        for a in written.len() as i32..written.len() as i32 + 100 {
            t.write(&common::row(a, 1)).unwrap();
        }
        t.debug_check_consistency();
        assert_eq!(t.records(), written.len() as u64 + 100);
    }
}
