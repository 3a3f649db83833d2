//! Key definitions, and the byte images that indexes store and compare.
//!
//! A key is a list of segments, each a column (or a prefix of one) in the server's record
//! format, described as HEAP describes it (`HA_KEYSEG`): an offset, a length, a NULL bit and a
//! type. The server hands keys to look up in its *key format* (`key_copy`): per segment an
//! optional NULL flag byte, then the value, with VARCHAR values as a 2-byte length and the full
//! column width.
//!
//! Both formats become one *image* per key: a byte string, fixed width per segment, that
//! compares with `memcmp` as the key compares under HEAP's rules: NULL first, integers and
//! floats by value, strings by their collation's weights, other types byte by byte. Because each
//! segment has a fixed width, the image of the first `k` segments is a prefix of the whole
//! image, which is what partial-key reads on BTREE indexes need.

use crate::collation::{hash_byte, CollationRef};
use crate::error::{Error, Result};

/// How a segment's value is stored and compared (HEAP's `ha_base_keytype`, reduced).
#[derive(Debug, Clone)]
pub enum SegKind {
    /// CHAR: a fixed-width string compared by its collation.
    Text(CollationRef),
    /// VARCHAR / VARBINARY: a length prefix of `len_bytes` (1 or 2) in the record, then the
    /// string, compared by its collation.
    VarText {
        collation: CollationRef,
        len_bytes: usize,
    },
    /// Compared byte by byte (HASH keys on every non-string type; DECIMAL, temporal types and
    /// other binary-comparable types in BTREE keys).
    Binary,
    /// BIT(n): the bits that do not fill a byte live among the NULL bits of the record.
    Bit {
        /// Offset of the byte holding the odd bits.
        pos: usize,
        /// First bit of them in that byte.
        start: u8,
        /// How many odd bits (0: the column is whole bytes).
        len: u8,
    },
    /// A little-endian integer of `bytes` bytes.
    Int {
        bytes: usize,
        signed: bool,
    },
    Float,
    Double,
}

/// One segment of a key: a column or a prefix of one.
#[derive(Debug, Clone)]
pub struct KeySeg {
    pub kind: SegKind,
    /// Offset of the value in the record (after the odd BIT bits, which live elsewhere).
    pub start: usize,
    /// Bytes of the segment in the key format (a VARCHAR's most bytes, without its length;
    /// a BIT's bytes plus one for the odd bits when there are any).
    pub length: usize,
    /// Where the NULL bit is: `(byte offset, mask)`, None for NOT NULL columns.
    pub null: Option<(usize, u8)>,
}

/// HASH or BTREE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    Hash,
    Btree,
}

/// One index of a table.
#[derive(Debug, Clone)]
pub struct KeyDef {
    pub algorithm: Algorithm,
    /// UNIQUE or PRIMARY (HA_NOSAME).
    pub unique: bool,
    /// NULLs count as equal values for uniqueness (HA_NULL_ARE_EQUAL, internal tables only).
    pub nulls_equal: bool,
    pub segs: Vec<KeySeg>,
    /// The server's length of the key format (`KEY::key_length`): part of HEAP's per-row
    /// memory estimate for BTREE keys.
    pub key_length: usize,
}

