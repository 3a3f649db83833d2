use super::*;
use crate::key::collation::testing::{AsciiCi, Binary};
use crate::key::collation::Collation;
use std::sync::Arc;

/// A nullable INT at offset 1 (NULL bit 0x01 at byte 0).
pub fn int_seg() -> KeySeg {
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

/// A key on [`int_seg`].
pub fn int_key(algorithm: Algorithm, unique: bool) -> KeyDef {
    KeyDef::new(algorithm, unique, false, vec![int_seg()], 5)
}

fn int_rec(v: Option<i32>) -> Vec<u8> {
    let mut r = vec![0u8; 5];
    match v {
        None => r[0] = 1,
        Some(v) => r[1..].copy_from_slice(&v.to_le_bytes()),
    }
    r
}

#[test]
fn integers_order_by_value_and_null_first() {
    let k = int_key(Algorithm::Btree, false);
    let img = |v| k.image_of_record(&int_rec(v)).unwrap().bytes;
    let mut vals = [
        Some(5),
        Some(-3),
        None,
        Some(0),
        Some(i32::MIN),
        Some(i32::MAX),
    ];
    vals.sort_by_key(|&v| img(v));
    assert_eq!(
        vals,
        [
            None,
            Some(i32::MIN),
            Some(-3),
            Some(0),
            Some(5),
            Some(i32::MAX)
        ]
    );
    assert!(k.image_of_record(&int_rec(None)).unwrap().has_null);
}

#[test]
fn desc_parts_order_in_reverse_with_nulls_last() {
    // (a ASC, b DESC) over two nullable INTs: records are [nulls, a (4 bytes), b (4 bytes)].
    let seg = |start: usize, bit: u8, reverse: bool| KeySeg {
        start,
        null: Some((0, bit)),
        reverse,
        ..int_seg()
    };
    let k = KeyDef::new(
        Algorithm::Btree,
        false,
        false,
        vec![seg(1, 1, false), seg(5, 2, true)],
        10,
    );
    let rec = |a: Option<i32>, b: Option<i32>| {
        let mut r = vec![0u8; 9];
        match a {
            None => r[0] |= 1,
            Some(v) => r[1..5].copy_from_slice(&v.to_le_bytes()),
        }
        match b {
            None => r[0] |= 2,
            Some(v) => r[5..].copy_from_slice(&v.to_le_bytes()),
        }
        r
    };
    let img = |a, b| k.image_of_record(&rec(a, b)).unwrap().bytes;
    let mut rows = [
        (Some(1), Some(1)),
        (Some(1), None),
        (Some(1), Some(-7)),
        (None, Some(3)),
        (Some(1), Some(9)),
        (Some(-2), Some(0)),
    ];
    rows.sort_by_key(|&(a, b)| img(a, b));
    assert_eq!(
        rows,
        [
            (None, Some(3)),
            (Some(-2), Some(0)),
            (Some(1), Some(9)),
            (Some(1), Some(1)),
            (Some(1), Some(-7)),
            (Some(1), None),
        ]
    );
    // A lookup's image (key format: NULL flag, then the value) is the record's image, and
    // its first part a prefix of it.
    let mut key = vec![0u8; 10];
    key[1..5].copy_from_slice(&1i32.to_le_bytes());
    key[6..].copy_from_slice(&9i32.to_le_bytes());
    assert_eq!(
        k.image_of_key(&key, 2).unwrap().bytes,
        img(Some(1), Some(9))
    );
    assert!(img(Some(1), Some(9)).starts_with(&k.image_of_key(&key, 1).unwrap().bytes));
}

#[test]
fn key_format_gives_the_record_image() {
    let k = int_key(Algorithm::Btree, false);
    let key = [0u8, 7, 0, 0, 0];
    assert_eq!(
        k.image_of_key(&key, 1).unwrap(),
        k.image_of_record(&int_rec(Some(7))).unwrap()
    );
    assert!(k.image_of_key(&[1, 0, 0, 0, 0], 1).unwrap().has_null);
    assert_eq!(k.parts_in_map(u64::MAX), 1);
    assert_eq!(k.key_format_len(1), 5);
}

fn varchar_key(c: CollationRef, len: usize) -> KeyDef {
    KeyDef::new(
        Algorithm::Btree,
        true,
        false,
        vec![KeySeg {
            kind: SegKind::VarText {
                collation: c,
                len_bytes: 1,
            },
            start: 0,
            length: len,
            null: None,
            reverse: false,
        }],
        len + 2,
    )
}

fn vrec(s: &[u8]) -> Vec<u8> {
    let mut r = vec![s.len() as u8];
    r.extend_from_slice(s);
    r.resize(9, 0);
    r
}

#[test]
fn strings_follow_the_collation() {
    let ci = varchar_key(Arc::new(AsciiCi), 8);
    let img = |s: &[u8]| ci.image_of_record(&vrec(s)).unwrap().bytes;
    assert_eq!(img(b"abc"), img(b"ABC "));
    assert!(img(b"abc") < img(b"abd"));
    assert_eq!(
        ci.heap_hash(&vrec(b"abc")).unwrap(),
        ci.heap_hash(&vrec(b"AbC  ")).unwrap()
    );

    let bin = varchar_key(Arc::new(Binary), 8);
    let img = |s: &[u8]| bin.image_of_record(&vrec(s)).unwrap().bytes;
    assert!(img(b"ab") < img(b"ab\0"));
    assert!(img(b"ab\0") < img(b"ab\x01"));
    assert!(img(b"ab") < img(b"abc"));
    assert_ne!(img(b"a"), img(b"a "));
}

#[test]
fn a_record_holds_a_key_when_its_bytes_are_the_keys() {
    let ci = varchar_key(Arc::new(AsciiCi), 8);
    let key = |s: &[u8]| {
        let mut k = (s.len() as u16).to_le_bytes().to_vec();
        k.extend_from_slice(s);
        k.resize(10, 0);
        k
    };
    assert!(ci.record_holds_key(&vrec(b"abc"), &key(b"abc")));
    // Equal under the collation, other bytes: nothing said (the images decide).
    assert!(!ci.record_holds_key(&vrec(b"abc"), &key(b"ABC")));
    assert!(!ci.record_holds_key(&vrec(b"abc"), &key(b"abd")));
    assert!(!ci.record_holds_key(&vrec(b"abc"), &key(b"ab")));
    assert!(ci.records_hold_same_key(&vrec(b"x y"), &vrec(b"x y")));
    assert!(!ci.records_hold_same_key(&vrec(b"x y"), &vrec(b"X y")));
    // Integers, NULL included.
    let int = KeyDef::new(Algorithm::Hash, false, false, vec![int_seg()], 5);
    let rec = |v: Option<i32>| {
        let mut r = vec![u8::from(v.is_none()); 5];
        r[1..].copy_from_slice(&v.unwrap_or(0).to_le_bytes());
        r
    };
    let k = |v: Option<i32>| {
        let mut r = vec![u8::from(v.is_none())];
        r.extend_from_slice(&v.unwrap_or(7).to_le_bytes());
        r
    };
    assert!(int.record_holds_key(&rec(Some(-5)), &k(Some(-5))));
    assert!(!int.record_holds_key(&rec(Some(-5)), &k(Some(5))));
    assert!(int.record_holds_key(&rec(None), &k(None)));
    assert!(!int.record_holds_key(&rec(None), &k(Some(0))));
}

proptest::proptest! {

    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::testing::cases(256)))]
    /// A record said to hold a key (two segments: a nullable INT, a prefix of a VARCHAR
    /// under a case-blind collation) has its image; a record of the key's very values is
    /// always said to hold it; records of the same bytes hold the same key.
    #[test]
    fn a_record_that_holds_a_key_has_its_image(
        a in proptest::option::of(-2i32..2),
        b in proptest::option::of(-2i32..2),
        x in proptest::collection::vec(proptest::sample::select(b"aA b".to_vec()), 0..10),
        y in proptest::collection::vec(proptest::sample::select(b"aA b".to_vec()), 0..10),
    ) {
        let text = KeySeg {
            kind: SegKind::VarText { collation: Arc::new(AsciiCi), len_bytes: 1 },
            start: 5,
            length: 6,
            null: None,
            reverse: false,
        };
        let def = KeyDef::new(Algorithm::Hash, false, false, vec![int_seg(), text], 13);
        let rec = |v: Option<i32>, s: &[u8]| {
            let mut r = vec![u8::from(v.is_none())];
            r.extend_from_slice(&v.unwrap_or(0).to_le_bytes());
            r.push(s.len() as u8);
            r.extend_from_slice(s);
            r.resize(16, 0);
            r
        };
        // The key format: NULL flag, INT, then the prefix's length and room.
        let key = |v: Option<i32>, s: &[u8]| {
            let s = &s[..s.len().min(6)];
            let mut k = vec![u8::from(v.is_none())];
            k.extend_from_slice(&v.unwrap_or(3).to_le_bytes());
            k.extend_from_slice(&(s.len() as u16).to_le_bytes());
            k.extend_from_slice(s);
            k.resize(13, 0);
            k
        };
        let (r, k) = (rec(a, &x), key(b, &y));
        let holds = def.record_holds_key(&r, &k);
        if holds {
            proptest::prop_assert_eq!(
                def.image_of_record(&r).unwrap().bytes,
                def.image_of_key(&k, 2).unwrap().bytes
            );
        }
        if a == b && x == y && x.len() <= 6 {
            proptest::prop_assert!(holds);
        }
        let same = def.records_hold_same_key(&r, &rec(b, &y));
        proptest::prop_assert_eq!(same, a == b && x == y);
    }
}

