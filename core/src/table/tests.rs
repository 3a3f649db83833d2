use super::*;

fn def(max_rows: u64, max_table_size: u64) -> TableDef {
    TableDef {
        rec_len: 15,
        max_rows,
        min_rows: 0,
        max_table_size,
        limit_by: LimitBy::Heap,
        auto_increment: 0,
        keys: Vec::new(),
        auto_key: None,
        tmp_table: false,
        format: RowFormat::default(),
        heap_lengths: true,
    }
}

#[test]
fn max_records_counts_row_overhead_and_max_rows() {
    // 16 bytes a row (15 + delete marker), after the 1024-byte root node.
    assert_eq!(def(0, 1024 + 1600).max_records(), 100);
    assert_eq!(def(7, 1024 + 1600).max_records(), 7);
    assert_eq!(def(700, 1024 + 1600).max_records(), 100);
}

#[test]
fn full_only_when_a_new_block_is_needed_past_the_limit() {
    // MAX_ROWS=2, but HEAP's block holds (16384 - 1056) / 16 rows, and the limit is only
    // checked when a row needs a new block.
    let mut t = Table::new(def(2, 1 << 30), 0);
    let per_block = (16384 - 1056) / 16;
    let row = [0u8; 15];
    for _ in 0..per_block {
        t.write(&row).unwrap();
    }
    assert_eq!(t.write(&row), Err(Error::TableFull));
    t.delete(3).unwrap();
    assert_eq!(t.write(&row), Ok(3));
    t.debug_check_consistency();
    t.clear();
    assert_eq!(t.records(), 0);
    assert_eq!(t.stats().data_length, 0);
    t.write(&row).unwrap();
    assert_eq!(t.stats().data_length, 16384 - 32);
    t.debug_check_consistency();
}

#[test]
fn memory_limit_stops_at_a_block_boundary() {
    // HEAP compares the bytes held *before* taking a block, so under a 32 KiB limit it takes
    // a third 16 KiB block (32704 < 32768) and refuses the fourth.
    let mut t = Table::new(def(0, 2 * 16384), 0);
    let row = [0u8; 15];
    let per_block = (16384 - 1056) / 16;
    let mut n = 0;
    while t.write(&row).is_ok() {
        n += 1;
    }
    assert_eq!(n, 3 * per_block);
    t.debug_check_consistency();
}

#[test]
fn packed_rows_keep_keys_positions_and_the_limit() {
    use crate::key::{KeySeg, SegKind};
    use crate::rows::format::{VarField, VarKind};
    // [null byte][VARCHAR(20) with 1 length byte], a BTREE key on the VARCHAR.
    let seg = KeySeg {
        kind: SegKind::Binary,
        start: 1,
        length: 21,
        null: Some((0, 1)),
        reverse: false,
    };
    let def = TableDef {
        rec_len: 22,
        keys: vec![KeyDef::new(Algorithm::Btree, true, false, vec![seg], 22)],
        format: RowFormat::new(
            22,
            vec![VarField {
                offset: 1,
                kind: VarKind::Varchar {
                    len_bytes: 1,
                    max: 20,
                },
            }],
        )
        .unwrap(),
        ..def(0, 1 << 20)
    };
    let rec = |s: &[u8]| {
        let mut r = vec![0, s.len() as u8];
        r.extend_from_slice(s);
        r.resize(22, 0);
        r
    };
    let mut t = Table::new(def, 0);
    for w in [&b"pear"[..], b"apple", b"fig"] {
        t.write(&rec(w)).unwrap();
    }
    assert_eq!(t.write(&rec(b"fig")), Err(Error::DuplicateKey(0)));
    t.update(0, &rec(b"a much longer pear")).unwrap();
    t.delete(1).unwrap();
    assert_eq!(t.write(&rec(b"kiwi")).unwrap(), 1);
    t.debug_check_consistency();
    let mut out = vec![0u8; 22];
    let mut blobs = Vec::new();
    t.read_into(0, &mut out, &mut blobs).unwrap();
    assert_eq!(out, rec(b"a much longer pear"));
    assert_eq!(t.read(2).unwrap().len(), 1 + 1 + 3, "stored at its length");
    // Renewed keeping its blocks: the slots', the index's and the packed rows' stay, and
    // the next rows go into them.
    let held = t.memory_bytes();
    t.renew(0, true);
    assert_eq!(t.memory_bytes(), held);
    assert_eq!(t.records(), 0);
    assert_eq!(t.write(&rec(b"plum")).unwrap(), 0, "the first slot again");
    assert_eq!(t.memory_bytes(), held, "no block taken");
    t.debug_check_consistency();
    t.clear();
    t.debug_check_consistency();
    assert_eq!(t.memory_bytes(), 0);
}

