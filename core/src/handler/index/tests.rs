use super::super::tests::{find_unique, internal, write};
use super::*;
use crate::handler::NO_ROW;
use crate::testing::{a_key, counters_lock, rec, BTREE, HASH, REC_LEN, UNIQUE_HASH};
use proptest::prelude::*;
use std::collections::BTreeSet;

const FINDS: [Find; 7] = [
    Find::Exact,
    Find::KeyOrNext,
    Find::KeyOrPrev,
    Find::AfterKey,
    Find::BeforeKey,
    Find::PrefixLast,
    Find::PrefixLastOrPrev,
];

/// The BTREE key as a model: its entries `([b, c], pos)` in key order.
type Model = BTreeSet<([u8; 2], Pos)>;

/// The entry a search lands on, by the meaning of each [`Find`] (prefix comparisons).
fn model_find(m: &Model, prefix: &[u8], how: Find) -> Option<([u8; 2], Pos)> {
    use std::cmp::Ordering::*;
    let cmp = |e: &&([u8; 2], Pos)| e.0[..prefix.len()].cmp(prefix);
    let first = |ok: &dyn Fn(std::cmp::Ordering) -> bool| m.iter().find(|e| ok(cmp(e)));
    let last = |ok: &dyn Fn(std::cmp::Ordering) -> bool| m.iter().rev().find(|e| ok(cmp(e)));
    match how {
        Find::Exact => first(&|o| o == Equal),
        Find::KeyOrNext => first(&|o| o != Less),
        Find::AfterKey => first(&|o| o == Greater),
        Find::KeyOrPrev => first(&|o| o == Equal).or_else(|| last(&|o| o == Less)),
        Find::BeforeKey => last(&|o| o == Less),
        Find::PrefixLast => last(&|o| o == Equal),
        Find::PrefixLastOrPrev => last(&|o| o != Greater),
    }
    .copied()
}

fn model_next(m: &Model, e: ([u8; 2], Pos), forward: bool) -> Option<([u8; 2], Pos)> {
    if forward {
        m.range((std::ops::Bound::Excluded(e), std::ops::Bound::Unbounded))
            .next()
            .copied()
    } else {
        m.range(..e).next_back().copied()
    }
}

/// Rows `(b, c)` at positions 0.. (a = the position), with equal and distinct keys.
const ROWS: [(u8, u8); 9] = [
    (3, 1),
    (1, 2),
    (3, 1),
    (5, 0),
    (1, 2),
    (3, 0),
    (1, 1),
    (3, 1),
    (6, 3),
];

fn filled() -> (Handler<()>, Model) {
    let mut h = internal(false);
    let mut m = Model::new();
    for (i, &(b, c)) in ROWS.iter().enumerate() {
        write(&mut h, &rec(Some(i as i32), b, c)).unwrap();
        m.insert(([b, c], i as Pos));
    }
    (h, m)
}

/// What the handler read: the row's position, checked against the row copied out.
fn got(h: &Handler<()>, r: Result<()>, out: &[u8]) -> Result<Pos> {
    r?;
    let p = h.position();
    let (b, c) = ROWS[p as usize];
    assert_eq!(out, &rec(Some(p as i32), b, c)[..], "the row at {p}");
    Ok(p)
}

fn want(e: Option<([u8; 2], Pos)>, none: Error) -> Result<Pos> {
    e.map(|e| e.1).ok_or(none)
}

fn read(h: &mut Handler<()>, key: [u8; 2], parts: usize, find: Option<Find>) -> Result<Pos> {
    let mut out = [0u8; REC_LEN];
    let map = (1u64 << parts) - 1;
    let r = h.index_read_map(&mut out, BTREE, map, find, |n| Ok(&key[..n]));
    got(h, r, &out)
}

fn step(h: &mut Handler<()>, forward: bool) -> Result<Pos> {
    let mut out = [0u8; REC_LEN];
    let r = h.index_step(&mut out, forward);
    got(h, r, &out)
}

fn edge(h: &mut Handler<()>, first: bool) -> Result<Pos> {
    let mut out = [0u8; REC_LEN];
    let r = h.index_edge(&mut out, BTREE, first);
    got(h, r, &out)
}

