//! A table's rows: in their slots as they are ([`RecordStore`]), or packed ([`RowFormat`]) at
//! their actual length, or, for an internal temporary table, packed back to back
//! ([`RowLog`]).
//!
//! A packed row lives in a piece of the table's row arena; its slot holds where, so slot
//! numbers, scan order and positions stay exactly those of fixed-length rows. The slot is one
//! word: the piece's address in its low 48 bits (a user-space address on the 64-bit targets
//! rheap builds for), the row's length in the high 16; a row of 65,535 bytes or more keeps its
//! length in the piece's first 8 bytes instead. A row that changes length in an UPDATE is
//! rewritten where it is when its piece still fits it, else moves to a new piece; the old
//! piece waits on the arena's free list for a row of its size.

use crate::alloc::{Meter, Pieces};
use crate::error::{Error, Result};
use crate::rows::format::RowFormat;
use crate::rows::log::RowLog;
use crate::rows::records::{Pos, RecordStore, Step};
use allocator_api2::alloc::Layout;
use std::ptr::NonNull;

/// Bytes of a packed row's slot: the piece's address and the row's length.
const DESCRIPTOR: usize = 8;
/// Bits of a descriptor holding the piece's address.
const ADDRESS_BITS: u32 = 48;
/// The length a descriptor holds for a row of this many bytes or more, whose length is kept
/// in the piece's first 8 bytes.
const LONG: usize = (1 << (64 - ADDRESS_BITS)) - 1;

#[derive(Debug)]
pub struct RowStore {
    format: RowFormat,
    /// Slots: the rows themselves, or descriptors of packed rows.
    slots: RecordStore,
    /// Where packed rows live (None: rows are stored as they are). Only the store changes
    /// them, through `&mut self`: no lock.
    pieces: Option<Pieces>,
    /// BLOB bytes in the rows.
    blob_bytes: u64,
    /// Where the rows are when they are packed back to back (then `slots` and `pieces` hold
    /// none).
    log: Option<RowLog>,
}

/// Bytes before a row of `len` bytes in its piece: its length, for a long row.
fn header(len: usize) -> usize {
    match len >= LONG {
        true => 8,
        false => 0,
    }
}

/// The descriptor of a row of `len` bytes in the piece at `p` (which [`put`] checked fits
/// [`ADDRESS_BITS`]).
fn descriptor(p: NonNull<u8>, len: usize) -> [u8; DESCRIPTOR] {
    ((p.as_ptr() as u64) | (len.min(LONG) as u64) << ADDRESS_BITS).to_ne_bytes()
}

/// The piece of a row of `len` bytes.
fn layout(len: usize) -> Layout {
    // A length of zero still gets a piece, so every row has an address; the alignment is 1.
    Layout::from_size_align((header(len) + len).max(1), 1).expect("a row's length fits a layout")
}

impl RowStore {
    /// A store for records of `format`; `planned_rows` (MIN_ROWS) sizes the first block within
    /// `limit` bytes; the blocks are counted by `meter`. `back_to_back`: packed rows without
    /// BLOBs go in a [`RowLog`], whose positions are not slot numbers (see
    /// [`RowStore::after`]).
    pub fn new(
        format: RowFormat,
        rec_len: usize,
        planned_rows: u64,
        limit: u64,
        meter: &Meter,
        back_to_back: bool,
    ) -> RowStore {
        let packed = !format.is_fixed();
        let log = (back_to_back && packed && !format.has_blobs())
            .then(|| RowLog::new(rec_len.min(256), planned_rows, limit, meter.clone()));
        RowStore {
            slots: RecordStore::new(
                if packed { DESCRIPTOR } else { rec_len },
                planned_rows,
                limit,
                meter.clone(),
            ),
            pieces: (packed && log.is_none())
                .then(|| Pieces::new(rec_len.min(256), planned_rows, limit, meter.clone())),
            format,
            blob_bytes: 0,
            log,
        }
    }

    pub fn format(&self) -> &RowFormat {
        &self.format
    }

    #[inline]
    pub fn is_packed(&self) -> bool {
        self.pieces.is_some() || self.log.is_some()
    }

    /// Whether rows are packed back to back ([`RowLog`]).
    pub fn is_back_to_back(&self) -> bool {
        self.log.is_some()
    }

    /// The packed form of `rec`, for a format without BLOBs (those are packed by the caller,
    /// who vouches for their pointers).
    pub fn pack_plain(&self, rec: &[u8], out: &mut Vec<u8>) -> Result<()> {
        if self.format.has_blobs() {
            return Err(Error::WrongCommand);
        }
        // SAFETY: a format without BLOB fields reads no pointer from the record.
        unsafe { self.format.pack(rec, out) }?;
        Ok(())
    }