/// A segment's value, taken from a record or from a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value<'a> {
    Null,
    /// The value's bytes (for strings, only the characters the segment covers).
    Bytes(&'a [u8]),
    /// A BIT value: the odd bits, then the whole bytes.
    Bits(u8, &'a [u8]),
}

/// `get_rec_bits`: `len` bits from bit `start` of the little-endian 16 bits at `p`.
fn rec_bits(rec: &[u8], pos: usize, start: u8, len: u8) -> u8 {
    let mut v = u16::from(rec[pos]);
    if start + len > 8 {
        v |= u16::from(rec[pos + 1]) << 8;
    }
    ((v >> start) & ((1u16 << len) - 1)) as u8
}

fn slice(buf: &[u8], from: usize, len: usize) -> Result<&[u8]> {
    buf.get(from..from.saturating_add(len))
        .ok_or_else(|| Error::Internal("key segment outside the buffer".into()))
}

impl KeySeg {
    /// The value of an AUTO_INCREMENT column, read as HEAP reads it (`heap_update_auto_increment`):
    /// negative values count as 0. `self` is the column with its own (not the key's) kind.
    pub fn auto_increment_value(&self, rec: &[u8]) -> Result<u64> {
        let b = slice(rec, self.start, self.length)?;
        Ok(match self.kind {
            SegKind::Int { bytes, signed } => {
                let mut v = [0u8; 8];
                v[..bytes].copy_from_slice(&b[..bytes]);
                if signed && b[bytes - 1] & 0x80 != 0 {
                    0
                } else {
                    u64::from_le_bytes(v)
                }
            }
            SegKind::Float => {
                let f = f32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
                if f < 0.0 {
                    0
                } else {
                    f as u64
                }
            }
            SegKind::Double => {
                let f = f64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
                if f < 0.0 {
                    0
                } else {
                    f as u64
                }
            }
            // Unsigned TINYINT is a one-byte binary key.
            SegKind::Binary => u64::from(b[0]),
            _ => 0,
        })
    }

    fn nullable(&self) -> bool {
        self.null.is_some()
    }

    /// The characters a string segment covers: at most `length / mbmaxlen` characters.
    fn limit_chars<'a>(&self, coll: &CollationRef, s: &'a [u8]) -> &'a [u8] {
        let mb = coll.mbmaxlen();
        let n = if mb > 1 {
            coll.charpos(s, self.length / mb).min(s.len())
        } else {
            s.len().min(self.length)
        };
        &s[..n]
    }

    fn value_from_record<'a>(&self, rec: &'a [u8]) -> Result<Value<'a>> {
        if let Some((pos, bit)) = self.null {
            if slice(rec, pos, 1)?[0] & bit != 0 {
                return Ok(Value::Null);
            }
        }
        Ok(match &self.kind {
            SegKind::Text(c) => {
                Value::Bytes(self.limit_chars(c, slice(rec, self.start, self.length)?))
            }
            SegKind::VarText {
                collation,
                len_bytes,
            } => {
                let pre = slice(rec, self.start, *len_bytes)?;
                let len = if *len_bytes == 1 {
                    usize::from(pre[0])
                } else {
                    usize::from(u16::from_le_bytes([pre[0], pre[1]]))
                };
                let data = slice(rec, self.start + len_bytes, len)?;
                Value::Bytes(self.limit_chars(collation, data))
            }
            SegKind::Bit { pos, start, len } if *len > 0 => {
                slice(rec, *pos, 1 + usize::from(start + len > 8))?;
                Value::Bits(
                    rec_bits(rec, *pos, *start, *len),
                    slice(rec, self.start, self.length - 1)?,
                )
            }
            _ => Value::Bytes(slice(rec, self.start, self.length)?),
        })
    }

    /// The value at the start of `key` (key format) and the bytes it takes there.
    fn value_from_key<'a>(&self, key: &'a [u8]) -> Result<(Value<'a>, usize)> {
        let mut at = 0;
        if self.nullable() {
            at = 1;
            if slice(key, 0, 1)?[0] != 0 {
                return Ok((Value::Null, 1 + self.key_width()));
            }
        }
        let v = match &self.kind {
            SegKind::Text(c) => Value::Bytes(self.limit_chars(c, slice(key, at, self.length)?)),
            SegKind::VarText { collation, .. } => {
                let pre = slice(key, at, 2)?;
                let len = usize::from(u16::from_le_bytes([pre[0], pre[1]])).min(self.length);
                Value::Bytes(self.limit_chars(collation, slice(key, at + 2, len)?))
            }
            SegKind::Bit { len, .. } if *len > 0 => {
                let b = slice(key, at, self.length)?;
                Value::Bits(b[0], &b[1..])
            }
            _ => Value::Bytes(slice(key, at, self.length)?),
        };
        Ok((v, at + self.key_width()))
    }

    /// Bytes of the value in the key format (without the NULL flag).
    fn key_width(&self) -> usize {
        match self.kind {
            SegKind::VarText { .. } => 2 + self.length,
            _ => self.length,
        }
    }

    /// Bytes of the value in an image (without the NULL flag).
    fn image_width(&self) -> usize {
        match &self.kind {
            SegKind::Text(c) | SegKind::VarText { collation: c, .. } => {
                if c.is_binary() {
                    self.length + 2
                } else {
                    c.weights_len(self.length)
                }
            }
            SegKind::Int { bytes, .. } => *bytes,
            SegKind::Float | SegKind::Double => 8,
            SegKind::Binary | SegKind::Bit { .. } => self.length,
        }
    }

    /// Appends the image of `v`.
    fn encode(&self, v: Value<'_>, out: &mut Vec<u8>) {
        let width = self.image_width();
        let bytes = match v {
            Value::Null => {
                out.push(0);
                out.resize(out.len() + width, 0);
                return;
            }
            Value::Bits(bits, rest) => {
                if self.nullable() {
                    out.push(1);
                }
                out.push(bits);
                out.extend_from_slice(rest);
                return;
            }
            Value::Bytes(b) => b,
        };
        if self.nullable() {
            out.push(1);
        }
        let at = out.len();
        out.resize(at + width, 0);
        let dst = &mut out[at..];
        match &self.kind {
            SegKind::Text(c) | SegKind::VarText { collation: c, .. } => {
                if c.is_binary() {
                    // Bytes, zero-padded, then the length: on equal bytes the shorter first.
                    let n = bytes.len().min(self.length);
                    dst[..n].copy_from_slice(&bytes[..n]);
                    dst[self.length..].copy_from_slice(&(n as u16).to_be_bytes());
                } else {
                    c.weights(bytes, self.length / c.mbmaxlen().max(1), dst);
                }
            }
            SegKind::Int { signed, .. } => {
                for (d, s) in dst.iter_mut().zip(bytes.iter().rev()) {
                    *d = *s;
                }
                if *signed {
                    dst[0] ^= 0x80;
                }
            }
            SegKind::Float | SegKind::Double => {
                let f = match self.kind {
                    SegKind::Float => {
                        f64::from(f32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")))
                    }
                    _ => f64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")),
                };
                // HEAP indexes NaN as zero; -0 and 0 compare equal. A FLOAT widens to a
                // double exactly, keeping its order.
                let f = if f.is_nan() || f == 0.0 { 0.0 } else { f };
                let bits = f.to_bits();
                let ordered = if bits >> 63 == 1 {
                    !bits
                } else {
                    bits | 1 << 63
                };
                dst.copy_from_slice(&ordered.to_be_bytes());
            }
            SegKind::Binary | SegKind::Bit { .. } => {
                let n = bytes.len().min(width);
                dst[..n].copy_from_slice(&bytes[..n]);
            }
        }
    }

    /// Mixes the value into HEAP's hash (`hp_rec_hashnr`).
    fn hash(&self, v: Value<'_>, nr: &mut u64, nr2: &mut u64) {
        match v {
            Value::Null => *nr ^= (*nr << 1) | 1,
            Value::Bits(bits, rest) => {
                hash_byte(nr, nr2, bits);
                rest.iter().for_each(|&b| hash_byte(nr, nr2, b));
            }
            Value::Bytes(b) => match &self.kind {
                SegKind::Text(c) | SegKind::VarText { collation: c, .. } => c.hash(b, nr, nr2),
                _ => b.iter().for_each(|&x| hash_byte(nr, nr2, x)),
            },
        }
    }
}