#[test]
fn hash_images_of_strings_are_cut_and_stay_as_distinct() {
    let mut ci = varchar_key(Arc::new(AsciiCi), 8);
    ci = KeyDef::new(Algorithm::Hash, false, false, ci.segs, ci.key_length);
    let img = |s: &[u8]| ci.image_of_record(&vrec(s)).unwrap().bytes;
    assert_eq!(img(b"abc"), b"ABC");
    assert_eq!(img(b"abc"), img(b"ABC  "));
    assert_eq!(img(b""), b"");
    let words: [&[u8]; 6] = [b"", b"a", b"a b", b"ab", b"b", b" a"];
    for (i, a) in words.iter().enumerate() {
        for b in &words[i + 1..] {
            assert_ne!(img(a), img(b), "{a:?} {b:?}");
        }
    }
    // Made without padding, the image is the padded one (a BTREE key's) cut.
    let padded = varchar_key(Arc::new(AsciiCi), 8);
    for w in words.iter().chain(&[&b"abc  "[..], b"  ", b"a b  c"]) {
        let mut full = padded.image_of_record(&vrec(w)).unwrap().bytes;
        while full.last() == Some(&b' ') {
            full.pop();
        }
        assert_eq!(img(w), full, "{w:?}");
    }
    // A key in key format (2-byte length) gives the record's image.
    let mut key = vec![2, 0];
    key.extend_from_slice(b"aB");
    key.resize(10, 0);
    assert_eq!(ci.image_of_key(&key, 1).unwrap().bytes, img(b"Ab "));

    // `binary` strings are not cut: their image ends in their length.
    let bin = varchar_key(Arc::new(Binary), 8);
    let bin = KeyDef::new(Algorithm::Hash, false, false, bin.segs, bin.key_length);
    assert_eq!(bin.image_of_record(&vrec(b"a")).unwrap().bytes.len(), 10);
}