#[test]
fn every_btree_search_lands_where_the_model_says_and_steps_on_from_there() {
    let _g = counters_lock();
    let (mut h, m) = filled();
    for parts in [1, 2] {
        for b in 0..=7u8 {
            for c in 0..=(if parts == 2 { 4 } else { 0 }) {
                let key = [b, c];
                for find in FINDS.map(Some).into_iter().chain([None]) {
                    let what = format!("{key:?} {parts} parts {find:?}");
                    let hit = find.and_then(|f| model_find(&m, &key[..parts], f));
                    let r = read(&mut h, key, parts, find);
                    assert_eq!(r, want(hit, Error::KeyNotFound), "{what}");
                    match hit {
                        Some(e) => {
                            assert!(matches!(h.cursor, Cursor::Btree { .. }), "{what}");
                            for forward in [true, false] {
                                read(&mut h, key, parts, find).unwrap();
                                let next = model_next(&m, e, forward);
                                assert_eq!(
                                    step(&mut h, forward),
                                    want(next, Error::EndOfFile),
                                    "{what}, step {forward}"
                                );
                            }
                        }
                        None => {
                            assert_eq!(h.position(), NO_ROW, "{what}");
                            assert!(matches!(h.cursor, Cursor::BtreeMissed), "{what}");
                            // From a missed read: forwards the first row at or after
                            // the key, backwards the last before it.
                            let fwd = model_find(&m, &key[..parts], Find::KeyOrNext);
                            assert_eq!(
                                step(&mut h, true),
                                want(fwd, Error::EndOfFile),
                                "{what}, step forward"
                            );
                            assert_eq!(read(&mut h, key, parts, find), Err(Error::KeyNotFound));
                            let back = model_find(&m, &key[..parts], Find::BeforeKey);
                            assert_eq!(
                                step(&mut h, false),
                                want(back, Error::EndOfFile),
                                "{what}, step back"
                            );
                        }
                    }
                }
            }
        }
    }
    h.close();
}

#[test]
fn a_btree_scan_walks_every_row_both_ways_and_reenters_at_the_edges() {
    let _g = counters_lock();
    let (mut h, m) = filled();
    let order: Vec<Pos> = m.iter().map(|e| e.1).collect();
    let walk = |h: &mut Handler<()>, forward: bool| {
        let mut seen = Vec::new();
        while let Ok(p) = step(h, forward) {
            seen.push(p);
        }
        seen
    };
    let mut seen = vec![edge(&mut h, true).unwrap()];
    seen.extend(walk(&mut h, true));
    assert_eq!(seen, order);
    assert_eq!(
        step(&mut h, true),
        Err(Error::EndOfFile),
        "stays at the end"
    );
    assert_eq!(h.position(), NO_ROW);
    // Back from past the end: the last row, then the rest backwards.
    let mut back = walk(&mut h, false);
    back.reverse();
    assert_eq!(back, order);
    assert_eq!(step(&mut h, false), Err(Error::EndOfFile));
    assert_eq!(
        step(&mut h, true),
        Ok(order[0]),
        "forward from before the first"
    );
    assert_eq!(edge(&mut h, false), Ok(*order.last().unwrap()));
    assert_eq!(step(&mut h, true), Err(Error::EndOfFile));
    assert_eq!(step(&mut h, false), Ok(*order.last().unwrap()));
    h.close();
}