/// Writes rows made by `row(i)` until the table is full; the rows written.
fn fill(t: &mut Table, row: impl Fn(u64) -> Vec<u8>) -> u64 {
    let mut n = 0;
    loop {
        match t.write(&row(n)) {
            Ok(_) => n += 1,
            Err(Error::TableFull) => return n,
            Err(e) => panic!("row {n}: {e:?}"),
        }
    }
}

#[test]
fn under_actual_a_table_never_holds_more_than_its_limit() {
    // Smaller under Miri, where each row written takes milliseconds.
    let limit = crate::testing::miri_or(1 << 20, 128 << 10) as u64;
    // Fixed rows with a BTREE, a unique HASH and a HASH key.
    let def3 = TableDef {
        max_table_size: limit,
        limit_by: LimitBy::Actual,
        ..crate::testing::def(false)
    };
    let mut t = Table::new(def3.clone(), 0);
    let n = fill(&mut t, |i| {
        crate::testing::rec(Some(i as i32), (i % 251) as u8, (i % 7) as u8)
    });
    assert!(t.memory_bytes() <= limit, "{} bytes", t.memory_bytes());
    // Full near the limit, not a growth step before it.
    assert!(
        t.memory_bytes() > limit * 3 / 4,
        "{} bytes",
        t.memory_bytes()
    );
    assert_eq!(t.records(), n);
    t.debug_check_consistency();
    // Under HEAP the same table fills at HEAP's row, whatever rheap holds.
    let mut h = Table::new(
        TableDef {
            limit_by: LimitBy::Heap,
            ..def3
        },
        0,
    );
    let heap_rows = fill(&mut h, |i| {
        crate::testing::rec(Some(i as i32), (i % 251) as u8, (i % 7) as u8)
    });
    assert_ne!(heap_rows, n);
    h.debug_check_consistency();
    // A refused block leaves nothing behind: the table takes rows again once some go.
    for pos in 0..100 {
        t.delete(pos).unwrap();
    }
    let again = fill(&mut t, |i| {
        crate::testing::rec(Some(-1 - i as i32), (i % 251) as u8, (i % 7) as u8)
    });
    assert!(again >= 50, "{again} rows again");
    assert!(t.memory_bytes() <= limit);
    t.debug_check_consistency();
}