/// [`AsciiCi`] without its weight table, so images take the general path.
#[derive(Debug)]
struct NoTable;

impl Collation for NoTable {
    fn is_binary(&self) -> bool {
        AsciiCi.is_binary()
    }
    fn mbmaxlen(&self) -> usize {
        AsciiCi.mbmaxlen()
    }
    fn charpos(&self, s: &[u8], chars: usize) -> usize {
        AsciiCi.charpos(s, chars)
    }
    fn weights_len(&self, len: usize) -> usize {
        AsciiCi.weights_len(len)
    }
    fn weights(&self, s: &[u8], chars: usize, out: &mut [u8]) {
        AsciiCi.weights(s, chars, out)
    }
    fn hash(&self, s: &[u8], nr1: &mut u64, nr2: &mut u64) {
        AsciiCi.hash(s, nr1, nr2)
    }
}

/// [`AsciiCi`] with its weight table but no unpadded weights, so images are padded and cut.
#[derive(Debug)]
struct TableOnly;

impl Collation for TableOnly {
    fn is_binary(&self) -> bool {
        AsciiCi.is_binary()
    }
    fn mbmaxlen(&self) -> usize {
        AsciiCi.mbmaxlen()
    }
    fn charpos(&self, s: &[u8], chars: usize) -> usize {
        AsciiCi.charpos(s, chars)
    }
    fn weights_len(&self, len: usize) -> usize {
        AsciiCi.weights_len(len)
    }
    fn weights(&self, s: &[u8], chars: usize, out: &mut [u8]) {
        AsciiCi.weights(s, chars, out)
    }
    fn hash(&self, s: &[u8], nr1: &mut u64, nr2: &mut u64) {
        AsciiCi.hash(s, nr1, nr2)
    }
    fn byte_weights(&self) -> Option<&'static [u8; 256]> {
        AsciiCi.byte_weights()
    }
}