#[test]
fn deleting_the_current_row_keeps_the_scan_in_place() {
    let _g = counters_lock();
    let (mut h, mut m) = filled();
    let order: Vec<([u8; 2], Pos)> = m.iter().copied().collect();
    assert_eq!(edge(&mut h, true), Ok(order[0].1));
    assert_eq!(step(&mut h, true), Ok(order[1].1));
    assert_eq!(step(&mut h, true), Ok(order[2].1));
    h.delete_row().unwrap();
    m.remove(&order[2]);
    assert_eq!(
        step(&mut h, true),
        Ok(order[3].1),
        "the row after the deleted one"
    );
    assert_eq!(step(&mut h, false), Ok(order[1].1), "and back past it");
    h.delete_row().unwrap();
    m.remove(&order[1]);
    assert_eq!(step(&mut h, false), Ok(order[0].1));
    assert_eq!(step(&mut h, true), Ok(order[3].1));
    // Every row deleted in a forward scan, as DELETE with a range does.
    assert_eq!(edge(&mut h, true), Ok(order[0].1));
    let mut deleted = 0;
    loop {
        h.delete_row().unwrap();
        deleted += 1;
        if step(&mut h, true).is_err() {
            break;
        }
    }
    assert_eq!(deleted, m.len());
    assert_eq!(h.records(), Ok(0));
    assert_eq!(step(&mut h, false), Err(Error::EndOfFile), "nothing left");
    h.close();
}

#[test]
fn the_edges_of_an_empty_btree_key_are_its_ends() {
    let _g = counters_lock();
    let mut h = internal(false);
    let mut out = [0u8; REC_LEN];
    assert_eq!(h.index_edge(&mut out, HASH, true), Err(Error::WrongCommand));
    assert_eq!(h.index_edge(&mut out, 3, true), Err(Error::WrongIndex));
    assert_eq!(edge(&mut h, true), Err(Error::EndOfFile));
    assert!(matches!(h.cursor, Cursor::BtreeEdge { after: true }));
    assert_eq!(step(&mut h, true), Err(Error::EndOfFile));
    assert_eq!(step(&mut h, false), Err(Error::EndOfFile), "still empty");
    write(&mut h, &rec(Some(0), 3, 1)).unwrap();
    write(&mut h, &rec(Some(1), 1, 2)).unwrap();
    assert_eq!(step(&mut h, true), Err(Error::EndOfFile));
    assert_eq!(
        step(&mut h, false),
        Ok(0),
        "back from the end: the last row"
    );
    h.delete_all_rows().unwrap();
    assert_eq!(edge(&mut h, false), Err(Error::EndOfFile));
    assert!(matches!(h.cursor, Cursor::BtreeEdge { after: false }));
    write(&mut h, &rec(Some(0), 3, 1)).unwrap();
    write(&mut h, &rec(Some(1), 1, 2)).unwrap();
    assert_eq!(step(&mut h, false), Err(Error::EndOfFile));
    assert_eq!(h.position(), NO_ROW);
    // (ROWS[1] is (1, 2): the row at 1 is the first in key order.)
    assert_eq!(
        step(&mut h, true),
        Ok(1),
        "forward from the start: the first row"
    );
    h.close();
}

#[test]
fn a_hash_key_gives_equal_rows_newest_first() {
    let _g = counters_lock();
    let mut h = internal(false);
    let mut out = [0u8; REC_LEN];
    // Rows with (b, c) = (7, 7) at 0, 2, 3, 5; others between.
    for (i, bc) in [7, 1, 7, 7, 2, 7].into_iter().enumerate() {
        write(&mut h, &rec(Some(i as i32), bc, bc)).unwrap();
    }
    let mut read = |h: &mut Handler<()>, parts: u32, find: Option<Find>| {
        let key = [7u8, 7];
        h.index_read_map(&mut out, HASH, (1 << parts) - 1, find, |n| Ok(&key[..n]))
            .map(|()| h.position())
    };
    let chain = |h: &mut Handler<()>| {
        let mut out = [0u8; REC_LEN];
        let mut seen = Vec::new();
        while h.index_step(&mut out, true).is_ok() {
            assert_eq!(out[5..], [7, 7]);
            seen.push(h.position());
        }
        seen
    };
    assert_eq!(read(&mut h, 2, Some(Find::Exact)), Ok(5), "the newest");
    assert!(matches!(h.cursor, Cursor::Hash { pos: 5, at: 0 }));
    assert_eq!(chain(&mut h), [3, 2, 0]);
    assert_eq!(h.position(), NO_ROW);
    // Whatever the search, a HASH key looks the whole key up.
    for find in FINDS.map(Some).into_iter().chain([None]) {
        assert_eq!(read(&mut h, 2, find), Ok(5), "{find:?}");
    }
    let mut o = [0u8; REC_LEN];
    // Deleting the current row mid-chain: the chain goes on after it.
    read(&mut h, 2, Some(Find::Exact)).unwrap();
    h.index_step(&mut o, true).unwrap();
    assert_eq!(h.position(), 3);
    h.delete_row().unwrap();
    assert_eq!(chain(&mut h), [2, 0]);
    // Fewer parts than the key has: not found, and no row.
    assert_eq!(read(&mut h, 1, Some(Find::Exact)), Err(Error::KeyNotFound));
    assert!(matches!(h.cursor, Cursor::HashEdge { after: false }));
    assert_eq!(h.position(), NO_ROW);
    assert_eq!(h.index_step(&mut o, true), Err(Error::EndOfFile));
    // A key no row has.
    let key = [1u8, 2];
    assert_eq!(
        h.index_read_map(&mut o, HASH, 3, Some(Find::Exact), |n| Ok(&key[..n])),
        Err(Error::KeyNotFound)
    );
    assert!(matches!(h.cursor, Cursor::HashEdge { after: false }));
    // A unique HASH key by its key.
    let k = a_key(4);
    h.index_read_map(&mut o, UNIQUE_HASH, 1, None, |n| Ok(&k[..n]))
        .unwrap();
    assert_eq!((o.to_vec(), h.position()), (rec(Some(4), 2, 2), 4));
    assert_eq!(h.index_step(&mut o, true), Err(Error::EndOfFile));
    h.close();
}

