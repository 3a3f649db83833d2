//! Fixed-length record slots, in HEAP's order, in blocks that grow.
//!
//! A table's rows live in numbered slots of `rec_len` bytes plus a live marker. A new row
//! takes the most recently freed slot if there is one (a LIFO free list threaded through the
//! free slots, as HEAP's `del_link` chain), else the next slot after the last one ever used. A
//! full scan visits slots in number order, skipping free ones, so the same inserts and deletes
//! give the same scan order as MEMORY, which the server's result files depend on.
//!
//! Slots are packed into blocks from [`crate::alloc::cache`]: the first holds a few rows (or
//! MIN_ROWS), each next one twice as many, up to the block cap ([`crate::alloc::policy`]).
//! Blocks never move, and go back to the cache when the table is emptied or dropped.

use crate::alloc::meter::Meter;
use crate::alloc::policy::Growth;
use crate::alloc::system::RawBlock;
use crate::error::{Error, Result};

/// A slot number: what `position()` hands the server and `rnd_pos()` takes back.
pub type Pos = u64;

/// The highest row position an index holds (positions are kept in 32 bits).
pub const MAX_POS: Pos = (u32::MAX - 1) as Pos;

/// Where a scan stands after one step: the slot (or home) it read, and where it goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub at: Pos,
    pub next: Pos,
}

/// The end of the free list.
const NO_SLOT: Pos = Pos::MAX;

/// A block and the slots it holds.
#[derive(Debug)]
struct Chunk {
    block: RawBlock,
    first: Pos,
    slots: u64,
}

#[derive(Debug)]
pub struct RecordStore {
    rec_len: usize,
    /// Bytes per slot: the row (at least a free-list link) and a live marker after it.
    slot_len: usize,
    first_growth: Growth,
    growth: Growth,
    chunks: Vec<Chunk>,
    /// Slots ever used since the last clear; every slot below this has been written.
    used: u64,
    /// Slots the chunks hold.
    capacity: u64,
    /// The most recently freed slot; each free slot holds the next one in its first 8 bytes.
    free_head: Pos,
    deleted: u64,
    records: u64,
    bytes: usize,
    /// The table's count of blocks, and its limit.
    meter: Meter,
}

impl RecordStore {
    /// A store for rows of `rec_len` bytes. `planned_rows` (MIN_ROWS) sizes the first block
    /// within `limit` bytes; the blocks are counted by `meter`.
    pub fn new(rec_len: usize, planned_rows: u64, limit: u64, meter: Meter) -> Self {
        let slot_len = rec_len.max(8) + 1;
        let growth = Growth::new(slot_len, planned_rows, limit);
        RecordStore {
            rec_len,
            slot_len,
            first_growth: growth,
            growth,
            chunks: Vec::new(),
            used: 0,
            capacity: 0,
            free_head: NO_SLOT,
            deleted: 0,
            records: 0,
            bytes: 0,
            meter,
        }
    }

    /// Rows stored.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Freed slots not yet reused.
    pub fn deleted(&self) -> u64 {
        self.deleted
    }

    /// Slots ever used since the last [`clear`](Self::clear): rows plus freed slots.
    pub fn slots(&self) -> u64 {
        self.used
    }

    /// Bytes of the blocks holding the rows.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Whether an insert would need a new slot rather than a freed one.
    pub fn needs_new_slot(&self) -> bool {
        self.free_head == NO_SLOT
    }

