//! When the allocator fails, the statement fails with "out of memory" and the table stays
//! consistent and usable.

mod common;

use rheap_core::alloc::system;
use rheap_core::error::Error;
use std::sync::Mutex;

/// The failpoint is global: the tests here take turns.
static FAILPOINT: Mutex<()> = Mutex::new(());

#[test]
fn a_failed_block_fails_the_write_and_leaves_the_table_whole() {
    let _turn = FAILPOINT.lock().unwrap_or_else(|e| e.into_inner());
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

#[test]
fn a_failed_update_leaves_every_key_as_it_was() {
    // Each step writes a row and then updates it so that both its keys (a UNIQUE HASH and a
    // BTREE) move and its VARCHAR grows: rows are stored at their length, so the update needs
    // a larger piece, and the block that cannot be had falls on a write or on an update. When
    // on an update, the row and all its keys stay as they were.
    let _turn = FAILPOINT.lock().unwrap_or_else(|e| e.into_inner());
    let mut update_failures = 0;
    for n in 0..24 {
        let mut t = common::packed_table();
        system::fail_after(Some(n));
        let mut failed = None;
        for a in 0..20_000 {
            let Ok(p) = t.write(&common::packed_row(a, 2)) else {
                break;
            };
            if let Err(e) = t.update(p, &common::packed_row(a + 100_000, 50)) {
                failed = Some((a, p, e));
                break;
            }
        }
        system::fail_after(None);
        let Some((a, p, e)) = failed else { continue };
        update_failures += 1;
        assert_eq!(e, Error::OutOfMemory, "after {n} blocks");
        t.debug_check_consistency();
        // The failed row is the old one, under its old keys; it can be changed and deleted.
        let mut out = vec![0u8; common::PACKED_REC];
        t.read_into(p, &mut out, &mut Vec::new()).unwrap();
        assert_eq!(out, common::packed_row(a, 2));
        t.update(p, &common::packed_row(a + 100_000, 3)).unwrap();
        t.debug_check_consistency();
        t.delete(p).unwrap();
        t.debug_check_consistency();
    }
    assert!(update_failures > 0, "some update met the failing block");
}
