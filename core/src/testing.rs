//! Helpers shared by the unit tests: a small table with one key of each kind a handler
//! treats differently, its records and key images, and the lock that serialises the tests
//! that move (or read) the process-wide counters and the pool of kept tables.

use crate::key::{Algorithm, KeyDef, KeySeg, SegKind};
use crate::recycle::shape::Shape;
use crate::table::{Table, TableDef};
use std::sync::{Mutex, MutexGuard};

/// Bytes of a record: `[null bits][a: i32][b: u8][c: u8]`, `a` nullable (bit 0x01).
pub const REC_LEN: usize = 7;
/// Key 0: BTREE, not unique, on `(b, c)` (key format and image: the two bytes).
pub const BTREE: usize = 0;
/// Key 1: UNIQUE HASH on `a` (key format: null byte, then `a` little-endian).
pub const UNIQUE_HASH: usize = 1;
/// Key 2: HASH, not unique, on `(b, c)`.
pub const HASH: usize = 2;

fn a_seg() -> KeySeg {
    crate::key::tests::int_seg()
}

fn byte_seg(start: usize) -> KeySeg {
    KeySeg {
        kind: SegKind::Binary,
        start,
        length: 1,
        null: None,
        reverse: false,
    }
}

/// The table's definition (`tmp_table` as the server's flag).
pub fn def(tmp_table: bool) -> TableDef {
    TableDef {
        rec_len: REC_LEN,
        max_rows: 0,
        min_rows: 0,
        max_table_size: 1 << 30,
        limit_by: crate::limits::LimitBy::Heap,
        auto_increment: 0,
        keys: vec![
            KeyDef::new(
                Algorithm::Btree,
                false,
                false,
                vec![byte_seg(5), byte_seg(6)],
                2,
            ),
            KeyDef::new(Algorithm::Hash, true, false, vec![a_seg()], 5),
            KeyDef::new(
                Algorithm::Hash,
                false,
                false,
                vec![byte_seg(5), byte_seg(6)],
                2,
            ),
        ],
        auto_key: None,
        tmp_table,
        format: Default::default(),
        heap_lengths: true,
    }
}

pub fn table(tmp_table: bool) -> Table {
    Table::new(def(tmp_table), 0)
}

/// A record of the table.
pub fn rec(a: Option<i32>, b: u8, c: u8) -> Vec<u8> {
    let mut r = vec![0u8; REC_LEN];
    match a {
        None => r[0] = 1,
        Some(a) => r[1..5].copy_from_slice(&a.to_le_bytes()),
    }
    r[5] = b;
    r[6] = c;
    r
}

/// Key `a` of [`UNIQUE_HASH`] in the server's key format.
pub fn a_key(a: i32) -> Vec<u8> {
    let mut k = vec![0u8];
    k.extend_from_slice(&a.to_le_bytes());
    k
}

/// A definition key no other test uses: `test` names the test.
pub fn shape_of(test: &str, variant: u64) -> Shape {
    let mut k = Shape::new();
    let words: Vec<u64> = test.bytes().map(u64::from).collect();
    k.push(&words).expect("a short name");
    k.push(&[variant]).expect("room");
    k.seal()
}

static COUNTERS: Mutex<()> = Mutex::new(());

/// Held by every test that opens a handler (tables move `Rheap_tables_live`,
/// `Rheap_rows_written`, the internal table counters and the pool of kept tables, all
/// process-wide) or reads those counters, so that one test's deltas are its own.
pub fn counters_lock() -> MutexGuard<'static, ()> {
    COUNTERS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Cases a property test runs: `n`, or under Miri, which interprets every step and checks
/// every access, a few (`MIRI_CASES`) that still walk the code each case reaches.
pub const fn cases(n: u32) -> u32 {
    if cfg!(miri) {
        MIRI_CASES
    } else {
        n
    }
}

/// `normal`, or under Miri `under_miri`: the size of a test's work (a property test's steps),
/// kept small where Miri checks every access.
pub const fn miri_or(normal: usize, under_miri: usize) -> usize {
    if cfg!(miri) {
        under_miri
    } else {
        normal
    }
}

/// Cases of a property test under Miri.
const MIRI_CASES: u32 = 3;