    /// Stores `row` and returns its slot.
    pub fn insert(&mut self, row: &[u8]) -> Result<Pos> {
        self.check_len(row)?;
        let pos = if self.free_head != NO_SLOT {
            let pos = self.free_head;
            self.free_head = self.link(pos);
            self.deleted -= 1;
            pos
        } else {
            if self.used == self.capacity {
                self.add_chunk()?;
            }
            self.used += 1;
            self.used - 1
        };
        let slot = self.slot_ptr(pos);
        // SAFETY: `slot_ptr` points at `slot_len` bytes of the slot, which nothing borrows
        // (`&mut self`); the row, the zero padding up to the 8-byte link and the marker fill
        // it entirely, so every byte of a slot below `used` is initialised.
        unsafe {
            std::ptr::copy_nonoverlapping(row.as_ptr(), slot, self.rec_len);
            slot.add(self.rec_len)
                .write_bytes(0, self.slot_len - 1 - self.rec_len);
            slot.add(self.slot_len - 1).write(1);
        }
        self.records += 1;
        Ok(pos)
    }

    fn add_chunk(&mut self) -> Result<()> {
        self.chunks.try_reserve(1)?;
        let block = self
            .meter
            .take(self.growth.next_block(self.slot_len), self.slot_len)
            .ok_or(Error::OutOfMemory)?;
        let size = block.size();
        let slots = (size / self.slot_len) as u64;
        self.bytes += size;
        self.chunks.push(Chunk {
            block,
            first: self.capacity,
            slots,
        });
        self.capacity += slots;
        Ok(())
    }

    /// The row in slot `pos`, if it holds one.
    #[inline(always)]
    pub fn get(&self, pos: Pos) -> Option<&[u8]> {
        if pos >= self.used {
            return None;
        }
        // SAFETY: slots below `used` are inside a block and were written in full.
        let slot = unsafe { std::slice::from_raw_parts(self.slot_ptr(pos), self.slot_len) };
        (slot[self.slot_len - 1] == 1).then(|| &slot[..self.rec_len])
    }

    /// The row in slot `pos`, to change in place; None if the slot is free or unused.
    #[inline(always)]
    pub fn get_mut(&mut self, pos: Pos) -> Option<&mut [u8]> {
        if pos >= self.used {
            return None;
        }
        let (slot_len, rec_len) = (self.slot_len, self.rec_len);
        let slot = self.slot_mut(pos);
        (slot[slot_len - 1] == 1).then(|| &mut slot[..rec_len])
    }

    /// Overwrites the row in slot `pos`.
    pub fn update(&mut self, pos: Pos, row: &[u8]) -> Result<()> {
        self.check_len(row)?;
        let rec = self.get_mut(pos).ok_or(Error::RecordDeleted)?;
        rec.copy_from_slice(row);
        Ok(())
    }

    /// Frees slot `pos`; the next insert reuses it.
    pub fn delete(&mut self, pos: Pos) -> Result<()> {
        self.check_live(pos)?;
        let next = self.free_head;
        let slot = self.slot_mut(pos);
        slot[..8].copy_from_slice(&next.to_ne_bytes());
        slot[slot.len() - 1] = 0;
        self.free_head = pos;
        self.deleted += 1;
        self.records -= 1;
        Ok(())
    }

    /// The first slot at or after `from` that holds a row.
    pub fn next_live(&self, from: Pos) -> Option<Pos> {
        self.next_row(from).map(|(p, _)| p)
    }

    /// The first slot at or after `from` that holds a row, and the row.
    pub fn next_row(&self, from: Pos) -> Option<(Pos, &[u8])> {
        let mut pos = from;
        while pos < self.used {
            let c = self.chunk_of(pos);
            let chunk = &self.chunks[c];
            let end = (chunk.first + chunk.slots).min(self.used);
            let bytes = self.chunk_bytes(c);
            for p in pos..end {
                let at = (p - chunk.first) as usize * self.slot_len;
                if bytes[at + self.slot_len - 1] == 1 {
                    return Some((p, &bytes[at..at + self.rec_len]));
                }
            }
            pos = end;
        }
        None
    }

    /// Drops every row and keeps the blocks: the next rows fill them from the first slot, in
    /// the order a new store's rows take (a renewed table's, [`crate::table::Table::renew`]).
    pub fn clear_keeping_blocks(&mut self) {
        self.used = 0;
        self.free_head = NO_SLOT;
        self.deleted = 0;
        self.records = 0;
    }