/// [`AsciiCi`] with unpadded weights but no weight table, so short images take the
/// general path.
#[derive(Debug)]
struct UnpaddedOnly;

impl Collation for UnpaddedOnly {
    fn is_binary(&self) -> bool {
        AsciiCi.is_binary()
    }
    fn mbmaxlen(&self) -> usize {
        AsciiCi.mbmaxlen()
    }
    fn charpos(&self, s: &[u8], chars: usize) -> usize {
        AsciiCi.charpos(s, chars)
    }
    fn weights_len(&self, len: usize) -> usize {
        AsciiCi.weights_len(len)
    }
    fn weights(&self, s: &[u8], chars: usize, out: &mut [u8]) {
        AsciiCi.weights(s, chars, out)
    }
    fn hash(&self, s: &[u8], nr1: &mut u64, nr2: &mut u64) {
        AsciiCi.hash(s, nr1, nr2)
    }
    fn weights_unpadded(&self, s: &[u8], chars: usize, out: &mut [u8]) -> Option<usize> {
        AsciiCi.weights_unpadded(s, chars, out)
    }
}

#[test]
fn a_weight_table_gives_the_images_of_the_general_path() {
    // A nullable CHAR(3) at 1 (NULL bit 0x01 at 0), then a nullable VARCHAR(4) at 4
    // (NULL bit 0x02): when the VARCHAR weighs nothing, the CHAR's padding is cut too.
    let key = |c: CollationRef| {
        let segs = vec![
            KeySeg {
                kind: SegKind::Text(c.clone()),
                start: 1,
                length: 3,
                null: Some((0, 1)),
                reverse: false,
            },
            KeySeg {
                kind: SegKind::VarText {
                    collation: c,
                    len_bytes: 1,
                },
                start: 4,
                length: 4,
                null: Some((0, 2)),
                reverse: false,
            },
        ];
        KeyDef::new(Algorithm::Hash, true, false, segs, 11)
    };
    let (fast, slow) = (key(Arc::new(TableOnly)), key(Arc::new(NoTable)));
    assert!(fast.last_map.is_some() && slow.last_map.is_none());
    // Short images: each segment's weights without trailing spaces', then its length.
    let short = key(Arc::new(AsciiCi));
    assert!(short.last_map.is_none() && short.pad.is_none());
    let general = key(Arc::new(UnpaddedOnly));
    assert!(short.short[0].as_ref().unwrap().map.is_some());
    assert!(general.short[0].as_ref().unwrap().map.is_none());
    let mut seen: Vec<(Image, Image)> = Vec::new();
    let rec = |c: &[u8], v: Option<&[u8]>| {
        let mut r = vec![0u8; 9];
        r[1..4].copy_from_slice(c);
        match v {
            None => r[0] = 2,
            Some(v) => {
                r[4] = v.len() as u8;
                r[5..5 + v.len()].copy_from_slice(v);
            }
        }
        r
    };
    let chars: [&[u8]; 3] = [b"ab ", b"   ", b"a b"];
    let vals: [Option<&[u8]>; 6] = [
        None,
        Some(b""),
        Some(b"  "),
        Some(b"x"),
        Some(b"x y "),
        Some(b" X"),
    ];
    for c in chars {
        for v in vals {
            let r = rec(c, v);
            let img = fast.image_of_record(&r).unwrap();
            assert_eq!(img, slow.image_of_record(&r).unwrap(), "{c:?} {v:?}");
            // The key format: NULL flag, CHAR(3), NULL flag, 2-byte length, VARCHAR(4).
            let mut k = vec![0u8];
            k.extend_from_slice(c);
            match v {
                None => k.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0]),
                Some(v) => {
                    k.extend_from_slice(&[0, v.len() as u8, 0]);
                    k.extend_from_slice(v);
                    k.resize(11, 0);
                }
            }
            assert_eq!(fast.image_of_key(&k, 2).unwrap(), img, "{c:?} {v:?}");
            assert_eq!(slow.image_of_key(&k, 2).unwrap(), img, "{c:?} {v:?}");
            let s = short.image_of_record(&r).unwrap();
            assert_eq!(short.image_of_key(&k, 2).unwrap(), s, "{c:?} {v:?}");
            assert_eq!(general.image_of_record(&r).unwrap(), s, "{c:?} {v:?}");
            assert!(s.bytes.len() <= short.max_image);
            seen.push((img, s));
        }
    }
    // Short images are equal exactly when padded ones are.
    for (a, sa) in &seen {
        for (b, sb) in &seen {
            assert_eq!(a == b, sa == sb, "{a:?} {b:?} {sa:?} {sb:?}");
        }
    }
    let r = rec(b"ab ", Some(b"x "));
    assert_eq!(
        short.image_of_record(&r).unwrap().bytes,
        [1, 2, 0, 0, 0, b'A', b'B', 1, b'X']
    );
}