/// HEAP's steps through a hash chain (`heap_rnext`, `heap_rprev`): on a row, to the
/// next or previous row with its key; past the end, PREV gives the oldest row; before the
/// start, and after a read that found nothing, NEXT searches the last key a read found
/// (`lastkey`, which a read that finds nothing leaves as it was) from its newest row.
#[test]
fn a_hash_key_steps_both_ways_and_back_from_either_end_as_heap() {
    let _g = counters_lock();
    let mut h = Handler::<()>::default();
    let table = crate::testing::table(false);
    h.open_shared(
        std::sync::Arc::new(crate::catalog::share::Share::new(table, (), false)),
        false,
    )
    .unwrap();
    let mut out = [0u8; REC_LEN];
    for (i, bc) in [7, 1, 7, 7, 2, 7].into_iter().enumerate() {
        write(&mut h, &rec(Some(i as i32), bc, bc)).unwrap();
    }
    let read = |h: &mut Handler<()>, key: [u8; 2]| {
        let mut o = [0u8; REC_LEN];
        h.index_read_map(&mut o, HASH, 3, Some(Find::Exact), |n| Ok(&key[..n]))
            .map(|()| h.position())
    };
    let mut step =
        |h: &mut Handler<()>, forward: bool| h.index_step(&mut out, forward).map(|()| h.position());
    let eof = Err(Error::EndOfFile);
    // A fresh handler's last key is zeros: before any read found a row, none has it.
    assert_eq!(read(&mut h, [9, 9]), Err(Error::KeyNotFound));
    assert_eq!(step(&mut h, true), eof);
    assert!(h.hash_last.is_empty());
    // The chain of (7, 7), newest first, both ways.
    assert_eq!(read(&mut h, [7, 7]), Ok(5));
    assert_eq!(h.hash_last, [7, 7]);
    assert_eq!(step(&mut h, false), eof, "nothing before the newest");
    assert!(matches!(h.cursor, Cursor::HashEdge { after: false }));
    assert_eq!(step(&mut h, false), eof, "and still nothing");
    assert_eq!(
        step(&mut h, true),
        Ok(5),
        "from before the start: the newest"
    );
    assert_eq!(step(&mut h, true), Ok(3));
    assert_eq!(step(&mut h, true), Ok(2));
    assert_eq!(step(&mut h, true), Ok(0));
    assert_eq!(step(&mut h, true), eof);
    assert_eq!(h.position(), NO_ROW);
    assert_eq!(step(&mut h, true), eof, "past the end it stays");
    assert_eq!(step(&mut h, false), Ok(0), "from past the end: the oldest");
    assert_eq!(step(&mut h, false), Ok(2));
    assert_eq!(step(&mut h, true), Ok(0));
    assert_eq!(step(&mut h, false), Ok(2));
    assert_eq!(step(&mut h, false), Ok(3));
    assert_eq!(step(&mut h, false), Ok(5));
    assert_eq!(step(&mut h, false), eof);
    // A read that finds nothing leaves the last key: NEXT finds (7, 7)'s newest again,
    // PREV nothing.
    assert_eq!(read(&mut h, [1, 2]), Err(Error::KeyNotFound));
    assert_eq!(h.hash_last, [7, 7]);
    assert_eq!(step(&mut h, false), eof);
    assert_eq!(step(&mut h, true), Ok(5));
    assert_eq!(read(&mut h, [1, 2]), Err(Error::KeyNotFound));
    assert_eq!(step(&mut h, true), Ok(5));
    assert_eq!(step(&mut h, true), Ok(3));
    // Another key found becomes the last key.
    assert_eq!(read(&mut h, [1, 1]), Ok(1));
    assert_eq!(step(&mut h, true), eof);
    assert_eq!(step(&mut h, false), Ok(1));
    assert_eq!(step(&mut h, false), eof);
    assert_eq!(read(&mut h, [1, 2]), Err(Error::KeyNotFound));
    assert_eq!(step(&mut h, true), Ok(1));
    // A unique key's read makes its key the last one when it has a nullable part (`a`
    // here), not otherwise (HEAP).
    let k = a_key(4);
    let mut o = [0u8; REC_LEN];
    h.index_read_map(&mut o, UNIQUE_HASH, 1, None, |n| Ok(&k[..n]))
        .unwrap();
    assert_eq!(h.hash_last, k);
    assert_eq!(step(&mut h, true), eof);
    let def = |unique, null| {
        let seg = crate::key::KeySeg {
            kind: crate::key::SegKind::Binary,
            start: 5,
            length: 1,
            null,
            reverse: false,
        };
        KeyDef::new(crate::key::Algorithm::Hash, unique, false, vec![seg], 1)
    };
    assert!(!def(true, None).hash_read_keeps_key());
    assert!(def(false, None).hash_read_keeps_key());
    assert!(def(true, Some((0, 1))).hash_read_keeps_key());
    // An internal table's handler keeps no last key (no HANDLER statement reaches it).
    let mut i = internal(false);
    write(&mut i, &rec(Some(0), 7, 7)).unwrap();
    assert_eq!(read(&mut i, [7, 7]), Ok(0));
    assert!(i.hash_last.is_empty());
    i.close();
    h.close();
}