    /// Drops every row and gives the blocks back.
    pub fn clear(&mut self) {
        let meter = &self.meter;
        self.chunks.drain(..).for_each(|c| meter.give(c.block));
        self.growth = self.first_growth;
        self.used = 0;
        self.capacity = 0;
        self.free_head = NO_SLOT;
        self.deleted = 0;
        self.records = 0;
        self.bytes = 0;
    }

    /// Checks the invariants; panics on a violation.
    pub fn debug_check_consistency(&self) {
        let held: usize = self.chunks.iter().map(|c| c.block.size()).sum();
        assert_eq!(held, self.bytes, "block bytes add up");
        let mut first = 0;
        for c in &self.chunks {
            assert_eq!(c.first, first, "chunks hold consecutive slots");
            assert!(
                c.slots as usize * self.slot_len <= c.block.size(),
                "slots fit"
            );
            first += c.slots;
        }
        assert_eq!(first, self.capacity, "capacity");
        assert!(self.used <= self.capacity, "used slots are in blocks");
        let live = (0..self.used).filter(|&p| self.get(p).is_some()).count() as u64;
        assert_eq!(live, self.records, "row count matches live slots");
        let mut free = 0;
        let mut p = self.free_head;
        while p != NO_SLOT {
            assert!(p < self.used, "free slot {p} was used");
            assert!(self.get(p).is_none(), "free slot {p} is not live");
            free += 1;
            assert!(free <= self.used, "the free list has no cycle");
            p = self.link(p);
        }
        assert_eq!(free, self.deleted, "free list length");
        assert_eq!(live + free, self.used, "every slot is live or free");
    }

    fn check_len(&self, row: &[u8]) -> Result<()> {
        if row.len() == self.rec_len {
            Ok(())
        } else {
            Err(Error::WrongCommand)
        }
    }

    fn check_live(&self, pos: Pos) -> Result<()> {
        self.get(pos).map(|_| ()).ok_or(Error::RecordDeleted)
    }

    /// The next free slot after free slot `pos`.
    fn link(&self, pos: Pos) -> Pos {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.slot(pos)[..8]);
        Pos::from_ne_bytes(b)
    }

    /// The chunk holding slot `pos` (`pos < capacity`).
    #[inline(always)]
    fn chunk_of(&self, pos: Pos) -> usize {
        let last = self.chunks.len() - 1;
        if pos >= self.chunks[last].first {
            last
        } else {
            self.chunks.partition_point(|c| c.first <= pos) - 1
        }
    }

    /// The written bytes of chunk `c`: its slots below `used`.
    fn chunk_bytes(&self, c: usize) -> &[u8] {
        let chunk = &self.chunks[c];
        let written = (chunk.slots.min(self.used - chunk.first)) as usize * self.slot_len;
        // SAFETY: the block holds `slots * slot_len` bytes (checked when it was added), and
        // every slot below `used` was written in full by `insert` before `used` passed it.
        unsafe { std::slice::from_raw_parts(chunk.block.ptr().as_ptr(), written) }
    }

    /// Slot `pos` (`pos < used`).
    fn slot(&self, pos: Pos) -> &[u8] {
        let c = self.chunk_of(pos);
        let at = (pos - self.chunks[c].first) as usize * self.slot_len;
        &self.chunk_bytes(c)[at..at + self.slot_len]
    }

    /// The start of slot `pos` (`pos < capacity`).
    #[inline(always)]
    fn slot_ptr(&self, pos: Pos) -> *mut u8 {
        let c = self.chunk_of(pos);
        let chunk = &self.chunks[c];
        debug_assert!(pos < chunk.first + chunk.slots);
        let at = (pos - chunk.first) as usize * self.slot_len;
        // SAFETY: the slot lies inside the chunk's block: pos < first + slots, and
        // slots * slot_len bytes fit the block.
        unsafe { chunk.block.ptr().as_ptr().add(at) }
    }

    /// Slot `pos` for writing (`pos < used`: its bytes are initialised).
    #[inline(always)]
    fn slot_mut(&mut self, pos: Pos) -> &mut [u8] {
        debug_assert!(pos < self.used);
        // SAFETY: the slot is inside a block the store owns and was written in full when it
        // was first used; `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(pos), self.slot_len) }
    }
}