#[test]
fn under_actual_packed_rows_and_updates_stop_at_the_limit() {
    use crate::rows::format::{VarField, VarKind};
    // Smaller under Miri, where each row written takes milliseconds.
    let limit = crate::testing::miri_or(256 << 10, 64 << 10) as u64;
    // [null byte][VARCHAR(200) with 1 length byte], no key: rows at their length.
    let def = TableDef {
        rec_len: 202,
        max_table_size: limit,
        limit_by: LimitBy::Actual,
        format: RowFormat::new(
            202,
            vec![VarField {
                offset: 1,
                kind: VarKind::Varchar {
                    len_bytes: 1,
                    max: 200,
                },
            }],
        )
        .unwrap(),
        ..def(0, 0)
    };
    let rec = |len: usize| {
        let mut r = vec![0, len as u8];
        r.resize(2 + len, b'x');
        r.resize(202, 0);
        r
    };
    let mut t = Table::new(def, 0);
    let n = crate::testing::miri_or(1500, 400) as u64;
    for i in 0..n {
        t.write(&rec(10 + (i % 20) as usize)).unwrap();
    }
    // Growing rows in place finds the table full, and keeps the row that did not fit.
    let mut grown = 0;
    let refused = loop {
        match t.update(grown, &rec(200)) {
            Ok(()) => grown += 1,
            Err(Error::TableFull) => break grown,
            Err(e) => panic!("{e:?}"),
        }
        assert!(grown < n, "never full");
    };
    assert!(t.memory_bytes() <= limit, "{} bytes", t.memory_bytes());
    assert!(grown > n / 3, "{grown} rows grown");
    let mut out = vec![0u8; 202];
    t.read_into(refused, &mut out, &mut Vec::new()).unwrap();
    assert_eq!(out, rec(10 + (refused % 20) as usize), "the old row stays");
    // Writes find it full as well.
    assert_eq!(fill(&mut t, |_| rec(200)), 0);
    assert_eq!(t.records(), n);
    t.debug_check_consistency();
}

mod model {
    //! The table with a unique HASH key, a BTREE key and a non-unique HASH key, driven by
    //! random operations and checked against std collections.
    use super::*;
    use crate::index::{Find, Index};
    use crate::key::{KeySeg, SegKind};
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    // Record: [null bits][a: i32][b: u8][v: VARCHAR(10)]. Key 0: UNIQUE HASH (a), a
    // nullable. Key 1: BTREE (b, a). Key 2: HASH (b). v's length follows a and b.
    fn a_seg() -> KeySeg {
        crate::key::tests::int_seg()
    }
    fn b_seg() -> KeySeg {
        KeySeg {
            kind: SegKind::Binary,
            start: 5,
            length: 1,
            null: None,
            reverse: false,
        }
    }
    fn key(algorithm: Algorithm, unique: bool, segs: Vec<KeySeg>) -> KeyDef {
        KeyDef::new(algorithm, unique, false, segs, 6)
    }
    fn table() -> Table {
        table_with_keys(3)
    }
    /// The first `n` of the keys (one: the usual temporary table's single unique key).
    fn table_with_keys(n: usize) -> Table {
        table_of(n, false)
    }
    /// The first `n` of the keys; `internal`: an internal temporary table's, which packs
    /// its rows back to back when its HASH keys are unique (`n` below 3).
    fn table_of(n: usize, internal: bool) -> Table {
        let mut keys = vec![
            key(Algorithm::Hash, true, vec![a_seg()]),
            key(Algorithm::Btree, false, vec![b_seg(), a_seg()]),
            key(Algorithm::Hash, false, vec![b_seg()]),
        ];
        keys.truncate(n);
        let format = match internal {
            false => RowFormat::default(),
            true => {
                let v = crate::rows::format::VarField {
                    offset: 6,
                    kind: crate::rows::format::VarKind::Varchar {
                        len_bytes: 1,
                        max: 10,
                    },
                };
                RowFormat::for_table(17, vec![v], crate::rows::format::Owner::Internal).unwrap()
            }
        };
        let def = TableDef {
            rec_len: 17,
            max_rows: 0,
            min_rows: 0,
            max_table_size: 1 << 30,
            limit_by: LimitBy::Actual,
            auto_increment: 0,
            keys,
            auto_key: None,
            tmp_table: internal,
            format,
            heap_lengths: true,
        };
        let t = Table::new(def, 0);
        assert_eq!(t.store.is_back_to_back(), internal && n < 3);
        t
    }
    fn rec(a: Option<i8>, b: u8) -> Vec<u8> {
        let mut r = vec![0u8; 17];
        match a {
            None => r[0] = 1,
            Some(a) => r[1..5].copy_from_slice(&i32::from(a).to_le_bytes()),
        }
        r[5] = b;
        let len = (usize::from(b) * 3 + a.map_or(0, |a| a.rem_euclid(5) as usize)) % 11;
        r[6] = len as u8;
        r[7..7 + len].fill(b'a' + b);
        r
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(Option<i8>, u8),
        Update(usize, Option<i8>, u8),
        Delete(usize),
        LookupA(i8),
        LookupB(u8),
        Range(u8, u8),
        Clear,
    }