#[test]
fn find_unique_row_reads_the_row_with_the_records_unique_key() {
    let _g = counters_lock();
    let mut h = internal(false);
    for i in 0..3 {
        write(&mut h, &rec(Some(i * 10), i as u8, 0)).unwrap();
    }
    let mut r = rec(Some(20), 99, 99);
    assert_eq!(find_unique(&mut h, &mut r, UNIQUE_HASH), Ok(true));
    assert_eq!(
        r,
        rec(Some(20), 2, 0),
        "the stored row, copied into the record"
    );
    assert_eq!(h.position(), 2);
    let mut missing = rec(Some(5), 0, 0);
    assert_eq!(find_unique(&mut h, &mut missing, UNIQUE_HASH), Ok(false));
    assert_eq!(missing, rec(Some(5), 0, 0), "left alone");
    assert_eq!(
        find_unique(&mut h, &mut missing, BTREE),
        Err(Error::WrongCommand)
    );
    // The row found is the current one.
    find_unique(&mut h, &mut r, UNIQUE_HASH).unwrap();
    h.delete_row().unwrap();
    assert_eq!(find_unique(&mut h, &mut r, UNIQUE_HASH), Ok(false));
    assert_eq!(h.records(), Ok(2));
    h.close();
}

/// `records_in_range` with bounds over `key` (its first `parts` parts).
fn range(
    h: &mut Handler<()>,
    index: usize,
    min: Option<(&[u8], u64, BoundFlag, u32)>,
    max: Option<(&[u8], u64, BoundFlag, u32)>,
) -> u64 {
    let fmin = |n: usize| -> Result<&[u8]> { Ok(&min.unwrap().0[..n]) };
    let fmax = |n: usize| -> Result<&[u8]> { Ok(&max.unwrap().0[..n]) };
    let bound = |b: Option<(&[u8], u64, BoundFlag, u32)>, f| {
        b.map(|(_, keypart_map, flag, length)| Bound {
            keypart_map,
            flag,
            length,
            key: f,
        })
    };
    h.records_in_range(index, bound(min, &fmin), bound(max, &fmax))
        .unwrap()
}

