//! A table with a unique key over a BLOB, as the server's internal tables with a unique
//! constraint have one (GROUP BY or DISTINCT over TEXT): driven by random writes, updates and
//! deletes and checked against a model, where a value is its ASCII letters without case and
//! without the spaces it ends in, and NULLs are equal.

use super::*;
use crate::key::collation::testing::AsciiCi;
use crate::key::{Row, SegKind};
use crate::rows::format::{Owner, VarField, VarKind};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Record: `[null bits][t: TEXT, 2-byte length + pointer][n: INT]`, `t` nullable (0x01).
const REC_LEN: usize = 1 + 10 + 4;
const T: usize = 1;
const N: usize = 11;

fn table(limit: u64) -> Table {
    let vars = vec![VarField {
        offset: T,
        kind: VarKind::Blob { len_bytes: 2 },
    }];
    let seg = KeySeg {
        kind: SegKind::Blob {
            collation: Arc::new(AsciiCi),
            len_bytes: 2,
        },
        start: T,
        length: 10,
        null: Some((0, 1)),
        reverse: false,
    };
    Table::new(
        TableDef {
            rec_len: REC_LEN,
            max_rows: 0,
            min_rows: 0,
            max_table_size: limit,
            limit_by: LimitBy::Actual,
            auto_increment: 0,
            keys: vec![KeyDef::new(Algorithm::Hash, true, true, vec![seg], 0)],
            auto_key: None,
            tmp_table: true,
            format: RowFormat::for_table(REC_LEN, vars, Owner::Internal).unwrap(),
            heap_lengths: false,
        },
        0,
    )
}

/// The record of `(t, n)`, its TEXT pointing into `t`.
fn record(t: Option<&[u8]>, n: i32) -> Vec<u8> {
    let mut rec = vec![0u8; REC_LEN];
    match t {
        None => rec[0] = 1,
        Some(t) => {
            rec[T..T + 2].copy_from_slice(&(t.len() as u16).to_le_bytes());
            rec[T + 2..T + 10].copy_from_slice(&(t.as_ptr() as usize).to_ne_bytes());
        }
    }
    rec[N..].copy_from_slice(&n.to_le_bytes());
    rec
}

/// `(t, n)` packed, as the handler packs a record before it writes it.
fn pack(t: &Table, rec: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    // SAFETY: `record` points the TEXT at its value, which the caller keeps alive.
    unsafe { t.def().format.pack(rec, &mut out) }.unwrap();
    out
}

fn write(t: &mut Table, v: Option<&[u8]>, n: i32) -> Result<Pos> {
    let rec = record(v, n);
    let p = pack(t, &rec);
    t.write_packed(&rec, &p)
}

fn update(t: &mut Table, pos: Pos, v: Option<&[u8]>, n: i32) -> Result<()> {
    let rec = record(v, n);
    let p = pack(t, &rec);
    t.update_packed(pos, &rec, &p)
}

/// The row with the key of `v`, as the handler finds a refused row's duplicate.
fn with_key(t: &Table, v: Option<&[u8]>) -> Option<Pos> {
    let rec = record(v, 0);
    let p = pack(t, &rec);
    t.row_with_key(0, Row::packed(&rec, &t.def().format, &p))
        .unwrap()
}

/// The stored `(t, n)` of row `pos`.
fn stored(t: &Table, pos: Pos) -> (Option<Vec<u8>>, i32) {
    let packed = t.read(pos).unwrap();
    let mut rec = vec![0u8; REC_LEN];
    let mut blobs = Vec::new();
    t.read_into(pos, &mut rec, &mut blobs).unwrap();
    let n = i32::from_le_bytes(rec[N..].try_into().unwrap());
    if rec[0] & 1 != 0 {
        return (None, n);
    }
    let v = t.def().format.blob_value(packed, T).unwrap().to_vec();
    (Some(v), n)
}

fn folded(v: Option<&[u8]>) -> Option<Vec<u8>> {
    v.map(|v| {
        let end = v.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
        v[..end].to_ascii_uppercase()
    })
}