    /// Stores a row: `packed` is the record packed by [`RowFormat::pack`] (the record itself
    /// when rows are stored as they are).
    #[inline]
    pub fn insert(&mut self, packed: &[u8]) -> Result<Pos> {
        if let Some(log) = &mut self.log {
            return log.insert(packed, &self.format);
        }
        let Some(pieces) = &mut self.pieces else {
            return self.slots.insert(packed);
        };
        let blob = self.format.blob_bytes(packed)? as u64;
        let piece = put(pieces, packed, false)?;
        match self.slots.insert(&descriptor(piece, packed.len())) {
            Ok(pos) => {
                self.blob_bytes += blob;
                Ok(pos)
            }
            Err(e) => {
                // SAFETY: the piece was allocated just above with this length.
                unsafe { pieces.deallocate(piece, layout(packed.len())) };
                Err(e)
            }
        }
    }

    /// The stored bytes of row `pos` (packed when rows are packed).
    #[inline(always)]
    pub fn stored(&self, pos: Pos) -> Option<&[u8]> {
        if let Some(log) = &self.log {
            return log.row(pos, &self.format).ok();
        }
        self.slots.get(pos).map(|slot| self.contents(slot))
    }

    /// The stored bytes a live slot holds: the record itself, or the piece it names.
    #[inline(always)]
    fn contents<'a>(&'a self, slot: &'a [u8]) -> &'a [u8] {
        if self.pieces.is_none() {
            return slot;
        }
        let (p, len) = Self::read_descriptor(slot);
        // SAFETY: the descriptor names a live piece of the arena holding the row's `len` bytes
        // after its header, written at insert/update; it is freed only when the slot changes
        // (through `&mut self`).
        unsafe { std::slice::from_raw_parts(p.as_ptr().add(header(len)), len) }
    }

    /// The piece a slot names and the length of its row.
    #[inline(always)]
    fn read_descriptor(slot: &[u8]) -> (NonNull<u8>, usize) {
        let d = u64::from_ne_bytes(slot[..DESCRIPTOR].try_into().expect("a descriptor"));
        let p = NonNull::new((d & ((1 << ADDRESS_BITS) - 1)) as usize as *mut u8)
            .expect("a stored piece's address");
        let len = match (d >> ADDRESS_BITS) as usize {
            // SAFETY: a long row's piece starts with its length (see `put`), and lives as long
            // as the slot names it.
            LONG => (unsafe { p.cast::<u64>().as_ptr().read_unaligned() }) as usize,
            len => len,
        };
        (p, len)
    }

    /// Stored bytes as a record into `out`; its BLOB pointers point into `blobs`.
    #[inline(always)]
    fn record_from(&self, stored: &[u8], out: &mut [u8], blobs: &mut Vec<u8>) -> Result<()> {
        if self.pieces.is_none() {
            out.copy_from_slice(stored);
            Ok(())
        } else {
            self.format.unpack(stored, out, blobs)
        }
    }

    /// Row `pos` as a record into `out`; its BLOB pointers point into `blobs`.
    #[inline(always)]
    pub fn read_into(&self, pos: Pos, out: &mut [u8], blobs: &mut Vec<u8>) -> Result<()> {
        if let Some(log) = &self.log {
            return log.read_with(pos, |row| self.format.unpack_prefix(row, out, blobs));
        }
        let stored = self.stored(pos).ok_or(Error::RecordDeleted)?;
        self.record_from(stored, out, blobs)
    }

    /// Row `pos` as stored, to change in place, when rows are stored as records (not packed).
    #[inline(always)]
    pub fn record_mut(&mut self, pos: Pos) -> Option<&mut [u8]> {
        match self.is_packed() {
            false => self.slots.get_mut(pos),
            true => None,
        }
    }

