//! Compact rows: a record in the server's format, stored with each VARCHAR at its actual length
//! and each BLOB's bytes inline.
//!
//! The server's record has every field at a fixed offset: a VARCHAR takes a 1- or 2-byte
//! length and then its *declared* maximum, a BLOB a 1- to 4-byte length and an 8-byte pointer to
//! bytes the server owns. HEAP stores the record as it is (and refuses BLOBs), so a row with a
//! VARCHAR(255) utf8mb4 column costs over a kilobyte whatever it holds. A packed row keeps the
//! fixed bytes between those fields, each VARCHAR's length and used bytes, and each BLOB's length
//! and bytes:
//!
//! ```text
//! record:  | fixed | len v1 | v1 ......(max)...... | fixed | len b | ptr b |
//! packed:  | fixed | len v1 | v1 | fixed | len b | b's bytes |
//! ```
//!
//! A VARCHAR whose record holds a 2-byte length (room for more than 255 bytes: a VARCHAR(64)
//! utf8mb4 already) keeps it in 1 byte when its value is shorter than 128 bytes, as most are
//! ([`put_len2`]).
//!
//! Unpacking rebuilds the record: a BLOB's pointer points into a buffer the caller keeps for as
//! long as the server may read the record (the handler's buffer, until its next read). A
//! VARCHAR's unused bytes are zero, or, for an internal temporary table
//! ([`RowFormat::for_table`]), left as the buffer held them: the server reads a VARCHAR up to its
//! length, and MyISAM and Aria leave those bytes alone as well when they unpack a row.

use crate::error::{Error, Result};

/// A variable-length field of the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarField {
    /// Offset of the field (its length bytes) in the record.
    pub offset: usize,
    pub kind: VarKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarKind {
    /// VARCHAR/VARBINARY: `len_bytes` (1 or 2) of length, then `max` bytes of room.
    Varchar { len_bytes: usize, max: usize },
    /// BLOB/TEXT (and JSON, GEOMETRY): `len_bytes` (1 to 4) of length, then a pointer.
    Blob { len_bytes: usize },
}

const POINTER: usize = std::mem::size_of::<*const u8>();

impl VarKind {
    /// Bytes the field takes in the record.
    fn width(self) -> usize {
        match self {
            VarKind::Varchar { len_bytes, max } => len_bytes + max,
            VarKind::Blob { len_bytes } => len_bytes + POINTER,
        }
    }

    fn len_bytes(self) -> usize {
        match self {
            VarKind::Varchar { len_bytes, .. } | VarKind::Blob { len_bytes } => len_bytes,
        }
    }
}

/// Whose a table is, which decides how it stores its rows ([`RowFormat::for_table`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// An ENGINE=RHEAP table.
    Rheap,
    /// An ENGINE=MEMORY table rheap serves.
    Memory,
    /// One of the server's internal temporary tables.
    Internal,
}

/// How a table's records are packed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowFormat {
    rec_len: usize,
    /// In record order, not overlapping.
    vars: Vec<VarField>,
    blobs: bool,
    /// Unpacking leaves a VARCHAR's room past its length as the buffer held it (else zeros).
    leave_room: bool,
}

/// The length a field's length bytes hold (little-endian, 1 to 4 bytes).
#[inline(always)]
fn read_len(b: &[u8]) -> usize {
    match *b {
        [l] => usize::from(l),
        [l0, l1] => usize::from(u16::from_le_bytes([l0, l1])),
        _ => {
            let mut v = [0u8; 8];
            v[..b.len()].copy_from_slice(b);
            u64::from_le_bytes(v) as usize
        }
    }
}

/// Below this, a 2-byte length is packed in 1 byte.
const LEN2_SHORT: usize = 0x80;
/// Below this, in 2 bytes (the first's top bits `10`); else in 3 (`0xC0` and the 2 bytes).
const LEN2_MEDIUM: usize = 0x4000;
const LEN2_LONG: u8 = 0xC0;

