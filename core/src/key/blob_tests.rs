//! Keys over BLOB/TEXT values ([`SegKind::Blob`]): the semantics of Aria's unique constraints,
//! which the server's internal tables rely on: whole values compared by their collation
//! (trailing spaces ignored under PAD SPACE, counted under NO PAD and `binary`), NULLs equal
//! to each other and distinct from `''`, values that agree in their first kilobytes and differ
//! after them distinct.

use super::*;
use crate::key::collation::testing::{AsciiCi, AsciiCiNoPad, Binary, TwoLevels, Wide};
use crate::key::collation::Collation;
use crate::rows::format::{VarField, VarKind};
use proptest::prelude::*;
use std::sync::Arc;

/// Record: `[null bits][a: BLOB, 2-byte length + pointer][b: BLOB, 1-byte length + pointer]`,
/// `a` nullable (bit 0x01), `b` nullable (bit 0x02).
const REC_LEN: usize = 1 + 10 + 9;
const A: usize = 1;
const B: usize = 11;

fn format() -> RowFormat {
    let blob = |offset, len_bytes| VarField {
        offset,
        kind: VarKind::Blob { len_bytes },
    };
    RowFormat::new(REC_LEN, vec![blob(A, 2), blob(B, 1)]).unwrap()
}

fn seg(c: Arc<dyn Collation>, start: usize, len_bytes: usize, bit: u8) -> KeySeg {
    KeySeg {
        kind: SegKind::Blob {
            collation: c,
            len_bytes,
        },
        start,
        length: len_bytes + 8,
        null: Some((0, bit)),
        reverse: false,
    }
}

/// A unique HASH key with NULLs equal (as the server's unique constraints) on `a`, or on
/// `(a, b)`.
fn key(c: Arc<dyn Collation>, both: bool) -> KeyDef {
    let mut segs = vec![seg(c.clone(), A, 2, 1)];
    if both {
        segs.push(seg(c, B, 1, 2));
    }
    KeyDef::new(Algorithm::Hash, true, true, segs, 0)
}

/// The packed row of values `a` and `b` (None: NULL), as a table stores it.
fn packed(a: Option<&[u8]>, b: Option<&[u8]>) -> (Vec<u8>, Vec<u8>) {
    let mut rec = vec![0u8; REC_LEN];
    let mut put = |at: usize, len_bytes: usize, bit: u8, v: Option<&[u8]>| match v {
        None => rec[0] |= bit,
        Some(v) => {
            rec[at..at + len_bytes].copy_from_slice(&v.len().to_le_bytes()[..len_bytes]);
            rec[at + len_bytes..at + len_bytes + 8]
                .copy_from_slice(&(v.as_ptr() as usize).to_ne_bytes());
        }
    };
    put(A, 2, 1, a);
    put(B, 1, 2, b);
    let mut out = Vec::new();
    // SAFETY: each non-NULL BLOB field points to its value, alive for the call.
    unsafe { format().pack(&rec, &mut out) }.unwrap();
    (rec, out)
}

fn image(k: &KeyDef, a: Option<&[u8]>, b: Option<&[u8]>) -> Image {
    let (rec, p) = packed(a, b);
    let f = format();
    let mut img = Image::default();
    k.image_of_row_into(Row::packed(&rec, &f, &p), &mut img)
        .unwrap();
    img
}

fn same(c: Arc<dyn Collation>, a: &[u8], b: &[u8]) -> bool {
    let k = key(c, false);
    image(&k, Some(a), None) == image(&k, Some(b), None)
}

#[test]
fn text_compares_whole_values_by_the_collation() {
    let ci: Arc<dyn Collation> = Arc::new(AsciiCi);
    assert!(same(ci.clone(), b"abc", b"ABC"));
    assert!(same(ci.clone(), b"abc", b"abc   "), "PAD SPACE");
    assert!(same(ci.clone(), b"", b"   "), "PAD SPACE");
    assert!(!same(ci.clone(), b"abc", b"abcd"));
    assert!(!same(ci.clone(), b"abc", b" abc"));
    // Equal in their first 4 KiB (past max_sort_length's default of 1024), different after.
    let mut x = vec![b'x'; 4096];
    let mut y = x.clone();
    x.extend_from_slice(b"tail-1");
    y.extend_from_slice(b"TAIL-2");
    assert!(!same(ci.clone(), &x, &y));
    y.truncate(4096);
    y.extend_from_slice(b"TAIL-1   ");
    assert!(same(ci, &x, &y));
}