    /// Replaces row `pos` with `packed`.
    pub fn update(&mut self, pos: Pos, packed: &[u8]) -> Result<()> {
        if let Some(log) = &mut self.log {
            return log.update(pos, packed, &self.format);
        }
        if self.pieces.is_none() {
            return self.slots.update(pos, packed);
        }
        let (old, old_len) =
            Self::read_descriptor(self.slots.get(pos).ok_or(Error::RecordDeleted)?);
        let (old_blob, blob) = match self.format.has_blobs() {
            true => (
                self.format.blob_bytes(self.stored(pos).expect("live"))? as u64,
                self.format.blob_bytes(packed)? as u64,
            ),
            false => (0, 0),
        };
        if header(old_len) == header(packed.len())
            && Pieces::same_piece(layout(old_len), layout(packed.len()))
        {
            // Its piece still fits it: rewritten where it is (GROUP BY's update of a group's
            // row, a window function's values), only the descriptor's length changes.
            self.blob_bytes = self.blob_bytes - old_blob + blob;
            if old_len != packed.len() {
                self.slots.update(pos, &descriptor(old, packed.len()))?;
            }
            // SAFETY: the descriptor names a live piece that holds `packed.len()` bytes after
            // its header, that only this store writes, through `&mut self`; `packed` is
            // another buffer. A long row's header is rewritten with its new length.
            unsafe {
                let at = old.as_ptr();
                if header(old_len) != 0 {
                    at.cast::<u64>().write_unaligned(packed.len() as u64);
                }
                std::ptr::copy_nonoverlapping(
                    packed.as_ptr(),
                    at.add(header(old_len)),
                    packed.len(),
                )
            };
            return Ok(());
        }
        if let Some(pieces) = &mut self.pieces {
            // The server moves no internal table to disk for an update, and reads a window
            // function's table by position while it updates its rows: an internal table's row
            // gets its room past the table's limit, as in a RowLog, and the table refuses its
            // next write. A user's table refuses the update.
            let piece = put(pieces, packed, self.format.is_internal())?;
            if let Err(e) = self.slots.update(pos, &descriptor(piece, packed.len())) {
                // SAFETY: the piece was allocated just above with this length.
                unsafe { pieces.deallocate(piece, layout(packed.len())) };
                return Err(e);
            }
            // SAFETY: the old piece was allocated with this length and no slot names it any
            // more.
            unsafe { pieces.deallocate(old, layout(old_len)) };
        }
        self.blob_bytes = self.blob_bytes - old_blob + blob;
        Ok(())
    }

    pub fn delete(&mut self, pos: Pos) -> Result<()> {
        if let Some(log) = &mut self.log {
            return log.delete(pos, &self.format);
        }
        if self.pieces.is_none() {
            return self.slots.delete(pos);
        }
        let (p, len) = Self::read_descriptor(self.slots.get(pos).ok_or(Error::RecordDeleted)?);
        let blob = self.format.blob_bytes(self.stored(pos).expect("live"))? as u64;
        self.slots.delete(pos)?;
        if let Some(pieces) = &mut self.pieces {
            // SAFETY: allocated with this length; its slot is free now.
            unsafe { pieces.deallocate(p, layout(len)) };
        }
        self.blob_bytes -= blob;
        Ok(())
    }

    /// Drops every row and gives the memory back.
    pub fn clear(&mut self) {
        self.slots.clear();
        self.clear_pieces();
        if let Some(log) = &mut self.log {
            log.clear();
        }
    }

    /// Drops every row and keeps the blocks (the slots' and the packed rows') for the next
    /// rows.
    pub fn clear_keeping_blocks(&mut self) {
        if let Some(log) = &mut self.log {
            log.clear_keeping_blocks();
        }
        self.slots.clear_keeping_blocks();
        if let Some(pieces) = &mut self.pieces {
            pieces.clear_keeping_blocks();
        }
        self.blob_bytes = 0;
    }

    fn clear_pieces(&mut self) {
        if let Some(pieces) = self.pieces.as_mut().filter(|p| p.bytes() != 0) {
            *pieces = pieces.fresh();
        }
        self.blob_bytes = 0;
    }

    /// The first row at or after `from` (a position, or [`after`](Self::after) one), in
    /// scan order.
    pub fn next_live(&self, from: Pos) -> Option<Pos> {
        match &self.log {
            Some(log) => log.next_live(from, &self.format),
            None => self.slots.next_live(from),
        }
    }

    /// Where a scan goes on after the row or freed slot at `pos`: the next slot, or the next
    /// home of a [`RowLog`].
    pub fn after(&self, pos: Pos) -> Pos {
        match &self.log {
            Some(log) => log.after(pos, &self.format),
            None => pos + 1,
        }
    }