/// Appends the packed form of a VARCHAR's 2-byte length `len`: 1, 2 or 3 bytes.
#[inline(always)]
fn put_len2(out: &mut Vec<u8>, len: usize) -> Result<()> {
    match len {
        l if l < LEN2_SHORT => append(out, &[l as u8]),
        l if l < LEN2_MEDIUM => append(out, &[0x80 | (l >> 8) as u8, l as u8]),
        l => {
            let [lo, hi] = (l as u16).to_le_bytes();
            append(out, &[LEN2_LONG, lo, hi])
        }
    }
}

/// A packed 2-byte length at the start of `b`: the length and the bytes it takes.
#[inline(always)]
fn get_len2(b: &[u8]) -> Result<(usize, usize)> {
    let first = *b.first().ok_or_else(corrupt)?;
    let byte = |i: usize| b.get(i).copied().map(usize::from).ok_or_else(corrupt);
    Ok(match first {
        f if usize::from(f) < LEN2_SHORT => (usize::from(f), 1),
        LEN2_LONG => (byte(1)? | byte(2)? << 8, 3),
        f => ((usize::from(f) & 0x3F) << 8 | byte(1)?, 2),
    })
}

/// Copies `n` bytes from `src` to `dst`. A field's run is mostly a few bytes: those take two
/// loads and two stores that overlap in the middle, as `memcpy` itself does for them, without
/// the call.
///
/// # Safety
/// `src` must be readable and `dst` writable for `n` bytes, and the two must not overlap.
#[inline(always)]
unsafe fn copy_short(src: *const u8, dst: *mut u8, n: usize) {
    use std::ptr::{read_unaligned as load, write_unaligned as store};
    // SAFETY: in each arm the two accesses are at offsets 0 and n - size, so both lie within
    // the n bytes the caller vouches for, and together they cover all of them.
    unsafe {
        match n {
            0 => {}
            1..=3 => {
                let (a, b, c) = (*src, *src.add(n / 2), *src.add(n - 1));
                (*dst, *dst.add(n / 2), *dst.add(n - 1)) = (a, b, c);
            }
            4..=7 => {
                let (a, b) = (load(src.cast::<u32>()), load(src.add(n - 4).cast::<u32>()));
                store(dst.cast::<u32>(), a);
                store(dst.add(n - 4).cast::<u32>(), b);
            }
            8..=16 => {
                let (a, b) = (load(src.cast::<u64>()), load(src.add(n - 8).cast::<u64>()));
                store(dst.cast::<u64>(), a);
                store(dst.add(n - 8).cast::<u64>(), b);
            }
            17..=32 => {
                let (a, b) = (
                    load(src.cast::<u128>()),
                    load(src.add(n - 16).cast::<u128>()),
                );
                store(dst.cast::<u128>(), a);
                store(dst.add(n - 16).cast::<u128>(), b);
            }
            _ => std::ptr::copy_nonoverlapping(src, dst, n),
        }
    }
}

/// `dst.copy_from_slice(src)`, short runs inline.
#[inline(always)]
fn copy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "copy between runs of one length");
    // SAFETY: both slices hold `src.len()` bytes, and a `&mut` slice overlaps no other.
    unsafe { copy_short(src.as_ptr(), dst.as_mut_ptr(), src.len()) }
}

/// `out.extend_from_slice(src)`, short runs inline; fails when the vector cannot grow.
#[inline(always)]
fn append(out: &mut Vec<u8>, src: &[u8]) -> Result<()> {
    out.try_reserve(src.len())?;
    let len = out.len();
    // SAFETY: the vector has room for `src.len()` more bytes, which the copy initialises
    // before the length covers them; `src` is not part of the vector (`&mut` borrows it).
    unsafe {
        copy_short(src.as_ptr(), out.as_mut_ptr().add(len), src.len());
        out.set_len(len + src.len());
    }
    Ok(())
}

impl RowFormat {
    /// The format of records of `rec_len` bytes with these variable-length fields. Fails when a
    /// field does not lie inside the record or fields overlap.
    /// A copy, or `OutOfMemory` (`clone` would abort the server).
    pub fn try_clone(&self) -> Result<RowFormat> {
        Ok(RowFormat {
            vars: crate::alloc::try_collect(self.vars.iter().cloned())?,
            ..*self
        })
    }