#[test]
fn multi_byte_collations_weigh_every_character() {
    // A value of n bytes may hold n characters: its weights are not cut to those of a column
    // of n bytes (n / mbmaxlen characters).
    let wide: Arc<dyn Collation> = Arc::new(Wide);
    assert!(!same(wide.clone(), br#"{"a": 1}"#, br#"{"a":1}"#));
    assert!(!same(wide.clone(), b"abcdefgh", b"abcdefgX"));
    assert!(same(wide.clone(), b"abcdefgh", b"ABCDEFGH  "));
    assert!(same(wide, b"", b" "));
}

#[test]
fn no_pad_and_binary_count_trailing_spaces() {
    let no_pad: Arc<dyn Collation> = Arc::new(AsciiCiNoPad);
    assert!(same(no_pad.clone(), b"abc", b"ABC"));
    assert!(!same(no_pad.clone(), b"abc", b"abc "));
    assert!(!same(no_pad, b"", b" "));
    let bin: Arc<dyn Collation> = Arc::new(Binary);
    assert!(!same(bin.clone(), b"abc", b"ABC"));
    assert!(!same(bin.clone(), b"abc", b"abc "));
    assert!(!same(bin.clone(), b"", b"\0"));
    assert!(same(bin, b"a\0b", b"a\0b"));
}

#[test]
fn nulls_are_equal_and_differ_from_empty_values() {
    for c in [Arc::new(AsciiCi) as Arc<dyn Collation>, Arc::new(Binary)] {
        let k = key(c, true);
        let nulls = image(&k, None, None);
        assert!(nulls.has_null);
        assert_eq!(nulls, image(&k, None, None));
        assert_ne!(nulls, image(&k, Some(b""), None));
        assert_ne!(nulls, image(&k, None, Some(b"")));
        assert_ne!(image(&k, Some(b""), Some(b"")), nulls);
        assert!(!image(&k, Some(b""), Some(b"")).has_null);
    }
}

#[test]
fn two_values_split_one_way_only() {
    // Where one value ends and the next begins is part of the image.
    for c in [Arc::new(AsciiCi) as Arc<dyn Collation>, Arc::new(Binary)] {
        let k = key(c, true);
        let ab_c = image(&k, Some(b"ab"), Some(b"c"));
        assert_ne!(ab_c, image(&k, Some(b"a"), Some(b"bc")));
        assert_ne!(ab_c, image(&k, Some(b"abc"), Some(b"")));
        assert_eq!(ab_c, image(&k, Some(b"ab"), Some(b"c")));
    }
    // Values whose bytes spell a length cannot pass for another split either.
    let k = key(Arc::new(Binary), true);
    let one = image(&k, Some(b"a"), Some(&[5, 0, 0, 0, b'z']));
    let two = image(&k, Some(&[b'a', 1, 0, 0, 0]), Some(b"z"));
    assert_ne!(one, two);
}

#[test]
fn a_blob_key_is_read_from_the_packed_row_only() {
    let k = key(Arc::new(AsciiCi), false);
    let (rec, _) = packed(Some(b"abc"), None);
    let err = k.image_of_record(&rec).unwrap_err();
    assert!(err.to_string().contains("packed row"), "{err}");
    // The key format the server uses for lookups does not hold BLOBs.
    assert!(k.image_of_key(&[0, 0, 0], 1).is_err());
    assert!(k.has_blobs());
    assert!(!tests::int_key(Algorithm::Hash, true).has_blobs());
}

#[test]
fn blob_keys_are_hash_keys_in_one_level_collations() {
    let segs = |c: Arc<dyn Collation>| vec![seg(c, A, 2, 1)];
    let btree = KeyDef::try_new(Algorithm::Btree, true, true, segs(Arc::new(AsciiCi)), 0);
    assert!(btree.is_err(), "no order over BLOBs");
    let two = KeyDef::try_new(Algorithm::Hash, true, true, segs(Arc::new(TwoLevels)), 0);
    assert!(
        two.is_err(),
        "a multi-level collation has no unpadded weights"
    );
    assert!(KeyDef::try_new(Algorithm::Hash, true, true, segs(Arc::new(Binary)), 0).is_ok());
}

/// What the collation makes of a value: ASCII without case, trailing spaces cut (PAD SPACE).
fn folded(v: &[u8]) -> Vec<u8> {
    let end = v.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
    v[..end].to_ascii_uppercase()
}

fn value() -> impl Strategy<Value = Option<Vec<u8>>> {
    // Few letters, both cases, spaces and NUL bytes: equal values under the collation are
    // common, and so are values that differ only in case or trailing spaces.
    let bytes = prop::collection::vec(prop::sample::select(vec![b'a', b'A', b'b', b' ', 0]), 0..6);
    prop::option::weighted(0.85, bytes)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::testing::cases(256)))]

    /// Images of `(a, b)` under AsciiCi are equal exactly when the values are equal under the
    /// collation (NULLs equal), and under `binary` exactly when the bytes are.
    #[test]
    fn images_are_equal_exactly_when_the_values_are(
        a1 in value(), b1 in value(), a2 in value(), b2 in value(),
    ) {
        let fold = |v: &Option<Vec<u8>>| v.as_deref().map(folded);
        let ci = key(Arc::new(AsciiCi), true);
        let eq = image(&ci, a1.as_deref(), b1.as_deref()) == image(&ci, a2.as_deref(), b2.as_deref());
        prop_assert_eq!(eq, fold(&a1) == fold(&a2) && fold(&b1) == fold(&b2));
        let bin = key(Arc::new(Binary), true);
        let eq = image(&bin, a1.as_deref(), b1.as_deref()) == image(&bin, a2.as_deref(), b2.as_deref());
        prop_assert_eq!(eq, a1 == a2 && b1 == b2);
    }
}