#[test]
fn group_by_text_finds_each_group_by_its_value() {
    // GROUP BY t with COUNT(*), as end_unique_update runs it: write; on a duplicate find the
    // group's row and update its counter.
    let mut t = table(1 << 30);
    let long = [b"x".repeat(3000), b"y".to_vec()].concat();
    let values: [Option<&[u8]>; 9] = [
        Some(b"abc"),
        Some(b"ABC "),
        None,
        Some(b""),
        None,
        Some(b"   "),
        Some(&long),
        Some(b"abc\0"),
        Some(&long[..3000]),
    ];
    for v in values {
        match write(&mut t, v, 1) {
            Ok(_) => {}
            Err(Error::DuplicateKey(0)) => {
                let pos = with_key(&t, v).expect("the duplicate's row");
                let (old, n) = stored(&t, pos);
                assert_eq!(folded(old.as_deref()), folded(v));
                update(&mut t, pos, old.as_deref(), n + 1).unwrap();
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    t.debug_check_consistency();
    let mut groups = Vec::new();
    let mut pos = 0;
    while let Some(p) = t.next(pos) {
        groups.push(stored(&t, p));
        pos = t.after(p);
    }
    let counts: Vec<(Option<Vec<u8>>, i32)> = groups
        .into_iter()
        .map(|(v, n)| (folded(v.as_deref()), n))
        .collect();
    assert_eq!(
        counts,
        [
            (Some(b"ABC".to_vec()), 2),
            (None, 2),
            (Some(vec![]), 2),
            (Some(long.to_ascii_uppercase()), 1),
            (Some(b"ABC\0".to_vec()), 1),
            (Some(long[..3000].to_ascii_uppercase()), 1),
        ]
    );
}

#[test]
fn a_full_tables_rows_still_take_their_updates() {
    // A window function's table: filled to its limit, then read by position and each row
    // updated with its values. The server does not move a table to disk for an update, and
    // ignores the update's error there: every update must find its room.
    let limit = 64 << 10;
    let mut t = table(limit);
    let value = |i: usize| format!("{i:05}").repeat(20).into_bytes();
    let mut rows = Vec::new();
    loop {
        let v = value(rows.len());
        match write(&mut t, Some(&v), 0) {
            Ok(pos) => rows.push(pos),
            Err(Error::TableFull) => break,
            Err(e) => panic!("{e:?}"),
        }
    }
    assert!(rows.len() > 100, "{} rows", rows.len());
    let full = t.memory_bytes();
    // Values of the same size are rewritten where they are.
    for (i, &pos) in rows.iter().enumerate() {
        update(&mut t, pos, Some(&value(i)), i as i32 + 1).unwrap();
    }
    assert_eq!(t.memory_bytes(), full);
    // Larger values get their room past the limit.
    for (i, &pos) in rows.iter().enumerate().take(50) {
        let v = [value(i), b"z".repeat(300)].concat();
        update(&mut t, pos, Some(&v), -1).unwrap();
    }
    assert!(t.memory_bytes() > limit);
    t.debug_check_consistency();
    for (i, &pos) in rows.iter().enumerate() {
        let (v, n) = stored(&t, pos);
        match i < 50 {
            true => assert_eq!((v.unwrap().len(), n), (400, -1)),
            false => assert_eq!((v, n), (Some(value(i)), i as i32 + 1)),
        }
    }
    // A write that needs a new block finds the table full (and the server moves it to
    // Aria); the room the updates freed or left in their blocks takes rows of its size.
    let big = b"n".repeat(5000);
    assert!(matches!(
        write(&mut t, Some(&big), 0),
        Err(Error::TableFull)
    ));
    write(&mut t, Some(&value(rows.len())), 0).unwrap();
    t.debug_check_consistency();
}

#[derive(Debug, Clone)]
enum Op {
    Write(Option<Vec<u8>>),
    Update(usize, Option<Vec<u8>>),
    Delete(usize),
}

fn value() -> impl Strategy<Value = Option<Vec<u8>>> {
    let short = prop::collection::vec(prop::sample::select(vec![b'a', b'B', b'b', b' ']), 0..5);
    // Now and then a long value, equal to others in its first kilobytes.
    let long = (prop::sample::select(vec![b'a', b'b']), 0..3usize)
        .prop_map(|(last, spaces)| [b"q".repeat(2000), vec![last], vec![b' '; spaces]].concat());
    prop::option::weighted(0.9, prop_oneof![8 => short, 1 => long])
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => value().prop_map(Op::Write),
        2 => (any::<usize>(), value()).prop_map(|(i, v)| Op::Update(i, v)),
        2 => any::<usize>().prop_map(Op::Delete),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::testing::cases(64)))]

    /// Each write and update is refused exactly when another row has an equal value (NULLs
    /// equal), the refused row's duplicate is found by its key, and the table holds the
    /// model's rows.
    #[test]
    fn a_unique_text_key_refuses_exactly_the_equal_values(
        ops in prop::collection::vec(op(), 1..crate::testing::miri_or(60, 12)),
    ) {
        let mut t = table(1 << 30);
        let mut model: BTreeMap<Pos, Option<Vec<u8>>> = BTreeMap::new();
        let holder = |m: &BTreeMap<Pos, Option<Vec<u8>>>, v: &Option<Vec<u8>>, except: Option<Pos>| {
            m.iter()
                .find(|(p, w)| Some(**p) != except && folded(w.as_deref()) == folded(v.as_deref()))
                .map(|(p, _)| *p)
        };
        for (i, op) in ops.into_iter().enumerate() {
            match op {
                Op::Write(v) => {
                    let dup = holder(&model, &v, None);
                    match write(&mut t, v.as_deref(), i as i32) {
                        Ok(pos) => {
                            prop_assert!(dup.is_none(), "{v:?} written beside row {dup:?}");
                            model.insert(pos, v);
                        }
                        Err(Error::DuplicateKey(0)) => {
                            prop_assert!(dup.is_some(), "{v:?} refused with no equal row");
                            prop_assert_eq!(with_key(&t, v.as_deref()), dup);
                        }
                        Err(e) => prop_assert!(false, "{e:?}"),
                    }
                }
                Op::Update(at, v) => {
                    let Some(&pos) = model.keys().nth(at % model.len().max(1)) else { continue };
                    let dup = holder(&model, &v, Some(pos));
                    match update(&mut t, pos, v.as_deref(), i as i32) {
                        Ok(()) => {
                            prop_assert!(dup.is_none(), "{v:?} updated beside row {dup:?}");
                            model.insert(pos, v);
                        }
                        Err(Error::DuplicateKey(0)) => prop_assert!(dup.is_some()),
                        Err(e) => prop_assert!(false, "{e:?}"),
                    }
                }
                Op::Delete(at) => {
                    let Some(&pos) = model.keys().nth(at % model.len().max(1)) else { continue };
                    t.delete(pos).unwrap();
                    model.remove(&pos);
                }
            }
        }
        t.debug_check_consistency();
        prop_assert_eq!(t.records(), model.len() as u64);
        for (&pos, v) in &model {
            prop_assert_eq!(&stored(&t, pos).0, v);
            prop_assert_eq!(with_key(&t, v.as_deref()), Some(pos));
        }
    }
}