    pub fn new(rec_len: usize, mut vars: Vec<VarField>) -> Result<RowFormat> {
        vars.sort_by_key(|v| v.offset);
        let mut end = 0;
        for v in &vars {
            let ok = v.offset >= end
                && (1..=4).contains(&v.kind.len_bytes())
                && !matches!(v.kind, VarKind::Varchar { len_bytes, .. } if len_bytes > 2);
            end = v.offset + v.kind.width();
            if !ok || end > rec_len {
                return Err(Error::internal(format!("bad variable field {v:?}")));
            }
        }
        let blobs = vars.iter().any(|v| matches!(v.kind, VarKind::Blob { .. }));
        Ok(RowFormat {
            rec_len,
            vars,
            blobs,
            leave_room: false,
        })
    }

    /// The format of a table's records of `rec_len` bytes, whose definition describes `vars`:
    /// - an ENGINE=RHEAP table packs them;
    /// - a table served for MEMORY keeps MEMORY's fixed rows;
    /// - an internal temporary table packs them when it has BLOBs (which a fixed row cannot
    ///   hold) or VARCHARs described (the shim describes only those whose room packing
    ///   saves). A row of information_schema's `TABLES` takes 15 KB as a record, mostly the
    ///   room of its comment, options and catalog, and a few hundred bytes packed; a GROUP BY,
    ///   DISTINCT or UNION row keyed on a VARCHAR(100) utf8mb4 takes its 400 bytes of room
    ///   as a record, its characters packed. Unpacking leaves a VARCHAR's room past its
    ///   length as the buffer held it. Tables with only fixed-width columns keep fixed rows.
    pub fn for_table(rec_len: usize, vars: Vec<VarField>, owner: Owner) -> Result<RowFormat> {
        let packed = match owner {
            Owner::Rheap => true,
            Owner::Memory => false,
            Owner::Internal => !vars.is_empty(),
        };
        let format = RowFormat::new(rec_len, if packed { vars } else { Vec::new() })?;
        Ok(if owner == Owner::Internal {
            format.leaving_room()
        } else {
            format
        })
    }

    /// This format, unpacking without writing to a VARCHAR's room past its length: for the
    /// server's internal temporary tables, whose records' room is read by no one, so that a
    /// row of information_schema.TABLES (15 KB as a record) costs its few hundred bytes.
    fn leaving_room(self) -> RowFormat {
        RowFormat {
            leave_room: true,
            ..self
        }
    }

    /// Whether records are stored as they are (no variable-length field).
    pub fn is_fixed(&self) -> bool {
        self.vars.is_empty()
    }

    /// Whether the records have BLOB fields.
    pub fn has_blobs(&self) -> bool {
        self.blobs
    }

    /// Packs `rec` into `out` (cleared first); returns the bytes of BLOB data in it.
    ///
    /// # Safety
    /// Every BLOB field of `rec` holding a non-zero length must hold a pointer to at least that
    /// many readable bytes.
    pub unsafe fn pack(&self, rec: &[u8], out: &mut Vec<u8>) -> Result<usize> {
        if rec.len() != self.rec_len {
            return Err(Error::WrongCommand);
        }
        out.clear();
        let mut blob_bytes = 0;
        let mut at = 0;
        for v in &self.vars {
            let lb = v.kind.len_bytes();
            let len = read_len(&rec[v.offset..v.offset + lb]);
            match v.kind {
                VarKind::Varchar { max, .. } => {
                    if len > max {
                        return Err(Error::WrongCommand);
                    }
                    if lb == 2 {
                        // The fixed bytes before the field, its length packed, its bytes.
                        append(out, &rec[at..v.offset])?;
                        put_len2(out, len)?;
                        append(out, &rec[v.offset + 2..v.offset + 2 + len])?;
                    } else {
                        // The fixed bytes before the field, its length and its bytes: one run.
                        append(out, &rec[at..v.offset + lb + len])?;
                    }
                }
                VarKind::Blob { .. } => {
                    append(out, &rec[at..v.offset + lb])?;
                    if len != 0 {
                        let mut p = [0u8; POINTER];
                        p.copy_from_slice(&rec[v.offset + lb..v.offset + lb + POINTER]);
                        let ptr = usize::from_ne_bytes(p) as *const u8;
                        if ptr.is_null() {
                            return Err(Error::WrongCommand);
                        }
                        blob_bytes += len;
                        // SAFETY: the caller guarantees the pointer covers `len` bytes.
                        append(out, unsafe { std::slice::from_raw_parts(ptr, len) })?;
                    }
                }
            }
            at = v.offset + v.kind.width();
        }
        append(out, &rec[at..])?;
        Ok(blob_bytes)
    }

