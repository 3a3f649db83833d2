//! A table with a UNIQUE HASH key on `a` and a BTREE key on `b`, driven by writes, updates,
//! deletes, clears, renewals and allocation failures decoded from the input, against a model (a
//! BTreeMap from `a` to `b`). After every operation the table must hold exactly the model's
//! rows and pass its own consistency check (records, arena, every index).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rheap_core::alloc::system;
use rheap_core::error::Error;
use rheap_core::table::Table;
use std::collections::BTreeMap;

/// The engine tests' table: `[null bits][a: i32][b: u8]`.
#[allow(dead_code)]
#[path = "../../tests/common/mod.rs"]
mod common;

/// The table's rows, by a scan.
fn scan(t: &Table) -> BTreeMap<i32, u8> {
    let mut out = BTreeMap::new();
    let mut p = 0;
    while let Some(pos) = t.next(p) {
        let r = t.read(pos).unwrap();
        let a = i32::from_le_bytes([r[1], r[2], r[3], r[4]]);
        assert!(out.insert(a, r[5]).is_none(), "a unique key value twice");
        p = pos + 1;
    }
    out
}

/// Where the row with key `a` is, by a scan.
fn find(t: &Table, a: i32) -> Option<u64> {
    let mut p = 0;
    while let Some(pos) = t.next(p) {
        let r = t.read(pos).unwrap();
        if i32::from_le_bytes([r[1], r[2], r[3], r[4]]) == a {
            return Some(pos);
        }
        p = pos + 1;
    }
    None
}

fuzz_target!(|data: &[u8]| {
    let max_rows = u64::from(data.first().copied().unwrap_or(0) % 4) * 50;
    let mut t = common::table_with_max_rows(max_rows);
    let mut model: BTreeMap<i32, u8> = BTreeMap::new();
    // Small key space, so that duplicates, updates and deletes meet existing rows.
    for op in data.get(1..).unwrap_or(&[]).chunks(3) {
        let &[code, x, y] = op else { break };
        let a = i32::from(x % 64) - 8;
        let failing = code & 0x80 != 0;
        if failing {
            system::fail_after(Some(u64::from(y % 3)));
        }
        match code % 8 {
            0..=2 => match t.write(&common::row(a, y)) {
                Ok(_) => assert!(model.insert(a, y).is_none(), "duplicate written"),
                Err(Error::DuplicateKey(0)) => assert!(model.contains_key(&a)),
                Err(Error::OutOfMemory) => assert!(failing),
                Err(Error::TableFull) => assert!(max_rows > 0),
                Err(e) => panic!("write: {e}"),
            },
            3 | 4 => {
                // Update: row a gets key a2 and value y.
                let a2 = i32::from(y % 64) - 8;
                if let Some(pos) = find(&t, a) {
                    match t.update(pos, &common::row(a2, y)) {
                        Ok(()) => {
                            model.remove(&a);
                            assert!(model.insert(a2, y).is_none(), "duplicate by update");
                        }
                        Err(Error::DuplicateKey(0)) => assert!(a2 != a && model.contains_key(&a2)),
                        Err(Error::OutOfMemory) => assert!(failing),
                        Err(e) => panic!("update: {e}"),
                    }
                }
            }
            5 | 6 => {
                if let Some(pos) = find(&t, a) {
                    match t.delete(pos) {
                        Ok(()) => {
                            model.remove(&a);
                        }
                        Err(Error::OutOfMemory) => assert!(failing),
                        Err(e) => panic!("delete: {e}"),
                    }
                }
            }
            _ => {
                if x % 16 == 0 {
                    t.clear();
                    model.clear();
                } else if x % 16 == 1 || x % 16 == 2 {
                    // Emptied and made new, as a kept internal table is before it serves again
                    // (keeping its blocks, or giving them back).
                    t.renew(0, x % 16 == 2);
                    model.clear();
                }
            }
        }
        system::fail_after(None);
        assert_eq!(t.records(), model.len() as u64);
        assert_eq!(scan(&t), model);
        t.debug_check_consistency();
    }
});