    /// One step of HEAP's scan from `cursor` (0, or a step's `next`): the row it reaches as a
    /// record into `out` (see [`read_into`](Self::read_into)), `RecordDeleted` for a freed
    /// slot, `EndOfFile` past the last slot ever used; and where it read and goes on.
    pub fn read_slot_into(
        &self,
        cursor: Pos,
        out: &mut [u8],
        blobs: &mut Vec<u8>,
    ) -> (Step, Result<()>) {
        if let Some(log) = &self.log {
            let unpack = |row| self.format.unpack_prefix(row, out, blobs);
            return log.scan_with(cursor, &self.format, unpack);
        }
        let step = Step {
            at: cursor,
            next: cursor + 1,
        };
        let read = match self.slots.get(cursor) {
            Some(slot) => self.record_from(self.contents(slot), out, blobs),
            None if cursor < self.slots.slots() => Err(Error::RecordDeleted),
            None => Err(Error::EndOfFile),
        };
        (step, read)
    }

    pub fn records(&self) -> u64 {
        match &self.log {
            Some(log) => log.records(),
            None => self.slots.records(),
        }
    }

    pub fn deleted(&self) -> u64 {
        match &self.log {
            Some(log) => log.deleted(),
            None => self.slots.deleted(),
        }
    }

    pub fn slots(&self) -> u64 {
        match &self.log {
            Some(log) => log.slots(),
            None => self.slots.slots(),
        }
    }

    pub fn needs_new_slot(&self) -> bool {
        match &self.log {
            Some(log) => log.needs_new_slot(),
            None => self.slots.needs_new_slot(),
        }
    }

    /// What HEAP leaves of a row it refuses as a duplicate: it takes a slot (the most recently
    /// freed, or a new one) and frees it again.
    pub fn mirror_duplicate(&mut self, packed: &[u8]) -> Result<()> {
        if let Some(log) = &mut self.log {
            log.mirror_duplicate();
        } else if self.needs_new_slot() {
            let pos = self.insert(packed)?;
            self.delete(pos)?;
        }
        Ok(())
    }

    /// BLOB bytes in the rows.
    pub fn blob_bytes(&self) -> u64 {
        self.blob_bytes
    }

    /// Bytes of the blocks holding the rows.
    pub fn bytes(&self) -> usize {
        self.slots.bytes()
            + self.pieces.as_ref().map_or(0, Pieces::bytes)
            + self.log.as_ref().map_or(0, RowLog::bytes)
    }

    /// Checks the invariants; panics on a violation.
    pub fn debug_check_consistency(&self) {
        if let Some(log) = &self.log {
            log.debug_check_consistency(&self.format);
        }
        self.slots.debug_check_consistency();
        if let Some(pieces) = &self.pieces {
            pieces.debug_check_consistency();
            let mut blob = 0;
            let mut p = 0;
            while let Some(q) = self.next_live(p) {
                let stored = self.stored(q).expect("live");
                blob += self.format.blob_bytes(stored).expect("a well-formed row") as u64;
                p = self.after(q);
            }
            assert_eq!(blob, self.blob_bytes, "BLOB bytes add up");
        }
    }
}