impl Drop for RecordStore {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn row(b: u8) -> [u8; 4] {
        [b; 4]
    }

    fn scan(s: &RecordStore) -> Vec<u8> {
        let mut out = Vec::new();
        let mut p = 0;
        while let Some(q) = s.next_live(p) {
            out.push(s.get(q).unwrap()[0]);
            p = q + 1;
        }
        out
    }

    #[test]
    fn freed_slots_are_reused_most_recent_first() {
        let mut s = RecordStore::new(4, 0, u64::MAX, Meter::unlimited());
        for b in 1..=5 {
            s.insert(&row(b)).unwrap();
        }
        s.delete(1).unwrap();
        s.delete(3).unwrap();
        assert_eq!(s.insert(&row(9)).unwrap(), 3);
        assert_eq!(s.insert(&row(8)).unwrap(), 1);
        assert_eq!(s.insert(&row(7)).unwrap(), 5);
        assert_eq!(scan(&s), vec![1, 8, 3, 9, 5, 7]);
        s.debug_check_consistency();
    }

    #[test]
    fn wrong_length_and_dead_positions_are_errors() {
        let mut s = RecordStore::new(4, 0, u64::MAX, Meter::unlimited());
        assert_eq!(s.insert(&[1, 2, 3]), Err(Error::WrongCommand));
        let p = s.insert(&row(1)).unwrap();
        s.delete(p).unwrap();
        assert_eq!(s.delete(p), Err(Error::RecordDeleted));
        assert_eq!(s.update(p, &row(2)), Err(Error::RecordDeleted));
        assert_eq!(s.update(99, &row(2)), Err(Error::RecordDeleted));
        assert!(s.get(p).is_none());
        s.debug_check_consistency();
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8),
        Update(usize, u8),
        Delete(usize),
        Clear,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => any::<u8>().prop_map(Op::Insert),
            2 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Op::Update(i, b)),
            3 => any::<usize>().prop_map(Op::Delete),
            1 => Just(Op::Clear),
        ]
    }

    proptest! {

        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::testing::cases(256)))]
        /// The store against a model: a map from slot to row plus HEAP's reuse rule.
        #[test]
        fn matches_model(ops in proptest::collection::vec(op(), 0..200)) {
            let mut s = RecordStore::new(4, 0, u64::MAX, Meter::unlimited());
            let mut model: BTreeMap<Pos, u8> = BTreeMap::new();
            let mut freed: Vec<Pos> = Vec::new();
            let mut next: Pos = 0;
            for op in ops {
                match op {
                    Op::Insert(b) => {
                        let want = freed.pop().unwrap_or_else(|| { next += 1; next - 1 });
                        prop_assert_eq!(s.insert(&row(b)).unwrap(), want);
                        model.insert(want, b);
                    }
                    Op::Update(i, b) if !model.is_empty() => {
                        let p = *model.keys().nth(i % model.len()).unwrap();
                        s.update(p, &row(b)).unwrap();
                        model.insert(p, b);
                    }
                    Op::Delete(i) if !model.is_empty() => {
                        let p = *model.keys().nth(i % model.len()).unwrap();
                        s.delete(p).unwrap();
                        model.remove(&p);
                        freed.push(p);
                    }
                    Op::Clear => {
                        s.clear();
                        model.clear();
                        freed.clear();
                        next = 0;
                    }
                    _ => {}
                }
                s.debug_check_consistency();
                prop_assert_eq!(s.records(), model.len() as u64);
                prop_assert_eq!(scan(&s), model.values().copied().collect::<Vec<_>>());
            }
        }
    }
}
