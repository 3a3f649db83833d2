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
//! Unpacking rebuilds the record: a VARCHAR's unused bytes are zero, and a BLOB's pointer points
//! into a buffer the caller keeps for as long as the server may read the record (the handler's
//! buffer, until its next read).

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

/// How a table's records are packed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowFormat {
    rec_len: usize,
    /// In record order, not overlapping.
    vars: Vec<VarField>,
    blobs: bool,
}

fn read_len(b: &[u8]) -> usize {
    let mut v = [0u8; 8];
    v[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(v) as usize
}

impl RowFormat {
    /// The format of records of `rec_len` bytes with these variable-length fields. Fails when a
    /// field does not lie inside the record or fields overlap.
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
        })
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
            out.try_reserve(v.offset - at + lb)?;
            out.extend_from_slice(&rec[at..v.offset + lb]);
            let len = read_len(&rec[v.offset..v.offset + lb]);
            let data: &[u8] = match v.kind {
                VarKind::Varchar { max, .. } => &rec[v.offset + lb..v.offset + lb + len.min(max)],
                VarKind::Blob { .. } if len == 0 => &[],
                VarKind::Blob { .. } => {
                    let mut p = [0u8; POINTER];
                    p.copy_from_slice(&rec[v.offset + lb..v.offset + lb + POINTER]);
                    let ptr = usize::from_ne_bytes(p) as *const u8;
                    if ptr.is_null() {
                        return Err(Error::WrongCommand);
                    }
                    blob_bytes += len;
                    // SAFETY: the caller guarantees the pointer covers `len` bytes.
                    unsafe { std::slice::from_raw_parts(ptr, len) }
                }
            };
            out.try_reserve(data.len())?;
            out.extend_from_slice(data);
            at = v.offset + v.kind.width();
        }
        out.try_reserve(self.rec_len - at)?;
        out.extend_from_slice(&rec[at..]);
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

    /// Rebuilds the record of `packed` into `out`; BLOB pointers point into `blobs`, which is
    /// replaced (so the record is valid as long as `blobs` is neither changed nor dropped).
    pub fn unpack(&self, packed: &[u8], out: &mut [u8], blobs: &mut Vec<u8>) -> Result<()> {
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
            let fixed = v.offset - at_rec;
            let lb = v.kind.len_bytes();
            let head = packed.get(at..at + fixed + lb).ok_or_else(corrupt)?;
            out[at_rec..v.offset + lb].copy_from_slice(head);
            at += fixed + lb;
            let len = read_len(&out[v.offset..v.offset + lb]);
            let data = packed.get(at..at + len).ok_or_else(corrupt)?;
            let room = &mut out[v.offset + lb..v.offset + v.kind.width()];
            match v.kind {
                VarKind::Varchar { .. } => {
                    room[..len].copy_from_slice(data);
                    room[len..].fill(0);
                }
                VarKind::Blob { .. } => {
                    let start = blobs.len();
                    blobs.extend_from_slice(data);
                    let ptr = if len == 0 {
                        0
                    } else {
                        blobs[start..].as_ptr() as usize
                    };
                    room.copy_from_slice(&ptr.to_ne_bytes());
                }
            }
            at += len;
            at_rec = v.offset + v.kind.width();
        }
        let tail = packed.get(at..).ok_or_else(corrupt)?;
        if tail.len() != self.rec_len - at_rec {
            return Err(corrupt());
        }
        out[at_rec..].copy_from_slice(tail);
        Ok(())
    }

    /// Calls `f` with each variable field of `packed`, its length and data.
    fn walk(&self, packed: &[u8], mut f: impl FnMut(&VarField, usize, &[u8])) -> Result<()> {
        let mut at_rec = 0;
        let mut at = 0;
        for v in &self.vars {
            let lb = v.kind.len_bytes();
            at += v.offset - at_rec;
            let len = read_len(packed.get(at..at + lb).ok_or_else(corrupt)?);
            at += lb;
            f(v, len, packed.get(at..at + len).ok_or_else(corrupt)?);
            at += len;
            at_rec = v.offset + v.kind.width();
        }
        Ok(())
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