    /// Bytes of BLOB data in packed row `packed`.
    pub fn blob_bytes(&self, packed: &[u8]) -> Result<usize> {
        if !self.blobs {
            return Ok(0);
        }
        let mut n = 0;
        self.walk(packed, |v, len, _| {
            if matches!(v.kind, VarKind::Blob { .. }) {
                n += len;
            }
        })?;
        Ok(n)
    }

    /// The bytes of the BLOB whose field is at `offset` in the record, read from packed row
    /// `packed` (where they are inline): what a key over a BLOB compares, with no pointer
    /// read.
    pub fn blob_value<'a>(&self, packed: &'a [u8], offset: usize) -> Result<&'a [u8]> {
        let mut found = None;
        self.walk(packed, |v, _, data| {
            if v.offset == offset {
                found = Some((v.kind, data));
            }
        })?;
        match found {
            Some((VarKind::Blob { .. }, data)) => Ok(data),
            Some(_) => Err(Error::internal(format!(
                "the field at {offset} is a VARCHAR, not a BLOB"
            ))),
            None => Err(Error::internal(format!("no BLOB field at offset {offset}"))),
        }
    }

    /// Rebuilds the record of `packed` into `out`; BLOB pointers point into `blobs`, which is
    /// replaced (so the record is valid as long as `blobs` is neither changed nor dropped).
    pub fn unpack(&self, packed: &[u8], out: &mut [u8], blobs: &mut Vec<u8>) -> Result<()> {
        match self.unpack_prefix(packed, out, blobs)? == packed.len() {
            true => Ok(()),
            false => Err(corrupt()),
        }
    }

    /// [`unpack`](Self::unpack) of the packed row that `packed` starts with (more may follow
    /// it); returns its length. One walk over the row, where finding its length first
    /// ([`packed_len`](Self::packed_len)) would take two.
    pub fn unpack_prefix(
        &self,
        packed: &[u8],
        out: &mut [u8],
        blobs: &mut Vec<u8>,
    ) -> Result<usize> {
        if out.len() != self.rec_len {
            return Err(Error::WrongCommand);
        }
        // All BLOB bytes go in first, so the buffer does not move while pointers are written.
        blobs.clear();
        let total = self.blob_bytes(packed)?;
        blobs.try_reserve(total)?;
        let mut at_rec = 0;
        let mut at = 0;
        for v in &self.vars {
            let lb = v.kind.len_bytes();
            let end = v.offset + v.kind.width();
            if let VarKind::Varchar { len_bytes: 2, max } = v.kind {
                // The fixed bytes before the field, its packed length, its bytes.
                let fixed = v.offset - at_rec;
                let run = packed.get(at..at + fixed).ok_or_else(corrupt)?;
                copy(&mut out[at_rec..v.offset], run);
                at += fixed;
                let (len, taken) = get_len2(packed.get(at..).ok_or_else(corrupt)?)?;
                if len > max {
                    return Err(corrupt());
                }
                at += taken;
                out[v.offset..v.offset + 2].copy_from_slice(&(len as u16).to_le_bytes());
                let data = packed.get(at..at + len).ok_or_else(corrupt)?;
                copy(&mut out[v.offset + 2..v.offset + 2 + len], data);
                if !self.leave_room {
                    out[v.offset + 2 + len..end].fill(0);
                }
                at += len;
                at_rec = end;
                continue;
            }
            // The fixed bytes before the field and its length, then its bytes.
            let head = v.offset - at_rec + lb;
            let len = read_len(packed.get(at + head - lb..at + head).ok_or_else(corrupt)?);
            match v.kind {
                VarKind::Varchar { max, .. } => {
                    if len > max {
                        return Err(corrupt());
                    }
                    let run = packed.get(at..at + head + len).ok_or_else(corrupt)?;
                    copy(&mut out[at_rec..at_rec + run.len()], run);
                    if !self.leave_room {
                        out[at_rec + run.len()..end].fill(0);
                    }
                    at += run.len();
                }
                VarKind::Blob { .. } => {
                    copy(&mut out[at_rec..v.offset + lb], &packed[at..at + head]);
                    at += head;
                    let data = packed.get(at..at + len).ok_or_else(corrupt)?;
                    let start = blobs.len();
                    blobs.extend_from_slice(data);
                    let ptr = if len == 0 {
                        0
                    } else {
                        blobs[start..].as_ptr() as usize
                    };
                    out[v.offset + lb..end].copy_from_slice(&ptr.to_ne_bytes());
                    at += len;
                }
            }
            at_rec = end;
        }
        let tail = packed
            .get(at..at + (self.rec_len - at_rec))
            .ok_or_else(corrupt)?;
        copy(&mut out[at_rec..], tail);
        Ok(at + tail.len())
    }

    /// Whether this is an internal temporary table's format ([`Owner::Internal`]).
    pub fn is_internal(&self) -> bool {
        self.leave_room
    }

    /// Bytes of the packed row that `bytes` starts with (its fixed bytes and each field's
    /// length say where it ends).
    #[inline]
    pub fn packed_len(&self, bytes: &[u8]) -> Result<usize> {
        let end = self.walk(bytes, |_, _, _| {})?;
        match end <= bytes.len() {
            true => Ok(end),
            false => Err(corrupt()),
        }
    }

    /// The length of field `v` packed at the start of `b`, and the bytes that length takes.
    #[inline(always)]
    fn field_len(&self, v: &VarField, b: &[u8]) -> Result<(usize, usize)> {
        match v.kind {
            VarKind::Varchar { len_bytes: 2, .. } => get_len2(b),
            k => {
                let lb = k.len_bytes();
                Ok((read_len(b.get(..lb).ok_or_else(corrupt)?), lb))
            }
        }
    }

    /// Calls `f` with each variable field of `packed`, its length and data; returns where
    /// the row ends (after its last fixed bytes, which are not checked to be there).
    #[inline]
    fn walk<'a>(
        &self,
        packed: &'a [u8],
        mut f: impl FnMut(&VarField, usize, &'a [u8]),
    ) -> Result<usize> {
        let mut at_rec = 0;
        let mut at = 0;
        for v in &self.vars {
            at += v.offset - at_rec;
            let (len, taken) = self.field_len(v, packed.get(at..).ok_or_else(corrupt)?)?;
            at += taken;
            f(v, len, packed.get(at..at + len).ok_or_else(corrupt)?);
            at += len;
            at_rec = v.offset + v.kind.width();
        }
        Ok(at + (self.rec_len - at_rec))
    }
}