/// An image and whether any of its segments is NULL.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Image {
    pub bytes: Vec<u8>,
    pub has_null: bool,
}

impl KeyDef {
    /// Bytes of a whole-key image.
    pub fn image_len(&self) -> usize {
        self.segs
            .iter()
            .map(|s| usize::from(s.nullable()) + s.image_width())
            .sum()
    }

    /// The image of the key in `rec` (a record).
    pub fn image_of_record(&self, rec: &[u8]) -> Result<Image> {
        let mut img = Image::default();
        self.image_of_record_into(rec, &mut img)?;
        Ok(img)
    }

    /// The image of the key in `rec`, into `img` (its buffer is reused).
    pub fn image_of_record_into(&self, rec: &[u8], img: &mut Image) -> Result<()> {
        img.bytes.clear();
        img.has_null = false;
        for s in &self.segs {
            let v = s.value_from_record(rec)?;
            img.has_null |= matches!(v, Value::Null);
            s.encode(v, &mut img.bytes);
        }
        Ok(())
    }

    /// The image of the first `parts` segments of `key` (key format).
    pub fn image_of_key(&self, key: &[u8], parts: usize) -> Result<Image> {
        let mut img = Image::default();
        self.image_of_key_into(key, parts, &mut img)?;
        Ok(img)
    }

    /// The image of the first `parts` segments of `key`, into `img` (its buffer is reused).
    pub fn image_of_key_into(&self, key: &[u8], parts: usize, img: &mut Image) -> Result<()> {
        img.bytes.clear();
        img.has_null = false;
        let mut at = 0;
        for s in self.segs.iter().take(parts) {
            let (v, used) = s.value_from_key(key.get(at..).unwrap_or_default())?;
            img.has_null |= matches!(v, Value::Null);
            s.encode(v, &mut img.bytes);
            at += used;
        }
        Ok(())
    }