#[test]
fn records_in_range_of_a_btree_key_is_the_trees_estimate() {
    use BoundFlag::*;
    let _g = counters_lock();
    let (mut h, m) = filled();
    let n = m.len() as u64;
    assert_eq!(range(&mut h, BTREE, None, None), n + 1, "HEAP's open range");
    // The bounds map to the tree's ends: KEY_EXACT and AFTER_KEY include a minimum's key,
    // AFTER_KEY and BEFORE_KEY a maximum's.
    let tree = |h: &mut Handler<()>, min: Option<RangeEnd<'_>>, max: Option<RangeEnd<'_>>| {
        h.with_table(|t| match t.index(BTREE)?.1 {
            Index::Btree(b) => b.records_in_range(min, max, &t.row_keys(BTREE)),
            Index::Hash(_) => unreachable!(),
        })
        .unwrap()
    };
    for (lo, hi) in [(1u8, 3u8), (3, 3), (0, 7), (2, 4), (5, 6)] {
        let (l, u) = ([lo], [hi]);
        let b = (&l[..], 1, KeyExact, 1);
        let a = (&u[..], 1, AfterKey, 1);
        let got = range(&mut h, BTREE, Some(b), Some(a));
        assert_eq!(
            got,
            tree(
                &mut h,
                Some(RangeEnd::Including(&l)),
                Some(RangeEnd::Including(&u))
            ),
            "[{lo}, {hi}]"
        );
        let within = m.iter().filter(|e| (lo..=hi).contains(&e.0[0])).count() as u64;
        assert!(
            got >= within.min(1),
            "[{lo}, {hi}]: {got} for {within} rows"
        );
        let excl = range(
            &mut h,
            BTREE,
            Some((&l[..], 1, AfterKey, 1)),
            Some((&u[..], 1, BeforeKey, 1)),
        );
        assert_eq!(
            excl,
            tree(
                &mut h,
                Some(RangeEnd::Excluding(&l)),
                Some(RangeEnd::Excluding(&u))
            ),
            "({lo}, {hi})"
        );
    }
    // Ends that cross: nothing.
    let (l, u) = ([5u8], [1u8]);
    assert_eq!(
        range(
            &mut h,
            BTREE,
            Some((&l, 1, KeyExact, 1)),
            Some((&u, 1, AfterKey, 1))
        ),
        0
    );
    // Whole keys, and one open end.
    let k = [3u8, 1];
    let exact = range(
        &mut h,
        BTREE,
        Some((&k, 3, KeyExact, 2)),
        Some((&k, 3, AfterKey, 2)),
    );
    assert_eq!(
        exact,
        tree(
            &mut h,
            Some(RangeEnd::Including(&k)),
            Some(RangeEnd::Including(&k))
        )
    );
    assert!(exact >= 1);
    assert_eq!(
        range(&mut h, BTREE, Some((&k, 3, KeyExact, 2)), None),
        tree(&mut h, Some(RangeEnd::Including(&k)), None)
    );
    assert_eq!(
        range(&mut h, BTREE, None, Some((&k, 3, BeforeKey, 2))),
        tree(&mut h, None, Some(RangeEnd::Excluding(&k)))
    );
    // Flags that make no end: no estimate.
    for (min, max) in [
        (Some((&k[..], 3, BeforeKey, 2)), None),
        (Some((&k[..], 3, Other, 2)), None),
        (None, Some((&k[..], 3, KeyExact, 2))),
        (None, Some((&k[..], 3, Other, 2))),
    ] {
        assert_eq!(range(&mut h, BTREE, min, max), u64::MAX, "{min:?} {max:?}");
    }
    h.close();
}