#[test]
fn hash_images_of_other_types_are_the_key_format() {
    let mut seg = int_seg();
    seg.kind = SegKind::Binary;
    let k = KeyDef::new(Algorithm::Hash, false, false, vec![seg], 5);
    let rec = |v: Option<i32>| {
        let mut r = int_rec(v);
        if v.is_none() {
            r[1..].copy_from_slice(&[9, 9, 9, 9]);
        }
        r
    };
    let img = |v| k.image_of_record(&rec(v)).unwrap();
    assert_eq!(img(Some(7)).bytes, [0, 7, 0, 0, 0]);
    assert_eq!(k.image_of_key(&[0, 7, 0, 0, 0], 1).unwrap(), img(Some(7)));
    // NULL: the flag, and no trace of the bytes the column happens to hold.
    assert_eq!(img(None).bytes, [1, 0, 0, 0, 0]);
    assert!(img(None).has_null);
    assert_eq!(k.image_of_key(&[1, 5, 5, 5, 5], 1).unwrap(), img(None));

    assert!(k.same_bytes(&rec(Some(7)), &rec(Some(7))).unwrap());
    assert!(!k.same_bytes(&rec(Some(7)), &rec(Some(8))).unwrap());
    assert!(!k.same_bytes(&rec(Some(7)), &rec(None)).unwrap());
    let mut other_null = rec(None);
    other_null[1] = 1;
    assert!(k.same_bytes(&rec(None), &other_null).unwrap());
}