fn corrupt() -> Error {
    Error::internal("a stored row does not match its table's format")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `[null byte][VARCHAR(10), 1-byte length][INT][BLOB, 2-byte length][CHAR(2)]`
    fn format() -> RowFormat {
        RowFormat::new(
            1 + 11 + 4 + 10 + 2,
            vec![
                VarField {
                    offset: 1,
                    kind: VarKind::Varchar {
                        len_bytes: 1,
                        max: 10,
                    },
                },
                VarField {
                    offset: 16,
                    kind: VarKind::Blob { len_bytes: 2 },
                },
            ],
        )
        .unwrap()
    }

    fn record(v: &[u8], n: i32, blob: &[u8]) -> Vec<u8> {
        let mut r = vec![0u8];
        r.push(v.len() as u8);
        r.extend_from_slice(v);
        r.resize(12, 0xEE); // garbage after the VARCHAR's bytes: never stored
        r.extend_from_slice(&n.to_le_bytes());
        r.extend_from_slice(&(blob.len() as u16).to_le_bytes());
        let p = if blob.is_empty() {
            0
        } else {
            blob.as_ptr() as usize
        };
        r.extend_from_slice(&p.to_ne_bytes());
        r.extend_from_slice(b"ok");
        r
    }

    #[test]
    fn a_two_byte_length_packs_in_one_to_three_bytes() {
        let max = 65_532;
        let f = RowFormat::new(
            1 + 2 + max + 1,
            vec![VarField {
                offset: 1,
                kind: VarKind::Varchar { len_bytes: 2, max },
            }],
        )
        .unwrap();
        for (len, taken) in [
            (0, 1),
            (127, 1),
            (128, 2),
            (0x3FFF, 2),
            (0x4000, 3),
            (max, 3),
        ] {
            let mut rec = vec![0u8; 1 + 2 + max + 1];
            rec[0] = 9;
            rec[1..3].copy_from_slice(&(len as u16).to_le_bytes());
            rec[3..3 + len].fill(b'x');
            rec[3 + max] = 5;
            let mut packed = Vec::new();
            // SAFETY: the format has no BLOB.
            unsafe { f.pack(&rec, &mut packed) }.unwrap();
            assert_eq!(packed.len(), 1 + taken + len + 1, "{len}");
            packed.extend_from_slice(b"after");
            assert_eq!(f.packed_len(&packed).unwrap(), 1 + taken + len + 1);
            packed.truncate(packed.len() - 5);
            let mut out = vec![0xEEu8; rec.len()];
            f.unpack(&packed, &mut out, &mut Vec::new()).unwrap();
            assert_eq!(out, rec, "{len}");
        }
    }

    #[test]
    fn packs_to_the_used_bytes_and_back() {
        let f = format();
        let blob = b"a blob of bytes".to_vec();
        let rec = record(b"abc", 7, &blob);
        let mut packed = Vec::new();
        // SAFETY: the record's blob pointer points at `blob`, which lives through the call.
        let n = unsafe { f.pack(&rec, &mut packed) }.unwrap();
        assert_eq!(n, blob.len());
        assert_eq!(packed.len(), 1 + 1 + 3 + 4 + 2 + blob.len() + 2);
        let mut out = vec![0xAAu8; rec.len()];
        let mut blobs = Vec::new();
        f.unpack(&packed, &mut out, &mut blobs).unwrap();
        assert_eq!(&out[..5], &rec[..5]);
        assert_eq!(
            &out[5..12],
            &[0; 7],
            "a VARCHAR's unused bytes come back as zeros"
        );
        assert_eq!(&out[12..18], &rec[12..18]);
        assert_eq!(blobs, blob);
        let p = usize::from_ne_bytes(out[18..26].try_into().unwrap());
        assert_eq!(p, blobs.as_ptr() as usize);
        assert_eq!(&out[26..], b"ok");
        assert_eq!(f.blob_bytes(&packed).unwrap(), blob.len());
    }

    #[test]
    fn a_format_leaving_room_writes_only_the_used_bytes() {
        let f = format().leaving_room();
        let rec = record(b"abc", 7, &[]);
        let mut packed = Vec::new();
        // SAFETY: the record's BLOB is empty (a null pointer, never read).
        unsafe { f.pack(&rec, &mut packed) }.unwrap();
        let mut out = vec![0xAAu8; rec.len()];
        f.unpack(&packed, &mut out, &mut Vec::new()).unwrap();
        assert_eq!(&out[..5], &rec[..5]);
        assert_eq!(&out[5..12], &[0xAA; 7], "the VARCHAR's room is as it was");
        assert_eq!(&out[12..], &rec[12..]);
    }

    #[test]
    fn internal_tables_pack_their_rows_when_they_have_no_key() {
        // A null byte, a VARCHAR(1000) with a 2-byte length, an INT.
        let rec_len = 1 + 1002 + 4;
        let var = VarField {
            offset: 1,
            kind: VarKind::Varchar {
                len_bytes: 2,
                max: 1000,
            },
        };
        let format = |owner| RowFormat::for_table(rec_len, vec![var], owner).unwrap();
        assert!(
            !format(Owner::Internal).is_fixed(),
            "an internal table's long VARCHAR (information_schema's, GROUP BY's)"
        );
        assert!(
            RowFormat::for_table(rec_len, Vec::new(), Owner::Internal)
                .unwrap()
                .is_fixed(),
            "fixed-width columns only"
        );
        assert!(format(Owner::Memory).is_fixed(), "MEMORY's rows stay fixed");
        assert!(!format(Owner::Rheap).is_fixed(), "RHEAP tables pack theirs");
        let blob = VarField {
            offset: 1003,
            kind: VarKind::Blob { len_bytes: 4 },
        };
        let with_blob = RowFormat::for_table(rec_len + 8, vec![var, blob], Owner::Internal);
        assert!(!with_blob.unwrap().is_fixed(), "a BLOB needs a packed row");

        // An internal table's VARCHAR room is left as the buffer held it; a RHEAP table's is
        // zeros.
        let mut rec = vec![0u8; rec_len];
        rec[1..3].copy_from_slice(&3u16.to_le_bytes());
        rec[3..6].copy_from_slice(b"abc");
        rec[1003..].copy_from_slice(&7i32.to_le_bytes());
        for (owner, room) in [(Owner::Internal, 0xEE), (Owner::Rheap, 0)] {
            let f = format(owner);
            let mut packed = Vec::new();
            // SAFETY: the format has no BLOB.
            unsafe { f.pack(&rec, &mut packed) }.unwrap();
            assert_eq!(
                packed.len(),
                1 + 1 + 3 + 4,
                "the VARCHAR at its length, which takes 1 byte"
            );
            let mut out = vec![0xEEu8; rec_len];
            f.unpack(&packed, &mut out, &mut Vec::new()).unwrap();
            assert_eq!(&out[..6], &rec[..6]);
            assert!(out[6..1003].iter().all(|&b| b == room), "{owner:?}");
            assert_eq!(&out[1003..], &rec[1003..]);
        }
    }

    #[test]
    fn bad_formats_and_rows_are_errors() {
        let v = |offset, len_bytes, max| VarField {
            offset,
            kind: VarKind::Varchar { len_bytes, max },
        };
        assert!(RowFormat::new(10, vec![v(0, 1, 10)]).is_err());
        assert!(RowFormat::new(10, vec![v(0, 1, 4), v(4, 1, 4)]).is_err());
        assert!(RowFormat::new(10, vec![v(0, 3, 4)]).is_err());
        let f = format();
        let mut out = vec![0u8; 28];
        assert!(f.unpack(&[0, 9, 1], &mut out, &mut Vec::new()).is_err());
    }

    proptest! {

        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::testing::cases(256)))]
        /// The inline copy copies exactly its run, at every length and offset.
        #[test]
        fn copy_copies_the_run(src in proptest::collection::vec(any::<u8>(), 0..100),
                               from in 0usize..100, len in 0usize..100, to in 0usize..100) {
            let from = from.min(src.len());
            let len = len.min(src.len() - from);
            let mut dst = vec![0x5Au8; 200];
            let mut want = dst.clone();
            copy(&mut dst[to..to + len], &src[from..from + len]);
            want[to..to + len].copy_from_slice(&src[from..from + len]);
            prop_assert_eq!(&dst, &want);
            let mut out = src[..from].to_vec();
            append(&mut out, &src[from..from + len]).unwrap();
            prop_assert_eq!(&out[..], &src[..from + len]);
        }

        #[test]
        fn unpack_inverts_pack(v in proptest::collection::vec(any::<u8>(), 0..=10),
                               n in any::<i32>(),
                               blob in proptest::collection::vec(any::<u8>(), 0..300)) {
            let f = format();
            let rec = record(&v, n, &blob);
            let mut packed = Vec::new();
            // SAFETY: the record's blob pointer points at `blob`.
            unsafe { f.pack(&rec, &mut packed) }.unwrap();
            let mut out = vec![0u8; rec.len()];
            let mut blobs = Vec::new();
            f.unpack(&packed, &mut out, &mut blobs).unwrap();
            let mut again = Vec::new();
            // SAFETY: `out`'s blob pointer points into `blobs`.
            unsafe { f.pack(&out, &mut again) }.unwrap();
            prop_assert_eq!(packed, again);
            prop_assert_eq!(&blobs[..], &blob[..]);
        }
    }
}