#[test]
fn records_in_range_of_a_hash_key_answers_one_whole_key_from_the_last_info() {
    use BoundFlag::*;
    let _g = counters_lock();
    let mut h = internal(false);
    let k = [7u8, 7];
    let a = a_key(1);
    let exact = |h: &mut Handler<()>, index: usize, key: &[u8], len: u32| {
        let map = if index == HASH { 3 } else { 1 };
        range(
            h,
            index,
            Some((key, map, KeyExact, len)),
            Some((key, map, AfterKey, len)),
        )
    };
    // Before any info: the statistics say no rows.
    write(&mut h, &rec(Some(1), 7, 7)).unwrap();
    assert_eq!(exact(&mut h, HASH, &k, 2), 0);
    let mut rpk = [0u64; 3];
    h.info(&mut rpk).unwrap();
    assert_eq!(exact(&mut h, HASH, &k, 2), 1, "one row: one");
    for i in 2..40 {
        write(&mut h, &rec(Some(i), (i % 4) as u8, 7)).unwrap();
    }
    assert_eq!(exact(&mut h, HASH, &k, 2), 1, "until the next info");
    h.info(&mut rpk).unwrap();
    assert!(rpk[HASH] >= 2);
    assert_eq!(exact(&mut h, HASH, &k, 2), rpk[HASH], "its rows per key");
    assert_eq!(exact(&mut h, UNIQUE_HASH, &a, 5), 1, "a unique key: one");
    // Anything but one whole key: no estimate.
    assert_eq!(exact(&mut h, HASH, &k, 1), u64::MAX, "a prefix");
    assert_eq!(exact(&mut h, UNIQUE_HASH, &a, 4), u64::MAX);
    for (min, max) in [
        (Some((&k[..], 3, KeyExact, 2)), None),
        (None, Some((&k[..], 3, AfterKey, 2))),
        (None, None),
        (
            Some((&k[..], 3, AfterKey, 2)),
            Some((&k[..], 3, AfterKey, 2)),
        ),
        (
            Some((&k[..], 3, KeyExact, 2)),
            Some((&k[..], 3, KeyExact, 2)),
        ),
        (
            Some((&k[..], 3, KeyExact, 2)),
            Some((&k[..], 3, BeforeKey, 2)),
        ),
        (
            Some((&k[..], 3, KeyExact, 2)),
            Some((&k[..], 3, AfterKey, 1)),
        ),
    ] {
        assert_eq!(range(&mut h, HASH, min, max), u64::MAX, "{min:?} {max:?}");
    }
    h.close();
}

#[derive(Debug, Clone)]
enum Op {
    Write(u8, u8),
    Delete,
    Read(u8, u8, usize, Option<Find>),
    Step(bool),
    Edge(bool),
}

fn op() -> impl Strategy<Value = Op> {
    let find = prop_oneof![
        1 => Just(None),
        7 => proptest::sample::select(FINDS.to_vec()).prop_map(Some),
    ];
    prop_oneof![
        5 => (0u8..5, 0u8..3).prop_map(|(b, c)| Op::Write(b, c)),
        2 => Just(Op::Delete),
        3 => (0u8..6, 0u8..4, 1usize..=2, find).prop_map(|(b, c, p, f)| Op::Read(b, c, p, f)),
        6 => any::<bool>().prop_map(Op::Step),
        1 => any::<bool>().prop_map(Op::Edge),
    ]
}

/// Where the model's scan stands (as [`Cursor`], for a BTREE key).
#[derive(Debug, Clone, Copy)]
enum At {
    None,
    Entry([u8; 2], Pos),
    Missed([u8; 2], usize),
    Edge { after: bool },
}

