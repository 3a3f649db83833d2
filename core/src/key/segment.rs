//! One segment of a key: its value read from a record or from the server's key format, and
//! its bytes in a key's image (what a HASH key hashes and compares, what a BTREE key orders).

use super::*;

impl KeySeg {
    /// The value of an AUTO_INCREMENT column, read as HEAP reads it (`heap_update_auto_increment`):
    /// negative values count as 0. `self` is the column with its own (not the key's) kind.
    pub fn auto_increment_value(&self, rec: &[u8]) -> Result<u64> {
        let b = slice(rec, self.start, self.length)?;
        Ok(match self.kind {
            SegKind::Number(Number::Int { bytes, signed }) => {
                let mut v = [0u8; 8];
                v[..bytes].copy_from_slice(&b[..bytes]);
                if signed && b[bytes - 1] & 0x80 != 0 {
                    0
                } else {
                    u64::from_le_bytes(v)
                }
            }
            SegKind::Number(Number::Float) => {
                let f = f32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
                if f < 0.0 {
                    0
                } else {
                    f as u64
                }
            }
            SegKind::Number(Number::Double) => {
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

    pub(super) fn nullable(&self) -> bool {
        self.null.is_some()
    }

    /// The characters a string segment covers: at most `length / mbmaxlen` characters.
    pub(super) fn limit_chars<'a>(&self, coll: &CollationRef, s: &'a [u8]) -> &'a [u8] {
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
    pub(super) fn same_stored(&self, a: &[u8], b: &[u8]) -> Result<bool> {
        if let Some((pos, bit)) = self.null {
            let (na, nb) = (slice(a, pos, 1)?[0] & bit, slice(b, pos, 1)?[0] & bit);
            if na != nb || na != 0 {
                return Ok(na == nb);
            }
        }
        let len = match &self.kind {
            // The record holds a pointer: equal bytes there say nothing of the values.
            SegKind::Blob { .. } => return Ok(false),
            SegKind::VarText { len_bytes, .. } => {
                // The length prefix is compared with the bytes: a different length differs.
                len_bytes + var_len(slice(a, self.start, *len_bytes)?)
            }
            SegKind::Bit(OddBits { len, .. }) if *len > 0 => {
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
    pub(super) fn holds_key(&self, rec: &[u8], key: &[u8]) -> Option<usize> {
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
            // Not in the key format the server gives (it never looks up such a key).
            SegKind::Blob { .. } => return None,
            SegKind::VarText { len_bytes, .. } => {
                let len = var_len(rec.get(self.start..self.start + len_bytes)?);
                let data = self.start + len_bytes;
                len <= self.length
                    && *key.get(..2)? == (len as u16).to_le_bytes()
                    && bytes_eq(rec.get(data..data + len)?, key.get(2..2 + len)?)
            }
            SegKind::Bit(OddBits { len, .. }) if *len > 0 => {
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
    pub(super) fn record_bytes(&self) -> impl Iterator<Item = Range<usize>> {
        let null = self.null.map(|(pos, _)| pos..pos + 1);
        let (value, bits) = match &self.kind {
            SegKind::VarText { len_bytes, .. } => {
                (self.start..self.start + len_bytes + self.length, None)
            }
            SegKind::Blob { len_bytes, .. } => (
                self.start..self.start + len_bytes + std::mem::size_of::<usize>(),
                None,
            ),
            SegKind::Bit(OddBits { pos, start, len }) if *len > 0 => (
                self.start..self.start + self.length - 1,
                Some(*pos..pos + 1 + usize::from(start + len > 8)),
            ),
            _ => (self.start..self.start + self.length, None),
        };
        null.into_iter().chain(Some(value)).chain(bits)
    }

    pub(super) fn value_from_record<'a>(&self, rec: &'a [u8]) -> Result<Value<'a>> {
        self.value_from_row(Row::plain(rec))
    }

    /// The value in `row`: a BLOB's bytes from its packed form.
    pub(super) fn value_from_row<'a>(&self, row: Row<'a>) -> Result<Value<'a>> {
        let rec = row.rec;
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
            SegKind::Blob { .. } => {
                let (format, packed) = row.packed.ok_or_else(|| {
                    Error::internal("a key over a BLOB is read from the packed row")
                })?;
                Value::Bytes(format.blob_value(packed, self.start)?)
            }
            SegKind::Bit(OddBits { pos, start, len }) if *len > 0 => {
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
    pub(super) fn value_from_key<'a>(&self, key: &'a [u8]) -> Result<(Value<'a>, usize)> {
        let mut at = 0;
        if self.nullable() {
            at = 1;
            if slice(key, 0, 1)?[0] != 0 {
                return Ok((Value::Null, 1 + self.key_width()));
            }
        }
        let v = match &self.kind {
            SegKind::Blob { .. } => {
                return Err(Error::internal("a key over a BLOB has no key format"));
            }
            SegKind::Text(c) => Value::Bytes(self.limit_chars(c, slice(key, at, self.length)?)),
            SegKind::VarText { collation, .. } => {
                let pre = slice(key, at, 2)?;
                let len = usize::from(u16::from_le_bytes([pre[0], pre[1]])).min(self.length);
                Value::Bytes(self.limit_chars(collation, slice(key, at + 2, len)?))
            }
            SegKind::Bit(OddBits { len, .. }) if *len > 0 => {
                let b = slice(key, at, self.length)?;
                Value::Bits(b[0], &b[1..])
            }
            _ => Value::Bytes(slice(key, at, self.length)?),
        };
        Ok((v, at + self.key_width()))
    }

    /// Bytes of the value in the key format (without the NULL flag).
    pub(super) fn key_width(&self) -> usize {
        match self.kind {
            SegKind::VarText { .. } => 2 + self.length,
            SegKind::Blob { .. } => 0,
            _ => self.length,
        }
    }

    /// Bytes of the value in an image (without the NULL flag).
    pub(super) fn image_width(&self) -> usize {
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
            SegKind::Number(Number::Int { bytes, .. }) => *bytes,
            SegKind::Number(Number::Float) | SegKind::Number(Number::Double) => 8,
            SegKind::Binary | SegKind::Bit(_) => self.length,
            // As long as the value's weights ([`encode_blob`](Self::encode_blob)).
            SegKind::Blob { .. } => 0,
        }
    }

    /// How the segment's HASH image is short (see [`encode_short`](Self::encode_short)), when
    /// it is a string whose collation gives the weights of a value's characters without
    /// padding ([`Collation::weights_unpadded`]).
    pub(super) fn short_form(&self) -> Option<Short> {
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
    pub(super) fn encode_short(&self, short: &Short, v: Value<'_>, more: bool, out: &mut Vec<u8>) {
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
            if more {
                out.extend_from_slice(&(end as u32).to_le_bytes());
            }
            out.extend(b[..end].iter().map(|&x| map[usize::from(x)]));
            return;
        }
        let b = match short.space {
            Some(_) => &b[..c.trim_spaces(b).min(b.len())],
            None => b,
        };
        // The length goes first (filled in below), so that images split one way only.
        let len_at = out.len();
        if more {
            out.extend_from_slice(&[0; 4]);
        }
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
            out[len_at..at].copy_from_slice(&((end - at) as u32).to_le_bytes());
        }
    }

    /// Appends the image of a BLOB segment's value `v` ([`SegKind::Blob`]): a NULL is its flag
    /// (0) alone; a value is its flag (1, when the column is nullable), then, when `more`
    /// segments follow, the length of what comes next in 4 bytes, then the weights of the
    /// whole value without padding (its bytes under `binary`), under PAD SPACE without the
    /// spaces it ends in and the weights of spaces they end in. The length comes first, so an
    /// image splits into its segments one way only, and two values are equal under the
    /// collation exactly when their images are (the compare of Aria's unique constraints,
    /// which hash and compare whole values).
    ///
    /// Fails when memory for the image cannot be had (a value may be megabytes), and for a
    /// collation that weighs on more than one level ([`Collation::weights_unpadded`] says
    /// None): a key over a BLOB in such a collation cannot be made ([`KeyDef::try_new`]).
    pub(super) fn encode_blob(&self, v: Value<'_>, more: bool, out: &mut Vec<u8>) -> Result<()> {
        let SegKind::Blob { collation: c, .. } = &self.kind else {
            return Err(Error::internal("not a BLOB segment"));
        };
        let b = match v {
            Value::Null => {
                out.try_reserve(1)?;
                out.push(0);
                return Ok(());
            }
            Value::Bytes(b) => b,
            Value::Bits(..) => return Err(Error::internal("a BLOB holds no bits")),
        };
        let b = if c.pads_with_space() && !c.is_binary() {
            &b[..c.trim_spaces(b).min(b.len())]
        } else {
            b
        };
        // A collation sizes weights for a column of n bytes, n / mbmaxlen characters; a value
        // of n bytes may hold n characters, each weighed.
        let width = if c.is_binary() {
            b.len()
        } else {
            c.weights_len(b.len().saturating_mul(c.mbmaxlen().max(1)))
        };
        out.try_reserve(1 + 4 + width)?;
        if self.nullable() {
            out.push(1);
        }
        let len_at = out.len();
        if more {
            out.extend_from_slice(&[0; 4]);
        }
        let at = out.len();
        if c.is_binary() {
            out.extend_from_slice(b);
        } else {
            out.resize(at + width, 0);
            let n = c
                .weights_unpadded(b, b.len(), &mut out[at..])
                .ok_or_else(|| Error::internal("a BLOB key in a multi-level collation"))?;
            let mut end = at + n.min(width);
            if c.pads_with_space() {
                end = at + blob_space(c.as_ref()).map_or(end - at, |sp| sp.cut(&out[at..end]));
            }
            out.truncate(end);
        }
        if more {
            let n = (out.len() - at) as u32;
            out[len_at..at].copy_from_slice(&n.to_le_bytes());
        }
        Ok(())
    }

    /// Appends the image of `v` without the padding at its end, for the last segment of a HASH
    /// key whose images are cut (see [`pad_unit`]) and whose collation weighs each byte on its
    /// own (8-bit collations without expansions): the weights of the characters there are,
    /// which the cut image of the padded weights starts with and is cut to.
    pub(super) fn encode_unpadded(&self, v: Value<'_>, out: &mut Vec<u8>) {
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
    pub(super) fn weighs_bytes_alone(&self) -> bool {
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
    pub(super) fn encode_ordered(&self, v: Value<'_>, out: &mut Vec<u8>) {
        let at = out.len();
        self.encode(v, out);
        if self.reverse {
            out[at..].iter_mut().for_each(|b| *b = !*b);
        }
    }

    /// Appends the image of `v`.
    pub(super) fn encode(&self, v: Value<'_>, out: &mut Vec<u8>) {
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
            SegKind::Number(Number::Int { signed, .. }) => {
                for (d, s) in dst.iter_mut().zip(bytes.iter().rev()) {
                    *d = *s;
                }
                if *signed {
                    dst[0] ^= 0x80;
                }
            }
            SegKind::Number(Number::Float) | SegKind::Number(Number::Double) => {
                let f = match self.kind {
                    SegKind::Number(Number::Float) => {
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
            // A BLOB's image is made by `encode_blob`, never here (its width is 0).
            SegKind::Binary | SegKind::Bit(_) | SegKind::Blob { .. } => {
                let n = bytes.len().min(width);
                dst[..n].copy_from_slice(&bytes[..n]);
            }
        }
    }

    /// Mixes the value into HEAP's hash (`hp_rec_hashnr`).
    pub(super) fn hash(&self, v: Value<'_>, nr: &mut u64, nr2: &mut u64) {
        match v {
            Value::Null => *nr ^= (*nr << 1) | 1,
            Value::Bits(bits, rest) => {
                hash_byte(nr, nr2, bits);
                rest.iter().for_each(|&b| hash_byte(nr, nr2, b));
            }
            Value::Bytes(b) => match &self.kind {
                SegKind::Text(c)
                | SegKind::VarText { collation: c, .. }
                | SegKind::Blob { collation: c, .. } => c.hash(b, nr, nr2),
                _ => b.iter().for_each(|&x| hash_byte(nr, nr2, x)),
            },
        }
    }
}

/// The weight of a space under `c` without padding, as the unit a BLOB's weights are cut of
/// at their end (characters that weigh as a space count as spaces under PAD SPACE); None when
/// the collation cannot say or the weight is longer than a unit holds.
pub(super) fn blob_space(c: &dyn crate::key::collation::Collation) -> Option<Pad> {
    let mut w = [0u8; 16];
    let n = c.weights_unpadded(c.space(), 1, &mut w)?;
    (1..=8).contains(&n).then(|| Pad::new(&w[..n]))
}
