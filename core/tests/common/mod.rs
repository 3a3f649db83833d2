//! A table for the engine's integration tests: `[null bits][a: i32][b: u8]`, a UNIQUE HASH key
//! on `a` and a BTREE key on `b`.

use rheap_core::key::{Algorithm, KeyDef, KeySeg, Number, SegKind};
use rheap_core::table::{Table, TableDef};

/// The key segment of `a`: a nullable INT at byte 1, its NULL bit in byte 0.
fn a() -> KeySeg {
    KeySeg {
        kind: SegKind::Number(Number::Int {
            bytes: 4,
            signed: true,
        }),
        start: 1,
        length: 4,
        null: Some((0, 1)),
        reverse: false,
    }
}

/// A key of `segs`, its server key length derived from them.
fn key(algorithm: Algorithm, unique: bool, segs: Vec<KeySeg>) -> KeyDef {
    let key_length = segs
        .iter()
        .map(|s| s.length + usize::from(s.null.is_some()))
        .sum();
    KeyDef::new(algorithm, unique, false, segs, key_length)
}

pub fn table() -> Table {
    table_with_max_rows(0)
}

/// The same table with MAX_ROWS (the fuzz target varies it: core/fuzz includes this file).
#[allow(dead_code)]
pub fn table_with_max_rows(max_rows: u64) -> Table {
    let b = KeySeg {
        kind: SegKind::Binary,
        start: 5,
        length: 1,
        null: None,
        reverse: false,
    };
    Table::new(
        TableDef {
            rec_len: 6,
            max_rows,
            min_rows: 0,
            max_table_size: 1 << 30,
            limit_by: rheap_core::limits::LimitBy::Heap,
            auto_increment: 0,
            keys: vec![
                key(Algorithm::Hash, true, vec![a()]),
                key(Algorithm::Btree, false, vec![b]),
            ],
            auto_key: None,
            tmp_table: true,
            format: Default::default(),
            heap_lengths: false,
        },
        0,
    )
}

/// `[null bits][a: i32][v: VARCHAR(60), one length byte]`, rows stored at their length, a
/// UNIQUE HASH key and a BTREE key on `a`: an update that lengthens `v` needs memory.
#[allow(dead_code)]
pub fn packed_table() -> Table {
    use rheap_core::rows::format::{RowFormat, VarField, VarKind};
    let varchar = VarField {
        offset: 5,
        kind: VarKind::Varchar {
            len_bytes: 1,
            max: 60,
        },
    };
    Table::new(
        TableDef {
            rec_len: PACKED_REC,
            max_rows: 0,
            min_rows: 0,
            max_table_size: 1 << 30,
            limit_by: rheap_core::limits::LimitBy::Heap,
            auto_increment: 0,
            keys: vec![
                key(Algorithm::Hash, true, vec![a()]),
                key(Algorithm::Btree, false, vec![a()]),
            ],
            auto_key: None,
            tmp_table: true,
            format: RowFormat::new(PACKED_REC, vec![varchar]).unwrap(),
            heap_lengths: false,
        },
        0,
    )
}

#[allow(dead_code)]
pub const PACKED_REC: usize = 1 + 4 + 1 + 60;

/// A row of [`packed_table`]: `v` is `len` bytes.
#[allow(dead_code)]
pub fn packed_row(a: i32, len: usize) -> Vec<u8> {
    let mut r = vec![0u8];
    r.extend_from_slice(&a.to_le_bytes());
    r.push(len as u8);
    r.resize(6 + len, b'v');
    r.resize(PACKED_REC, 0);
    r
}

pub fn row(a: i32, b: u8) -> Vec<u8> {
    let mut r = vec![0u8];
    r.extend_from_slice(&a.to_le_bytes());
    r.push(b);
    r
}