    /// Whether the key has byte for byte the same value in records `a` and `b`: then it has the
    /// same image, and an update need not move it (values that differ only in bytes the
    /// collation ignores still compare equal through their images).
    pub fn same_bytes(&self, a: &[u8], b: &[u8]) -> Result<bool> {
        for s in &self.segs {
            if s.value_from_record(a)? != s.value_from_record(b)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Segments named by a `key_part_map` (a prefix of the key's parts).
    pub fn parts_in_map(&self, map: u64) -> usize {
        (map.trailing_ones() as usize).min(self.segs.len())
    }

    /// Bytes of the key format of the first `parts` segments.
    pub fn key_format_len(&self, parts: usize) -> usize {
        self.segs
            .iter()
            .take(parts)
            .map(|s| usize::from(s.nullable()) + s.key_width())
            .sum()
    }

    /// HEAP's hash of the key in `rec` (`hp_rec_hashnr`); rheap uses it only for the same
    /// cardinality statistics as HEAP.
    pub fn heap_hash(&self, rec: &[u8]) -> Result<u64> {
        let (mut nr, mut nr2) = (1u64, 4u64);
        for s in &self.segs {
            s.hash(s.value_from_record(rec)?, &mut nr, &mut nr2);
        }
        Ok(nr)
    }

    /// Bytes of HEAP's packed BTREE key for the key in `rec` (`hp_rb_make_key`): NULL flags,
    /// VARCHARs as a 1- or 3-byte length plus their bytes, other segments at full length.
    pub fn heap_packed_len(&self, rec: &[u8]) -> Result<u64> {
        let mut n = 0u64;
        for s in &self.segs {
            n += u64::from(s.nullable());
            match s.value_from_record(rec)? {
                Value::Null => {}
                Value::Bytes(b) if matches!(s.kind, SegKind::VarText { .. }) => {
                    n += if b.len() < 255 { 1 } else { 3 } + b.len() as u64;
                }
                _ => n += s.length as u64,
            }
        }
        Ok(n)
    }
}

/// HEAP's position for a hash value in a linear hash of `records` entries (`hp_mask`).
pub fn hp_mask(hash: u64, buffmax: u64, records: u64) -> u64 {
    if hash & (buffmax - 1) < records {
        hash & (buffmax - 1)
    } else {
        hash & ((buffmax >> 1).wrapping_sub(1))
    }
}

/// HEAP's `blength` for a table of `records` rows: the smallest power of two above it.
pub fn hp_blength(records: u64) -> u64 {
    (records + 1).next_power_of_two()
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::collation::testing::{AsciiCi, Binary};
    use std::sync::Arc;

    /// A nullable INT at offset 1 (NULL bit 0x01 at byte 0).
    pub fn int_seg() -> KeySeg {
        KeySeg {
            kind: SegKind::Int {
                bytes: 4,
                signed: true,
            },
            start: 1,
            length: 4,
            null: Some((0, 1)),
        }
    }

    /// A key on [`int_seg`].
    pub fn int_key(algorithm: Algorithm, unique: bool) -> KeyDef {
        KeyDef {
            algorithm,
            unique,
            nulls_equal: false,
            segs: vec![int_seg()],
            key_length: 5,
        }
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
        KeyDef {
            algorithm: Algorithm::Btree,
            unique: true,
            nulls_equal: false,
            segs: vec![KeySeg {
                kind: SegKind::VarText {
                    collation: c,
                    len_bytes: 1,
                },
                start: 0,
                length: len,
                null: None,
            }],
            key_length: len + 2,
        }
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
    fn prefix_keys_cover_their_characters_only() {
        let ci = varchar_key(Arc::new(AsciiCi), 3);
        let img = |s: &[u8]| ci.image_of_record(&vrec(s)).unwrap().bytes;
        assert_eq!(img(b"abcdef"), img(b"ABCxyz"));
    }

    #[test]
    fn floats_order_by_value_and_zeroes_are_equal() {
        let k = KeyDef {
            algorithm: Algorithm::Btree,
            unique: false,
            nulls_equal: false,
            segs: vec![KeySeg {
                kind: SegKind::Double,
                start: 0,
                length: 8,
                null: None,
            }],
            key_length: 8,
        };
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
}