#[test]
fn bytes_eq_sees_every_byte() {
    for n in 0..40usize {
        let a: Vec<u8> = (0..n as u8).collect();
        assert!(bytes_eq(&a, &a.clone()), "length {n}");
        for i in 0..n {
            let mut b = a.clone();
            b[i] ^= 0x80;
            assert!(!bytes_eq(&a, &b), "length {n}, byte {i}");
        }
        assert!(
            !bytes_eq(&a, &[a.as_slice(), &[0]].concat()),
            "length {n} and one more"
        );
    }
}

#[test]
fn record_bytes_cover_what_same_bytes_compares() {
    // The INT (NULL byte 0, value 1..5) and a VARCHAR(3) at 6 (length byte, then 3
    // bytes), in two keys: one range for the INT, one for the VARCHAR.
    let int = int_key(Algorithm::Hash, true);
    let mut v = varchar_key(Arc::new(AsciiCi), 3);
    v.segs[0].start = 6;
    assert_eq!(KeyDef::record_bytes([&v, &int]).unwrap(), [0..5, 6..10]);
    assert_eq!(
        KeyDef::record_bytes([&int, &int]).unwrap(),
        vec![Range { start: 0, end: 5 }]
    );
    assert!(KeyDef::record_bytes([]).unwrap().is_empty());
    // Records that agree on those bytes have the same keys.
    let rec = |n: i32, s: &[u8], tail: u8| {
        let mut r = int_rec(Some(n));
        r.push(tail);
        r.push(s.len() as u8);
        r.extend_from_slice(s);
        r.resize(10, 0);
        r.push(tail);
        r
    };
    let (a, b) = (rec(7, b"ab", 1), rec(7, b"ab", 2));
    assert!(KeyDef::record_bytes([&v, &int])
        .unwrap()
        .iter()
        .all(|r| a[r.clone()] == b[r.clone()]));
    assert!(int.same_bytes(&a, &b).unwrap() && v.same_bytes(&a, &b).unwrap());
    assert!(!v.same_bytes(&a, &rec(7, b"ac", 1)).unwrap());
}

#[test]
fn prefix_keys_cover_their_characters_only() {
    let ci = varchar_key(Arc::new(AsciiCi), 3);
    let img = |s: &[u8]| ci.image_of_record(&vrec(s)).unwrap().bytes;
    assert_eq!(img(b"abcdef"), img(b"ABCxyz"));
}

#[test]
fn floats_order_by_value_and_zeroes_are_equal() {
    let k = KeyDef::new(
        Algorithm::Btree,
        false,
        false,
        vec![KeySeg {
            kind: SegKind::Number(Number::Double),
            start: 0,
            length: 8,
            null: None,
            reverse: false,
        }],
        8,
    );
    let img = |f: f64| k.image_of_record(&f.to_le_bytes()).unwrap().bytes;
    assert_eq!(img(0.0), img(-0.0));
    assert_eq!(img(f64::NAN), img(0.0));
    assert!(img(-2.5) < img(-1.0));
    assert!(img(-1.0) < img(0.0));
    assert!(img(0.0) < img(1e-300));
    assert!(img(1.0) < img(f64::INFINITY));
}

#[test]
fn auto_increment_ignores_negative_values() {
    let k = int_key(Algorithm::Hash, true);
    assert_eq!(
        k.segs[0].auto_increment_value(&int_rec(Some(42))).unwrap(),
        42
    );
    assert_eq!(
        k.segs[0].auto_increment_value(&int_rec(Some(-1))).unwrap(),
        0
    );
}

#[test]
fn blength_is_the_next_power_of_two_above_the_row_count() {
    assert_eq!(hp_blength(0), 1);
    assert_eq!(hp_blength(1), 2);
    assert_eq!(hp_blength(3), 4);
    assert_eq!(hp_blength(4), 8);
    assert_eq!(hp_mask(5, 8, 6), 5);
    assert_eq!(hp_mask(7, 8, 6), 3);
}