/// A new piece holding `bytes` (after their length, for a long row), taken past the table's
/// limit when `past_limit` (an update's, see [`Pieces::allocate_past_limit`]).
fn put(pieces: &mut Pieces, bytes: &[u8], past_limit: bool) -> Result<NonNull<u8>> {
    let len = bytes.len();
    let piece = match past_limit {
        true => pieces.allocate_past_limit(layout(len)),
        false => pieces.allocate(layout(len)),
    };
    let piece = piece.ok_or(Error::OutOfMemory)?;
    if piece.as_ptr() as u64 >> ADDRESS_BITS != 0 {
        // An address a descriptor cannot hold: no room for the row, as when memory runs out.
        // SAFETY: allocated just above with this layout, and given to no one.
        unsafe { pieces.deallocate(piece, layout(len)) };
        return Err(Error::OutOfMemory);
    }
    // SAFETY: the piece has room for the header and `len` bytes, and nothing else uses it.
    unsafe {
        if header(len) != 0 {
            piece.cast::<u64>().as_ptr().write_unaligned(len as u64);
        }
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), piece.as_ptr().add(header(len)), len)
    };
    Ok(piece)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::format::{VarField, VarKind};
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn format() -> RowFormat {
        RowFormat::new(
            1 + 31,
            vec![VarField {
                offset: 1,
                kind: VarKind::Varchar {
                    len_bytes: 1,
                    max: 30,
                },
            }],
        )
        .unwrap()
    }

    fn rec(s: &[u8]) -> Vec<u8> {
        let mut r = vec![0, s.len() as u8];
        r.extend_from_slice(s);
        r.resize(32, 0);
        r
    }

    #[test]
    fn packed_rows_keep_slots_and_scan_order() {
        let mut s = RowStore::new(format(), 32, 0, u64::MAX, &Meter::unlimited(), false);
        let mut packed = Vec::new();
        for w in [&b"one"[..], b"two", b"three"] {
            s.pack_plain(&rec(w), &mut packed).unwrap();
            s.insert(&packed).unwrap();
        }
        s.delete(1).unwrap();
        s.pack_plain(&rec(b"a much longer value"), &mut packed)
            .unwrap();
        s.update(0, &packed).unwrap();
        s.pack_plain(&rec(b"4"), &mut packed).unwrap();
        assert_eq!(s.insert(&packed).unwrap(), 1, "the freed slot is reused");
        let mut out = vec![0u8; 32];
        let mut blobs = Vec::new();
        let mut seen = Vec::new();
        let mut p = 0;
        while let Some(q) = s.next_live(p) {
            s.read_into(q, &mut out, &mut blobs).unwrap();
            seen.push(out[2..2 + out[1] as usize].to_vec());
            p = q + 1;
        }
        assert_eq!(
            seen,
            [&b"a much longer value"[..], b"4", b"three"].map(|b| b.to_vec())
        );
        assert_eq!(s.stored(2).unwrap().len(), 1 + 1 + 5);
        s.debug_check_consistency();
        s.clear();
        assert_eq!(s.records(), 0);
        s.debug_check_consistency();
    }

    #[test]
    fn a_packed_row_that_still_fits_its_piece_is_rewritten_where_it_is() {
        let mut s = RowStore::new(format(), 32, 0, u64::MAX, &Meter::unlimited(), false);
        let mut packed = Vec::new();
        s.pack_plain(&rec(b"abc"), &mut packed).unwrap();
        let pos = s.insert(&packed).unwrap();
        let at = s.stored(pos).unwrap().as_ptr();
        for (value, moves) in [
            (&b"xyz"[..], false),
            (b"longer", false),
            (b"a", false),
            (b"a value of thirty bytes, whole", true),
        ] {
            s.pack_plain(&rec(value), &mut packed).unwrap();
            s.update(pos, &packed).unwrap();
            assert_eq!(s.stored(pos).unwrap(), &packed[..]);
            assert_eq!(s.stored(pos).unwrap().as_ptr() != at, moves, "{value:?}");
            s.debug_check_consistency();
        }
    }

    #[test]
    fn a_row_too_long_for_the_descriptor_keeps_its_length_in_its_piece() {
        let max = 70_000;
        let f = RowFormat::new(
            1 + 2 + max,
            vec![VarField {
                offset: 1,
                kind: VarKind::Varchar { len_bytes: 2, max },
            }],
        )
        .unwrap();
        let rec = |n: usize| {
            let mut r = vec![7u8];
            r.extend_from_slice(&(n as u16).to_le_bytes());
            r.extend((0..n).map(|i| i as u8));
            r.resize(1 + 2 + max, 0);
            r
        };
        let mut s = RowStore::new(f, 1 + 2 + max, 0, u64::MAX, &Meter::unlimited(), false);
        let mut packed = Vec::new();
        let mut out = vec![0u8; 1 + 2 + max];
        let mut blobs = Vec::new();
        s.pack_plain(&rec(65_534), &mut packed).unwrap();
        assert!(packed.len() >= LONG);
        let pos = s.insert(&packed).unwrap();
        let first = packed[..10].to_vec();
        let short = s.insert(&first).unwrap();
        for n in [65_534, 65_530, 65_535, 100, 65_533] {
            s.pack_plain(&rec(n), &mut packed).unwrap();
            s.update(pos, &packed).unwrap();
            assert_eq!(s.stored(pos).unwrap(), &packed[..], "{n}");
            s.read_into(pos, &mut out, &mut blobs).unwrap();
            assert_eq!(out, rec(n), "{n}");
            assert_eq!(s.stored(short).unwrap(), &first[..]);
            s.debug_check_consistency();
        }
        s.delete(pos).unwrap();
        s.debug_check_consistency();
    }

    /// `[VARCHAR(30), 1-byte length][BLOB, 3-byte length]`
    fn blob_format() -> RowFormat {
        RowFormat::new(
            31 + 3 + 8,
            vec![
                VarField {
                    offset: 0,
                    kind: VarKind::Varchar {
                        len_bytes: 1,
                        max: 30,
                    },
                },
                VarField {
                    offset: 31,
                    kind: VarKind::Blob { len_bytes: 3 },
                },
            ],
        )
        .unwrap()
    }

    /// A record of `blob_format` whose BLOB pointer points into `blob`.
    fn blob_rec(v: &[u8], blob: &[u8]) -> Vec<u8> {
        let mut r = vec![v.len() as u8];
        r.extend_from_slice(v);
        r.resize(31, 0);
        r.extend_from_slice(&(blob.len() as u32).to_le_bytes()[..3]);
        let p = if blob.is_empty() {
            0
        } else {
            blob.as_ptr() as usize
        };
        r.extend_from_slice(&p.to_ne_bytes());
        r
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(Vec<u8>, Vec<u8>),
        Update(usize, Vec<u8>, Vec<u8>),
        Delete(usize),
        Clear,
        ClearKeepingBlocks,
    }

    /// `len` bytes of a short random pattern, repeated: long values cost one draw per pattern
    /// byte, not one per byte (which, under Miri, takes minutes for a value of 64 KiB).
    fn bytes(len: std::ops::Range<usize>) -> impl Strategy<Value = Vec<u8>> {
        (proptest::collection::vec(any::<u8>(), 1..16), len)
            .prop_map(|(pattern, n)| pattern.iter().copied().cycle().take(n).collect())
    }

    fn value() -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
        (
            proptest::collection::vec(any::<u8>(), 0..=30),
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 0..40),
                bytes(0..20_000),
                // Past what a descriptor's length holds.
                bytes(65_530..70_000),
            ],
        )
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            5 => value().prop_map(|(v, b)| Op::Insert(v, b)),
            4 => (any::<usize>(), value()).prop_map(|(i, (v, b))| Op::Update(i, v, b)),
            2 => any::<usize>().prop_map(Op::Delete),
            1 => Just(Op::Clear),
            1 => Just(Op::ClearKeepingBlocks),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::testing::cases(32)))]
        /// Packed rows with BLOBs that grow, shrink and go, against a map from slot to values:
        /// every row reads back whole, in slot order, and the BLOB bytes add up.
        #[test]
        fn blob_rows_match_a_model(
            ops in proptest::collection::vec(op(), 1..crate::testing::miri_or(60, 8))
        ) {
            let f = blob_format();
            let mut s = RowStore::new(f.clone(), 42, 0, u64::MAX, &Meter::unlimited(), false);
            let mut model: BTreeMap<Pos, (Vec<u8>, Vec<u8>)> = BTreeMap::new();
            let mut packed = Vec::new();
            for op in ops {
                match op {
                    Op::Insert(v, b) => {
                        // SAFETY: the record's pointer points at `b`, alive for the call.
                        unsafe { f.pack(&blob_rec(&v, &b), &mut packed) }.unwrap();
                        let pos = s.insert(&packed).unwrap();
                        prop_assert!(model.insert(pos, (v, b)).is_none());
                    }
                    Op::Update(i, v, b) if !model.is_empty() => {
                        let pos = *model.keys().nth(i % model.len()).unwrap();
                        // SAFETY: as above.
                        unsafe { f.pack(&blob_rec(&v, &b), &mut packed) }.unwrap();
                        s.update(pos, &packed).unwrap();
                        model.insert(pos, (v, b));
                    }
                    Op::Delete(i) if !model.is_empty() => {
                        let pos = *model.keys().nth(i % model.len()).unwrap();
                        s.delete(pos).unwrap();
                        model.remove(&pos);
                    }
                    Op::Clear => {
                        s.clear();
                        model.clear();
                    }
                    Op::ClearKeepingBlocks => {
                        s.clear_keeping_blocks();
                        model.clear();
                    }
                    _ => {}
                }
                s.debug_check_consistency();
                let mut out = vec![0u8; 42];
                let mut blobs = Vec::new();
                let mut p = 0;
                let mut seen = Vec::new();
                while let Some(q) = s.next_live(p) {
                    s.read_into(q, &mut out, &mut blobs).unwrap();
                    let v = out[1..1 + out[0] as usize].to_vec();
                    let len = u32::from_le_bytes([out[31], out[32], out[33], 0]) as usize;
                    prop_assert_eq!(len, blobs.len());
                    seen.push((q, (v, blobs.clone())));
                    p = q + 1;
                }
                prop_assert_eq!(seen, model.clone().into_iter().collect::<Vec<_>>());
                let blob_total: usize = model.values().map(|(_, b)| b.len()).sum();
                prop_assert_eq!(s.blob_bytes(), blob_total as u64);
            }
        }
    }
}
