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

pub mod collation;
pub mod column;
mod segment;

use crate::error::{Error, Result};
use crate::key::collation::{hash_byte, CollationRef};
use crate::rows::format::RowFormat;
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
    Bit(OddBits),
    /// BLOB/TEXT (and JSON, GEOMETRY): a length of `len_bytes` (1 to 4) and a pointer in the
    /// record. A key reads the value from the packed row ([`Row`]), whole, and compares it as
    /// Aria's unique constraints do: by its collation (trailing spaces ignored under PAD
    /// SPACE), or byte for byte with `binary`. HASH keys only; its image is never cut to the
    /// segment's length (the value has none).
    Blob {
        collation: CollationRef,
        len_bytes: usize,
    },
    /// A number, compared by value.
    Number(Number),
}

/// A number as a key column holds it, compared and read by value (BTREE keys, the
/// AUTO_INCREMENT column); the one list of numeric kinds, shared by [`SegKind`] and
/// [`column::ColumnType`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Number {
    /// A little-endian integer of `bytes` bytes.
    Int {
        bytes: usize,
        signed: bool,
    },
    Float,
    Double,
}

/// Where a BIT(n) column keeps the bits that do not fill a byte: among the record's NULL bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OddBits {
    /// Offset of the byte holding the odd bits.
    pub pos: usize,
    /// First bit of them in that byte.
    pub start: u8,
    /// How many odd bits (0: the column is whole bytes).
    pub len: u8,
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
    /// A unique constraint of an internal table (the server's `share->uniques`, which Aria
    /// keeps as a `MARIA_UNIQUEDEF`): a duplicate is reported as Aria reports one
    /// ([`Error::DuplicateUnique`]), and the server reads the row it collided with back by
    /// position.
    pub constraint: bool,
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
    /// A segment is a BLOB ([`has_blobs`](Self::has_blobs)).
    blobs: bool,
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

/// An image and whether any of its segments is NULL.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Image {
    pub bytes: Vec<u8>,
    pub has_null: bool,
}

/// A record, and the packed row it was read from or is stored as when its table packs BLOBs:
/// where a key over a BLOB reads the BLOB's bytes (the record holds only their length and a
/// pointer, which the key layer never follows).
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    pub rec: &'a [u8],
    pub packed: Option<(&'a RowFormat, &'a [u8])>,
}

impl<'a> Row<'a> {
    /// A record alone: enough for every key without a BLOB segment.
    pub fn plain(rec: &'a [u8]) -> Row<'a> {
        Row { rec, packed: None }
    }

    /// A record and its packed form under `format`.
    pub fn packed(rec: &'a [u8], format: &'a RowFormat, packed: &'a [u8]) -> Row<'a> {
        Row {
            rec,
            packed: Some((format, packed)),
        }
    }
}

impl KeyDef {
    /// Whether a segment is a BLOB: the key's images are then made from a [`Row`] with its
    /// packed form.
    #[inline]
    pub fn has_blobs(&self) -> bool {
        self.blobs
    }

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
            constraint: false,
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
            blobs: false,
        };
        for s in &k.segs {
            if let SegKind::Blob { collation: c, .. } = &s.kind {
                k.blobs = true;
                // No order over BLOBs; and a collation that weighs on several levels gives no
                // weights that are equal exactly when values are.
                if algorithm != Algorithm::Hash
                    || (!c.is_binary() && c.weights_unpadded(b"", 0, &mut []).is_none())
                {
                    return Err(Error::Unsupported);
                }
            }
        }
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

    /// The image of the key in `rec`, into `img` (its buffer is reused). A key with a BLOB
    /// segment needs the packed row as well ([`image_of_row_into`](Self::image_of_row_into)).
    pub fn image_of_record_into(&self, rec: &[u8], img: &mut Image) -> Result<()> {
        self.image_of_row_into(Row::plain(rec), img)
    }

    /// The image of the key in `row`, into `img` (its buffer is reused).
    pub fn image_of_row_into(&self, row: Row<'_>, img: &mut Image) -> Result<()> {
        let rec = row.rec;
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
            let v = s.value_from_row(row)?;
            img.has_null |= matches!(v, Value::Null);
            if matches!(s.kind, SegKind::Blob { .. }) {
                s.encode_blob(v, i + 1 < self.segs.len(), &mut img.bytes)?;
            } else if let Some(Some(short)) = self.short.get(i) {
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
mod blob_tests;
#[cfg(test)]
pub mod tests;
