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
//! floats by value, strings by their collation's weights, other types byte by byte; a DESC
//! segment's bytes inverted ([`KeySeg::reverse`]). Because each
//! segment has a fixed width, the image of the first `k` segments is a prefix of the whole
//! image, which is what partial-key reads on BTREE indexes need.

use crate::collation::{hash_byte, CollationRef};
use crate::error::{Error, Result};
use std::ops::Range;

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
    /// A DESC part of a BTREE key: it sorts in reverse, NULLs last, as HEAP's `ha_key_cmp`
    /// reverses every comparison of a segment with `HA_REVERSE_SORT` (the NULL flag's
    /// included). Its image is the ascending image with every byte inverted, which reverses
    /// `memcmp` order over the segment's fixed width. HASH keys have no order and ignore it.
    pub reverse: bool,
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
    /// Whether the image is the key format (see [`raw`](Self::raw)).
    raw: bool,
    /// A raw key with a nullable segment: a lookup's image needs NULL values zeroed.
    raw_nullable: bool,
    /// Bytes of the key format of all segments.
    format_len: usize,
    /// The most bytes an image can take (a raw one is the key format): what a buffer is given
    /// before an image is made, so that making it cannot fail for memory half-way.
    max_image: usize,
    /// For a HASH key, what its images are cut of at the end (see [`pad_unit`]).
    pad: Option<Pad>,
    /// The last segment's weights are made without padding (see
    /// [`KeySeg::encode_unpadded`]).
    unpadded_last: bool,
    /// With [`unpadded_last`](Self::unpadded_last), when the collation weighs each byte by a
    /// table and pads with a one-byte unit: the table and that unit, to weigh the last
    /// segment without the padding at its end in one pass.
    last_map: Option<(&'static [u8; 256], u8)>,
    /// For a HASH key, per segment: how its image is short (see [`KeySeg::encode_short`]);
    /// empty when no segment's is.
    short: Vec<Option<Short>>,
}

/// A string segment's short HASH image (see [`KeySeg::encode_short`]).
#[derive(Debug, Clone)]
struct Short {
    /// Under PAD SPACE, the weight of a space, cut from the end of the weights.
    space: Option<Pad>,
    /// For an 8-bit collation that weighs each byte by a table ([`Collation::byte_weights`]):
    /// the table, and under PAD SPACE the one-byte weight of a space, so that the image is
    /// made in one pass.
    map: Option<(&'static [u8; 256], Option<u8>)>,
}

/// The unit a HASH key's images are cut of (see [`pad_unit`]): at most eight bytes, kept
/// inline (making a key definition allocates nothing for it, so nothing there can fail).
#[derive(Debug, Clone)]
struct Pad {
    bytes: [u8; 8],
    len: u8,
    /// Eight bytes of units, when the unit's length divides eight: cut eight at a time.
    word: Option<u64>,
}

impl Pad {
    /// The length of `b` without the units it ends in.
    #[inline]
    fn cut(&self, b: &[u8]) -> usize {
        let unit = self.unit();
        let p = unit.len();
        let mut end = b.len();
        if let Some(word) = self.word {
            // Eight bytes (whole units) at a time while they are all padding.
            while end >= 8
                && u64::from_ne_bytes(b[end - 8..end].try_into().expect("8 bytes")) == word
            {
                end -= 8;
            }
        }
        while end >= p && bytes_eq(&b[end - p..end], unit) {
            end -= p;
        }
        end
    }