fn run(ops: Vec<Op>) -> std::result::Result<(), TestCaseError> {
    let mut h = internal(false);
    let mut m = Model::new();
    let mut rows: std::collections::HashMap<Pos, [u8; 2]> = Default::default();
    let mut at = At::None;
    // The row last read, and whether the model still has it.
    let mut current: Option<Pos> = None;
    let mut next_a = 0;
    let mut out = [0u8; REC_LEN];
    for op in ops {
        // The model's answer: a row (then the model's scan moves to it) or an error.
        let (r, want) = match op {
            Op::Write(b, c) => {
                next_a += 1;
                let r = rec(Some(next_a), b, c);
                write(&mut h, &r).unwrap();
                // Its position, from the unique key.
                let pos = h
                    .with_table(|t| match t.index(UNIQUE_HASH)? {
                        (def, Index::Hash(hash)) => {
                            let rows = t.row_keys(UNIQUE_HASH);
                            Ok(hash
                                .newest(&def.image_of_record(&r)?.bytes, &rows)?
                                .unwrap())
                        }
                        _ => unreachable!(),
                    })
                    .unwrap();
                prop_assert!(m.insert(([b, c], pos)));
                rows.insert(pos, [b, c]);
                continue;
            }
            Op::Delete => match current {
                Some(p) => {
                    h.delete_row().unwrap();
                    prop_assert!(m.remove(&(rows.remove(&p).unwrap(), p)));
                    // (The handler still names the deleted row: deleting it again is
                    // not what this test is about.)
                    current = None;
                    continue;
                }
                None if h.position() == NO_ROW => {
                    prop_assert_eq!(h.delete_row(), Err(Error::WrongCommand));
                    continue;
                }
                None => continue,
            },
            Op::Read(b, c, parts, find) => {
                let key = [b, c];
                let map = (1u64 << parts) - 1;
                let r = h.index_read_map(&mut out, BTREE, map, find, |n| Ok(&key[..n]));
                let hit = find.and_then(|f| model_find(&m, &key[..parts], f));
                if hit.is_none() {
                    at = At::Missed(key, parts);
                }
                (r, hit.ok_or(Error::KeyNotFound))
            }
            Op::Step(forward) => {
                let r = h.index_step(&mut out, forward);
                let (e, edge) = match at {
                    At::None => (None, None),
                    At::Entry(k, p) => (model_next(&m, (k, p), forward), Some(forward)),
                    At::Missed(k, parts) => {
                        let how = if forward {
                            Find::KeyOrNext
                        } else {
                            Find::BeforeKey
                        };
                        (model_find(&m, &k[..parts], how), Some(forward))
                    }
                    At::Edge { after } if after != forward => {
                        let e = if forward { m.first() } else { m.last() };
                        (e.copied(), None)
                    }
                    At::Edge { .. } => (None, None),
                };
                if let (None, Some(after)) = (e, edge) {
                    at = At::Edge { after };
                }
                (r, e.ok_or(Error::EndOfFile))
            }
            Op::Edge(first) => {
                let r = h.index_edge(&mut out, BTREE, first);
                let e = if first { m.first() } else { m.last() };
                if e.is_none() {
                    at = At::Edge { after: first };
                }
                (r, e.copied().ok_or(Error::EndOfFile))
            }
        };
        match want {
            Ok((k, p)) => {
                prop_assert_eq!(r, Ok(()), "{:?} at {:?}", op, at);
                prop_assert_eq!(h.position(), p, "{:?} at {:?}", op, at);
                prop_assert_eq!(out[5..].to_vec(), k.to_vec());
                at = At::Entry(k, p);
                current = Some(p);
            }
            Err(e) => {
                prop_assert_eq!(r, Err(e), "{:?} at {:?}", op, at);
                prop_assert_eq!(h.position(), NO_ROW);
                current = None;
            }
        }
    }
    h.with_table(|t| {
        t.debug_check_consistency();
        Ok(())
    })
    .unwrap();
    h.close();
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::testing::cases(256)))]
    /// Random writes, deletes of the current row, reads, steps and edges on the BTREE key,
    /// against a sorted set of its entries and a model of the cursor.
    #[test]
    fn btree_reads_and_steps_match_a_model(ops in proptest::collection::vec(op(), 0..120)) {
        let _g = counters_lock();
        run(ops)?;
    }
}