    fn op() -> impl Strategy<Value = Op> {
        let a = prop_oneof![1 => Just(None), 6 => (-8i8..8).prop_map(Some)];
        prop_oneof![
            8 => (a.clone(), 0u8..6).prop_map(|(a, b)| Op::Insert(a, b)),
            3 => (any::<usize>(), a, 0u8..6).prop_map(|(i, a, b)| Op::Update(i, a, b)),
            3 => any::<usize>().prop_map(Op::Delete),
            2 => (-8i8..8).prop_map(Op::LookupA),
            2 => (0u8..6).prop_map(Op::LookupB),
            2 => (0u8..6, 0u8..6).prop_map(|(x, y)| Op::Range(x.min(y), x.max(y))),
            1 => Just(Op::Clear),
        ]
    }

    /// The model: rows by position, and per value of b the rows in the order they got it.
    #[derive(Default)]
    struct Model {
        rows: BTreeMap<Pos, (Option<i8>, u8)>,
        by_b: BTreeMap<u8, Vec<Pos>>,
    }

    impl Model {
        fn a_taken(&self, a: Option<i8>, except: Option<Pos>) -> bool {
            a.is_some()
                && self
                    .rows
                    .iter()
                    .any(|(&p, r)| r.0 == a && Some(p) != except)
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testing::cases(256)))]
        #[test]
        fn indexes_match_model(ops in proptest::collection::vec(op(), 0..200)) {
            run_model(table(), ops)?;
        }

        #[test]
        fn a_single_unique_hash_key_matches_model(
            ops in proptest::collection::vec(op(), 0..200)
        ) {
            run_model(table_with_keys(1), ops)?;
        }

        /// Rows back to back ([`crate::rows::log::RowLog`]), under a unique HASH key and a
        /// BTREE key, or the first alone.
        #[test]
        fn rows_back_to_back_match_model(
            ops in proptest::collection::vec(op(), 0..200),
            keys in 1usize..=2,
        ) {
            run_model(table_of(keys, true), ops)?;
        }
    }

    /// Runs `ops` on `t` and the model; keys `t` lacks are not looked at.
    fn run_model(mut t: Table, ops: Vec<Op>) -> std::result::Result<(), TestCaseError> {
        let keys = t.def().keys.len();
        let mut m = Model::default();
        for op in ops {
            match op {
                Op::Insert(a, b) => {
                    let r = t.write(&rec(a, b));
                    if m.a_taken(a, None) {
                        prop_assert_eq!(r, Err(Error::DuplicateKey(0)));
                    } else {
                        let p = r.unwrap();
                        m.rows.insert(p, (a, b));
                        m.by_b.entry(b).or_default().push(p);
                    }
                }
                Op::Update(i, a, b) if !m.rows.is_empty() => {
                    let (&p, &(oa, ob)) = m.rows.iter().nth(i % m.rows.len()).unwrap();
                    let r = t.update(p, &rec(a, b));
                    if m.a_taken(a, Some(p)) && a != oa {
                        prop_assert_eq!(r, Err(Error::DuplicateKey(0)));
                    } else {
                        r.unwrap();
                        m.rows.insert(p, (a, b));
                        if b != ob {
                            m.by_b.get_mut(&ob).unwrap().retain(|&q| q != p);
                            m.by_b.entry(b).or_default().push(p);
                        }
                    }
                }
                Op::Delete(i) if !m.rows.is_empty() => {
                    let (&p, &(_, b)) = m.rows.iter().nth(i % m.rows.len()).unwrap();
                    t.delete(p).unwrap();
                    m.rows.remove(&p);
                    m.by_b.get_mut(&b).unwrap().retain(|&q| q != p);
                }
                Op::LookupA(a) => {
                    let (def, Index::Hash(h)) = t.index(0).unwrap() else {
                        unreachable!()
                    };
                    let img = def.image_of_record(&rec(Some(a), 0)).unwrap();
                    let got: Vec<Pos> = h.lookup(&img.bytes, &t.row_keys(0)).unwrap().collect();
                    let want: Vec<Pos> = m
                        .rows
                        .iter()
                        .filter(|r| r.1 .0 == Some(a))
                        .map(|r| *r.0)
                        .collect();
                    prop_assert_eq!(got, want);
                }
                Op::LookupB(_) | Op::Range(..) if keys < 3 => {}
                Op::LookupB(b) => {
                    let (def, Index::Hash(h)) = t.index(2).unwrap() else {
                        unreachable!()
                    };
                    let img = def.image_of_record(&rec(None, b)).unwrap();
                    let got: Vec<Pos> = h.lookup(&img.bytes, &t.row_keys(2)).unwrap().collect();
                    let want: Vec<Pos> = m
                        .by_b
                        .get(&b)
                        .map(|v| v.iter().rev().copied().collect())
                        .unwrap_or_default();
                    prop_assert_eq!(got, want);
                }
                Op::Range(lo, hi) => {
                    let (_, Index::Btree(bt)) = t.index(1).unwrap() else {
                        unreachable!()
                    };
                    // Walk from the first row with b >= lo while b <= hi.
                    let rows = t.row_keys(1);
                    let mut got = Vec::new();
                    let mut e = bt.find(&[lo], Find::KeyOrNext, &rows).unwrap();
                    while let Some(p) = e {
                        let cur = crate::index::Entry::of_row(p, &rows).unwrap();
                        if cur.image[0] > hi {
                            break;
                        }
                        got.push(p);
                        e = bt.next(cur.as_ref(), &rows).unwrap();
                    }
                    let mut want: Vec<(u8, Option<i8>, Pos)> = m
                        .rows
                        .iter()
                        .filter(|r| (lo..=hi).contains(&r.1 .1))
                        .map(|(&p, &(a, b))| (b, a, p))
                        .collect();
                    want.sort();
                    prop_assert_eq!(got, want.iter().map(|w| w.2).collect::<Vec<_>>());
                    let all = bt.records_in_range(None, None, &rows).unwrap();
                    // HEAP's estimate for an open range is one more than the rows.
                    prop_assert_eq!(all, m.rows.len() as u64 + 1);
                }
                Op::Clear => {
                    t.clear();
                    m = Model::default();
                }
                _ => {}
            }
            t.debug_check_consistency();
            prop_assert_eq!(t.records(), m.rows.len() as u64);
        }
        Ok(())
    }

    /// `op` on `t`, positions taken as the `i`-th row in scan order; what it returned.
    fn apply(t: &mut Table, op: &Op) -> String {
        let nth = |t: &Table, i: usize| {
            let rows: Vec<Pos> =
                std::iter::successors(t.next(0), |&p| t.next(t.after(p))).collect();
            (!rows.is_empty()).then(|| rows[i % rows.len()])
        };
        match *op {
            Op::Insert(a, b) => format!("{:?}", t.write(&rec(a, b))),
            Op::Update(i, a, b) => match nth(t, i) {
                Some(p) => format!("{:?}", t.update(p, &rec(a, b))),
                None => String::new(),
            },
            Op::Delete(i) => match nth(t, i) {
                Some(p) => format!("{:?}", t.delete(p)),
                None => String::new(),
            },
            Op::LookupA(a) => match t.index(0) {
                Ok((def, Index::Hash(h))) => {
                    let img = def.image_of_record(&rec(Some(a), 0)).unwrap();
                    let rows = t.row_keys(0);
                    format!("{:?}", h.lookup(&img.bytes, &rows).map(Vec::from_iter))
                }
                other => format!("{:?}", other.err()),
            },
            Op::LookupB(b) => match t.index(2) {
                Ok((def, Index::Hash(h))) => {
                    let img = def.image_of_record(&rec(None, b)).unwrap();
                    let rows = t.row_keys(2);
                    format!("{:?}", h.lookup(&img.bytes, &rows).map(Vec::from_iter))
                }
                other => format!("{:?}", other.err()),
            },
            Op::Range(lo, _) => match t.index(1) {
                Ok((_, Index::Btree(bt))) => {
                    let rows = t.row_keys(1);
                    format!("{:?}", bt.find(&[lo], Find::KeyOrNext, &rows))
                }
                other => format!("{:?}", other.err()),
            },
            Op::Clear => {
                t.clear();
                String::new()
            }
        }
    }

    /// What a table shows besides its rows (and its memory).
    fn state(t: &Table) -> String {
        format!(
            "{:?} versions {} {} {} next auto {} keys off {}",
            t.stats(),
            t.key_version(),
            t.file_version(),
            t.key_stat_version(),
            t.next_auto_increment(),
            t.indexes_disabled(),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testing::cases(128)))]
        /// A table used, its settings changed, then renewed, answers every operation as a
        /// new table of the same definition does.
        #[test]
        fn a_renewed_table_behaves_as_a_new_one(
            before in proptest::collection::vec(op(), 0..100),
            after in proptest::collection::vec(op(), 0..100),
            disable in any::<bool>(),
            unique in any::<Option<bool>>(),
            auto in 0u64..5,
            keep_blocks in any::<bool>(),
            internal in any::<bool>(),
        ) {
            // An internal table's rows go back to back (its HASH key unique).
            let make = || match internal {
                true => table_of(2, true),
                false => table(),
            };
            let mut used = make();
            for op in &before {
                apply(&mut used, op);
            }
            if disable {
                used.disable_indexes();
            }
            if let Some(u) = unique {
                used.set_all_keys_unique(u);
            }
            used.reset_auto_increment(auto);
            used.bump_key_stat_version();
            let held = used.memory_bytes();
            used.renew(0, keep_blocks);
            if keep_blocks {
                prop_assert_eq!(used.memory_bytes(), held);
            }
            let mut new = make();
            // Kept blocks are the one difference a renewed table may show.
            let state = |t: &Table| (state(t), (!keep_blocks).then(|| t.memory_bytes()));
            prop_assert_eq!(state(&used), state(&new));
            for op in &after {
                prop_assert_eq!(apply(&mut used, op), apply(&mut new, op), "{:?}", op);
                prop_assert_eq!(state(&used), state(&new));
                used.debug_check_consistency();
            }
        }
    }

    #[test]
    fn a_refused_row_leaves_what_heap_leaves_with_one_key_or_more() {
        // HEAP takes a slot for a row, then frees it when a key refuses the row: the
        // single-key path (one probe) must leave the same counts as the general one.
        for keys in [1, 3] {
            let mut t = table_with_keys(keys);
            t.write(&rec(Some(1), 0)).unwrap();
            let before = t.stats();
            assert_eq!(t.write(&rec(Some(1), 1)), Err(Error::DuplicateKey(0)));
            let after = t.stats();
            assert_eq!((after.records, after.deleted), (1, 1), "{keys} keys");
            assert_eq!(after.data_length, before.data_length, "{keys} keys");
            // The freed slot is taken first.
            assert_eq!(t.write(&rec(Some(2), 0)), Ok(1), "{keys} keys");
            t.debug_check_consistency();
        }
    }
}