    #[inline]
    fn unit(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// The pad of `unit`, one to eight bytes.
    fn new(unit: &[u8]) -> Pad {
        assert!((1..=8).contains(&unit.len()), "a pad unit is 1 to 8 bytes");
        let mut bytes = [0u8; 8];
        bytes[..unit.len()].copy_from_slice(unit);
        let word = (8 % unit.len() == 0).then(|| {
            let mut w = [0u8; 8];
            w.iter_mut()
                .zip(unit.iter().cycle())
                .for_each(|(w, u)| *w = *u);
            u64::from_ne_bytes(w)
        });
        Pad {
            bytes,
            len: unit.len() as u8,
            word,
        }
    }
}

/// The padding a HASH key's whole images end in, when its last segment is a string compared
/// by a collation (not `binary`): the unit the collation pads weights with, so that a short
/// string has a short image once trailing units are cut off.
///
/// Cutting keeps images exactly as distinct as they were: all images of a key have one width,
/// so two that are equal once cut were the same string of units before, followed by the same
/// number of units. Only equality matters for a HASH key (order does not).
fn pad_unit(algorithm: Algorithm, last: Option<&KeySeg>) -> Result<Option<Pad>> {
    let Some(s) = last else { return Ok(None) };
    let c = match &s.kind {
        SegKind::Text(c) | SegKind::VarText { collation: c, .. } => c,
        _ => return Ok(None),
    };
    if algorithm != Algorithm::Hash || c.is_binary() {
        return Ok(None);
    }
    let width = s.image_width();
    let mut empty = crate::alloc::zeroed(width)?;
    c.weights(b"", s.length / c.mbmaxlen().max(1), &mut empty);
    // The shortest unit the empty string's weights repeat (at most 4 bytes: one weight).
    let Some(p) = (1..=4.min(width)).find(|&p| empty.windows(p + 1).all(|w| w[0] == w[p])) else {
        return Ok(None);
    };
    Ok(Some(Pad::new(&empty[width - p..])))
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

/// Byte equality of two strings, without a call to `memcmp` for the few bytes most keys
/// have.
#[inline]
pub fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let n = a.len();
    // Up to 16 bytes: as two words (or halves) that may overlap, which cover every byte.
    let word = |s: &[u8], at: usize| u64::from_ne_bytes(s[at..at + 8].try_into().expect("8"));
    let half = |s: &[u8], at: usize| u32::from_ne_bytes(s[at..at + 4].try_into().expect("4"));
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

/// The length a VARCHAR's prefix in a record holds: one byte, or two little-endian.
#[inline(always)]
fn var_len(pre: &[u8]) -> usize {
    match *pre {
        [l] => usize::from(l),
        [l0, l1, ..] => usize::from(u16::from_le_bytes([l0, l1])),
        [] => 0,
    }
}

fn slice(buf: &[u8], from: usize, len: usize) -> Result<&[u8]> {
    buf.get(from..from.saturating_add(len))
        .ok_or_else(|| Error::internal("key segment outside the buffer"))
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
        // A value of no more bytes than the characters allowed has no more characters either.
        let n = if mb > 1 && s.len() > self.length / mb {
            coll.charpos(s, self.length / mb).min(s.len())
        } else {
            s.len().min(self.length)
        };
        &s[..n]
    }

    /// Whether the column has byte for byte the same value in records `a` and `b` (a
    /// string's whole value, not only the characters the segment covers): equal stored values
    /// give equal images.
    fn same_stored(&self, a: &[u8], b: &[u8]) -> Result<bool> {
        if let Some((pos, bit)) = self.null {
            let (na, nb) = (slice(a, pos, 1)?[0] & bit, slice(b, pos, 1)?[0] & bit);
            if na != nb || na != 0 {
                return Ok(na == nb);
            }
        }
        let len = match &self.kind {
            SegKind::VarText { len_bytes, .. } => {
                // The length prefix is compared with the bytes: a different length differs.
                len_bytes + var_len(slice(a, self.start, *len_bytes)?)
            }
            SegKind::Bit { len, .. } if *len > 0 => {
                return Ok(self.value_from_record(a)? == self.value_from_record(b)?);
            }
            _ => self.length,
        };
        Ok(bytes_eq(
            slice(a, self.start, len)?,
            slice(b, self.start, len)?,
        ))
    }

    /// When record `rec` stores byte for byte the value at the start of `key` (key format):
    /// the bytes the value takes in the key. None when it does not, or when either buffer is
    /// too short (nothing is then said of the images).
    #[inline]
    fn holds_key(&self, rec: &[u8], key: &[u8]) -> Option<usize> {
        let mut at = 0;
        if let Some((pos, bit)) = self.null {
            let null = *rec.get(pos)? & bit != 0;
            if null != (*key.first()? != 0) {
                return None;
            }
            if null {
                return Some(1 + self.key_width());
            }
            at = 1;
        }
        let whole = key;
        let key = key.get(at..)?;
        let same = match &self.kind {
            SegKind::VarText { len_bytes, .. } => {
                let len = var_len(rec.get(self.start..self.start + len_bytes)?);
                let data = self.start + len_bytes;
                len <= self.length
                    && *key.get(..2)? == (len as u16).to_le_bytes()
                    && bytes_eq(rec.get(data..data + len)?, key.get(2..2 + len)?)
            }
            SegKind::Bit { len, .. } if *len > 0 => {
                // The NULL flag was read above; the value is read as the key gives it.
                let (a, b) = (self.value_from_record(rec), self.value_from_key(whole));
                matches!((a, b), (Ok(a), Ok((b, _))) if a == b)
            }
            _ => bytes_eq(
                rec.get(self.start..self.start + self.length)?,
                key.get(..self.length)?,
            ),
        };
        same.then_some(at + self.key_width())
    }

    /// The bytes of a record the segment's value is read from: its NULL byte, the value (a
    /// VARCHAR's length and all its room) and a BIT's odd bits. A record whose bytes there are
    /// those of another has the same value ([`same_stored`](Self::same_stored)).
    fn record_bytes(&self) -> impl Iterator<Item = Range<usize>> {
        let null = self.null.map(|(pos, _)| pos..pos + 1);
        let (value, bits) = match &self.kind {
            SegKind::VarText { len_bytes, .. } => {
                (self.start..self.start + len_bytes + self.length, None)
            }
            SegKind::Bit { pos, start, len } if *len > 0 => (
                self.start..self.start + self.length - 1,
                Some(*pos..pos + 1 + usize::from(start + len > 8)),
            ),
            _ => (self.start..self.start + self.length, None),
        };
        null.into_iter().chain(Some(value)).chain(bits)
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
                let len = var_len(slice(rec, self.start, *len_bytes)?);
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
                } else if c.pads_with_space() {
                    c.weights_len(self.length)
                } else {
                    // NO PAD: the weights, then their length (see `encode`).
                    c.weights_len(self.length) + 2
                }
            }
            SegKind::Int { bytes, .. } => *bytes,
            SegKind::Float | SegKind::Double => 8,
            SegKind::Binary | SegKind::Bit { .. } => self.length,
        }
    }

    /// How the segment's HASH image is short (see [`encode_short`](Self::encode_short)), when
    /// it is a string whose collation gives the weights of a value's characters without
    /// padding ([`Collation::weights_unpadded`]).
    fn short_form(&self) -> Option<Short> {
        let (SegKind::Text(c) | SegKind::VarText { collation: c, .. }) = &self.kind else {
            return None;
        };
        if c.is_binary() {
            return None;
        }
        let mut w = [0u8; 16];
        let n = c.weights_unpadded(c.space(), 1, &mut w)?;
        let map = c.byte_weights().filter(|_| c.mbmaxlen() == 1);
        if !c.pads_with_space() {
            return Some(Short {
                space: None,
                map: map.map(|m| (m, None)),
            });
        }
        (1..=8).contains(&n).then(|| Short {
            space: Some(Pad::new(&w[..n])),
            map: map.filter(|_| n == 1).map(|m| (m, Some(w[0]))),
        })
    }

    /// Appends the short HASH image of `v`: the weights of its characters, then (when `more`
    /// segments follow) their length in 4 bytes. Under a PAD SPACE collation the value is cut
    /// of the spaces it ends in, and its weights of the spaces' weights they end in.
    ///
    /// Two values are then equal under the collation exactly when their images are: that is
    /// how it compares them, the shorter padded with spaces (NO PAD: not padded). The length
    /// makes the image end where it says, so the images of the segments after it cannot run
    /// into it. A NULL is its flag alone.
    fn encode_short(&self, short: &Short, v: Value<'_>, more: bool, out: &mut Vec<u8>) {
        let (Value::Bytes(b), SegKind::Text(c) | SegKind::VarText { collation: c, .. }) =
            (v, &self.kind)
        else {
            // NULL (a string segment has no other values).
            return out.push(0);
        };
        if self.nullable() {
            out.push(1);
        }
        if let Some((map, space)) = short.map {
            // One weight a byte, as `weights_unpadded` gives them; the bytes that weigh as a
            // space at the end (trailing spaces among them) cut.
            let b = &b[..b.len().min(self.length)];
            let end = match space {
                Some(sp) => b
                    .iter()
                    .rposition(|&x| map[usize::from(x)] != sp)
                    .map_or(0, |i| i + 1),
                None => b.len(),
            };
            out.extend(b[..end].iter().map(|&x| map[usize::from(x)]));
            if more {
                out.extend_from_slice(&(end as u32).to_le_bytes());
            }
            return;
        }
        let b = match short.space {
            Some(_) => &b[..c.trim_spaces(b).min(b.len())],
            None => b,
        };
        let at = out.len();
        let width = c.weights_len(self.length);
        out.resize(at + width, 0);
        let chars = self.length / c.mbmaxlen().max(1);
        let n = c
            .weights_unpadded(b, chars, &mut out[at..])
            .unwrap_or_else(|| {
                // Not for a collation that gave a space's weight: padded weights, as distinct.
                c.weights(b, chars, &mut out[at..]);
                width
            })
            .min(width);
        let end = at
            + short
                .space
                .as_ref()
                .map_or(n, |space| space.cut(&out[at..at + n]));
        out.truncate(end);
        if more {
            out.extend_from_slice(&((end - at) as u32).to_le_bytes());
        }
    }

    /// Appends the image of `v` without the padding at its end, for the last segment of a HASH
    /// key whose images are cut (see [`pad_unit`]) and whose collation weighs each byte on its
    /// own (8-bit collations without expansions): the weights of the characters there are,
    /// which the cut image of the padded weights starts with and is cut to.
    fn encode_unpadded(&self, v: Value<'_>, out: &mut Vec<u8>) {
        let (Value::Bytes(b), SegKind::Text(c) | SegKind::VarText { collation: c, .. }) =
            (v, &self.kind)
        else {
            return self.encode(v, out);
        };
        if self.nullable() {
            out.push(1);
        }
        let at = out.len();
        out.resize(at + b.len(), 0);
        c.weights(b, b.len(), &mut out[at..]);
    }

    /// Whether [`encode_unpadded`](Self::encode_unpadded) applies: a string compared by an
    /// 8-bit collation with one weight byte per byte.
    fn weighs_bytes_alone(&self) -> bool {
        match &self.kind {
            SegKind::Text(c) | SegKind::VarText { collation: c, .. } => {
                !c.is_binary() && c.mbmaxlen() == 1 && c.weights_len(self.length) == self.length
            }
            _ => false,
        }
    }

    /// Appends the image of `v` in the segment's order: [`encode`](Self::encode)'s bytes,
    /// inverted for a DESC segment (its NULL flag's included, so NULLs come last).
    #[inline]
    fn encode_ordered(&self, v: Value<'_>, out: &mut Vec<u8>) {
        let at = out.len();
        self.encode(v, out);
        if self.reverse {
            out[at..].iter_mut().for_each(|b| *b = !*b);
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
                    let chars = self.length / c.mbmaxlen().max(1);
                    if c.pads_with_space() {
                        // Trailing spaces do not count, whatever the weights make of them
                        // (cp1250_czech_cs weighs them as any character).
                        let bytes = &bytes[..c.trim_spaces(bytes).min(bytes.len())];
                        c.weights(bytes, chars, dst);
                    } else {
                        // NO PAD pads weights with zeros, which makes 'x' and 'x\0' one image:
                        // their weights' length follows (big-endian), so that a string sorts
                        // after its prefixes, as the collation orders them.
                        let (w, len) = dst.split_at_mut(dst.len() - 2);
                        let n = match c.weights_unpadded(bytes, chars, w) {
                            Some(n) => {
                                let n = n.min(w.len());
                                w[n..].fill(0);
                                n
                            }
                            None => {
                                c.weights(bytes, chars, w);
                                w.len()
                            }
                        };
                        len.copy_from_slice(&(n.min(usize::from(u16::MAX)) as u16).to_be_bytes());
                    }
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
    /// Whether a HASH read that finds a row makes its key HEAP's last key (`lastkey`, what
    /// HEAP's NEXT and PREV on a HASH key search again from once they are off a row): every
    /// key but a unique one without a nullable part (`heap_rkey`).
    pub fn hash_read_keeps_key(&self) -> bool {
        !self.unique || self.segs.iter().any(KeySeg::nullable)
    }

    /// A key of `segs`, as [`try_new`](Self::try_new) makes it; panics when out of memory
    /// (for tests and tools; the engine uses `try_new`).
    pub fn new(
        algorithm: Algorithm,
        unique: bool,
        nulls_equal: bool,
        segs: Vec<KeySeg>,
        key_length: usize,
    ) -> KeyDef {
        match Self::try_new(algorithm, unique, nulls_equal, segs, key_length) {
            Ok(k) => k,
            Err(e) => panic!("making a key: {e}"),
        }
    }

    /// A key of `segs` (its parts in order); `key_length` is the server's `KEY::key_length`.
    /// `OutOfMemory` when the few bytes it derives cannot be had.
    pub fn try_new(
        algorithm: Algorithm,
        unique: bool,
        nulls_equal: bool,
        segs: Vec<KeySeg>,
        key_length: usize,
    ) -> Result<KeyDef> {
        let mut k = KeyDef {
            algorithm,
            unique,
            nulls_equal,
            segs,
            key_length,
            raw: false,
            raw_nullable: false,
            format_len: 0,
            max_image: 0,
            pad: None,
            unpadded_last: false,
            last_map: None,
            short: Vec::new(),
        };
        if algorithm == Algorithm::Hash && k.segs.iter().any(|s| s.short_form().is_some()) {
            k.short.try_reserve_exact(k.segs.len())?;
            for s in &k.segs {
                k.short.push(s.short_form());
            }
            // Each short image ends where its length says (the last one where the image
            // does): the whole image is never cut.
            k.format_len = k.key_format_len(k.segs.len());
            k.max_image = k.image_len().max(k.format_len) + 4 * k.segs.len();
            return Ok(k);
        }
        k.pad = pad_unit(algorithm, k.segs.last())?;
        k.unpadded_last = k.pad.is_some() && k.segs.last().is_some_and(KeySeg::weighs_bytes_alone);
        k.last_map = match (&k.pad, k.segs.last().map(|s| &s.kind)) {
            (Some(pad), Some(SegKind::Text(c) | SegKind::VarText { collation: c, .. }))
                if k.unpadded_last && pad.len == 1 =>
            {
                c.byte_weights().map(|m| (m, pad.bytes[0]))
            }
            _ => None,
        };
        k.raw = algorithm == Algorithm::Hash
            && k.segs.iter().all(|s| matches!(s.kind, SegKind::Binary));
        k.format_len = k.key_format_len(k.segs.len());
        k.max_image = k.image_len().max(k.format_len);
        k.raw_nullable = k.raw && k.segs.iter().any(KeySeg::nullable);
        Ok(k)
    }

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

    /// Whether the key's image is its key format: a HASH key on columns compared byte by
    /// byte (integers, DECIMAL, temporal types: every non-string type, as HEAP hashes them).
    /// A HASH image only has to be equal for equal keys, so it need not order NULL first: it
    /// keeps the key format's NULL flag (1 for NULL) and zeroes a NULL's bytes. A lookup then
    /// takes the server's key almost as it is.
    fn raw(&self) -> bool {
        self.raw
    }

    /// The raw image (see [`raw`](Self::raw)) of one segment: `null`, or `value`.
    fn push_raw(s: &KeySeg, null: bool, value: &[u8], img: &mut Image) {
        if s.nullable() {
            img.bytes.push(u8::from(null));
        }
        if null {
            img.has_null = true;
            img.bytes.resize(img.bytes.len() + s.length, 0);
        } else {
            img.bytes.extend_from_slice(value);
        }
    }

    /// The image of the key in `rec`, into `img` (its buffer is reused).
    pub fn image_of_record_into(&self, rec: &[u8], img: &mut Image) -> Result<()> {
        img.bytes.clear();
        img.bytes.try_reserve(self.max_image)?;
        img.has_null = false;
        if self.raw() {
            for s in &self.segs {
                let null = match s.null {
                    Some((pos, bit)) => slice(rec, pos, 1)?[0] & bit != 0,
                    None => false,
                };
                Self::push_raw(s, null, slice(rec, s.start, s.length)?, img);
            }
            return Ok(());
        }
        let mut cut = true;
        for (i, s) in self.segs.iter().enumerate() {
            let v = s.value_from_record(rec)?;
            img.has_null |= matches!(v, Value::Null);
            if let Some(Some(short)) = self.short.get(i) {
                s.encode_short(short, v, i + 1 < self.segs.len(), &mut img.bytes);
            } else if self.unpadded_last && i + 1 == self.segs.len() {
                cut = self.encode_last(s, v, &mut img.bytes);
            } else {
                s.encode_ordered(v, &mut img.bytes);
            }
        }
        if cut {
            self.trim(img);
        }
        Ok(())
    }

    /// Appends the image of the last segment's value `v` without the padding at its end;
    /// whether the image may still end in padding (then [`trim`](Self::trim) cuts it).
    fn encode_last(&self, s: &KeySeg, v: Value<'_>, out: &mut Vec<u8>) -> bool {
        let (Some((map, pad)), Value::Bytes(b)) = (self.last_map, v) else {
            s.encode_unpadded(v, out);
            return true;
        };
        if s.nullable() {
            out.push(1);
        }
        // The characters that weigh as padding at the end are the units `trim` would cut.
        let end = b
            .iter()
            .rposition(|&c| map[usize::from(c)] != pad)
            .map_or(0, |i| i + 1);
        out.extend(b[..end].iter().map(|&c| map[usize::from(c)]));
        // An empty value leaves the segments before it (or the NULL flag) at the end.
        end == 0
    }

    /// Cuts a HASH image's trailing padding (see [`pad_unit`]).
    fn trim(&self, img: &mut Image) {
        let Some(pad) = &self.pad else {
            return;
        };
        let end = pad.cut(&img.bytes);
        img.bytes.truncate(end);
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
        img.bytes.try_reserve(self.max_image)?;
        img.has_null = false;
        let mut at = 0;
        if self.raw() {
            // The key format as it is, with the bytes of NULL values zeroed.
            img.bytes
                .extend_from_slice(slice(key, 0, self.key_format_len(parts))?);
            if !self.raw_nullable {
                return Ok(());
            }
            for s in self.segs.iter().take(parts) {
                let flag = usize::from(s.nullable());
                if flag == 1 && img.bytes[at] != 0 {
                    img.bytes[at] = 1;
                    img.bytes[at + 1..at + 1 + s.length].fill(0);
                    img.has_null = true;
                }
                at += flag + s.length;
            }
            return Ok(());
        }
        let mut cut = true;
        for (i, s) in self.segs.iter().take(parts).enumerate() {
            let (v, used) = s.value_from_key(key.get(at..).unwrap_or_default())?;
            img.has_null |= matches!(v, Value::Null);
            if let Some(Some(short)) = self.short.get(i) {
                s.encode_short(short, v, i + 1 < self.segs.len(), &mut img.bytes);
            } else if self.unpadded_last && i + 1 == self.segs.len() {
                cut = self.encode_last(s, v, &mut img.bytes);
            } else {
                s.encode_ordered(v, &mut img.bytes);
            }
            at += used;
        }
        if cut && parts >= self.segs.len() {
            self.trim(img);
        }
        Ok(())
    }

    /// Whether the key has byte for byte the same value in records `a` and `b`: then it has the
    /// same image, and an update need not move it (values that differ only in bytes the
    /// collation ignores still compare equal through their images).
    pub fn same_bytes(&self, a: &[u8], b: &[u8]) -> Result<bool> {
        for s in &self.segs {
            if !s.same_stored(a, b)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether record `rec` holds the very values of key `key` (key format, every segment),
    /// byte for byte: then its image is `key`'s, and no weight need be computed to know it.
    /// False says nothing (equal keys may differ in bytes under a collation).
    ///
    /// A string's stored bytes are compared whole (not cut to the characters a prefix
    /// segment covers): equal whole values have equal cut ones, and the rest is left to the
    /// images. This is most hits of a GROUP BY, so it reads the bytes in place.
    #[inline]
    pub fn record_holds_key(&self, rec: &[u8], key: &[u8]) -> bool {
        let mut at = 0;
        for s in &self.segs {
            match key.get(at..).and_then(|k| s.holds_key(rec, k)) {
                Some(width) => at += width,
                None => return false,
            }
        }
        true
    }

    /// Whether records `a` and `b` hold the same values of the key, byte for byte (as
    /// [`record_holds_key`](Self::record_holds_key)).
    #[inline]
    pub fn records_hold_same_key(&self, a: &[u8], b: &[u8]) -> bool {
        self.same_bytes(a, b).unwrap_or(false)
    }

    /// Every byte of a record that the key's value is read from, as sorted ranges with no two
    /// touching: records equal on all of them have the same key ([`same_bytes`]).
    ///
    /// [`same_bytes`]: Self::same_bytes
    pub fn record_bytes<'a>(
        keys: impl IntoIterator<Item = &'a KeyDef> + Clone,
    ) -> Result<Vec<Range<usize>>> {
        // At most three ranges a segment (NULL byte, value, odd bits).
        let most = keys.clone().into_iter().map(|k| 3 * k.segs.len()).sum();
        let mut all: Vec<Range<usize>> = Vec::new();
        all.try_reserve_exact(most)?;
        all.extend(
            keys.into_iter()
                .flat_map(|k| k.segs.iter().flat_map(KeySeg::record_bytes))
                .filter(|r| !r.is_empty()),
        );
        all.sort_by_key(|r| r.start);
        // Merged in place: a range that touches the last one kept joins it.
        all.dedup_by(|r, kept| {
            let joins = r.start <= kept.end;
            if joins {
                kept.end = kept.end.max(r.end);
            }
            joins
        });
        Ok(all)
    }

    /// Segments named by a `key_part_map` (a prefix of the key's parts).
    #[inline]
    pub fn parts_in_map(&self, map: u64) -> usize {
        (map.trailing_ones() as usize).min(self.segs.len())
    }

    /// Bytes of the key format of the first `parts` segments.
    #[inline]
    pub fn key_format_len(&self, parts: usize) -> usize {
        if parts >= self.segs.len() && self.format_len > 0 {
            return self.format_len;
        }
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
    use crate::collation::Collation;
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
            [1, b'A', b'B', 2, 0, 0, 0, 1, b'X']
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
                kind: SegKind::Double,
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
}
